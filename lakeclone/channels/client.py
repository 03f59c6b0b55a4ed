"""Streaming clients and channels: rows pushed from Python into a table, exactly once by offset token.

Example:
    >>> with lake.streaming_client("ingest") as client:                       # doctest: +SKIP
    ...     channel, status = client.open_channel("orders_0", table="orders")
    ...     start = status.latest_committed_offset_token                       # None for a new channel
    ...     channel.append_rows([{"id": 1}, {"id": 2}], offset_token="2")
    ...     channel.wait_for_commit("2", timeout_seconds=30)
    True
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.channels import log as channel_log
from lakeclone.channels.compaction import ENABLED_CONF, CompactionPolicy
from lakeclone.channels.convert import RowConverter, UnsupportedColumnType, json_text, staging_schema
from lakeclone.channels.work import (
    ChannelErrors,
    CompactChannelTable,
    FlushChannel,
    OpenChannel,
    Opening,
    RecordChannelErrors,
    register,
    table_of,
)
from lakeclone.clustering.optimize import optimize_table
from lakeclone.delta import transaction
from lakeclone.delta.log import Delta
from lakeclone.dialect import table_reference
from lakeclone.engine import history, results
from lakeclone.errors import (
    ChannelInsertError,
    ChannelInvalidError,
    ChannelOpenError,
    ConcurrentWriteError,
    InsertError,
    InvalidParameterError,
    LakecloneError,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType
    from typing_extensions import Self

    from lakeclone.catalog.entries import ChannelEntry, TableEntry
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution
    from lakeclone.lake import Lake

LOG = logging.getLogger(__name__)

MAX_CLIENT_LAG = dt.timedelta(minutes=10)
DEFAULT_CLIENT_LAG = dt.timedelta(seconds=1)
EXPIRY = dt.timedelta(days=30)
# How often (real time) the flusher looks at the Lake's clock.
_POLL_SECONDS = 0.02
_OPEN_ATTEMPTS = 20
# A flush of fewer rows writes one file.
_ROWS_PER_FILE = 200_000


class OnError(str, Enum):
    """What an insert does with rows that fail conversion (Snowflake's ON_ERROR)."""

    CONTINUE = "CONTINUE"
    """Load the good rows; return every error."""
    SKIP_BATCH = "SKIP_BATCH"
    """Load none of a batch with any error; return every error."""
    ABORT = "ABORT"
    """Reject the whole batch and raise at the first error."""


class ChannelStatusCode(str, Enum):
    SUCCESS = "SUCCESS"
    INVALID = "INVALID"
    CLOSED = "CLOSED"


@dataclass(frozen=True)
class InsertValidationResponse:
    """What an insert did: every error (row index, column, message); the rows without errors were loaded per ON_ERROR."""

    errors: tuple[InsertError, ...]
    inserted_row_count: int

    def has_errors(self) -> bool:
        return bool(self.errors)

    @property
    def error_row_count(self) -> int:
        return len({e.row_index for e in self.errors})


@dataclass(frozen=True)
class ChannelStatus:
    """A channel as its handle sees it.

    Attributes:
        latest_committed_offset_token: the token of its last commit to the table (None: none yet).
        rows_inserted_count: rows committed through the channel since it was created.
        rows_error_count: rows rejected with errors.
        last_error_message: the last of those errors, or a background flush's failure.
        lag: how long the oldest buffered row has waited, by the Lake's clock.
    """

    channel_name: str
    table: str
    status_code: ChannelStatusCode
    latest_committed_offset_token: str | None
    rows_inserted_count: int
    rows_error_count: int
    last_error_message: str | None
    lag: dt.timedelta
    buffered_row_count: int


def parse_lag(value: str | float | dt.timedelta) -> dt.timedelta:
    """``"1 second"``, ``"500 ms"``, ``"2 minutes"``, a number of seconds or a timedelta; at most 10 minutes."""
    if isinstance(value, dt.timedelta):
        lag = value
    elif isinstance(value, (int, float)):
        lag = dt.timedelta(seconds=value)
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|seconds?|m|min|minutes?)\s*", value, re.I)
        if match is None:
            raise InvalidParameterError(f"Invalid max_client_lag '{value}': use e.g. '1 second' or '500 milliseconds'.")
        amount, unit = float(match.group(1)), match.group(2).lower()
        factor = 60.0 if unit in {"m", "min", "minute", "minutes"} else 0.001 if unit.startswith("m") else 1.0
        lag = dt.timedelta(seconds=amount * factor)
    if lag <= dt.timedelta(0) or lag > MAX_CLIENT_LAG:
        raise InvalidParameterError("max_client_lag must be more than 0 and at most 10 minutes.")
    return lag


