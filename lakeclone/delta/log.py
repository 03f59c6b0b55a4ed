"""A Delta table's transaction log, read and committed through delta-rs.

delta-rs writes its own ``commitInfo.operation`` (``WRITE``, ``CREATE TABLE``)
and refuses to let a caller set it, so lakeclone records what a commit really
was under ``lakeclone.*`` keys of the same commitInfo: the operation, its
parameters and metrics, the query id, and the commit time by the Lake's clock.
The commit file's modification time is set to that time too, which is what
Delta readers without in-commit timestamps use for time travel.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, Schema
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError
from deltalake.transaction import (
    AddAction,
    CommitProperties,
    PostCommitHookProperties,
    RemoveAction,
    Transaction,
    create_table_with_add_actions,
)

from lakeclone.delta.paths import location_uri, resolve
from lakeclone.errors import ConcurrentWriteError, ExecutionError

KEY = "lakeclone."
# Delta truncates long string stats; lakeclone simply leaves them out.
MAX_STRING_STAT = 32
PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")

# delta-rs may delete "expired" log files after a checkpoint, judging age by the
# machine's clock and the files' times; lakeclone stamps commits with the Lake's
# clock and decides itself what history retention keeps, so it never lets it.
HOOKS = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=False)


@dataclass(frozen=True)
class DataFile:
    """One data file of a snapshot.

    Attributes:
        path: the add action's path, decoded (relative, or an absolute ``file://`` URI).
        local_path: where the file is on disk.
        size: bytes.
        num_records: rows, from the add action's stats.
        stats: the add action's stats JSON; empty when the snapshot was read without stats.
        modification_time: the add action's modification time, in epoch milliseconds.
    """

    path: str
    local_path: str
    size: int
    num_records: int
    stats: str
    modification_time: int = 0


@dataclass(frozen=True)
class Snapshot:
    """A table at one version: its schema, properties and live files."""

    location: str
    version: int
    schema_json: str
    configuration: Mapping[str, str]
    files: tuple[DataFile, ...]
    table: DeltaTable = field(repr=False, compare=False)

    @property
    def num_records(self) -> int:
        return sum(f.num_records for f in self.files)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class CommitInfo:
    """What a commit does, as DESCRIBE HISTORY will show it."""

    operation: str
    timestamp: dt.datetime
    query_id: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    metrics: Mapping[str, int] = field(default_factory=dict)

    def custom_metadata(self) -> dict[str, Any]:
        return {
            KEY + "operation": self.operation,
            KEY + "operationParameters": {k: str(v) for k, v in self.parameters.items()},
            KEY + "operationMetrics": {k: str(v) for k, v in self.metrics.items()},
            KEY + "timestamp": epoch_ms(self.timestamp),
            KEY + "queryId": self.query_id or "",
        }


@dataclass(frozen=True)
class Commit:
    """One entry of a table's history."""

    version: int
    timestamp: dt.datetime
    operation: str
    parameters: Mapping[str, str]
    metrics: Mapping[str, str]
    query_id: str | None
    read_version: int | None
    is_blind_append: bool | None
    engine_info: str | None


