"""What changed in a Delta table between two versions, read from its log: the files, and their rows with row ids.

A stream's net change between versions ``start`` and ``end`` is found from
the files alone. The commits after ``start`` name every file they added and
removed (a new deletion vector is a remove and an add of the same file), so
the files ``start`` read and ``end`` does not, and those ``end`` reads and
``start`` did not, hold every row that changed, and only the rows of those
files need reading: the cost follows what the commits touched, not the
table's size. Delta's row tracking gives each row a stable id and the version
that last changed it, so a row found on both sides with the same commit
version did not change (OPTIMIZE moved it), and one with a newer commit
version was updated. A file on both sides with different deletion vectors is
narrowed to the rows one vector hides and the other does not
(:mod:`lakeclone.delta.vectors`): its other rows are the same on both sides.

Reading a chosen set of files with their deletion vectors and row ids is not
in Delta's public API; :func:`files_frame` uses ``DeltaLog.createDataFrame``,
the call Delta's own change data feed and streaming source read files with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.delta.log import TableLog

ROW_ID = "_metadata.row_id"
ROW_COMMIT_VERSION = "_metadata.row_commit_version"
BASE_ROW_ID = "_metadata.base_row_id"


def _key(action: Mapping[str, Any]) -> tuple[str, str, str, int]:
    """A file as one snapshot reads it: its path and its deletion vector."""
    vector = action.get("deletionVector") or {}
    return (
        str(action["path"]),
        str(vector.get("storageType", "")),
        str(vector.get("pathOrInlineDv", "")),
        int(vector.get("offset") or 0),
    )


@dataclass
class FileChanges:
    """The files behind the changes of the commits after ``start`` up to ``end``, as add actions (Delta's JSON form).

    Attributes:
        removed: files ``start`` read (with its deletion vectors) that ``end`` does not.
        added: files ``end`` reads (with its deletion vectors) that ``start`` did not.
        appended: every data file the commits wrote as a data change, as it was written.
        data_changed: whether any commit in the interval changed data (OPTIMIZE does not).
    """

    start: int
    end: int
    removed: list[dict[str, Any]] = field(default_factory=list)
    added: list[dict[str, Any]] = field(default_factory=list)
    appended: list[dict[str, Any]] = field(default_factory=list)
    data_changed: bool = False


def commit_actions(log: TableLog, version: int) -> list[dict[str, Any]]:
    """The actions of one commit, read from its log file by Delta's own LogStore (so through Hadoop)."""
    jvm = log.delta.jvm
    delta_log = jvm.delta_log(log.location)
    path = jvm.cls("org.apache.spark.sql.delta.util.FileNames").unsafeDeltaFile(delta_log.logPath(), version)
    lines = delta_log.store().read(path, delta_log.newDeltaHadoopConf())
    text = jvm.joined(jvm.cls("scala.jdk.javaapi.CollectionConverters").asJava(lines))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def file_changes(log: TableLog, start: int, end: int) -> FileChanges:
    """The files that changed between versions ``start`` and ``end`` (``start`` < ``end``), from the commits between."""
    changes = FileChanges(start, end)
    added: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    removed: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for version in range(start + 1, end + 1):
        actions = commit_actions(log, version)
        # Removes first: a commit that gives a file a new deletion vector removes it and adds it again.
        rewritten = set()
        for action in (a["remove"] for a in actions if "remove" in a):
            key = _key(action)
            if added.pop(key, None) is None:
                removed[key] = action
            rewritten.add(key[0])
            changes.data_changed = changes.data_changed or bool(action.get("dataChange", True))
        for action in (a["add"] for a in actions if "add" in a):
            added[_key(action)] = action
            if action.get("dataChange", True):
                changes.data_changed = True
                # A file the commit also removed only got a new deletion vector: it appends nothing.
                if action["path"] not in rewritten:
                    changes.appended.append(action)
    changes.removed = [_as_add(remove) for remove in removed.values()]
    changes.added = list(added.values())
    return changes


def narrowed(log: TableLog, changes: FileChanges) -> FileChanges:
    """``changes`` with each file whose deletion vector changed reduced to the rows that vector change hid or showed.

    The rows a file shows on both sides are the same rows, unchanged, so only
    those newly hidden (on the old side) and newly shown (on the new side) can
    be changes. A file whose statistics lack its row count stays whole.
    """
    from lakeclone.delta.vectors import DeletionVectors

    before = {add["path"]: add for add in changes.removed}
    after = {add["path"]: add for add in changes.added}
    rewritten = before.keys() & after.keys()
    if not rewritten:
        return changes
    vectors = DeletionVectors(log)
    removed = [add for add in changes.removed if add["path"] not in rewritten]
    added = [add for add in changes.added if add["path"] not in rewritten]
    for path in sorted(rewritten):
        try:
            hidden, shown = vectors.only(before[path], after[path])
        except ValueError:
            removed.append(before[path])
            added.append(after[path])
            continue
        removed.extend([hidden] if hidden is not None else [])
        added.extend([shown] if shown is not None else [])
    return FileChanges(changes.start, changes.end, removed, added, appended=changes.appended, data_changed=changes.data_changed)


def _as_add(remove: Mapping[str, Any]) -> dict[str, Any]:
    """The add action a remove action undoes: the file as the earlier snapshot read it."""
    add: dict[str, Any] = {
        "path": remove["path"],
        "partitionValues": remove.get("partitionValues") or {},
        "size": int(remove.get("size") or 0),
        "modificationTime": 0,
        "dataChange": True,
    }
    for key in ("deletionVector", "baseRowId", "defaultRowCommitVersion", "tags"):
        if remove.get(key) is not None:
            add[key] = remove[key]
    return add


def files_frame(log: TableLog, adds: Sequence[Mapping[str, Any]], *, version: int | None = None) -> DataFrame:
    """The rows of ``adds`` (add actions, each with its deletion vector), read by Delta with the schema of ``version``.

    The frame has the table's columns and Delta's ``_metadata`` column, whose
    ``row_id``, ``row_commit_version`` and ``base_row_id`` come from row tracking.
    """
    from pyspark.sql import DataFrame

    jvm = log.delta.jvm
    delta_log = jvm.delta_log(log.location)
    snapshot = log.snapshot_object(version)
    files = jvm.seq(jvm.action(json.dumps({"add": dict(add)})) for add in adds)
    with jvm.active():
        frame = delta_log.createDataFrame(snapshot, files, False, jvm.none())
    return DataFrame(frame, log.delta.spark)