def clock_reading(lake: Lake) -> dt.datetime:
    """The Lake clock's time without consuming a reading (a ManualClock ticks a millisecond per reading)."""
    peek = getattr(lake.clock, "peek", None)
    return peek() if callable(peek) else lake.now()


class StreamingClient:
    """A client of one Lake that opens channels; a context manager that closes them all.

    It runs its commits in a Spark session and catalog connection of its own
    (like another worksheet), so a background flush never mixes with the
    user's statements, and flushes each channel's rows in the background at
    least every ``max_client_lag`` by the Lake's clock. The same background
    thread compacts a table its channels wrote once it has gathered enough
    small files (:mod:`~lakeclone.channels.compaction`), and has Delta compute
    the state the next flush's commit reads while that flush's rows gather.

    Attributes:
        compactions: how many compactions it has committed.
        last_compaction_error: why its last compaction failed (None: it did not).
    """

    def __init__(self, lake: Lake, name: str) -> None:
        if not name:
            raise InvalidParameterError("A streaming client needs a name.")
        self.name = name
        self.lake = lake
        # The client acts as the Lake's user in its current role (its channels need that role's privileges),
        # in a worksheet of its own: its background commits never mix with the user's statements.
        # It computes ahead the state its next commits read itself (see _compute_state_for_next_commits).
        self._session = lake.worksheet(progress=False, compute_ahead=False)
        spark = self._session.spark
        # Delta's post-commit auto compaction would make a flush wait; the flusher thread compacts after.
        spark.conf.set(ENABLED_CONF, "false")
        # A flush's rows reach Spark as Arrow batches. Below this size Spark would make them rows in the
        # driver and ship those inside the write's task, several times slower than the task reading the batches.
        spark.conf.set("spark.sql.execution.arrow.localRelationThreshold", "0")
        # The client's statements run one at a time in its session: a flush, an open, a compaction.
        self._work_lock = threading.RLock()
        # Delta's logs as the client's session reads them, for what needs no statement (a channel's token, a table's files).
        self._delta = Delta(spark)
        self._channels: list[Channel] = []
        self._written: dict[str, TableEntry] = {}
        self._written_lock = threading.Lock()
        # Flushes per table since its small files were last counted (a Spark job, so not after every flush).
        self._flushes_since_check: dict[str, int] = {}
        self.compactions = 0
        self.last_compaction_error: str | None = None
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_in_background, name=f"lakeclone-channels-{name}", daemon=True)
        self._flusher.start()
        self._closed = False

    def _run(self, statement: exp.Expression, label: str) -> DataFrame:
        """Run one of the client's statements in its session, under its work lock."""
        with self._work_lock:
            # Commits wait for other sessions' transactions as long as the Lake's statements do.
            self._session.lock_timeout = self.lake.lock_timeout
            return self._session.run_statement(statement, label=label)

    def open_channel(
        self,
        channel_name: str,
        *,
        table: str,
        on_error: OnError | str = OnError.ABORT,
        max_client_lag: str | float | dt.timedelta = DEFAULT_CLIENT_LAG,
    ) -> tuple[Channel, ChannelStatus]:
        """Open (or take over) the channel ``channel_name`` of ``table``.

        Any earlier handle of the channel, in any process, is invalid from now
        on: rows it buffered never land. The status's
        ``latest_committed_offset_token`` is where the source resumes.

        Raises:
            ChannelOpenError: the table has a column channels cannot fill.
            ObjectNotFoundError: no such table, or none the client's role may see.
            InsufficientPrivilegesError: the role may see the table but not insert into it.
        """
        if self._closed:
            raise ChannelInvalidError(f"Streaming client {self.name} is closed.")
        if not channel_name:
            raise InvalidParameterError("A channel needs a name.")
        policy = OnError(on_error.upper() if isinstance(on_error, str) else on_error)
        lag = parse_lag(max_client_lag)
        # An unqualified name means what it means in the Lake's SQL now: its current database and schema.
        reference = table_reference(table)
        if not reference.args.get("db") and self.lake.current_schema:
            reference.set("db", exp.to_identifier(self.lake.current_schema, quoted=True))
        if not reference.args.get("catalog") and self.lake.current_database:
            reference.set("catalog", exp.to_identifier(self.lake.current_database, quoted=True))
        opening = Opening(channel_name, self.name)
        self._run(OpenChannel(this=reference, work=opening), f"-- open channel {channel_name} on {table}")
        # What the statement opened: it ran, or it raised.
        assert opening.table is not None and opening.schema is not None
        assert opening.converter is not None and opening.entry is not None
        channel = Channel(
            self, opening.table, opening.schema, opening.converter, opening.entry, opening.version, opening.token, policy, lag
        )
        self._channels = [c for c in self._channels if c.is_valid and not c.is_closed] + [channel]
        return channel, channel.get_channel_status()

    def close(self) -> None:
        """Flush and close every channel it opened, and stop its background flushes."""
        if self._closed:
            return
        failure: LakecloneError | None = None
        for channel in list(self._channels):
            try:
                channel.close()
            except LakecloneError as error:
                failure = failure or error
        self._stop.set()
        self._flusher.join(timeout=60)
        self._closed = True
        self._session.close()
        if failure is not None:
            raise failure

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _flush_in_background(self) -> None:
        while not self._stop.wait(_POLL_SECONDS):
            now = clock_reading(self.lake)
            for channel in list(self._channels):
                if channel._due(now):
                    channel._flush_quietly()
            self._after_writes()

    def _wrote(self, table: TableEntry) -> None:
        """A flush landed in ``table``: the flusher thread looks at its small files and its next commit's state next."""
        with self._written_lock:
            self._written[table.id] = table
            self._flushes_since_check[table.id] = self._flushes_since_check.get(table.id, 0) + 1

    def _after_writes(self) -> None:
        """Compact the tables flushes wrote where due, then compute the state their next commits read."""
        if not self._written:
            return
        # The client's lock from taking the tables to the end: no flush of this client interleaves.
        with self._work_lock:
            with self._written_lock:
                tables, self._written = list(self._written.values()), {}
            self._compact(tables)
            self._compute_state_for_next_commits(tables)

    def _compact(self, tables: list[TableEntry]) -> None:
        for table in tables:
            if self._stop.is_set():
                return
            try:
                policy = self._policy(table)
                # Each flush wrote a file: counting the table's small files can wait until that many could be due.
                if policy.enabled and self._flushes_since_check.get(table.id, 0) >= policy.min_num_files:
                    self._compact_if_due(table)
                    self._flushes_since_check[table.id] = 0
            except Exception as error:  # compaction must never stop ingestion
                # One line, no traceback (a Spark failure's would be a Java one); the next flush tries again.
                text = str(error).strip()
                self.last_compaction_error = text.splitlines()[0] if text else type(error).__name__
                LOG.warning("compaction of %s failed (%s); it will be retried", table.qualified, self.last_compaction_error)

    def _compute_state_for_next_commits(self, tables: list[TableEntry]) -> None:
        """Have Delta compute the state of each of ``tables`` whose channels hold rows for their next flush.

        Delta computes a table's state (files, txn versions, domain metadata)
        once per snapshot, and a commit needs it for the version it starts from:
        on two cores about two thirds of a small flush's time. Computed here,
        while the next flush's rows gather, that commit finds it done, and a
        row waits for the write alone (bench_channels' latency figure).
        """
        waiting = {channel.table.id for channel in list(self._channels) if channel._waiting_since() is not None}
        for table in tables:
            if table.id not in waiting or self._stop.is_set():
                continue
            try:
                self._delta.table(table.location).compute_state()
            except Exception as error:  # only a head start: the next commit computes the state and reports failures
                LOG.debug("computing the state of %s ahead of its next commit failed: %s", table.qualified, error)

    def _policy(self, table: TableEntry) -> CompactionPolicy:
        """The table's compaction settings: its Delta properties, under the Lake's Spark session's settings."""
        configuration = self._delta.table(table.location).configuration()
        return CompactionPolicy.read(self.lake.spark, configuration)

    def _compact_if_due(self, table: TableEntry) -> bool:
        """Compact ``table`` if its small files say so (see CompactionPolicy); whether it did."""
        with self._work_lock:
            policy = self._policy(table)
            if not policy.due(f.size for f in self._delta.table(table.location).files()):
                return False
            label = f"-- compact {table.qualified}: its channels' small files"
            self._run(CompactChannelTable(this=table_of(table), work=table), label)
            self.compactions += 1
            self.last_compaction_error = None
            return True

    def _state(self, channel_id: str) -> ChannelEntry | None:
        """A channel's record as it stands now, read without waiting for a flush in progress.

        Read through the Lake the client was made from, whose reads apart outlive the client's own session:
        a channel's status reads after the client closed.
        """
        return self.lake.channel_state(channel_id)

    def _generation(self, channel_id: str) -> tuple[int, str] | None:
        entry = self._state(channel_id)
        return (entry.generation, entry.app_id) if entry else None


