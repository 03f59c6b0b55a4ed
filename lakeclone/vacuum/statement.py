"""The VACUUM statement."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from lakeclone.catalog.entries import VacuumEntry
from lakeclone.dialect import expressions as lx
from lakeclone.engine import needs, registry, results, session_parameters
from lakeclone.errors import ExecutionError
from lakeclone.timetravel import literal_int
from lakeclone.vacuum import plan as planner
from lakeclone.vacuum.purge import purge_after_statement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution

DRY_RUN_SCHEMA = "path STRING, size_bytes BIGINT, action STRING, reason STRING"

# Snowflake and Delta keep at most 90 days of history; a RETAIN beyond a few
# years is a typo, not a plan.
MAX_RETAIN_HOURS = 10 * 366 * 24


@registry.statement(lx.Vacuum, bind=needs.modify, query_type="VACUUM")
def vacuum(execution: Execution) -> DataFrame:
    """VACUUM t [RETAIN n HOURS] [DRY RUN].

    The default retention is the table's DATA_RETENTION_TIME_IN_DAYS. A shorter
    RETAIN is refused unless ``spark.databricks.delta.retentionDurationCheck.enabled``
    is false (a session parameter, or the Spark setting), as in Delta; a DRY
    RUN plans at any retention.
    """
    expression = execution.expression
    entry = execution.tables.entry(expression.this)
    configured = execution.catalog.parameters.retention(entry) / dt.timedelta(hours=1)
    retain = expression.args.get("retain")
    hours = float(literal_int(retain, "RETAIN")) if retain is not None else configured
    if hours < 0:
        raise ExecutionError("RETAIN must not be negative")
    if hours > MAX_RETAIN_HOURS:
        raise ExecutionError(f"RETAIN must be at most {MAX_RETAIN_HOURS} hours")
    now = execution.started_at
    dry_run = bool(expression.args.get("dry_run"))
    if not dry_run:
        check = session_parameters.value(execution.executor, session_parameters.RETENTION_CHECK) == "true"
        planner.check_retention(entry.name, hours, configured, check_enabled=check)
        purge_after_statement(execution)
    horizon = now - dt.timedelta(hours=hours)
    plan = planner.plan(execution.catalog, execution.delta, execution.storage, entry, horizon=horizon, now=now)
    if dry_run:
        rows = [(d.relative, d.size, "DELETE" if d.delete else "KEEP", str(d.reason)) for d in plan.decisions]
        return results.rows(execution.spark, DRY_RUN_SCHEMA, rows)
    # Durable before a file goes: time travel must refuse the versions VACUUM is about to break.
    with execution.work.durable():
        execution.catalog.objects.record_vacuum(entry, VacuumEntry(execution.query_id, now, horizon))
    files, size = planner.execute(execution.storage, plan)
    return results.counts(execution.spark, [("number of files deleted", files), ("number of bytes deleted", size)])