def epoch_ms(moment: dt.datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_epoch_ms(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)


class DeltaLog:
    """The log of the Delta table in ``location`` (a local folder)."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self.location = os.fspath(Path(location).resolve())
        if PERCENT_ESCAPE.search(self.location):
            # delta-rs decodes a table's path twice, so "100%20" would become "100 ".
            raise ExecutionError(
                f"lakeclone cannot keep a Delta table in '{self.location}': its path contains a "
                "percent escape (%XX), which the Delta library misreads. Use another folder name."
            )
        self.uri = location_uri(self.location)

    def exists(self) -> bool:
        return DeltaTable.is_deltatable(self.uri)

    def create(
        self,
        schema_json: str,
        *,
        info: CommitInfo,
        name: str | None = None,
        configuration: Mapping[str, str] | None = None,
        adds: Sequence[DataFile] = (),
    ) -> None:
        """Write version 0: the protocol, the metadata and any initial files."""
        os.makedirs(self.location, exist_ok=True)
        try:
            create_table_with_add_actions(
                self.uri,
                Schema.from_json(schema_json),
                [_add_action(f, info.timestamp) for f in adds],
                mode="error",
                name=name,
                configuration=dict(configuration or {}),
                commit_properties=CommitProperties(custom_metadata=info.custom_metadata()),
                post_commithook_properties=HOOKS,
            )
        except DeltaError as error:
            raise ExecutionError(f"Cannot create a Delta table at {self.uri}: {error}") from None
        self._stamp(0, info.timestamp)

    def snapshot(self, version: int | None = None, *, stats: bool = False) -> Snapshot:
        """The table at ``version`` (the latest when None).

        Args:
            version: the version to read.
            stats: also rebuild each file's stats JSON, which only a commit that
                adds another table's files (a clone) needs; it is the slow part
                of reading a large snapshot.
        """
        table = DeltaTable(self.uri, version=version) if version is not None else DeltaTable(self.uri)
        return self._snapshot(table, stats=stats)

    def latest_version(self) -> int:
        return DeltaTable(self.uri).version()

    def history(self) -> list[Commit]:
        """Every commit, oldest first."""
        entries = DeltaTable(self.uri).history()
        return sorted((_commit(e) for e in entries), key=lambda c: c.version)

    def commit(
        self,
        snapshot: Snapshot,
        *,
        info: CommitInfo,
        adds: Sequence[DataFile] = (),
        removes: Sequence[DataFile] = (),
        app_transactions: Sequence[Transaction] = (),
        data_change: bool = True,
    ) -> int:
        """Commit ``adds`` and ``removes`` on top of ``snapshot`` as one atomic version.

        delta-rs checks the commit against whatever was committed since the
        snapshot was read, so two writers removing the same file cannot both win.

        Returns:
            The new version.

        Raises:
            ConcurrentWriteError: another writer changed files this commit removes.
        """
        moment = epoch_ms(info.timestamp)
        actions: list[AddAction | RemoveAction] = [
            RemoveAction(f.path, data_change, moment, f.size) for f in removes
        ]
        actions += [_add_action(f, info.timestamp, data_change=data_change) for f in adds]
        table = snapshot.table
        commit_id = uuid.uuid4().hex
        try:
            table.create_write_transaction(
                actions,
                "append",
                Schema.from_json(snapshot.schema_json),
                commit_properties=CommitProperties(
                    custom_metadata={
                        **info.custom_metadata(),
                        KEY + "readVersion": snapshot.version,
                        KEY + "isBlindAppend": not removes,
                        KEY + "commitId": commit_id,
                    },
                    app_transactions=list(app_transactions) or None,
                ),
                post_commithook_properties=HOOKS,
            )
        except CommitFailedError as error:
            raise ConcurrentWriteError(
                f"Transaction conflict: another statement changed table files this one rewrites ({error})."
            ) from None
        version = self._version_of(commit_id, after=snapshot.version)
        self._stamp(version, info.timestamp)
        return version

    def _version_of(self, commit_id: str, *, after: int) -> int:
        """The version a commit landed at: delta-rs may have moved it past others' commits."""
        table = DeltaTable(self.uri)
        newest = table.version()
        for entry in table.history(limit=newest - after):
            if entry.get(KEY + "commitId") == commit_id:
                return int(entry["version"])
        raise ExecutionError(f"Committed to {self.uri}, but the commit is not in its history.")

    def _stamp(self, version: int, moment: dt.datetime) -> None:
        seconds = moment.timestamp()
        os.utime(os.path.join(self.location, "_delta_log", f"{version:020d}.json"), (seconds, seconds))

    def _snapshot(self, table: DeltaTable, *, stats: bool) -> Snapshot:
        actions = pa.table(table.get_add_actions(flatten=False)).to_pylist()
        files = tuple(
            DataFile(
                path=unquote(a["path"]),
                local_path=resolve(a["path"], self.location),
                size=a["size_bytes"],
                num_records=a.get("num_records") or 0,
                stats=_stats_json(a) if stats else "",
                modification_time=a.get("modification_time") or 0,
            )
            for a in actions
        )
        metadata = table.metadata()
        return Snapshot(
            location=self.location,
            version=table.version(),
            schema_json=table.schema().to_json(),
            configuration=dict(metadata.configuration),
            files=files,
            table=table,
        )


def open_log(location: str | os.PathLike[str]) -> DeltaLog:
    """The log at ``location``, which must hold a Delta table."""
    log = DeltaLog(location)
    try:
        DeltaTable(log.uri)
    except TableNotFoundError:
        raise ExecutionError(f"{log.uri} is not a Delta table.") from None
    return log


def _add_action(file: DataFile, moment: dt.datetime, *, data_change: bool = True) -> AddAction:
    if not file.stats:
        raise ValueError(f"{file.path} has no stats: read its snapshot with stats=True to re-add it")
    return AddAction(
        file.path, file.size, {}, file.modification_time or epoch_ms(moment), data_change, file.stats
    )


def _stats_json(action: Mapping[str, Any]) -> str:
    """Rebuild the stats JSON from delta-rs's parsed add action."""
    stats: dict[str, Any] = {"numRecords": action.get("num_records") or 0}
    for key, name in (("min", "minValues"), ("max", "maxValues"), ("null_count", "nullCount")):
        values = action.get(key)
        if values:
            if key == "null_count":
                stats[name] = {k: v for k, v in values.items() if v is not None}
            else:
                kept = {k: stat_value(v) for k, v in values.items()}
                stats[name] = {k: v for k, v in kept.items() if v is not None}
    return json.dumps(stats, separators=(",", ":"))


def stat_value(value: Any) -> Any:
    """A min or max value as Delta's stats JSON holds it, or None where Delta keeps none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING_STAT else None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return None


def _commit(entry: Mapping[str, Any]) -> Commit:
    stamp = entry.get(KEY + "timestamp") or entry.get("timestamp") or 0
    params = entry.get(KEY + "operationParameters")
    if params is None:
        params = {k: str(v) for k, v in (entry.get("operationParameters") or {}).items()}
    metrics = entry.get(KEY + "operationMetrics")
    if metrics is None:
        metrics = {k: str(v) for k, v in (entry.get("operationMetrics") or {}).items()}
    return Commit(
        version=int(entry["version"]),
        timestamp=from_epoch_ms(int(stamp)),
        operation=entry.get(KEY + "operation") or entry.get("operation") or "UNKNOWN",
        parameters=params,
        metrics=metrics,
        query_id=entry.get(KEY + "queryId") or None,
        read_version=entry.get(KEY + "readVersion", entry.get("readVersion")),
        is_blind_append=entry.get(KEY + "isBlindAppend", entry.get("isBlindAppend")),
        engine_info=entry.get("engineInfo"),
    )
