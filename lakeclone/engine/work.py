"""One statement's unit of work: its Delta commits, its catalog changes, and what undoes them if it fails.

A statement first checks what it can, then commits to Delta (each commit
carrying the statement's query id, a tick and the Lake clock's time), then
records the result in the catalog. The unit of work owns every catalog write
of the statement, of three kinds:

- **records** (:meth:`UnitOfWork.records`) are what the statement did. They
  join one catalog transaction that commits with the statement's query record
  when the statement finishes, or rolls back if it fails.
- **durable** changes (:meth:`UnitOfWork.durable`) commit at once: an intent
  a later Delta commit depends on (a new table's folder, a stream's
  consumption, the files a COPY claims), so that a process dying after that
  commit leaves what the next session resolves; what a landed commit did; and
  what undoes an intent. They come before the statement's first record.
- **table locks** (:meth:`UnitOfWork.coordinates`) commit at once so that
  other sessions see them, or join the records once those began.

What a failed statement leaves behind outside the catalog (a new table's
folder, a clone's log) is undone by the compensations it registered, in
reverse order, and only what the statement itself created is ever removed;
its session goes back to what it was (current schema, open transaction).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeclone.catalog.folders import PendingFolder
from lakeclone.delta.commits import CommitMetadata, committing, microseconds
from lakeclone.engine import registry
from lakeclone.errors import ConcurrentWriteError
from lakeclone.spark_errors import spark_errors

if TYPE_CHECKING:
    from lakeclone.catalog.entries import TableEntry
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution
    from lakeclone.storage import Storage

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rewrite:
    """A table a statement rewrites (UPDATE, DELETE, MERGE) and the version it read.

    Attributes:
        table: the table.
        read_version: the version the statement's rows were read at.
    """

    table: TableEntry
    read_version: int


class UnitOfWork:
    """The commits and compensations of one statement."""

    def __init__(self, execution: Execution) -> None:
        self._execution = execution
        session = execution.session
        # What a failed statement restores: its session as it was (current schema, open transaction, parameters).
        self._session_before = dataclasses.replace(session, parameters=dict(session.parameters))
        self._compensations: list[tuple[str, Callable[[], object]]] = []
        self._after_commit: list[tuple[str, Callable[[], object]]] = []
        self.commits = 0
        self.written: dict[str, int] = {}
        """The locations of the tables this statement committed to, in order, each with the version it last made there."""
        self._pending_folders = False

    @contextlib.contextmanager
    def delta(
        self,
        *,
        parameters: Mapping[str, object] | None = None,
        metrics: Mapping[str, object] | None = None,
        rewrite: Rewrite | None = None,
        target: str | None = None,
    ) -> Iterator[None]:
        """Delta commits made inside the block carry this statement's metadata.

        Args:
            parameters: operation parameters to show in DESCRIBE HISTORY beside Delta's own.
            metrics: operation metrics to show beside Delta's own.
            rewrite: the table the block rewrites: when its commit loses a race
                only to blind appends, the ConcurrentWriteError is marked retryable.
            target: the location of the table the block commits to, if it is one
                table (what a crashed statement's commit is looked for in).
        """
        execution = self._execution
        for prepare in registry.BEFORE_COMMIT:
            prepare(execution, target or (rewrite.table.location if rewrite else None))
        metadata = CommitMetadata(
            query_id=execution.query_id,
            tick=execution.catalog.queries.tick(),
            clock_us=microseconds(execution.now()),
            parameters={k: str(v) for k, v in (parameters or {}).items()},
            metrics={k: str(v) for k, v in (metrics or {}).items()},
            query_tag=execution.executor.query_tag,
        )
        try:
            with spark_errors(), committing(execution.spark, metadata):
                yield
        except ConcurrentWriteError as error:
            error.retryable = rewrite is not None and self._only_appended_since(rewrite)
            raise
        self.commits += 1
        location = target or (rewrite.table.location if rewrite else None)
        if location is not None:
            # The version just made is also the one the next statement finds first (Delta.latest_version).
            self.written[location] = execution.tables.delta.committed(location)

    def _only_appended_since(self, rewrite: Rewrite) -> bool:
        """Whether every commit to the table after the version read is a blind append.

        Open-source Delta checks every commit at Serializable isolation, where an
        UPDATE loses to a concurrent INSERT whose new files it could have read;
        at WriteSerializable (Databricks' default) that is no conflict.
        """
        history = self._execution.tables.history(rewrite.table)
        later = [commit for commit in history if commit.version > rewrite.read_version]
        return bool(later) and all(commit.is_blind_append for commit in later)

    def writes_new_table_in(self, location: str, *, made: bool) -> None:
        """The statement writes a new table into the folder ``location``, which it made (or found empty).

        If the statement fails, what it wrote is removed: the folder with
        everything in it when the statement made it, else what the folder holds.
        The folder is recorded in the catalog as pending first, so that if the
        process dies before the statement's record, the next session to
        connect removes it (see :func:`recover_pending_folders`).
        """
        execution = self._execution
        storage = execution.storage
        with self.durable():
            execution.catalog.folders.pend_folder(
                PendingFolder(location, execution.query_id, execution.executor.session.id, made)
            )
        self._pending_folders = True
        if made:
            self.compensate(f"remove {location}", lambda: storage.delete(location, recursive=True))
        else:
            self.compensate(
                f"empty {location}", lambda: [storage.delete(uri, recursive=True) for uri in storage.children(location)]
            )

    @contextlib.contextmanager
    def records(self) -> Iterator[None]:
        """The block's catalog changes record what the statement did: they commit when it finishes, or never.

        A block that raises is undone on its own.
        """
        with self._execution.catalog.statement_block():
            yield

    @contextlib.contextmanager
    def durable(self) -> Iterator[None]:
        """The block's catalog changes commit at once: what the statement's next Delta commit depends on."""
        if self._execution.catalog.in_statement:
            raise RuntimeError(f"{self._execution.query_id} tried to write durably after it began recording its result.")
        with self._execution.catalog.committed_at_once():
            yield

    @contextlib.contextmanager
    def coordinates(self) -> Iterator[None]:
        """The block's catalog changes are for other sessions to see (a table lock): committed at once.

        Once the statement's records began (a parameter's hook commits a table
        property after the parameter is recorded) they join its transaction,
        whose write lock keeps other sessions from changing the catalog until
        the statement ends.
        """
        catalog = self._execution.catalog
        with catalog.statement_block() if catalog.in_statement else catalog.committed_at_once():
            yield

    def compensate(self, what: str, undo: Callable[[], object]) -> None:
        """Register ``undo`` to run if the statement fails."""
        self._compensations.append((what, undo))

    def rollback(self) -> None:
        """Undo what the failed statement left behind, newest first; one failing undo does not stop the rest.

        A folder whose undo failed stays pending: a session that connects
        after this one ends tries again.
        """
        self._execution.catalog.end_statement(commit=False)
        session = self._execution.session
        for field in dataclasses.fields(session):
            setattr(session, field.name, getattr(self._session_before, field.name))
        undone = True
        while self._compensations:
            what, undo = self._compensations.pop()
            try:
                undo()
            except Exception as error:
                undone = False
                LOG.warning("could not %s after a failed statement: %s", what, str(error).splitlines()[0])
        if undone and self._pending_folders:
            self._execution.catalog.folders.settle_folders(self._execution.query_id)

    def after_commit(self, what: str, step: Callable[[], object]) -> None:
        """Run ``step`` once the statement committed (housekeeping it triggers, such as a purge).

        A failing step is logged: the statement it follows stands.
        """
        self._after_commit.append((what, step))

    def done(self) -> None:
        """The statement succeeded: nothing is to be undone, and what follows its commit runs."""
        self._compensations.clear()
        for what, step in self._after_commit:
            try:
                step()
            except Exception as error:
                LOG.warning("could not %s: %s", what, str(error).splitlines()[0])

    def finish(self) -> None:
        """The statement ran: commit its records with the features' finishing steps and its query record."""
        execution = self._execution
        with self.records():
            for finish in registry.FINISH:
                finish(execution)
            if self._pending_folders:
                execution.catalog.folders.settle_folders(execution.query_id)
            execution.catalog.queries.finish_query(execution.query_id, execution.lake.now())
        execution.catalog.end_statement(commit=True)


def recover_pending_folders(catalog: Catalog, storage: Storage, now: dt.datetime) -> None:
    """Remove what statements of dead sessions wrote into new tables' folders before their catalog record.

    A folder some table in the catalog lives in is the statement's result
    (it was recorded, and died before it finished): it stays.
    """
    for folder in catalog.folders.pending_folders():
        if catalog.sessions.is_alive(folder.session_id, now):
            continue
        if not catalog.folders.holds_table_at(folder.location):
            if folder.made:
                storage.delete(folder.location, recursive=True)
            else:
                for uri in storage.children(folder.location):
                    storage.delete(uri, recursive=True)
            LOG.info("removed what a statement of a dead session wrote into %s", folder.location)
        catalog.folders.forget_pending_folder(folder.location)