def _converter_for(catalog: Catalog, table: TableEntry, schema: StructType) -> RowConverter:
    """The table's row converter, or ChannelOpenError for a table channels refuse."""
    for default in catalog.definitions.column_defaults(table.id):
        if default.draws:
            raise ChannelOpenError(
                f"Channels cannot write table {table.qualified}: column {default.column} is AUTOINCREMENT/IDENTITY."
            )
        if default.expression is not None and default.expression.strip().upper() != "NULL":
            raise ChannelOpenError(f"Channels cannot write table {table.qualified}: column {default.column} has a default value.")
    for field in schema.fields:
        metadata = field.metadata or {}
        if "delta.identity.start" in metadata or "delta.generationExpression" in metadata:
            raise ChannelOpenError(
                f"Channels cannot write table {table.qualified}: column {field.name} is an identity or generated column."
            )
        if "CURRENT_DEFAULT" in metadata:
            raise ChannelOpenError(f"Channels cannot write table {table.qualified}: column {field.name} has a default value.")
        collation = getattr(field.dataType, "collation", None)
        if collation not in (None, "UTF8_BINARY"):
            raise ChannelOpenError(f"Channels cannot write table {table.qualified}: column {field.name} has a collation.")
    try:
        return RowConverter.for_schema(schema)
    except UnsupportedColumnType as error:
        raise ChannelOpenError(f"Channels cannot write table {table.qualified}: type {error} is not supported.") from None


