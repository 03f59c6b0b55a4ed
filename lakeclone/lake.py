"""The Lake: a warehouse folder, a SparkSession, a clock, and a SQL session on them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lakeclone.clock import Clock, system_clock

if TYPE_CHECKING:
    import datetime as dt

    from pyspark.sql import DataFrame, SparkSession

    from lakeclone.clones.lineage import Lineage
    from lakeclone.clones.vacuum import VacuumPlan
    from lakeclone.engine.executor import Executor

WAREHOUSE_ENV = "LAKECLONE_WAREHOUSE"
DEFAULT_WAREHOUSE = "lakeclone-warehouse"

_latest: Lake | None = None


def connect(
    warehouse: str | os.PathLike[str] | None = None,
    spark: SparkSession | None = None,
    clock: Clock | None = None,
) -> Lake:
    """Open (creating if needed) a warehouse and start a SQL session on it.

    Args:
        warehouse: the folder holding the catalog and managed tables. Defaults to
            ``$LAKECLONE_WAREHOUSE``, else ``./lakeclone-warehouse``.
        spark: the SparkSession that does the compute. Defaults to an embedded
            ``local[*]`` session tuned for interactive use.
        clock: a zero-argument callable returning a timezone-aware datetime. Every
            "now" (commit timestamps, retention, UNDROP windows) comes from it.

    Returns:
        The Lake, which also becomes the one ``%%lsql`` cells use.

    Example:
        >>> lake = lakeclone.connect("/tmp/wh", clock=lakeclone.ManualClock())  # doctest: +SKIP
        >>> lake.sql("SELECT 1 AS one").collect()                                # doctest: +SKIP
        [Row(ONE=1)]
    """
    from lakeclone.session import embedded_spark

    folder = Path(warehouse or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE)
    lake = Lake(folder, spark or embedded_spark(), clock or system_clock)
    global _latest
    _latest = lake
    return lake


def latest() -> Lake | None:
    """The Lake most recently made by :func:`connect`, if any."""
    return _latest


class Lake:
    """A SQL session over one warehouse.

    Use :func:`connect` rather than building one directly.
    """

    def __init__(self, warehouse: Path, spark: SparkSession, clock: Clock) -> None:
        from lakeclone.engine.executor import Executor

        self.warehouse = warehouse.resolve()
        self.spark = spark
        self.clock = clock
        self._executor: Executor = Executor(self)

    def now(self) -> dt.datetime:
        """The current time by the Lake's clock."""
        return self.clock()

    def sql(self, text: str) -> DataFrame:
        """Run one or more ``;``-separated statements.

        Args:
            text: lsql statements.

        Returns:
            The last statement's result. DDL and DML return a small status frame,
            such as Snowflake's ``number of rows inserted``.

        Raises:
            LakecloneError: on any failure. A failed statement changes nothing;
                earlier statements of the same text stay done.
        """
        return self._executor.run(text)

    def lineage(self, name: str) -> Lineage:
        """The clone lineage around a table: its sources, its clones, and the files they share.

        Example:
            >>> lake.sql("CREATE TABLE dev CLONE prod")      # doctest: +SKIP
            >>> lake.lineage("dev").node("LAKE.PUBLIC.PROD").kind  # doctest: +SKIP
            'TABLE'
        """
        return self._executor.lineage(name)

    def vacuum_plan(self, name: str, *, retain_hours: float | None = None) -> VacuumPlan:
        """What ``VACUUM name [RETAIN n HOURS]`` would keep or delete, and why, without deleting anything."""
        return self._executor.vacuum_plan(name, retain_hours=retain_hours)

    @property
    def last_query_id(self) -> str | None:
        """The id of the last statement run, for ``BEFORE(STATEMENT => '<id>')``."""
        return self._executor.last_query_id

    @property
    def current_database(self) -> str:
        """The database unqualified names resolve in (``USE DATABASE``)."""
        return self._executor.context.database

    @property
    def current_schema(self) -> str:
        """The schema unqualified names resolve in (``USE SCHEMA``)."""
        return self._executor.context.schema

    def __repr__(self) -> str:
        return f"Lake(warehouse={str(self.warehouse)!r})"
