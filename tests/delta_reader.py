"""Independent Delta readers for tests: the Delta kernel (Rust), delta-spark read directly, and the log's JSON.

Tables lakeclone writes must be genuine Delta tables that any Delta reader can
open. Tests read them with the kernel and with delta-spark's own reader (not
through lakeclone) and compare with what lakeclone's own SELECT returns.
"""

from __future__ import annotations

import datetime as dt
import json
import pathlib
import uuid
from typing import Any
from urllib.parse import unquote, urlparse

import delta_kernel_rust_sharing_wrapper as kernel
import deltalake
import pyarrow as pa


def local_path(location: str) -> pathlib.Path:
    """A table location as lakeclone and Delta report it (a path, or Hadoop's ``file:/path``) as a local path.

    Hadoop's form is not percent-encoded: ``file:/tmp/100%20`` is the folder ``100%20``.
    """
    if location.startswith("file:"):
        return pathlib.Path(urlparse(location).path)
    return pathlib.Path(location)


def log_file_path(table: str, path: str) -> str:
    """The local file an add or remove action names: a URI-encoded path, relative or absolute."""
    if ":" in path.split("/", 1)[0]:
        return unquote(urlparse(path).path)
    return str(local_path(table) / unquote(path))


def kernel_read(location: str) -> pa.Table:
    """The latest snapshot of the Delta table at ``location``, read by the Delta kernel."""
    uri = local_path(location).resolve().as_uri() + "/"
    interface = kernel.PythonInterface(uri)
    snapshot = kernel.Table(uri).snapshot(interface)
    return kernel.ScanBuilder(snapshot).build().execute(interface).read_all()


def kernel_rows(location: str) -> list[tuple[Any, ...]]:
    """The kernel's rows as sorted tuples, columns in schema order (None sorts first)."""
    return _arrow_rows(kernel_read(location))


def _arrow_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    rows = [tuple(_naive_utc(r[name]) for name in table.column_names) for r in table.to_pylist()]
    return sorted(rows, key=_sort_key)


def deltars_rows(location: str) -> list[tuple[Any, ...]]:
    """The latest snapshot as delta-rs (``deltalake``, the reader behind polars' and pandas' Delta access) reads it, sorted.

    delta-rs 1.6 refuses tables with the deletion vectors reader feature.
    """
    return _arrow_rows(deltalake.DeltaTable(str(local_path(location))).to_pyarrow_table())


def spark_rows(spark: Any, location: str) -> list[tuple[Any, ...]]:
    """The latest snapshot as delta-spark itself reads it, as sorted tuples."""
    return sorted_rows(spark.read.format("delta").load(str(location)).collect())


def _naive_utc(value: Any) -> Any:
    # Delta's TIMESTAMP is UTC; PySpark hands back naive datetimes in the session's zone (UTC).
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _sort_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((value is not None, value) for value in row)


def sorted_rows(rows: Any) -> list[tuple[Any, ...]]:
    """Spark ``Row``s (or tuples) as sorted tuples, comparable with :func:`kernel_rows`."""
    return sorted((tuple(r) for r in rows), key=_sort_key)


# The log itself, read straight from its JSON commits (lakeclone keeps every one). --------------


def commit_actions(location: str, version: int) -> list[dict[str, Any]]:
    """The actions of one commit, as its JSON file holds them."""
    path = local_path(location) / "_delta_log" / f"{version:020d}.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def protocol(location: str) -> dict[str, Any]:
    """The table's protocol action at its latest version."""
    return dict(_last_action(location, "protocol", latest_version(location)))


def latest_version(location: str) -> int:
    """The newest version whose commit file exists."""
    log = local_path(location) / "_delta_log"
    return max(int(p.name.split(".")[0]) for p in log.glob("*.json"))


def _file_key(location: str, action: dict[str, Any]) -> tuple[str, str | None]:
    """A file's identity in the log: its path and its deletion vector, as the Delta protocol defines it."""
    vector = action.get("deletionVector")
    unique = None if not vector else f"{vector['storageType']}{vector['pathOrInlineDv']}@{vector.get('offset')}"
    return log_file_path(location, action["path"]), unique


