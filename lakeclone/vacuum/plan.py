"""VACUUM's plan: which files under a table's folder may go, and why each other file stays.

Delta's own VACUUM would delete files a clone still reads, so lakeclone plans
it itself. A file under the table's folder is kept while any of the keep
rules needs it, checked in order (the first reason found is the one reported):

- ``current``: the table's current version reads it;
- ``retention``: a version of the table inside the retention window reads it,
  or no commit references it yet and it may be newer than the window (a write
  may still be in flight);
- ``clone NAME@VERSION``: the current or an in-retention version of a clone
  (direct, or further down a chain of clones) reads it; a dropped clone still
  inside its UNDROP window counts;
- ``not the table's``: no version of the table ever referenced it, and the
  table's folder was not made by lakeclone, so the file may be someone else's.

Anything else is ``delete``. A table's files include the deletion vector
files its versions read. :data:`KEEP_REASONS` is the list to extend when
another kind of object (a stream's offset) comes to need old files.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from lakeclone.catalog.store import Catalog, TableEntry
from lakeclone.delta.commits import Commit, from_epoch_ms
from lakeclone.delta.log import LOG_FOLDER, Delta
from lakeclone.engine.session_parameters import RETENTION_CHECK
from lakeclone.storage import FileInfo, Storage, relative_to

if TYPE_CHECKING:
    from lakeclone.engine.executor import Executor

# Delta's change data feed files live here, and VACUUM cleans them like data files.
CHANGE_DATA = "_change_data"


class ReasonKind(str, Enum):
    """Why VACUUM keeps a file, or that it deletes it."""

    CURRENT = "current"
    RETENTION = "retention"
    CLONE = "clone"
    STREAM = "stream"
    FOREIGN = "not the table's"
    DELETE = "delete"


@dataclass(frozen=True)
class Reason:
    """A file's fate: its kind, and for a clone or a stream, which one needs it (and a clone's version)."""

    kind: ReasonKind
    table: str | None = None
    version: int | None = None

    def __str__(self) -> str:
        if self.table is not None and self.version is not None:
            return f"{self.kind.value} {self.table}@{self.version}"
        if self.table is not None:
            return f"{self.kind.value} {self.table}"
        return self.kind.value

    @property
    def delete(self) -> bool:
        return self.kind is ReasonKind.DELETE


CURRENT, RETENTION, FOREIGN, DELETE = (
    Reason(ReasonKind.CURRENT),
    Reason(ReasonKind.RETENTION),
    Reason(ReasonKind.FOREIGN),
    Reason(ReasonKind.DELETE),
)


@dataclass(frozen=True)
class FileDecision:
    """What VACUUM does with one file, and why.

    Attributes:
        path: the file, a qualified URI.
        relative: its path below the table's folder.
    """

    path: str
    relative: str
    size: int
    reason: Reason

    @property
    def delete(self) -> bool:
        return self.reason.delete


@dataclass
class VacuumPlan:
    """Every file under a table's folder, with a decision for each."""

    table: str
    location: str
    horizon: dt.datetime
    decisions: list[FileDecision] = field(default_factory=list)

    @property
    def to_delete(self) -> list[FileDecision]:
        return [d for d in self.decisions if d.delete]

    def totals(self) -> dict[str, tuple[int, int]]:
        """Files and bytes per reason."""
        totals: dict[str, tuple[int, int]] = {}
        for decision in self.decisions:
            files, size = totals.get(str(decision.reason), (0, 0))
            totals[str(decision.reason)] = (files + 1, size + decision.size)
        return totals


@dataclass
class PlanContext:
    """What a keep rule may look at: the table, the moments that matter, and Delta."""

    catalog: Catalog
    delta: Delta
    table: TableEntry
    horizon: dt.datetime
    now: dt.datetime
    files: dict[str, FileInfo]


KeepRule = Callable[[PlanContext, set[str]], dict[str, Reason]]


