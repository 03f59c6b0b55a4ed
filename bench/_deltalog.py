"""An independent reading of a Delta table's log, for the benchmarks' audits.

The benchmarks check lakeclone's results (which files an UPDATE rewrote, which
files a VACUUM plan deletes) against the Delta log itself, so this module
shares no code with lakeclone or delta-spark: it replays the JSON commits in
``_delta_log`` with the standard library. It reads only local tables whose
every JSON commit is still there (lakeclone's tables keep their whole log:
``delta.enableExpiredLogCleanup`` is off), and it never touches Spark, so an
audit between two timed statements does not warm Delta's caches for the next.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

LOG = "_delta_log"
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


@dataclass(frozen=True)
class LiveFile:
    """A data file a version reads, with the deletion vector that hides some of its rows.

    Attributes:
        path: the data file, an absolute local path.
        deletion_vector: the deletion vector's file (an absolute local path), or
            ``"inline"`` for one stored in the log; None without one.
        deleted_rows: rows the deletion vector hides.
        size: bytes, from the add action.
        num_records: rows in the file, from the add action's stats (0 when unknown).
    """

    path: str
    deletion_vector: str | None
    deleted_rows: int
    size: int
    num_records: int

    @property
    def files(self) -> tuple[str, ...]:
        """The files on storage this entry needs."""
        if self.deletion_vector is None or self.deletion_vector == "inline":
            return (self.path,)
        return (self.path, self.deletion_vector)


@dataclass
class Replayed:
    """A table's log replayed up to one version.

    Attributes:
        version: the version replayed to.
        live: the version's files, by data file path.
        ever: every file (data and deletion vector) that any version up to this one read.
    """

    version: int
    live: dict[str, LiveFile] = field(default_factory=dict)
    ever: set[str] = field(default_factory=set)

    @property
    def referenced(self) -> set[str]:
        """Every file on storage the version reads (data files and deletion vectors)."""
        return {f for entry in self.live.values() for f in entry.files}


def local_path(uri: str) -> str:
    """A ``file:`` URI (Hadoop's ``file:/x`` or ``file:///x``) or a plain path as a normalized local path."""
    if uri.startswith("file:"):
        return os.path.normpath(unquote(urlsplit(uri).path))
    return os.path.normpath(uri)


def commit_files(table: str) -> Iterator[tuple[int, str]]:
    """Each JSON commit of the table in folder ``table``, oldest first; refuses a log with a gap."""
    folder = os.path.join(table, LOG)
    versions = sorted(int(name[:20]) for name in os.listdir(folder) if name.endswith(".json") and name[:20].isdigit())
    if not versions or versions != list(range(versions[-1] + 1)):
        raise ValueError(f"{folder}: the JSON commits are not all there (versions {versions[:3]}...{versions[-3:]})")
    for version in versions:
        yield version, os.path.join(folder, f"{version:020d}.json")


def replay(table: str, version: int | None = None) -> Replayed:
    """Replay the log of the table in local folder (or ``file:`` URI) ``table`` up to ``version`` (the latest)."""
    table = local_path(table)
    live: dict[tuple[str, str], LiveFile] = {}
    state = Replayed(-1)
    for number, path in commit_files(table):
        if version is not None and number > version:
            break
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                action = json.loads(line)
                if "add" in action:
                    add = action["add"]
                    entry = _live_file(add, table)
                    live[(entry.path, _vector_id(add.get("deletionVector")))] = entry
                    state.ever.update(entry.files)
                elif "remove" in action:
                    remove = action["remove"]
                    live.pop((_data_path(remove["path"], table), _vector_id(remove.get("deletionVector"))), None)
        state.version = number
    state.live = {entry.path: entry for entry in live.values()}
    return state


def _data_path(path: str, table: str) -> str:
    # Delta writes a file in the table's folder as a relative, URI-encoded path, and one elsewhere
    # (a shallow clone's source files) as an absolute URI.
    if urlsplit(path).scheme:
        return local_path(path)
    return os.path.normpath(os.path.join(table, unquote(path)))


def _vector_id(vector: dict[str, Any] | None) -> str:
    """A deletion vector's unique id, as Delta keys a file's entries by (path, vector)."""
    if not vector:
        return ""
    offset = vector.get("offset")
    return f"{vector['storageType']}{vector['pathOrInlineDv']}" + (f"@{offset}" if offset is not None else "")


def _live_file(add: dict[str, Any], table: str) -> LiveFile:
    vector = add.get("deletionVector") or None
    stats = json.loads(add["stats"]) if add.get("stats") else {}
    return LiveFile(
        path=_data_path(add["path"], table),
        deletion_vector=_vector_path(vector, table) if vector else None,
        deleted_rows=int(vector.get("cardinality") or 0) if vector else 0,
        size=int(add.get("size") or 0),
        num_records=int(stats.get("numRecords") or 0),
    )


def _vector_path(vector: dict[str, Any], table: str) -> str:
    """Where a deletion vector lives (Delta protocol, "Deletion Vector Descriptor Schema")."""
    kind, value = vector["storageType"], str(vector["pathOrInlineDv"])
    if kind == "i":
        return "inline"
    if kind == "p":
        return local_path(value)
    if kind == "u":  # <random prefix><UUID in Z85, 20 characters>
        prefix, encoded = value[:-20], value[-20:]
        name = f"deletion_vector_{_z85_uuid(encoded)}.bin"
        return os.path.normpath(os.path.join(table, prefix, name))
    raise ValueError(f"unknown deletion vector storage type {kind!r}")


def _z85_uuid(text: str) -> uuid.UUID:
    data = b""
    for start in range(0, len(text), 5):
        value = 0
        for char in text[start : start + 5]:
            value = value * 85 + _Z85.index(char)
        data += value.to_bytes(4, "big")
    return uuid.UUID(bytes=data)


def data_files(table: str) -> dict[str, int]:
    """Every file under a table's folder except its log, with its size: what a VACUUM may consider."""
    table = local_path(table)
    found: dict[str, int] = {}
    for folder, subfolders, names in os.walk(table):
        subfolders[:] = [s for s in subfolders if s != LOG and not (s.startswith((".", "_")) and s != "_change_data")]
        for name in names:
            if name.startswith((".", "_")):
                continue
            path = os.path.join(folder, name)
            found[os.path.normpath(path)] = os.path.getsize(path)
    return found
