"""Offsets move only when a DML statement that read the stream commits, atomically with it.

A statement that reads streams and writes a table (INSERT … SELECT, MERGE …
USING, UPDATE … FROM, DELETE … USING, CREATE TABLE … AS SELECT) consumes them:

1. before its Delta commit, a record in the catalog names each stream, the
   offsets it moves to, the table the statement commits to, and the session
   running it (its lock on the stream: another consumer waits for it);
2. Delta commits, carrying the statement's query id (see
   :mod:`lakeclone.delta.commits`);
3. the catalog transaction that records the statement as finished moves the
   offsets and removes the records; inside a transaction (BEGIN … COMMIT) the
   record is the transaction's, and COMMIT moves the offsets to where the
   transaction's reads stopped, its start.

A crash between 1 and 3 leaves a record whose session is dead. Whoever finds
it (the next ``connect()``, or a statement reading the stream) resolves it from
the target's log: if the statement's commit is there, and the table it wrote
is one the catalog knows, the offsets move; otherwise the record is dropped and
the offsets stay. (A transaction's record names no commit: a transaction that
died before COMMIT rolled back, so its record is dropped.) So no crash loses a
change or delivers one twice.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.entries import Consumption, ObjectKind
from lakeclone.errors import ConcurrentWriteError, InternalError, StreamBusyError

if TYPE_CHECKING:
    from lakeclone.catalog.store import Catalog
    from lakeclone.delta.log import Delta
    from lakeclone.engine.context import OpenTransaction
    from lakeclone.engine.executor import Execution, Executor

# How long a statement waits for another session's statement consuming the same stream.
WAIT_SECONDS = 120.0
_POLL_SECONDS = 0.05


def consumes(execution: Execution) -> bool:
    """Whether the statement moves the offsets of the streams it reads: a DML statement or CREATE TABLE … AS SELECT."""
    expression = execution.expression
    if isinstance(expression, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        return True
    return (
        isinstance(expression, exp.Create)
        and ObjectKind.named(expression.args.get("kind")) is ObjectKind.TABLE
        and expression.expression is not None
    )


def before_commit(execution: Execution, target: str | None) -> None:
    """Record the statement's consumption of the streams it read, before its first Delta commit."""
    reads = execution.tables.stream_reads
    if not reads or not consumes(execution):
        return
    if target is None:
        raise InternalError(AssertionError("a consuming statement commits to no known table"))
    catalog = execution.catalog
    # Inside a transaction the record is the transaction's: it holds the stream until COMMIT or ROLLBACK.
    transaction = execution.session.transaction
    holder = execution.query_id if transaction is None else transaction.id
    deadline = time.monotonic() + WAIT_SECONDS
    pending = dict(reads)
    recorded: list[str] = []
    while pending:
        with execution.work.durable():
            for stream_id, read in list(pending.items()):
                held = catalog.streams.consumption(stream_id)
                if held is not None and held.query_id == holder:
                    del pending[stream_id]
                    continue
                if held is not None:
                    if catalog.sessions.is_alive(held.session_id, execution.lake.now()):
                        continue
                    resolve(catalog, execution.delta, held, execution.now())
                stream = catalog.streams.stream_by_id(stream_id)
                if stream is None or stream.dropped_at is not None or dict(stream.offsets) != dict(read.read_from):
                    if transaction is not None:
                        raise ConcurrentWriteError(
                            f"Stream {read.name} was consumed by another transaction after this transaction "
                            "first read it; ROLLBACK and run the transaction again."
                        )
                    # Consumed (or replaced) since this statement read it: read it again.
                    error = ConcurrentWriteError(f"Stream {read.name} was consumed by another statement meanwhile.")
                    error.retryable = True
                    raise error
                catalog.streams.record_consumption(
                    Consumption(stream_id, holder, execution.executor.session.id, target, dict(read.read_to), read.initial_rows)
                )
                recorded.append(stream_id)
                del pending[stream_id]
        if pending:
            if time.monotonic() > deadline:
                names = ", ".join(read.name for read in pending.values())
                raise StreamBusyError(f"Stream {names} is being consumed by another session's statement; try again later.")
            time.sleep(_POLL_SECONDS)
    if recorded:
        execution.work.compensate("forget the stream consumption", lambda: _forget(execution, holder, recorded))


def _forget(execution: Execution, query_id: str, stream_ids: Iterable[str]) -> None:
    with execution.work.durable():
        for stream_id in stream_ids:
            execution.catalog.streams.forget_consumption(stream_id, query_id)


def finish(execution: Execution) -> None:
    """The statement succeeded: move the offsets of the streams it consumed (inside the finishing transaction)."""
    reads = execution.tables.stream_reads
    if not reads or not consumes(execution):
        return
    transaction = execution.session.transaction
    if transaction is not None:
        # The offsets move at COMMIT, to where the transaction's reads stopped: its start.
        for stream_id, read in reads.items():
            transaction.consumed.setdefault(stream_id, read)
        return
    catalog = execution.catalog
    for stream_id, read in reads.items():
        stream = catalog.streams.stream_by_id(stream_id)
        # A statement that made no Delta commit recorded nothing; it moves the offsets only if no one else did.
        if stream is not None and dict(stream.offsets) == dict(read.read_from):
            catalog.streams.move_offsets(stream_id, read.read_to, initial_rows=read.initial_rows, now=execution.now())
        catalog.streams.forget_consumption(stream_id, execution.query_id)


def commit_consumed(catalog: Catalog, transaction: OpenTransaction, now: dt.datetime) -> None:
    """A transaction commits: the streams its DML statements consumed move to its start (inside COMMIT's SQLite transaction)."""
    for stream_id, read in transaction.consumed.items():
        stream = catalog.streams.stream_by_id(stream_id)
        if stream is not None and dict(stream.offsets) == dict(read.read_from):
            catalog.streams.move_offsets(stream_id, read.read_to, initial_rows=read.initial_rows, now=now)
        catalog.streams.forget_consumption(stream_id, transaction.id)


def forget_consumed(catalog: Catalog, transaction_id: str) -> None:
    """A transaction rolled back (or died): the streams it consumed stay where they were."""
    catalog.streams.forget_consumptions_of(transaction_id)


def resolve(catalog: Catalog, delta: Delta, consumption: Consumption, now: dt.datetime) -> None:
    """Finish or drop a crashed session's consumption, from what its target's log says."""
    with catalog.recovering():
        if _landed(catalog, delta, consumption):
            catalog.streams.move_offsets(
                consumption.stream_id, consumption.offsets, initial_rows=consumption.initial_rows, now=now
            )
        catalog.streams.forget_consumption(consumption.stream_id, consumption.query_id)


def _landed(catalog: Catalog, delta: Delta, consumption: Consumption) -> bool:
    """Whether the consuming statement's commit is visible: in the target's log, and the target a live table."""
    if catalog.objects.live_table_at(consumption.target) is None:
        return False
    log = delta.table(consumption.target)
    return log.exists() and any(c.query_id == consumption.query_id for c in log.history())


def resolve_abandoned(catalog: Catalog, delta: Delta, now: dt.datetime, stream_id: str | None = None) -> None:
    """Resolve the consumptions whose sessions are gone (of one stream, or all)."""
    for consumption in catalog.streams.consumptions():
        if stream_id is not None and consumption.stream_id != stream_id:
            continue
        if not catalog.sessions.is_alive(consumption.session_id, now):
            resolve(catalog, delta, consumption, now)


def recover(executor: Executor) -> None:
    """On ``connect()``: resolve what crashed sessions left."""
    resolve_abandoned(executor.catalog, executor.delta, executor.lake.now())