def referenced_since(delta: Delta, table: TableEntry, horizon: dt.datetime) -> tuple[int, dict[str, int]]:
    """The table's latest version, and the files read by that version or any version current at or after ``horizon``.

    Returns:
        The latest version, and each file's URI (data files and deletion
        vectors) mapped to the newest version that reads it.
    """
    log = delta.table(table.location)
    history = log.history()
    latest = history[-1].version
    at_horizon = max((c.version for c in history if c.timestamp <= horizon), default=history[0].version)
    if at_horizon == history[0].version == 0:
        # Every version is inside retention: one replay of the log's commits
        # names every file any of them reads, with no snapshot to rebuild.
        return latest, log.referenced_after(-1)
    files: dict[str, int] = {}
    if at_horizon < latest:
        files.update({uri: at_horizon for f in log.files(at_horizon) for uri in f.uris})
        files.update(log.referenced_after(at_horizon))
    files.update({uri: latest for f in log.files(latest) for uri in f.uris})
    return latest, files


def _own_versions(context: PlanContext, candidates: set[str]) -> dict[str, Reason]:
    log = context.delta.table(context.table.location)
    if not log.exists():
        return {}
    latest, files = referenced_since(context.delta, context.table, context.horizon)
    return {uri: CURRENT if version == latest else RETENTION for uri, version in files.items() if uri in candidates}


def _recent_files(context: PlanContext, candidates: set[str]) -> dict[str, Reason]:
    """Files no commit references that may have been written after the horizon (a write in flight)."""
    log = context.delta.table(context.table.location)
    history = log.history() if log.exists() else []
    return {
        uri: RETENTION
        for uri in candidates
        if written_by_clock(history, context.files[uri].modified_ms, context.now) >= context.horizon
    }


def written_by_clock(history: Sequence[Commit], modified_ms: int, now: dt.datetime) -> dt.datetime:
    """The latest time, by the Lake's clock, at which a file modified at ``modified_ms`` (machine time) was written.

    Files carry the machine's time, while retention is counted by the Lake's
    clock. Every commit carries both, so the first commit after the file's
    modification bounds when it was written; a file newer than every commit
    was written before now.
    """
    modified = from_epoch_ms(modified_ms)
    later = [c.timestamp for c in history if c.delta_timestamp >= modified]
    return min(later, default=now)


def _clones(context: PlanContext, candidates: set[str]) -> dict[str, Reason]:
    reasons: dict[str, Reason] = {}
    for clone in protecting_clones(context.catalog, context.table, context.now):
        if not context.delta.table(clone.location).exists():
            continue
        horizon = context.catalog.horizon(clone, context.now)
        for uri, version in referenced_since(context.delta, clone, horizon)[1].items():
            if uri in candidates and uri not in reasons:
                reasons[uri] = Reason(ReasonKind.CLONE, clone.qualified, version)
    return reasons


# The names Delta gives the files it writes: data files (Spark's part files,
# in partition folders too) and deletion vectors.
DELTA_FILE_NAME = re.compile(r"part-\d+-[0-9a-f-]{36}.*\.parquet|deletion_vector_[0-9a-f-]{36}\.bin")


def _never_referenced(context: PlanContext, candidates: set[str]) -> dict[str, Reason]:
    """A file no version ever referenced is not the table's to delete, unless the table wrote it.

    In a folder lakeclone made, a file named as Delta names its files is a
    failed write's leftover (Delta's VACUUM deletes those too); anything else
    was put there by someone else. In a folder lakeclone did not make, no
    unreferenced file is the table's.
    """
    suspects = candidates
    if context.table.owns_folder:
        suspects = {uri for uri in candidates if not DELTA_FILE_NAME.fullmatch(posixpath.basename(uri))}
        if not suspects:
            return {}
    log = context.delta.table(context.table.location)
    ever = log.referenced_after(-1) if log.exists() else {}
    return {uri: FOREIGN for uri in suspects if uri not in ever}


