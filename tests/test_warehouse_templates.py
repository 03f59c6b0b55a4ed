"""The tests' warehouse templates: each copy is a warehouse of its own, and a template its copies would share is refused."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import pytest
from delta_reader import spark_rows
from lake_helpers import location, rows
from warehouse_templates import WarehouseTemplates

import lakeclone

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def _one_table(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT) CHANGE_TRACKING = TRUE; INSERT INTO t VALUES (1)")
    lake.sql("CREATE STREAM s ON TABLE t")


def _a_shallow_clone(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1); CREATE TABLE c CLONE t")


def test_copies_are_warehouses_of_their_own(tmp_path: Path, spark: SparkSession) -> None:
    templates = WarehouseTemplates(tmp_path / "templates", spark, START)
    first_clock, second_clock = lakeclone.ManualClock(START), lakeclone.ManualClock(START)
    first = templates.copy(_one_table, tmp_path / "first", first_clock)
    second = templates.copy(_one_table, tmp_path / "second", second_clock)

    assert first_clock.peek() == second_clock.peek() > START  # both stand where the build left its clock
    first.sql("INSERT INTO t VALUES (2)")
    assert location(first, "t").startswith(str((tmp_path / "first").resolve()))
    assert spark_rows(spark, location(first, "t")) == [(1,), (2,)]
    assert rows(first, "SELECT id, METADATA$ACTION FROM s") == [(2, "INSERT")]
    assert spark_rows(spark, location(second, "t")) == [(1,)]
    assert rows(second, "SELECT id FROM s") == []
    third = templates.copy(_one_table, tmp_path / "third", lakeclone.ManualClock(START))
    assert rows(third, "SELECT id FROM t") == [(1,)]


def test_a_template_whose_logs_name_its_own_folder_is_refused(tmp_path: Path, spark: SparkSession) -> None:
    templates = WarehouseTemplates(tmp_path / "templates", spark, START)
    with pytest.raises(AssertionError, match="names the template's own folder"):
        templates.copy(_a_shallow_clone, tmp_path / "copy", lakeclone.ManualClock(START))
