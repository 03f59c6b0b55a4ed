"""Which rows of one data file a change hid or showed again, from its two deletion vectors, compared by Delta in the JVM.

A DELETE, UPDATE or MERGE with deletion vectors does not rewrite a file: its
commit removes the file and adds it again with a bigger deletion vector. The
rows that change hid are those the new vector marks and the old one did not;
(a RESTORE can do the reverse and show rows again). Reading just those rows
costs the change's size, not the file's.

Delta's reader keeps the rows a deletion vector does *not* mark, so the
frame of "only these rows" is the file read with a vector marking every other
row: an inline vector built here, never written anywhere. Delta's own change
data feed reads such files the same way, with an inverted row filter instead.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lakeclone.delta.jvm import JavaObject
    from lakeclone.delta.log import TableLog

# RoaringBitmapArray's "native" serialization: a magic number, the number of 32-bit bitmaps, then each one's length and bytes.
_NATIVE_MAGIC = 1681511376


class DeletionVectors:
    """Deletion vectors of one table's files, read by Delta's own store."""

    def __init__(self, log: TableLog) -> None:
        jvm = log.delta.jvm
        self._jvm = jvm
        self._delta_log = jvm.delta_log(log.location)
        # What DeletionVectorStore.createInstance builds (that factory is package-private in Scala).
        self._store = jvm.cls("org.apache.spark.sql.delta.storage.dv.HadoopFileSystemDVStore")(
            self._delta_log.newDeltaHadoopConf()
        )
        self._bitmap_array = jvm.cls("org.apache.spark.sql.delta.deletionvectors.RoaringBitmapArray")
        self._native = jvm.cls("org.apache.spark.sql.delta.deletionvectors.RoaringBitmapArrayFormat").Native()
        self._descriptor = jvm.cls("org.apache.spark.sql.delta.actions.DeletionVectorDescriptor")
        self._roaring = jvm.cls("org.roaringbitmap.RoaringBitmap")
        self._byte_buffer = jvm.cls("java.nio.ByteBuffer")

    def only(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """One file as two snapshots read it: the rows ``after`` hides that ``before`` did not, and the reverse.

        Args:
            before: the file's add action in the earlier snapshot.
            after: the same file's add action in the later one (same path, another deletion vector).

        Returns:
            ``(hidden, shown)``: add actions of the file whose deletion vector leaves only
            the rows the change hid (``before``'s row tracking fields) and only those it
            showed again (``after``'s); None for a side with no such row.

        Raises:
            ValueError: the file's row count is not in its statistics.
        """
        rows = _physical_rows(after) or _physical_rows(before)
        if rows is None:
            raise ValueError(f"no row count in the statistics of {after['path']}")
        old, new = self._bitmap(before), self._bitmap(after)
        hidden, shown = new.copy(), old.copy()
        hidden.diff(old)
        shown.diff(new)
        return self._only(before, hidden, rows), self._only(after, shown, rows)

    def _bitmap(self, add: Mapping[str, Any]) -> JavaObject:
        """The rows the file's deletion vector marks, as Delta's ``RoaringBitmapArray``."""
        if not add.get("deletionVector"):
            return self._bitmap_array()
        descriptor = self._jvm.action(json.dumps({"add": dict(add)})).deletionVector()
        return self._store.read(descriptor, self._delta_log.dataPath())

    def _only(self, add: Mapping[str, Any], rows_kept: JavaObject, rows: int) -> dict[str, Any] | None:
        """``add`` with an inline deletion vector marking every row of the file but ``rows_kept``."""
        if rows_kept.isEmpty():
            return None
        others = self._bitmap_array.readFrom(self._every_row(rows))
        others.diff(rows_kept)
        others.runOptimize()
        data = bytes(others.serializeAsByteArray(self._native))
        descriptor = self._descriptor.inlineInLog(data, others.cardinality())
        narrowed = {key: value for key, value in add.items() if key != "deletionVector"}
        narrowed["deletionVector"] = {
            "storageType": str(descriptor.storageType()),
            "pathOrInlineDv": str(descriptor.pathOrInlineDv()),
            "sizeInBytes": int(descriptor.sizeInBytes()),
            "cardinality": int(descriptor.cardinality()),
        }
        return narrowed

    def _every_row(self, rows: int) -> bytes:
        """Rows 0 to ``rows`` - 1, serialised as a one-bitmap ``RoaringBitmapArray``."""
        if rows >= 2**31:
            raise ValueError(f"a file of {rows} rows is past what one 32-bit bitmap holds")
        bitmap = self._roaring.bitmapOfRange(0, rows)
        bitmap.runOptimize()
        buffer = self._byte_buffer.allocate(bitmap.serializedSizeInBytes())
        bitmap.serialize(buffer)
        data = bytes(buffer.array())
        return struct.pack("<iii", _NATIVE_MAGIC, 1, len(data)) + data


def _physical_rows(add: Mapping[str, Any]) -> int | None:
    """Rows physically in the file (deleted ones included), from Delta's statistics."""
    stats = add.get("stats")
    if not stats:
        return None
    rows = json.loads(stats).get("numRecords") if isinstance(stats, str) else None
    return int(rows) if rows is not None else None