def expire(catalog: Catalog, entry: ChannelEntry, now: dt.datetime) -> ChannelEntry:
    """A channel with no ingestion for 30 days starts over with a NULL token (the caller holds a catalog transaction)."""
    if now - (entry.last_committed_at or entry.created_at) <= EXPIRY:
        return entry
    catalog.channels.reset_channel(entry.id, now)
    fresh = catalog.channels.channel_by_id(entry.id)
    assert fresh is not None
    return fresh


@register(OpenChannel, "INSERT")
def _run_open(execution: Execution) -> DataFrame:
    """Open a channel of the table the statement names, for a client (see :class:`~lakeclone.channels.work.Opening`)."""
    opening: Opening = execution.expression.args["work"]
    table = execution.tables.entry(execution.expression.this)
    schema = execution.tables.log(table).schema()
    opening.converter = _converter_for(execution.catalog, table, schema)
    opening.entry, opening.version, opening.token = _open(execution, table, opening.channel, opening.client)
    opening.table, opening.schema = table, schema
    return results.status(execution.spark, f"Channel {opening.channel} opened.")


@register(CompactChannelTable, "OPTIMIZE")
def _run_compaction(execution: Execution) -> DataFrame:
    """Compact the small files channels wrote to a table, as Delta's auto compaction would."""
    table: TableEntry = execution.expression.args["work"]
    if execution.catalog.objects.live_table_at(table.location) is None:
        raise ChannelInvalidError(f"Table {table.qualified} was dropped.")
    return optimize_table(execution, table, auto=True)


