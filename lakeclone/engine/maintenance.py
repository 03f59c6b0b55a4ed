"""Table maintenance statements: VACUUM."""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING

from lakeclone.clones import vacuum as planner
from lakeclone.engine import results
from lakeclone.engine.timetravel import literal_int

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution

DRY_RUN_SCHEMA = "path STRING, size_bytes BIGINT, action STRING, reason STRING"


def vacuum(execution: Execution) -> DataFrame:
    """VACUUM t [RETAIN n HOURS] [DRY RUN].

    The default retention is the table's DATA_RETENTION_TIME_IN_DAYS. A shorter
    RETAIN is refused unless ``spark.databricks.delta.retentionDurationCheck.enabled``
    is false, as in Delta.
    """
    expression = execution.expression
    entry = execution.tables.entry(expression.this)
    configured = execution.catalog.retention(entry) / dt.timedelta(hours=1)
    retain = expression.args.get("retain")
    hours = float(literal_int(retain, "RETAIN")) if retain is not None else configured
    if hours < 0:
        raise planner.ExecutionError("RETAIN must not be negative")
    check = execution.spark.conf.get(planner.RETENTION_CHECK, "true").lower() != "false"
    planner.check_retention(hours, configured, check_enabled=check)
    now = execution.started_at
    planner.purge_expired(execution.catalog, now)
    plan = planner.plan(execution.catalog, entry, horizon=now - dt.timedelta(hours=hours), now=now)
    if expression.args.get("dry_run"):
        rows = [
            (os.path.relpath(d.path, entry.location), d.size, "DELETE" if d.delete else "KEEP", d.reason)
            for d in plan.decisions
        ]
        return results.rows(execution.spark, DRY_RUN_SCHEMA, rows)
    files, size = planner.execute(plan)
    execution.tables.forget_views(entry)
    return results.counts(execution.spark, [("number of files deleted", files), ("number of bytes deleted", size)])
