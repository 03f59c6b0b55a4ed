"""Bad input loses nothing: LOCATIONs that overlap what they may not, VACUUM and files
lakeclone never wrote, out-of-range parameters, and writers racing on one table."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from delta_reader import kernel_rows, spark_rows
from lake_helpers import location, rows

import lakeclone
from lakeclone.errors import ConcurrentWriteError, InvalidLocationError, InvalidParameterError, LakecloneError

pytestmark = pytest.mark.spark


def everything_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(lambda lake: lake.warehouse, id="the warehouse"),
        pytest.param(lambda lake: lake.warehouse.parent, id="an ancestor of the warehouse"),
        pytest.param(lambda lake: lake.warehouse / "tables" / "mine", id="inside the managed area"),
    ],
)
def test_a_location_may_not_overlap_the_warehouse(lake: lakeclone.Lake, where) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    before = everything_under(lake.warehouse)

    with pytest.raises(InvalidLocationError, match="overlaps the warehouse"):
        lake.sql(f"CREATE EXTERNAL TABLE e (x INT) LOCATION = '{where(lake)}'")

    assert everything_under(lake.warehouse) == before
    assert rows(lake, "SHOW TABLES") and [r.name for r in lake.sql("SHOW TABLES").collect()] == ["T"]
    assert rows(lake, "SELECT * FROM t") == kernel_rows(location(lake, "t")) == [(1,)]


def test_a_location_may_not_overlap_another_tables_folder(lake: lakeclone.Lake, tmp_path: Path) -> None:
    host = tmp_path / "external" / "host"
    lake.sql(f"CREATE EXTERNAL TABLE host (id INT) LOCATION = '{host}'; INSERT INTO host VALUES (1)")

    for overlapping in (host, host / "sub", host.parent):
        with pytest.raises(InvalidLocationError, match=r"overlaps the folder of table LAKE\.PUBLIC\.HOST"):
            lake.sql(f"CREATE EXTERNAL TABLE guest (x INT) LOCATION = '{overlapping}'")
    # ...and neither may a managed table's folder be adopted.
    lake.sql("CREATE TABLE managed (id INT); INSERT INTO managed VALUES (2)")
    with pytest.raises(InvalidLocationError, match="overlaps the warehouse"):
        lake.sql(f"CREATE EXTERNAL TABLE guest LOCATION = '{location(lake, 'managed')}'")

    assert rows(lake, "SELECT * FROM host") == spark_rows(lake.spark, str(host)) == [(1,)]


def test_a_table_is_never_created_over_a_folder_holding_other_files(lake: lakeclone.Lake, tmp_path: Path) -> None:
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    (folder / "_delta_log").write_text("not a folder")

    lake.sql(f"CREATE EXTERNAL TABLE ext (x INT) LOCATION = '{tmp_path / 'ext'}'; INSERT INTO ext VALUES (1)")

    for statement in (
        f"CREATE EXTERNAL TABLE e (x INT) LOCATION = '{folder}'",
        f"CREATE EXTERNAL TABLE e LOCATION = '{folder}' AS SELECT 1 AS x",
        f"CREATE EXTERNAL TABLE e LOCATION = '{folder}' CLONE ext",
        f"CREATE EXTERNAL TABLE e CLONE ext LOCATION = '{folder}'",
    ):
        with pytest.raises(LakecloneError):
            lake.sql(statement)
        assert everything_under(folder) == {"notes.txt", "_delta_log"}
    assert (folder / "notes.txt").read_text() == "mine"
    assert [r.name for r in lake.sql("SHOW TABLES").collect()] == ["EXT"]


def test_an_external_clone_takes_its_location_before_or_after_the_source(lake: lakeclone.Lake, tmp_path: Path) -> None:
    lake.sql(f"CREATE EXTERNAL TABLE ext (x INT) LOCATION = '{tmp_path / 'ext'}'; INSERT INTO ext VALUES (1)")
    lake.sql(f"CREATE EXTERNAL TABLE before_source LOCATION = '{tmp_path / 'a'}' CLONE ext")
    lake.sql(f"CREATE EXTERNAL TABLE after_source CLONE ext AT(VERSION => 1) LOCATION = '{tmp_path / 'b'}'")
    for name, folder in (("before_source", "a"), ("after_source", "b")):
        assert location(lake, name) == str(tmp_path / folder)
        assert rows(lake, f"SELECT * FROM {name}") == spark_rows(lake.spark, str(tmp_path / folder)) == [(1,)]


def test_relative_locations_are_refused(lake: lakeclone.Lake) -> None:
    for text in ("data", "./data", "~/data"):
        with pytest.raises(InvalidLocationError):
            lake.sql(f"CREATE EXTERNAL TABLE e (x INT) LOCATION = '{text}'")


def test_vacuum_keeps_files_the_table_never_wrote(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, tmp_path: Path, retention_check_off: None
) -> None:
    folder = tmp_path / "ext"
    lake.sql(f"CREATE EXTERNAL TABLE e (x INT) LOCATION = '{folder}'; INSERT INTO e VALUES (1), (2)")
    # Someone else puts files into the table's folder.
    (folder / "keep.parquet").write_bytes(b"PAR1 not lakeclone's PAR1")
    (folder / "notes.txt").write_text("mine")
    (folder / "sub").mkdir()
    (folder / "sub" / "more.parquet").write_bytes(b"PAR1")
    lake.sql("INSERT OVERWRITE INTO e VALUES (3)")  # e's first data file is now unreferenced
    clock.advance(days=1)

    plan = {str(d.relative): d for d in lake.vacuum_plan("e", retain_hours=0).decisions}
    deleted = {path for path, decision in plan.items() if decision.delete}
    assert deleted and not deleted & {"keep.parquet", "notes.txt", "sub/more.parquet"}
    lake.sql("VACUUM e RETAIN 0 HOURS")

    assert (folder / "keep.parquet").exists() and (folder / "notes.txt").read_text() == "mine"
    assert (folder / "sub" / "more.parquet").exists()
    assert not any((folder / path).exists() for path in deleted)
    assert rows(lake, "SELECT * FROM e") == kernel_rows(str(folder)) == [(3,)]


@pytest.mark.parametrize("days", ["-5", "-1", "91", "100000"])
def test_out_of_range_retention_is_refused(lake: lakeclone.Lake, days: str) -> None:
    with pytest.raises(InvalidParameterError):
        lake.sql(f"CREATE TABLE t (id INT) DATA_RETENTION_TIME_IN_DAYS = {days}")
    assert lake.sql("SHOW TABLES").collect() == []
    lake.sql("CREATE TABLE t (id INT)")
    with pytest.raises(InvalidParameterError):
        lake.sql(f"ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = {days}")
    (parameter,) = lake.sql("SHOW PARAMETERS LIKE 'DATA_RETENTION_TIME_IN_DAYS' IN TABLE t").collect()
    assert parameter.value == "7"


def test_racing_updates_lose_no_committed_change(tmp_path: Path, spark, clock: lakeclone.ManualClock) -> None:
    """Two Lakes on one warehouse update one row at once: Delta's optimistic concurrency decides.

    Whichever way the threads interleave, every UPDATE either commits or fails
    with ConcurrentWriteError, and the row counts exactly the committed ones.
    """
    warehouse = tmp_path / "warehouse"
    first = lakeclone.connect(warehouse, spark=spark, clock=clock)
    first.sql("CREATE TABLE t (id INT, n INT); INSERT INTO t VALUES (1, 0), (2, 0)")
    # Each Lake on a session of its own (one SparkContext): a session's settings
    # carry the commit's lakeclone metadata, as two processes would have.
    lakes = [first, lakeclone.connect(warehouse, spark=spark.newSession(), clock=clock)]
    committed = [0, 0]
    unexpected: list[BaseException] = []

    def bump(index: int) -> None:
        for _ in range(3):
            try:
                lakes[index].sql("UPDATE t SET n = n + 1 WHERE id = 1")
            except ConcurrentWriteError:
                continue
            except BaseException as error:  # reported below, with the thread's error
                unexpected.append(error)
                return
            committed[index] += 1

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)

    assert not unexpected, unexpected
    assert sum(committed) >= 1
    assert rows(first, "SELECT * FROM t") == kernel_rows(location(first, "t")) == [(1, sum(committed)), (2, 0)]


def test_inserts_and_updates_at_once_all_commit(
    tmp_path: Path, spark, clock: lakeclone.ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    """An INSERT is a blind append, which conflicts with nothing; an UPDATE that loses a race only to
    INSERTs runs again, reading their rows (WriteSerializable, Databricks' default isolation).

    Every statement of both threads commits: none fails on the race. (Each
    UPDATE runs at most ATTEMPTS times; 8 INSERTs cannot make it lose more often.)
    """
    caplog.set_level(logging.INFO, logger="lakeclone.engine.executor")
    warehouse = tmp_path / "warehouse"
    first = lakeclone.connect(warehouse, spark=spark, clock=clock)
    first.sql("CREATE TABLE t (id INT, n INT); INSERT INTO t VALUES (0, 0)")
    second = lakeclone.connect(warehouse, spark=spark.newSession(), clock=clock)
    failures: list[BaseException] = []

    def run(lake: lakeclone.Lake, statements: list[str]) -> None:
        for statement in statements:
            try:
                lake.sql(statement)
            except BaseException as error:  # any failure is one
                failures.append(error)

    threads = [
        threading.Thread(target=run, args=(first, [f"INSERT INTO t VALUES ({i}, 0)" for i in range(1, 9)])),
        threading.Thread(target=run, args=(second, ["UPDATE t SET n = n + 1 WHERE id = 0"] * 8)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)

    assert not failures, failures
    expected = [(0, 8)] + [(i, 0) for i in range(1, 9)]
    assert rows(first, "SELECT * FROM t") == kernel_rows(location(first, "t")) == expected
    # The race did happen: some UPDATE lost to an INSERT and ran again.
    assert any("lost a race to concurrent writers" in r.getMessage() for r in caplog.records)


def _outside_the_warehouse(root: Path, lake: lakeclone.Lake) -> set[str]:
    return {path for path in everything_under(root) if not (root / path).is_relative_to(lake.warehouse)}


HOSTILE_NAMES = ['"a/../../b"', '"/etc"', '".."', '"x\\y"', '"../../outside"']


def test_hostile_quoted_names_keep_managed_tables_inside_the_warehouse(lake: lakeclone.Lake, tmp_path: Path) -> None:
    """A quoted identifier is a name, never a path: no ``..`` or absolute path in it reaches the file system."""
    outside = tmp_path / "outside-marker"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    around = _outside_the_warehouse(tmp_path, lake)
    tables = lake.warehouse / "tables"
    for index, name in enumerate(HOSTILE_NAMES):
        lake.sql(f"CREATE DATABASE {name}")
        lake.sql(f"CREATE SCHEMA {name}.{name}")
        qualified = f"{name}.{name}.{name}"
        lake.sql(f"CREATE TABLE {qualified} (id INT)")
        lake.sql(f"INSERT INTO {qualified} VALUES ({index})")
        folder = Path(location(lake, qualified).removeprefix("file:"))
        assert folder.resolve().is_relative_to(tables.resolve()), f"{name} put its table at {folder}"
        assert rows(lake, f"SELECT * FROM {qualified}") == kernel_rows(str(folder)) == [(index,)]
    for name in HOSTILE_NAMES:
        lake.sql(f"DROP TABLE {name}.{name}.{name}")
        lake.sql(f"DROP DATABASE {name}")
    lake.clock.advance(days=30)  # past every UNDROP window: the next DROP purges the dropped tables
    lake.sql("USE SCHEMA lake.public")  # CREATE DATABASE made each hostile database the current one
    lake.sql("CREATE TABLE trigger_purge (id INT); DROP TABLE trigger_purge")
    assert _outside_the_warehouse(tmp_path, lake) == around
    assert (outside / "keep.txt").read_text() == "precious"


def test_a_location_may_not_be_inside_a_clones_folder(lake: lakeclone.Lake, tmp_path: Path) -> None:
    source = tmp_path / "external" / "source"
    clone = tmp_path / "external" / "clone"
    lake.sql(f"CREATE EXTERNAL TABLE src (id INT) LOCATION = '{source}'; INSERT INTO src VALUES (1)")
    lake.sql(f"CREATE EXTERNAL TABLE dev LOCATION = '{clone}' CLONE src")
    for overlapping in (clone, clone / "sub", clone.parent):
        with pytest.raises(InvalidLocationError, match=r"overlaps the folder of table LAKE\.PUBLIC\.(DEV|SRC)"):
            lake.sql(f"CREATE EXTERNAL TABLE guest (x INT) LOCATION = '{overlapping}'")
    # A managed clone's folder is in the warehouse's managed area, which no LOCATION may name.
    lake.sql("CREATE TABLE managed_dev CLONE src")
    with pytest.raises(InvalidLocationError, match="overlaps the warehouse"):
        lake.sql(f"CREATE EXTERNAL TABLE guest (x INT) LOCATION = '{location(lake, 'managed_dev')}/sub'")
    assert rows(lake, "SELECT * FROM dev") == spark_rows(lake.spark, str(clone)) == [(1,)]
    assert [r.name for r in lake.sql("SHOW TABLES").collect()] == ["DEV", "MANAGED_DEV", "SRC"]
