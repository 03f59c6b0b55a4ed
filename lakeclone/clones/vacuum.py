"""VACUUM, and the purge of dropped tables: deleting only the files nobody needs.

A file under a table's folder is kept while any of these needs it, checked in
order (the first reason found is the one reported):

- ``current``: the table's current version;
- ``retention``: a version of the table inside the retention window, or a
  file no commit references yet that is newer than the window (a write may
  still be in flight);
- ``clone NAME@VERSION``: the current or an in-retention version of a clone
  (direct, or further down a chain of clones) that references it; a dropped
  clone still inside its UNDROP window counts.

Anything else is ``delete``. ``KEEP_REASONS`` is the list to extend when another
kind of object (a stream's offset) comes to need old files.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from lakeclone.catalog.store import Catalog, TableEntry
from lakeclone.delta.log import DeltaLog
from lakeclone.delta.references import referenced_files
from lakeclone.errors import ExecutionError

LOG_FOLDER = "_delta_log"
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"

CURRENT, RETENTION, DELETE = "current", "retention", "delete"


@dataclass(frozen=True)
class FileDecision:
    """What VACUUM does with one file, and why."""

    path: str
    size: int
    reason: str

    @property
    def delete(self) -> bool:
        return self.reason == DELETE


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
            files, size = totals.get(decision.reason, (0, 0))
            totals[decision.reason] = (files + 1, size + decision.size)
        return totals


@dataclass(frozen=True)
class PlanContext:
    """What a keep reason may look at."""

    catalog: Catalog
    table: TableEntry
    horizon: dt.datetime
    now: dt.datetime


KeepReason = Callable[[PlanContext, set[str]], dict[str, str]]


def _own_versions(context: PlanContext, candidates: set[str]) -> dict[str, str]:
    log = DeltaLog(context.table.location)
    if not log.exists():
        return {}
    current = referenced_files(log, None)
    retained = referenced_files(log, context.horizon)
    reasons = {p: RETENTION for p in retained if p in candidates}
    reasons.update({p: CURRENT for p in current if p in candidates})
    return reasons


def _recent_files(context: PlanContext, candidates: set[str]) -> dict[str, str]:
    horizon = context.horizon.timestamp()
    return {p: RETENTION for p in candidates if os.path.getmtime(p) >= horizon}


def _clones(context: PlanContext, candidates: set[str]) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for clone in protecting_clones(context.catalog, context.table, context.now):
        log = DeltaLog(clone.location)
        if not log.exists():
            continue
        horizon = context.now - context.catalog.retention(clone)
        for path, version in referenced_files(log, horizon).items():
            if path in candidates and path not in reasons:
                reasons[path] = f"clone {clone.qualified}@{version}"
    return reasons


KEEP_REASONS: tuple[KeepReason, ...] = (_own_versions, _recent_files, _clones)


def protecting_clones(catalog: Catalog, table: TableEntry, now: dt.datetime) -> Iterator[TableEntry]:
    """Every clone down the lineage from ``table`` that may still reference its files.

    Clones reference files where they really live, so only descendants can
    point into a table's folder. A dropped clone protects its files until its
    UNDROP window closes; the chain is followed through expired clones too,
    since their own clones may still be alive.
    """
    gone = {entry.id: when for entry, when in catalog.unpurged_tables()}
    pending = [table.id]
    seen = {table.id}
    while pending:
        for clone in catalog.clones_of(pending.pop(), purged=True):
            if clone.id in seen:
                continue
            seen.add(clone.id)
            pending.append(clone.id)
            if clone.purged_at is not None:
                continue
            dropped = gone.get(clone.id)
            if dropped is None or now <= dropped + catalog.retention(clone):
                yield clone


def data_files(location: str) -> Iterator[str]:
    """Every file under a table's folder except its log."""
    for folder, subfolders, files in os.walk(location):
        if folder == location and LOG_FOLDER in subfolders:
            subfolders.remove(LOG_FOLDER)
        for name in files:
            yield os.path.join(folder, name)


def plan(
    catalog: Catalog,
    table: TableEntry,
    *,
    horizon: dt.datetime,
    now: dt.datetime,
    reasons: tuple[KeepReason, ...] = KEEP_REASONS,
) -> VacuumPlan:
    """Decide, for every file under ``table``'s folder, whether VACUUM may delete it."""
    candidates = set(data_files(table.location))
    context = PlanContext(catalog, table, horizon, now)
    kept: dict[str, str] = {}
    for reason in reasons:
        for path, why in reason(context, candidates - kept.keys()).items():
            kept.setdefault(path, why)
    decisions = [
        FileDecision(path, os.path.getsize(path), kept.get(path, DELETE)) for path in sorted(candidates)
    ]
    return VacuumPlan(table.qualified, table.location, horizon, decisions)


def check_retention(retain_hours: float, configured_hours: float, *, check_enabled: bool) -> None:
    """Refuse, as Delta does, a retention shorter than the table's, unless the check is off."""
    if check_enabled and retain_hours < configured_hours:
        raise ExecutionError(
            "requirement failed: Are you sure you would like to vacuum files with such a low "
            "retention period? If you have writers that are currently writing to this table, "
            "there is a risk that you may corrupt the state of your Delta table. If you are "
            "certain that there are no operations being performed on this table, such as "
            "insert/upsert/delete/optimize, then you may turn off this check by setting: "
            f"{RETENTION_CHECK} = false. If you are not sure, please use a value not less than "
            f'"{configured_hours:g} hours".'
        )


def execute(plan: VacuumPlan) -> tuple[int, int]:
    """Delete the plan's ``delete`` files, then any folders left empty. Returns files and bytes deleted."""
    files = size = 0
    for decision in plan.to_delete:
        try:
            os.remove(decision.path)
        except FileNotFoundError:
            continue
        files += 1
        size += decision.size
    _remove_empty_folders(plan.location)
    return files, size


def _remove_empty_folders(location: str) -> None:
    for folder, _, _ in sorted(os.walk(location), key=lambda w: -len(w[0])):
        if folder != location and not os.listdir(folder):
            os.rmdir(folder)


def purge_expired(catalog: Catalog, now: dt.datetime) -> list[TableEntry]:
    """Delete the files of dropped tables whose UNDROP window has closed.

    Files a live clone still references stay, and the table stays unpurged
    until they are gone, so a later purge frees them once no clone needs them.
    External tables lose only their catalog entry: their files are never ours
    to delete.

    Returns:
        The tables fully purged by this call.
    """
    purged = []
    for table, dropped in catalog.unpurged_tables():
        if dropped is None or now <= dropped + catalog.retention(table):
            continue
        if table.managed and os.path.exists(table.location):
            decisions = plan(
                catalog, table, horizon=now, now=now, reasons=(_clones,)
            )
            execute(decisions)
            if not any(not d.delete for d in decisions.decisions):
                shutil.rmtree(table.location, ignore_errors=True)
            else:
                shutil.rmtree(os.path.join(table.location, LOG_FOLDER), ignore_errors=True)
                continue
        with catalog.transaction():
            catalog.mark_purged(table, now)
        purged.append(table)
    return purged
