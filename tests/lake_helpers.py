"""Small things the tests share: a table's rows, its folder, its catalog entry, a worker process's environment, Spark jobs run."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from delta_reader import local_path, sorted_rows
from jvm_settings import worker_env

import lakeclone
from lakeclone.catalog.store import Catalog, TableEntry

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def rows(lake: lakeclone.Lake, sql: str) -> list[tuple[Any, ...]]:
    """A query's rows, sorted, to compare with the Delta kernel's."""
    return sorted_rows(lake.sql(sql).collect())


def session_of(admin: lakeclone.Lake, user: str, role: str) -> lakeclone.Lake:
    """A session of an existing ``user`` in ``role``, on ``admin``'s warehouse, Spark session and clock."""
    return lakeclone.connect(admin.warehouse, spark=admin.spark, clock=admin.clock, user=user, role=role)


def location(lake: lakeclone.Lake, name: str) -> str:
    """A table's folder, as DESCRIBE DETAIL reports it."""
    (detail,) = lake.sql(f"DESCRIBE DETAIL {name}").collect()
    return str(local_path(detail.location)).rstrip("/")


def parameters(lake: lakeclone.Lake, table: str) -> dict[str, tuple[str, str]]:
    """``SHOW PARAMETERS IN TABLE``: each parameter's value and the level it is set at."""
    return {r.key: (r.value, r.level) for r in lake.sql(f"SHOW PARAMETERS IN TABLE {table}").collect()}


def catalog_entry(lake: lakeclone.Lake, name: str, schema: str = "PUBLIC", database: str = "LAKE") -> TableEntry | None:
    """A table's row in the warehouse's catalog, read directly."""
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        return catalog.objects.table(database, schema, name)
    finally:
        catalog.close()


def start_worker(script: Path, *args: str, errors: Path, stdin: bool = False, own_group: bool = False) -> subprocess.Popen[str]:
    """Run ``script`` in a worker process of this Python, in ``script``'s folder (where Spark may leave a spark-warehouse).

    Its stdout is a pipe of progress lines (see :func:`worker_line`); its
    stderr, Spark's logs, goes to the file ``errors``, never a pipe that could
    fill. ``stdin`` gives it a pipe to read commands from; ``own_group``
    starts it in a process group of its own, so that killing the group kills
    its JVM too.
    """
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        cwd=script.parent,
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        stderr=errors.open("w"),
        text=True,
        start_new_session=own_group,
        env=worker_env(),
    )


def worker_line(worker: subprocess.Popen[str], errors: Path) -> str:
    """The next line a worker process prints; a worker that ended first fails the test with the end of its stderr."""
    assert worker.stdout is not None
    line = worker.stdout.readline().strip()
    assert line, errors.read_text()[-3000:]
    return line


@contextlib.contextmanager
def spark_jobs_run(spark: SparkSession) -> Iterator[list[int]]:
    """The ids of the Spark jobs the block runs from this thread, filled in when the block ends.

    The block's jobs are tagged with a job group of their own, which Spark and
    Delta's helper threads carry along, so jobs other threads run at the same
    time (a channel's flusher, say) are not counted.
    """
    group = f"counted-{uuid.uuid4().hex}"
    context = spark.sparkContext
    context.setJobGroup(group, group)
    found: list[int] = []
    try:
        yield found
    finally:
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            context.setLocalProperty(key, None)  # type: ignore[arg-type]
        found.extend(context.statusTracker().getJobIdsForGroup(group))
