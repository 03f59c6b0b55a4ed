"""Fixtures shared by every test: one SparkSession per run, a manual clock, a fresh Lake."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from jvm_settings import shared_spark, start_shared_jvm, take_shared_jvm
from warehouse_templates import Build, WarehouseTemplates

import lakeclone

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession

START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    """The embedded SparkSession, started once per run: a cold start takes ~9 s."""
    return shared_spark()


@pytest.fixture
def clock() -> lakeclone.ManualClock:
    """A clock standing at 2024-01-01 00:00 UTC until a test moves it."""
    return lakeclone.ManualClock(START)


@pytest.fixture
def lake(tmp_path: Path, spark: SparkSession, clock: lakeclone.ManualClock) -> lakeclone.Lake:
    """A Lake on an empty warehouse of its own."""
    return lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=clock)


@pytest.fixture(scope="session")
def warehouse_templates(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> WarehouseTemplates:
    """This test process's templates: each built on first use (see warehouse_templates.py)."""
    return WarehouseTemplates(tmp_path_factory.mktemp("templates"), spark, START)


@pytest.fixture
def copy_of(
    warehouse_templates: WarehouseTemplates, tmp_path: Path, clock: lakeclone.ManualClock
) -> Callable[[Build], lakeclone.Lake]:
    """``copy_of(build)``: a Lake on this test's own copy of the warehouse ``build`` makes, built once per process.

    For a fixture whose statements every test of a file runs before its own:
    the copy is in ``tmp_path / "warehouse"``, where ``lake``'s would be, and
    ``clock`` stands where the build left it.
    """
    return lambda build: warehouse_templates.copy(build, tmp_path / "warehouse", clock)


RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@pytest.fixture
def retention_check(lake: lakeclone.Lake) -> Iterator[Callable[[bool], None]]:
    """A switch for Delta's VACUUM retention check; the shared Spark session gets its old value back."""
    before = lake.spark.conf.get(RETENTION_CHECK, None)

    def enable(on: bool) -> None:
        lake.spark.conf.set(RETENTION_CHECK, "true" if on else "false")

    try:
        yield enable
    finally:
        if before is None:
            lake.spark.conf.unset(RETENTION_CHECK)
        else:
            lake.spark.conf.set(RETENTION_CHECK, before)


@pytest.fixture
def retention_check_off(retention_check: Callable[[bool], None]) -> None:
    """Delta's VACUUM retention check off for one test."""
    retention_check(False)


def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, the workers share one JVM, which the controller starts (see jvm_settings.start_shared_jvm)."""
    if hasattr(config, "workerinput"):
        take_shared_jvm()
    elif config.getoption("numprocesses", None):
        start_shared_jvm()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order files for the workers (pyproject's ``--no-loadscope-reorder`` keeps this order), longest first.

    First the files that start worker processes (minutes each, whatever their
    number of tests), then the notebooks, then the rest with the most tests
    first. Started late, a long file would run alone while the other worker
    has nothing left. The sort is stable: each file's tests keep their order.
    """
    tests_per_file = Counter(item.path for item in items)

    def rank(item: pytest.Item) -> tuple[bool, bool, int]:
        starts_workers = item.get_closest_marker("worker_processes") is not None
        return (not starts_workers, item.path.suffix != ".ipynb", -tests_per_file[item.path])

    items.sort(key=rank)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        help="run the fuzzer, the property tests and the kill test at full length (thousands of cases, twenty kills)",
    )
    parser.addoption("--fuzz-seed", type=int, default=20261123, help="the statement fuzzer's seed")
    parser.addoption("--kill-seed", type=int, default=None, help="the kill test's seed for its kill moments (default: random)")