KEEP_REASONS: list[KeepRule] = [_own_versions, _recent_files, _clones, _never_referenced]


def protecting_clones(catalog: Catalog, table: TableEntry, now: dt.datetime) -> Iterator[TableEntry]:
    """Every clone down the lineage from ``table`` that may still reference its files.

    Clones reference files where they really live, so only descendants can
    point into a table's folder. A dropped clone protects its files until its
    UNDROP window closes; the chain is followed through expired clones too,
    since their own clones may still be alive.
    """
    gone = {entry.id: when for entry, when in catalog.objects.unpurged_tables()}
    pending = [table.id]
    seen = {table.id}
    while pending:
        for clone in catalog.objects.clones_of(pending.pop(), purged=True):
            if clone.id in seen:
                continue
            seen.add(clone.id)
            pending.append(clone.id)
            if clone.purged_at is not None:
                continue
            dropped = gone.get(clone.id)
            if dropped is None or now <= dropped + catalog.parameters.retention(clone):
                yield clone


def table_files(storage: Storage, table: TableEntry) -> list[FileInfo]:
    """Every file under a table's folder that VACUUM considers: not its log, not hidden ones."""
    return storage.list_files(table.location, skip=[LOG_FOLDER], keep_hidden=[CHANGE_DATA])


def plan(
    catalog: Catalog,
    delta: Delta,
    storage: Storage,
    table: TableEntry,
    *,
    horizon: dt.datetime,
    now: dt.datetime,
    reasons: Sequence[KeepRule] | None = None,
) -> VacuumPlan:
    """Decide, for every file under ``table``'s folder, whether VACUUM may delete it."""
    found = {f.uri: f for f in table_files(storage, table)}
    context = PlanContext(catalog, delta, table, horizon, now, found)
    kept: dict[str, Reason] = {}
    for rule in KEEP_REASONS if reasons is None else reasons:
        remaining = set(found) - kept.keys()
        if not remaining:
            break
        for uri, why in rule(context, remaining).items():
            kept.setdefault(uri, why)
    decisions = [
        FileDecision(uri, relative_to(uri, table.location), found[uri].size, kept.get(uri, DELETE)) for uri in sorted(found)
    ]
    return VacuumPlan(table.qualified, table.location, horizon, decisions)


def plan_for(executor: Executor, table: TableEntry, *, retain_hours: float | None) -> VacuumPlan:
    """The plan of ``VACUUM table [RETAIN n HOURS]`` as of now, for the Python API."""
    now = executor.lake.now()
    window = dt.timedelta(hours=retain_hours) if retain_hours is not None else executor.catalog.parameters.retention(table)
    return plan(executor.catalog, executor.delta, executor.storage, table, horizon=now - window, now=now)


def check_retention(table: str, retain_hours: float, configured_hours: float, *, check_enabled: bool) -> None:
    """Refuse, as Delta does, to delete files a retention shorter than the table's would, unless the check is off.

    A writer still running may need such a file: Delta's check stands
    between a typo and a corrupt table. A DRY RUN deletes nothing and is
    not checked.
    """
    from lakeclone.errors import ExecutionError

    if check_enabled and retain_hours < configured_hours:
        raise ExecutionError(
            f"VACUUM {table} RETAIN {retain_hours:g} HOURS would delete files inside the table's retention of "
            f"{configured_hours:g} hours, which a running writer may still need; if none is, allow it with "
            f"ALTER SESSION SET {RETENTION_CHECK} = FALSE."
        )


def execute(storage: Storage, plan: VacuumPlan) -> tuple[int, int]:
    """Delete the plan's ``delete`` files, then folders left empty. Returns files and bytes deleted."""
    files = size = 0
    for decision in plan.to_delete:
        if storage.delete(decision.path):
            files += 1
            size += decision.size
    storage.remove_empty_folders(plan.location, keep=[LOG_FOLDER])
    return files, size