def live_adds(location: str, version: int | None = None) -> dict[str, dict[str, Any]]:
    """The add actions live at ``version`` (the latest when None), by the local path of their file."""
    end = latest_version(location) if version is None else version
    live: dict[tuple[str, str | None], dict[str, Any]] = {}
    for v in range(end + 1):
        actions = commit_actions(location, v)
        # Within a commit, removes apply before adds: a file re-added with a new deletion vector stays.
        for action in actions:
            if "remove" in action:
                live.pop(_file_key(location, action["remove"]), None)
        for action in actions:
            if "add" in action:
                live[_file_key(location, action["add"])] = action["add"]
    return {path: add for (path, _), add in live.items()}


def live_files(location: str, version: int | None = None) -> list[str]:
    """The local paths of the data files live at ``version`` (the latest when None), sorted."""
    return sorted(live_adds(location, version))


# Deletion vector files, and every file a table needs or ever named. -----------------------------

# The protocol's Z85 alphabet, in which a deletion vector descriptor writes its file's UUID.
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_UUID_LENGTH = 20


def deletion_vector_file(location: str, vector: dict[str, Any]) -> str | None:
    """The local path of the file a ``deletionVector`` descriptor names; None when the vector is inline.

    Per the Delta protocol, storage type ``u`` is an optional folder prefix and a
    Z85-encoded UUID, naming ``<table>/<prefix>/deletion_vector_<uuid>.bin``;
    type ``p`` is an absolute path.
    """
    kind, encoded = vector["storageType"], vector["pathOrInlineDv"]
    if kind == "p":
        return log_file_path(location, encoded)
    if kind != "u":
        return None
    prefix, z85 = encoded[:-_Z85_UUID_LENGTH], encoded[-_Z85_UUID_LENGTH:]
    data = b""
    for start in range(0, len(z85), 5):
        value = 0
        for char in z85[start : start + 5]:
            value = value * len(_Z85) + _Z85.index(char)
        data += value.to_bytes(4, "big")
    return str(local_path(location) / prefix / f"deletion_vector_{uuid.UUID(bytes=data)}.bin")


def action_files(location: str, action: dict[str, Any]) -> list[str]:
    """The local paths an add or remove action names: its data file, and its deletion vector's file if any."""
    files = [log_file_path(location, action["path"])]
    vector = action.get("deletionVector")
    dv = deletion_vector_file(location, vector) if vector else None
    return files if dv is None else [*files, dv]


def needed_files(location: str, version: int | None = None) -> set[str]:
    """Every file (data and deletion vector) the snapshot at ``version`` (the latest when None) reads."""
    return {f for add in live_adds(location, version).values() for f in action_files(location, add)}


def named_files(location: str) -> set[str]:
    """Every file (data and deletion vector) any commit of the table names, in an add or a remove."""
    return {
        f
        for v in range(latest_version(location) + 1)
        for action in commit_actions(location, v)
        for kind in ("add", "remove")
        if kind in action
        for f in action_files(location, action[kind])
    }


def folder_files(location: str) -> set[str]:
    """The local paths of every file under a table's folder except its log."""
    root = local_path(location)
    return {str(p) for p in root.rglob("*") if p.is_file() and "_delta_log" not in p.relative_to(root).parts}


# A snapshot's metadata and its files' statistics, from the log's JSON. --------------------------


def table_configuration(location: str, version: int | None = None) -> dict[str, str]:
    """The table properties (``metaData.configuration``) in force at ``version`` (the latest when None)."""
    end = latest_version(location) if version is None else version
    return dict(_last_action(location, "metaData", end).get("configuration") or {})


def _last_action(location: str, kind: str, end: int) -> dict[str, Any]:
    """The newest ``kind`` action (``metaData``, ``protocol``) in the commits up to version ``end``."""
    for v in range(end, -1, -1):
        found = [action[kind] for action in commit_actions(location, v) if kind in action]
        if found:
            return dict(found[-1])
    raise ValueError(f"no {kind} action in the log of {location} up to version {end}")


def live_stats(location: str, version: int | None = None) -> dict[str, dict[str, Any]]:
    """The statistics (``numRecords``, ``minValues``, ...) of the files live at ``version``, by local path.

    A file whose add action carries no statistics maps to an empty dict, so that a
    test reading a statistic from it fails on the missing key.
    """
    return {path: json.loads(add["stats"]) if add.get("stats") else {} for path, add in live_adds(location, version).items()}
