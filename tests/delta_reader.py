"""An independent Delta reader for tests: the Delta kernel (Rust), not delta-rs, not Spark.

Tables lakeclone writes must be genuine Delta tables that any Delta reader can
open. Tests read them with the kernel and compare with what lakeclone's own
SELECT returns.
"""

from __future__ import annotations

import datetime as dt
import pathlib
from typing import Any
from urllib.parse import unquote, urlparse

import delta_kernel_rust_sharing_wrapper as kernel
import pyarrow as pa


def local_path(location: str) -> pathlib.Path:
    """A table location as lakeclone reports it (a path or a ``file://`` URI) as a local path."""
    if location.startswith("file:"):
        return pathlib.Path(unquote(urlparse(location).path))
    return pathlib.Path(location)


def kernel_read(location: str) -> pa.Table:
    """The latest snapshot of the Delta table at ``location``, read by the Delta kernel."""
    uri = local_path(location).resolve().as_uri() + "/"
    interface = kernel.PythonInterface(uri)
    snapshot = kernel.Table(uri).snapshot(interface)
    return kernel.ScanBuilder(snapshot).build().execute(interface).read_all()


def kernel_rows(location: str) -> list[tuple[Any, ...]]:
    """The kernel's rows as sorted tuples, columns in schema order (None sorts first)."""
    table = kernel_read(location)
    rows = [tuple(_naive_utc(r[name]) for name in table.column_names) for r in table.to_pylist()]
    return sorted(rows, key=_sort_key)


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