@register(RecordChannelErrors, history.UNKNOWN)
def _run_record_errors(execution: Execution) -> DataFrame:
    """Record rows a channel rejected, or its background flush's failure, where SHOW CHANNELS reads them."""
    errors: ChannelErrors = execution.expression.args["work"]
    with execution.work.records():
        execution.catalog.channels.record_channel_errors(errors.channel_id, errors.rows, errors.message, errors.pending_since)
    return results.status(execution.spark, "Statement executed successfully.")


def _open(execution: Execution, table: TableEntry, name: str, client: str) -> tuple[ChannelEntry, int, str | None]:
    """Take the channel over and fence it: one commit that moves its txn version, so no older handle's flush can land.

    Returns the channel, the txn version of the fence and the token it carried over.
    """
    catalog = execution.catalog
    # Durable before the fencing commit: the commit carries the new handle's generation.
    with execution.work.durable():
        existing = catalog.channels.channel(table.id, name)
        if existing is not None:
            expire(catalog, existing, execution.now())
        entry = catalog.channels.open_channel(table.id, name, client, execution.now())
    log = execution.delta.table(table.location)
    for _ in range(_OPEN_ATTEMPTS):
        current = channel_log.txn_version(log, entry.app_id)
        token = channel_log.token_at(log, entry, current)
        try:
            if _write(execution, table, entry, current + 1, token, None, opened=True):
                with execution.work.records():
                    catalog.channels.cache_channel_token(entry.id, entry.app_id, current + 1, token)
                return entry, current + 1, token
        except ConcurrentWriteError:
            pass  # an older handle's flush won the race: read what it committed and fence again
    raise ChannelInvalidError(f"Channel {name} could not be opened: other handles kept committing to it.")


def _write(
    execution: Execution,
    table: TableEntry,
    entry: ChannelEntry,
    version: int,
    token: str | None,
    frame: DataFrame | None,
    *,
    opened: bool = False,
) -> bool:
    """One commit carrying the channel's txn version and token, and its rows if any; whether it landed.

    Delta's transaction commits the ``txn`` action with the rows' files, as
    its streaming sink does (see :func:`lakeclone.delta.transaction.commit_txn`);
    an open's fence is the ``txn`` action alone. Delta skips a stale version.
    """
    with execution.work.delta(parameters=channel_log.parameters(entry, version, token, opened=opened), target=table.location):
        now_ms = int(execution.now().timestamp() * 1000)
        try:
            return transaction.commit_txn(
                execution.delta, table.location, app_id=entry.app_id, version=version, last_updated_ms=now_ms, frame=frame
            )
        except transaction.ColumnsChanged as error:
            # Snowpipe Streaming's rule: a channel's table changing its columns invalidates the channel.
            columns = ", ".join(error.columns)
            raise ChannelInvalidError(
                f"Channel {entry.name} is invalid: table {table.qualified} no longer has column(s) {columns} "
                "as the channel opened them; reopen it."
            ) from None


@dataclass(frozen=True)
class _Flush:
    """A channel's flush: what it buffered, and the txn version its commit takes."""

    channel: Channel
    buffer: _Buffer
    version: int


@register(FlushChannel, "INSERT")
def _run_flush(execution: Execution) -> DataFrame:
    """Commit a channel's buffered rows with its token, unless another handle took the channel over or its table went."""
    flush: _Flush = execution.expression.args["work"]
    channel, buffer, version = flush.channel, flush.buffer, flush.version
    entry, table, catalog = channel._entry, channel.table, execution.catalog
    current = catalog.channels.channel_by_id(entry.id)
    if current is None or (current.generation, current.app_id) != (entry.generation, entry.app_id):
        raise ChannelInvalidError(f"Channel {channel.name} was reopened by another handle.")
    if catalog.objects.live_table_at(table.location) is None:
        raise ChannelInvalidError(f"The table of channel {channel.name} was dropped.")
    frame = _frame(execution.spark, channel._schema, buffer.tables)
    try:
        landed = _write(execution, table, entry, version, buffer.token, frame)
    except ConcurrentWriteError:
        landed = False
    if not landed:
        raise ChannelInvalidError(f"Channel {channel.name} was reopened by another handle.")
    with execution.work.records():
        # Rows inserted while this flush ran wait for the next: the channel's lag runs from the oldest of them.
        pending_since = channel._waiting_since()
        catalog.channels.record_channel_commit(
            entry.id, entry.app_id, version, buffer.token, buffer.rows, execution.now(), pending_since
        )
    return results.counts(execution.spark, [("number of rows inserted", buffer.rows)])


@dataclass
class _Buffer:
    """What a channel holds until its next commit: converted rows (Arrow tables, in order) and the token after them."""

    tables: list[pa.Table]
    rows: int
    token: str | None
    token_changed: bool
    oldest: dt.datetime | None

    @classmethod
    def empty(cls, token: str | None) -> _Buffer:
        return cls([], 0, token, False, None)


class Channel:
    """One channel's handle: buffers rows and their offset token, and commits them to the table.

    Get one from :meth:`StreamingClient.open_channel`.
    """

    def __init__(
        self,
        client: StreamingClient,
        table: TableEntry,
        schema: StructType,
        converter: RowConverter,
        entry: ChannelEntry,
        txn_version: int,
        token: str | None,
        on_error: OnError,
        max_client_lag: dt.timedelta,
    ) -> None:
        self.client = client
        self.table = table
        self.name = entry.name
        self.on_error = on_error
        self.max_client_lag = max_client_lag
        self._schema = schema
        self._converter = converter
        self._entry = entry
        self._txn_version = txn_version
        self._committed_token = token
        self._buffer = _Buffer.empty(token)
        self._buffer_lock = threading.Lock()
        self._invalid: str | None = None
        self._closed = False
        self._last_error: str | None = None

    # State ----------------------------------------------------------------------

    @property
    def is_valid(self) -> bool:
        """Whether this handle may still write: no later open of the channel, anywhere, took it over."""
        if self._invalid is None and not self._closed:
            current = self.client._generation(self._entry.id)
            if current != (self._entry.generation, self._entry.app_id):
                self._invalidate(f"Channel {self.name} was reopened by another handle.")
        return self._invalid is None

    @property
    def is_closed(self) -> bool:
        return self._closed

    def _invalidate(self, reason: str) -> None:
        self._invalid = reason
        with self._buffer_lock:
            self._buffer = _Buffer.empty(None)

    def _require_open(self) -> None:
        if self._closed:
            raise ChannelInvalidError(f"Channel {self.name} is closed.")
        if not self.is_valid:
            raise ChannelInvalidError(f"{self._invalid} This handle is invalid; its unflushed rows were discarded.")

    # Rows -----------------------------------------------------------------------

    def append_row(self, row: Mapping[str, Any], offset_token: str | None = None) -> None:
        """Buffer one row (see :meth:`append_rows`)."""
        self.append_rows([row], offset_token)

    def append_rows(self, rows: Sequence[Mapping[str, Any]], offset_token: str | None = None) -> None:
        """Buffer rows and the token that follows them; a background flush commits them.

        Errors are handled per the channel's ON_ERROR; with ABORT (the
        default) the first raises ChannelInsertError and nothing of the batch is
        kept. Errors kept under CONTINUE and SKIP_BATCH show in the channel's status.
        """
        self.insert_rows(rows, offset_token)

    def insert_row(self, row: Mapping[str, Any], offset_token: str | None = None) -> InsertValidationResponse:
        return self.insert_rows([row], offset_token)

    def insert_rows(self, rows: Sequence[Mapping[str, Any]], offset_token: str | None = None) -> InsertValidationResponse:
        """Buffer rows and the token that follows them, returning every error (row index, column, message).

        Rows with errors are counted in the channel's status (SHOW CHANNELS) by
        a statement of the client's session, which waits for a flush in progress.

        Raises:
            ChannelInsertError: ON_ERROR = ABORT and a row has an error (nothing buffered).
            ChannelInvalidError: the handle is invalid or closed.
        """
        self._require_open()
        if offset_token is not None and not isinstance(offset_token, str):
            raise InvalidParameterError("An offset token is a string.")
        converted = self._converter.convert(list(rows), offset_token)
        errors = converted.errors
        if errors and self.on_error is OnError.ABORT:
            raise ChannelInsertError(errors[:1])
        skipped = bool(errors) and self.on_error is OnError.SKIP_BATCH
        keep = 0 if skipped else converted.table.num_rows
        response = InsertValidationResponse(errors, keep)
        if errors:
            self._last_error = str(errors[-1])
            self._record_errors(response.error_row_count)
        now = clock_reading(self.client.lake)
        with self._buffer_lock:
            buffer = self._buffer
            if keep:
                buffer.tables.append(converted.table)
                buffer.rows += keep
            if offset_token is not None:
                buffer.token, buffer.token_changed = offset_token, True
            if buffer.oldest is None and (keep or offset_token is not None):
                buffer.oldest = now
        return response

    # Commits --------------------------------------------------------------------

    def flush(self) -> None:
        """Commit what is buffered now, as one Delta commit with its token; returns when it has landed."""
        self._require_open()
        self._flush()

    def _waiting_since(self) -> dt.datetime | None:
        """When the oldest row it holds for its next flush came (None: it holds none, or may not flush)."""
        if self._invalid is not None or self._closed:
            return None
        return self._buffer.oldest

    def _due(self, now: dt.datetime) -> bool:
        oldest = self._waiting_since()
        return oldest is not None and now - oldest >= self.max_client_lag

    def _flush_quietly(self) -> None:
        try:
            self._flush()
        except ChannelInvalidError as error:
            self._last_error = str(error)  # the handle's own end: the channel's new owner has no error
        except LakecloneError as error:
            # A background flush has no caller to raise to: its failure is the channel's last error,
            # in the catalog, where SHOW CHANNELS and the channel monitor of any process read it.
            self._last_error = str(error)
            try:
                self._record_errors(0, pending_since=self._waiting_since())
            except LakecloneError as failure:  # the flusher keeps going; the handle's status has the error
                LOG.warning("could not record channel %s's failed flush: %s", self.name, failure)

    def _flush(self) -> None:
        with self.client._work_lock:
            with self._buffer_lock:
                buffer = self._buffer
                if not buffer.rows and not buffer.token_changed:
                    return
                self._buffer = _Buffer.empty(buffer.token)
            try:
                self._commit(buffer)
            except ChannelInvalidError as error:
                self._invalidate(str(error))
                raise
            except BaseException:
                with self._buffer_lock:  # nothing landed: the rows wait for the next flush, in order
                    later = self._buffer
                    self._buffer = _Buffer(
                        buffer.tables + later.tables,
                        buffer.rows + later.rows,
                        later.token if later.token_changed else buffer.token,
                        True,
                        buffer.oldest,
                    )
                raise

    def _record_errors(self, rows: int, *, pending_since: dt.datetime | None = None) -> None:
        """Record ``rows`` rejected rows (none for a failed flush) and the last error, as a statement of the client.

        A failed flush also records when the oldest of the rows that now wait for the next was inserted.
        """
        assert self._last_error is not None
        errors = ChannelErrors(self._entry.id, rows, self._last_error, pending_since)
        self.client._run(RecordChannelErrors(this=table_of(self.table), work=errors), f"-- errors of channel {self.name}")

    def _commit(self, buffer: _Buffer) -> None:
        version = self._txn_version + 1
        flush = _Flush(self, buffer, version)
        label = f"-- flush channel {self.name} of {self.table.qualified}"
        self.client._run(FlushChannel(this=table_of(self.table), work=flush), label)
        self._txn_version = version
        self._committed_token = buffer.token
        if buffer.rows:
            self.client._wrote(self.table)

    def get_latest_committed_offset_token(self) -> str | None:
        """The token of the channel's last commit, read from the table's log."""
        self._require_open()
        with self.client._work_lock:
            log = self.client._delta.table(self.table.location)
            entry = self.client._state(self._entry.id) or self._entry
            if (entry.generation, entry.app_id) != (self._entry.generation, self._entry.app_id):
                self._invalidate(f"Channel {self.name} was reopened by another handle.")
                self._require_open()
            return channel_log.token_at(log, entry, channel_log.txn_version(log, entry.app_id))

    def wait_for_commit(self, token: str | Callable[[str | None], bool], timeout_seconds: float = 60) -> bool:
        """Wait (real time) until the committed token is ``token`` or satisfies the predicate; False on timeout."""
        check: Callable[[str | None], bool] = token if callable(token) else (lambda found: found == token)
        deadline = time.monotonic() + timeout_seconds
        while True:
            self._require_open()
            if check(self._committed_token):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL_SECONDS)

    def get_channel_status(self) -> ChannelStatus:
        code = ChannelStatusCode.CLOSED if self._closed else ChannelStatusCode.SUCCESS
        if code is ChannelStatusCode.SUCCESS and not self.is_valid:
            code = ChannelStatusCode.INVALID
        entry = self.client._state(self._entry.id)
        oldest = self._buffer.oldest
        return ChannelStatus(
            channel_name=self.name,
            table=self.table.qualified,
            status_code=code,
            latest_committed_offset_token=self._committed_token,
            rows_inserted_count=entry.rows_inserted if entry else 0,
            rows_error_count=entry.rows_in_error if entry else 0,
            last_error_message=self._last_error or (entry.last_error if entry else None),
            lag=clock_reading(self.client.lake) - oldest if oldest else dt.timedelta(0),
            buffered_row_count=self._buffer.rows,
        )

    def close(self, wait_for_flush: bool = True, timeout_seconds: float | None = None) -> None:
        """Close the handle; with ``wait_for_flush``, commit what it buffered first (else it is discarded).

        ``timeout_seconds`` bounds (real time) the wait for the client's commits in progress.
        """
        if self._closed:
            return
        if wait_for_flush and self.is_valid:
            if not self.client._work_lock.acquire(timeout=-1 if timeout_seconds is None else timeout_seconds):
                raise ChannelInvalidError(f"Channel {self.name} could not flush within {timeout_seconds:g} s.")
            try:
                self._flush()
            finally:
                self.client._work_lock.release()
        self._closed = True
        with self._buffer_lock:
            self._buffer = _Buffer.empty(None)

    def __repr__(self) -> str:
        return f"Channel({self.name!r}, table={self.table.qualified!r})"


def _frame(spark: SparkSession, schema: StructType, tables: list[pa.Table]) -> DataFrame:
    """The buffered rows as a frame of the table's schema; VARIANT and ARRAY values arrive as JSON text, parsed by Spark.

    The rows go to the JVM as Arrow batches (the client's session has Spark
    parse them in the write's tasks), one file per flush up to
    ``_ROWS_PER_FILE`` rows: channels make enough small files.
    """
    import pyarrow as pa
    from pyspark.sql import functions as F

    staging = staging_schema(schema)
    rows = sum(table.num_rows for table in tables)
    if rows:
        frame = spark.createDataFrame(pa.concat_tables(tables), staging).coalesce(-(-rows // _ROWS_PER_FILE))
    else:
        frame = spark.createDataFrame([], staging)
    if not any(json_text(f) for f in schema.fields):
        return frame
    columns = [
        F.parse_json(F.col(f.name)).cast(f.dataType).alias(f.name) if json_text(f) else F.col(f.name) for f in schema.fields
    ]
    return frame.select(*columns)
