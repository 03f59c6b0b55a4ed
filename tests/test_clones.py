"""CREATE TABLE|SCHEMA|DATABASE ... CLONE: zero-copy and deep clones, points in time, errors,
parameters, external clones, and clones outliving their (dropped, purged) sources."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from delta_reader import kernel_rows, live_files, log_file_path, spark_rows
from lake_helpers import location, parameters, rows

import lakeclone
from lakeclone.catalog.store import Catalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NOT_AVAILABLE = "Data is not available."


# Helpers -------------------------------------------------------------------------------------


def commit(folder: str, version: int) -> list[dict]:
    path = Path(folder) / "_delta_log" / f"{version:020d}.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def add_paths(folder: str, version: int) -> list[str]:
    """The paths a commit adds: absolute ones (a shallow clone's) as local paths, others as written."""
    paths = [a["add"]["path"] for a in commit(folder, version) if "add" in a]
    return sorted(log_file_path(folder, p) if p.startswith("file:") else p for p in paths)


def current_files(folder: str) -> list[str]:
    return live_files(folder)


def data_files(folder: str) -> set[str]:
    """Every parquet file under a table's folder (its own data)."""
    return {
        os.path.join(d, f) for d, _, names in os.walk(folder) if "_delta_log" not in d for f in names if f.endswith(".parquet")
    }


def history(lake: lakeclone.Lake, name: str) -> list:
    return sorted(lake.sql(f"DESCRIBE HISTORY {name}").collect(), key=lambda h: h.version)


def assert_all_readable(lake: lakeclone.Lake) -> None:
    """Every live table reads the same through lakeclone's SELECT and the Delta kernel."""
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        tables = [t for d in catalog.objects.databases() for s in catalog.objects.schemas(d) for t in catalog.objects.tables(s)]
    finally:
        catalog.close()
    assert tables
    for table in tables:
        assert rows(lake, f"SELECT * FROM {table.qualified}") == kernel_rows(table.location), table.qualified


# Zero-copy clones ----------------------------------------------------------------------------


def test_zero_copy_clone_references_the_source_files_by_absolute_uri(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT, v STRING); INSERT INTO s VALUES (1, 'a'), (2, 'b')")
    status = lake.sql("CREATE TABLE c CLONE s").collect()
    assert status[0].status == "Table C successfully created."
    source, clone = location(lake, "s"), location(lake, "c")
    assert source != clone
    # Nothing copied: the clone's folder holds only its log.
    assert sorted(os.listdir(clone)) == ["_delta_log"]
    # Delta's SHALLOW CLONE writes each file's absolute URI.
    assert all(a["add"]["path"].startswith("file:/") for a in commit(clone, 0) if "add" in a)
    assert add_paths(clone, 0) == current_files(source)
    (created,) = history(lake, "c")
    assert (created.version, created.operation) == (0, "CLONE")
    assert created.operationParameters == {"source": "LAKE.PUBLIC.S", "sourceVersion": "1", "isShallow": "true"}
    assert created.operationMetrics["numCopiedFiles"] == "0"
    assert created.operationMetrics["sourceNumOfFiles"] == str(len(current_files(source)))
    assert lake.sql("DESCRIBE DETAIL c").collect()[0].kind == "MANAGED"
    assert [(r.name, r.type) for r in lake.sql("DESCRIBE TABLE c").collect()] == [
        (r.name, r.type) for r in lake.sql("DESCRIBE TABLE s").collect()
    ]
    assert rows(lake, "SELECT * FROM c") == rows(lake, "SELECT * FROM s") == [(1, "a"), (2, "b")]
    assert kernel_rows(clone) == [(1, "a"), (2, "b")]


def test_a_zero_copy_clone_commits_what_deltas_own_shallow_clone_commits(
    tmp_path: Path, spark: SparkSession, clock: lakeclone.ManualClock
) -> None:
    # A folder name Delta's log must URI-encode, and a source of deletion vectors, row tracking, a NOT NULL column.
    lake = lakeclone.connect(tmp_path / "a folder %" / "warehouse", spark=spark, clock=clock)
    lake.sql(
        "CREATE TABLE s (id INT NOT NULL, v STRING, at TIMESTAMP_NTZ) CHANGE_TRACKING = TRUE ENABLE_DELETION_VECTORS = TRUE;"
        "INSERT INTO s VALUES (1, 'a', NULL), (2, 'b', NULL), (3, 'c', NULL); INSERT INTO s VALUES (4, 'd', NULL);"
        "DELETE FROM s WHERE id = 2;"
        "CREATE TABLE c CLONE s; CREATE TABLE cc CLONE c; CREATE TABLE d DEEP CLONE s"
    )
    source, version = "file:" + location(lake, "s"), history(lake, "s")[-1].version
    theirs = tmp_path / "delta's clone"
    spark.sql(f"CREATE TABLE delta.`{theirs}` SHALLOW CLONE delta.`{source}` VERSION AS OF {version}").collect()

    materialized = ("delta.rowTracking.materializedRowIdColumnName", "delta.rowTracking.materializedRowCommitVersionColumnName")

    def actions(folder: str, version: int = 0) -> dict[str, Any]:
        """The version's add, metaData and protocol actions, without what each table has of its own."""
        found: dict[str, Any] = {"add": []}
        for action in commit(folder, version):
            ((kind, body),) = action.items()
            if kind == "add":
                # Fresh row ids (baseRowId) are given in the order the adds are listed, which may differ.
                found["add"].append(
                    {k: v for k, v in body.items() if k not in ("modificationTime", "baseRowId") and (k != "tags" or v)}
                )
            elif kind == "metaData":
                configuration = {k: v for k, v in body["configuration"].items() if k not in materialized}
                found[kind] = {
                    **{k: v for k, v in body.items() if k not in ("id", "createdTime")},
                    "configuration": configuration,
                }
                found["names"] = [body["configuration"].get(key) for key in materialized]
            elif kind == "protocol":
                found[kind] = body
        found["add"].sort(key=lambda add: add["path"])
        return found

    ours, delta_s = actions(location(lake, "c")), actions(str(theirs))
    # Row tracking's materialized columns are named anew, so the clone's rows get ids of their own.
    assert ours.pop("names") != actions(location(lake, "s"))["names"] != delta_s.pop("names")
    assert ours == delta_s
    deep = actions(location(lake, "d"))
    assert (deep["metaData"], deep["protocol"]) == (ours["metaData"], ours["protocol"])  # timestampNtz is in the protocol alone
    assert any((add.get("deletionVector") or {}).get("storageType") == "p" for add in ours["add"])
    assert all("%20%25" in add["path"] for add in ours["add"])
    # A clone of the clone names the same files, as they are named in the clone's log.
    assert actions(location(lake, "cc"))["add"] == ours["add"]
    assert rows(lake, "SELECT id FROM cc") == rows(lake, "SELECT id FROM s") == [(1,), (3,), (4,)]
    assert kernel_rows(location(lake, "cc")) == spark_rows(spark, location(lake, "cc")) == kernel_rows(location(lake, "s"))
    with pytest.raises(lakeclone.LakecloneError, match="NULL result in a non-nullable column"):
        lake.sql("INSERT INTO cc VALUES (NULL, 'x', NULL)")


def test_a_zero_copy_clone_of_a_source_whose_checksum_lists_no_files_is_deltas_own(lake: lakeclone.Lake) -> None:
    from lakeclone.session import session_setting

    # Delta lists a version's files in its checksum only up to a number of files (50 by default).
    with session_setting(lake.spark, "spark.databricks.delta.allFilesInCrc.thresholdNumFiles", "1"):
        lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    lake.sql("CREATE TABLE c CLONE s")
    assert add_paths(location(lake, "c"), 0) == current_files(location(lake, "s"))
    (created,) = history(lake, "c")
    assert created.operationParameters == {"source": "LAKE.PUBLIC.S", "sourceVersion": "2", "isShallow": "true"}
    assert created.operationMetrics["sourceNumOfFiles"] == "2"
    assert rows(lake, "SELECT * FROM c") == kernel_rows(location(lake, "c")) == [(1,), (2,)]


def test_source_and_clone_evolve_independently(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT, v STRING); INSERT INTO s VALUES (1, 'a'); INSERT INTO s VALUES (2, 'b')")
    lake.sql("CREATE TABLE c CLONE s")
    source, clone = location(lake, "s"), location(lake, "c")
    before = {f: (os.path.getsize(f), os.path.getmtime(f)) for f in data_files(source)}

    lake.sql("INSERT INTO s VALUES (3, 's only')")
    lake.sql("UPDATE c SET v = 'A' WHERE id = 1")
    lake.sql("DELETE FROM c WHERE id = 2")
    lake.sql(
        "MERGE INTO c USING (SELECT 1 AS id, 'M' AS v UNION ALL SELECT 5 AS id, 'c only' AS v) AS u "
        "ON c.id = u.id WHEN MATCHED THEN UPDATE SET v = u.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (u.id, u.v)"
    )

    assert rows(lake, "SELECT * FROM s") == [(1, "a"), (2, "b"), (3, "s only")]
    assert rows(lake, "SELECT * FROM c") == [(1, "M"), (5, "c only")]
    # The source's files are untouched; its only new file is its own insert's.
    assert {f: (os.path.getsize(f), os.path.getmtime(f)) for f in before} == before
    assert len(data_files(source) - set(before)) == 1
    # The clone rewrote what it changed into its own folder, and no longer points at the source.
    assert all(f.startswith(clone + os.sep) for f in current_files(clone))
    assert not data_files(clone) & set(before)
    assert kernel_rows(source) == [(1, "a"), (2, "b"), (3, "s only")]
    assert kernel_rows(clone) == [(1, "M"), (5, "c only")]
    assert [h.operation for h in history(lake, "c")] == ["CLONE", "UPDATE", "DELETE", "MERGE"]


def test_clone_at_every_kind_of_point(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")  # versions 0 and 1, at 00:00
    clock.advance(hours=1)
    lake.sql("INSERT INTO s VALUES (2)")  # version 2, at 01:00
    second = lake.last_query_id
    clock.advance(hours=1)
    lake.sql("INSERT INTO s VALUES (3)")  # version 3, at 02:00

    one, two, three = [(1,)], [(1,), (2,)], [(1,), (2,), (3,)]
    cases = {
        "c_plain": ("CLONE s", 3, three),
        "c_version": ("CLONE s AT(VERSION => 1)", 1, one),
        "c_before_version": ("CLONE s BEFORE(VERSION => 2)", 1, one),
        "c_timestamp": ("CLONE s AT(TIMESTAMP => '2024-01-01 00:30:00'::TIMESTAMP)", 1, one),
        "c_offset": ("CLONE s AT(OFFSET => -2700)", 2, two),  # 01:15
        "c_statement": (f"CLONE s AT(STATEMENT => '{second}')", 2, two),
        "c_before_statement": (f"CLONE s BEFORE(STATEMENT => '{second}')", 1, one),
        "c_shallow_version": ("SHALLOW CLONE s VERSION AS OF 2", 2, two),
        "c_deep_timestamp": ("DEEP CLONE s TIMESTAMP AS OF '2024-01-01 01:30:00'", 2, two),
    }
    for name, (clause, _, _) in cases.items():
        lake.sql(f"CREATE TABLE {name} {clause}")
    for name, (clause, version, expected) in cases.items():
        assert rows(lake, f"SELECT * FROM {name}") == expected, clause
        assert kernel_rows(location(lake, name)) == expected, clause
        (created,) = history(lake, name)
        assert created.operation == "CLONE"
        assert created.operationParameters["sourceVersion"] == str(version), clause
        assert created.operationParameters["isShallow"] == ("false" if "DEEP" in clause else "true")
    assert rows(lake, "SELECT * FROM s") == three


def test_clone_of_clone_references_stay_flat(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1), (2)")
    lake.sql("CREATE TABLE c1 CLONE s; CREATE TABLE c2 CLONE c1")
    source, middle, last = location(lake, "s"), location(lake, "c1"), location(lake, "c2")
    assert add_paths(last, 0) == add_paths(middle, 0) == current_files(source)
    assert not any(middle in p for p in add_paths(last, 0))
    (created,) = history(lake, "c2")
    assert created.operationParameters["source"] == "LAKE.PUBLIC.C1"
    assert sorted(os.listdir(last)) == ["_delta_log"]
    assert rows(lake, "SELECT * FROM c2") == kernel_rows(last) == [(1,), (2,)]


# Deep clones ----------------------------------------------------------------------------------


def test_deep_clone_copies_files_and_a_repeated_deep_clone_copies_only_new_ones(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock
) -> None:
    lake.sql("CREATE TABLE s (id INT, v STRING); INSERT INTO s VALUES (1, 'a'); INSERT INTO s VALUES (2, 'b')")
    lake.sql("CREATE TABLE d DEEP CLONE s")
    source, deep = location(lake, "s"), location(lake, "d")
    copies = data_files(deep)
    assert len(copies) == 2
    assert {os.path.basename(f) for f in copies} == {os.path.basename(f) for f in current_files(source)}
    assert all("://" not in p and "/" not in p for p in add_paths(deep, 0))
    assert current_files(deep) == sorted(copies)
    (created,) = history(lake, "d")
    assert created.operationParameters == {"source": "LAKE.PUBLIC.S", "sourceVersion": "2", "isShallow": "false"}
    assert created.operationMetrics["numCopiedFiles"] == "2"
    table_id = lake.sql("DESCRIBE DETAIL d").collect()[0].id

    lake.sql("INSERT INTO s VALUES (3, 'c')")
    lake.sql("CREATE OR REPLACE TABLE d DEEP CLONE s")
    assert lake.sql("DESCRIBE DETAIL d").collect()[0].id == table_id
    refreshed = history(lake, "d")
    assert [(h.version, h.operation) for h in refreshed] == [(0, "CLONE"), (1, "CLONE")]
    assert refreshed[1].operationParameters["sourceVersion"] == "3"
    assert refreshed[1].operationMetrics["numCopiedFiles"] == "1"
    assert len(data_files(deep)) == 3
    assert rows(lake, "SELECT * FROM d") == kernel_rows(deep) == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(lake, "SELECT * FROM d AT(VERSION => 0)") == [(1, "a"), (2, "b")]

    # A deep clone owns its data: dropping and purging the source leaves it whole.
    lake.sql("DROP TABLE s")
    clock.advance(days=8)
    lake.sql("DROP TABLE IF EXISTS nothing")
    assert not os.path.exists(source)
    assert rows(lake, "SELECT * FROM d") == kernel_rows(deep) == [(1, "a"), (2, "b"), (3, "c")]


def test_a_deep_clone_after_another_sessions_commit_on_the_thread_is_this_sessions(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    with lake.streaming_client("ingest") as client:  # a Spark session of its own, committing on this thread
        channel, _ = client.open_channel("c", table="s")
        channel.append_rows([{"id": 2}], offset_token="1")
        channel.flush()
    lake.sql("CREATE TABLE d DEEP CLONE s")
    cloned_by = lake.last_query_id
    (created,) = history(lake, "d")  # lakeclone's commit metadata: its clock, query id and parameters
    assert created.operationParameters == {"source": "LAKE.PUBLIC.S", "sourceVersion": "3", "isShallow": "false"}
    assert created.queryId == cloned_by


def test_repeated_deep_clone_reports_the_size_of_the_files_it_copied(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT, v STRING); INSERT INTO s VALUES (1, 'a')")
    lake.sql("CREATE TABLE d DEEP CLONE s")
    lake.sql(f"INSERT INTO s VALUES (2, '{'x' * 5000}')")
    before = set(data_files(location(lake, "d")))
    lake.sql("CREATE OR REPLACE TABLE d DEEP CLONE s")
    (new,) = set(data_files(location(lake, "d"))) - before
    refreshed = history(lake, "d")[-1]
    assert refreshed.operationMetrics["numCopiedFiles"] == "1"
    assert refreshed.operationMetrics["copiedFilesSize"] == str(os.path.getsize(new))


# Errors -------------------------------------------------------------------------------------


def test_clone_of_a_source_that_did_not_exist_at_the_point(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    with pytest.raises(lakeclone.LakecloneError, match="does not exist or not authorized"):
        lake.sql("CREATE TABLE c CLONE nosuch")
    clock.advance(hours=1)
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    clock.advance(hours=1)
    for point in ("AT(TIMESTAMP => '2024-01-01 00:30:00'::TIMESTAMP)", "AT(OFFSET => -7200)"):
        with pytest.raises(lakeclone.LakecloneError, match=r"Object 'LAKE\.PUBLIC\.S' does not exist or not authorized\."):
            lake.sql(f"CREATE TABLE c CLONE s {point}")
    with pytest.raises(lakeclone.LakecloneError, match="Cannot time travel Delta table to version 9"):
        lake.sql("CREATE TABLE c CLONE s AT(VERSION => 9)")
    # Failed clones leave nothing behind.
    with pytest.raises(lakeclone.LakecloneError, match="does not exist"):
        lake.sql("SELECT * FROM c")
    assert len(os.listdir(lake.warehouse / "tables")) == 1


def test_clone_target_exists_or_replace_and_if_not_exists(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    lake.sql("CREATE TABLE c CLONE s")
    lake.sql("INSERT INTO s VALUES (2)")
    with pytest.raises(lakeclone.LakecloneError, match="already exists"):
        lake.sql("CREATE TABLE c CLONE s")
    status = lake.sql("CREATE TABLE IF NOT EXISTS c CLONE s").collect()
    assert "already exists, statement succeeded" in status[0].status
    assert rows(lake, "SELECT * FROM c") == [(1,)]
    lake.sql("CREATE OR REPLACE TABLE c CLONE s")
    assert rows(lake, "SELECT * FROM c") == [(1,), (2,)]
    # The replaced clone is a dropped table that UNDROP can bring back under another name.
    lake.sql("ALTER TABLE c RENAME TO c_new; UNDROP TABLE c")
    assert rows(lake, "SELECT * FROM c") == [(1,)]
    assert_all_readable(lake)


def test_clone_at_a_point_whose_files_were_vacuumed(lake: lakeclone.Lake, retention_check_off: None) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    lake.sql("DELETE FROM s WHERE id = 1")
    lake.sql("VACUUM s RETAIN 0 HOURS")
    with pytest.raises(lakeclone.LakecloneError, match=NOT_AVAILABLE):
        lake.sql("CREATE TABLE c CLONE s AT(VERSION => 1)")
    with pytest.raises(lakeclone.LakecloneError, match=NOT_AVAILABLE):
        lake.sql("SELECT * FROM s AT(VERSION => 2)")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist"):
        lake.sql("DESCRIBE DETAIL c")
    assert len(os.listdir(lake.warehouse / "tables")) == 1
    lake.sql("CREATE TABLE c CLONE s")
    assert rows(lake, "SELECT * FROM c") == [(2,)]
    assert_all_readable(lake)


def test_clone_at_a_point_outside_retention(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT) DATA_RETENTION_TIME_IN_DAYS = 0; INSERT INTO s VALUES (1)")
    clock.advance(hours=1)
    lake.sql("INSERT INTO s VALUES (2)")
    clock.advance(hours=1)
    for point in ("AT(VERSION => 1)", "AT(OFFSET => -5400)", "AT(TIMESTAMP => '2024-01-01 00:30:00'::TIMESTAMP)"):
        with pytest.raises(lakeclone.LakecloneError, match=NOT_AVAILABLE):
            lake.sql(f"CREATE TABLE c CLONE s {point}")
    lake.sql("CREATE TABLE c CLONE s")
    assert rows(lake, "SELECT * FROM c") == [(1,), (2,)]
    assert_all_readable(lake)


# Parameters ------------------------------------------------------------------------------


def test_clone_inherits_the_source_table_parameters_but_not_its_containers(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA lake.a DATA_RETENTION_TIME_IN_DAYS = 2")
    lake.sql("CREATE SCHEMA lake.b DATA_RETENTION_TIME_IN_DAYS = 5")
    lake.sql("CREATE TABLE lake.a.own (id INT) DATA_RETENTION_TIME_IN_DAYS = 3 COMMENT = 'first'")
    lake.sql("CREATE TABLE lake.a.inherits (id INT, s STRING)")
    lake.sql("INSERT INTO lake.a.own VALUES (1)")
    lake.sql("ALTER TABLE lake.a.own SET COMMENT = 'current'")
    lake.sql("CREATE TABLE lake.b.own_clone CLONE lake.a.own AT(VERSION => 0)")
    lake.sql("CREATE TABLE lake.b.inherits_clone CLONE lake.a.inherits")
    lake.sql("CREATE TABLE lake.a.inherits_here CLONE lake.a.inherits")

    own = parameters(lake, "lake.b.own_clone")
    assert own["DATA_RETENTION_TIME_IN_DAYS"] == ("3", "TABLE")
    assert own["COMMENT"] == ("current", "TABLE")
    assert lake.sql("DESCRIBE DETAIL lake.b.own_clone").collect()[0].description == "current"
    assert parameters(lake, "lake.b.inherits_clone")["DATA_RETENTION_TIME_IN_DAYS"] == ("5", "SCHEMA")
    assert parameters(lake, "lake.a.inherits_here")["DATA_RETENTION_TIME_IN_DAYS"] == ("2", "SCHEMA")
    retention = {r.name: r.retention_time for r in lake.sql("SHOW TABLES IN SCHEMA lake.b").collect()}
    assert retention == {"OWN_CLONE": 3, "INHERITS_CLONE": 5}
    # Columns come from the source at the cloned point.
    assert [(r.name, r.type) for r in lake.sql("DESCRIBE TABLE lake.b.inherits_clone").collect()] == [
        ("ID", "NUMBER(38,0)"),
        ("S", "VARCHAR(16777216)"),
    ]
    assert rows(lake, "SELECT * FROM lake.b.own_clone") == []
    assert_all_readable(lake)


# Managed and external -----------------------------------------------------------------------


def test_clones_of_managed_and_external_tables(lake: lakeclone.Lake, clock: lakeclone.ManualClock, tmp_path: Path) -> None:
    lake.sql(f"CREATE EXTERNAL TABLE e (id INT) LOCATION = '{tmp_path / 'ext'}'")
    lake.sql("INSERT INTO e VALUES (1), (2)")
    lake.sql("CREATE TABLE m (id INT); INSERT INTO m VALUES (7)")
    lake.sql("CREATE TABLE e_clone CLONE e; CREATE TABLE m_clone CLONE m")
    kinds = {r.name: r.kind for r in (lake.sql(f"DESCRIBE DETAIL {n}").collect()[0] for n in ("e", "e_clone", "m", "m_clone"))}
    assert kinds == {
        "LAKE.PUBLIC.E": "EXTERNAL",
        "LAKE.PUBLIC.E_CLONE": "EXTERNAL",
        "LAKE.PUBLIC.M": "MANAGED",
        "LAKE.PUBLIC.M_CLONE": "MANAGED",
    }
    external = {r.name: r.is_external for r in lake.sql("SHOW TABLES").collect()}
    assert external == {"E": "Y", "E_CLONE": "Y", "M": "N", "M_CLONE": "N"}

    source, clone = location(lake, "e"), location(lake, "e_clone")
    assert source.startswith(str(tmp_path))
    files = data_files(source)
    assert len(files) >= 1 and sorted(os.listdir(clone)) == ["_delta_log"]

    # DROP of an external table, or of an external clone, never deletes files, even once purged.
    lake.sql("DROP TABLE e_clone; DROP TABLE e")
    clock.advance(days=8)
    lake.sql("DROP TABLE m")  # any DROP purges what has expired
    with pytest.raises(lakeclone.LakecloneError, match="did not exist or was purged"):
        lake.sql("UNDROP TABLE e")
    assert all(os.path.exists(f) for f in files)
    assert (Path(clone) / "_delta_log" / "00000000000000000000.json").is_file()
    assert kernel_rows(source) == [(1,), (2,)]
    assert rows(lake, "SELECT * FROM m_clone") == kernel_rows(location(lake, "m_clone")) == [(7,)]


def test_clone_in_a_warehouse_whose_path_needs_escaping(tmp_path: Path, spark, clock: lakeclone.ManualClock) -> None:
    """Absolute add paths are URIs: a space or a quote in the folder must survive the round trip."""
    lake = lakeclone.connect(tmp_path / "my lake's", spark=spark, clock=clock)
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    lake.sql("CREATE TABLE c CLONE s; CREATE TABLE cc CLONE c")
    lake.sql("INSERT INTO c VALUES (2)")
    assert rows(lake, "SELECT * FROM c") == kernel_rows(location(lake, "c")) == [(1,), (2,)]
    assert rows(lake, "SELECT * FROM cc") == kernel_rows(location(lake, "cc")) == [(1,)]


def test_a_folder_whose_path_holds_a_percent_escape(tmp_path: Path, spark, clock: lakeclone.ManualClock) -> None:
    """A folder named "100%20" is that name, never "100 ": Hadoop paths are not URI-decoded twice.

    Read back with delta-spark only: the kernel binding decodes such a URI twice
    and looks for "100 " itself.
    """
    lake = lakeclone.connect(tmp_path / "100%20", spark=spark, clock=clock)
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); CREATE TABLE c CLONE s")
    assert location(lake, "s").startswith(str(tmp_path / "100%20"))
    assert rows(lake, "SELECT * FROM c") == spark_rows(spark, location(lake, "c")) == [(1,)]
    assert not (tmp_path / "100 ").exists()


def test_external_clone_reads_and_writes(lake: lakeclone.Lake, tmp_path: Path) -> None:
    lake.sql(f"CREATE EXTERNAL TABLE e (id INT) LOCATION = '{tmp_path / 'ext'}'")
    lake.sql("INSERT INTO e VALUES (1), (2)")
    lake.sql("CREATE TABLE e_clone CLONE e")
    lake.sql("INSERT INTO e_clone VALUES (3)")
    assert rows(lake, "SELECT * FROM e_clone") == kernel_rows(location(lake, "e_clone")) == [(1,), (2,), (3,)]
    assert rows(lake, "SELECT * FROM e") == kernel_rows(location(lake, "e")) == [(1,), (2,)]


# Dropped sources ------------------------------------------------------------------------------


def test_dropping_and_purging_a_source_never_breaks_a_clone(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2); INSERT INTO s VALUES (3)")
    source = location(lake, "s")
    lake.sql("CREATE TABLE c CLONE s AT(VERSION => 2)")
    clone = location(lake, "c")
    needed = set(current_files(clone))
    unneeded = set(current_files(source)) - needed
    assert len(needed) == 2 and len(unneeded) == 1

    lake.sql("DROP TABLE s")
    assert rows(lake, "SELECT * FROM c") == [(1,), (2,)]
    lake.sql("UNDROP TABLE s")
    assert rows(lake, "SELECT * FROM s") == [(1,), (2,), (3,)]
    lake.sql("DROP TABLE s")
    clock.advance(days=6)
    lake.sql("DROP TABLE IF EXISTS nothing")
    assert all(os.path.exists(f) for f in needed | unneeded)

    clock.advance(days=2)
    lake.sql("DROP TABLE IF EXISTS nothing")  # the window has closed: purge
    with pytest.raises(lakeclone.LakecloneError, match="did not exist or was purged"):
        lake.sql("UNDROP TABLE s")
    assert all(os.path.exists(f) for f in needed)
    assert not any(os.path.exists(f) for f in unneeded)
    assert not os.path.exists(os.path.join(source, "_delta_log"))
    assert rows(lake, "SELECT * FROM c") == kernel_rows(clone) == [(1,), (2,)]
    lake.sql("INSERT INTO c VALUES (4)")
    assert rows(lake, "SELECT * FROM c") == kernel_rows(clone) == [(1,), (2,), (4,)]

    # Once the clone is gone too, the source's last files go with it.
    lake.sql("DROP TABLE c")
    clock.advance(days=8)
    lake.sql("DROP TABLE IF EXISTS nothing")
    assert not os.path.exists(source)
    assert not os.path.exists(clone)


def test_restoring_a_table_by_cloning_it_over_itself(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    old = location(lake, "s")
    old_files = {_only_row(f): f for f in current_files(old)}
    lake.sql("CREATE OR REPLACE TABLE s CLONE s AT(VERSION => 1)")
    assert rows(lake, "SELECT * FROM s") == [(1,)]
    (created,) = history(lake, "s")
    assert created.operationParameters == {"source": "LAKE.PUBLIC.S", "sourceVersion": "1", "isShallow": "true"}
    lake.sql("INSERT INTO s VALUES (3)")
    # The replaced table is dropped, and can come back under its name while its window lasts.
    lake.sql("ALTER TABLE s RENAME TO restored; UNDROP TABLE s")
    assert rows(lake, "SELECT * FROM s") == [(1,), (2,)]
    lake.sql("DROP TABLE s")
    clock.advance(days=8)
    lake.sql("DROP TABLE IF EXISTS nothing")
    assert os.path.exists(old_files[1]) and not os.path.exists(old_files[2])
    assert rows(lake, "SELECT * FROM restored") == kernel_rows(location(lake, "restored")) == [(1,), (3,)]


def _only_row(file: str) -> int:
    import pyarrow.parquet as pq

    (value,) = pq.read_table(file).column(0).to_pylist()
    return value


# Schemas and databases -------------------------------------------------------------------------


def test_schema_clone_takes_every_table_at_one_point(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE SCHEMA lake.src")
    lake.sql("CREATE TABLE lake.src.a (id INT); CREATE TABLE lake.src.b (id INT)")
    lake.sql("INSERT INTO lake.src.a VALUES (1)")
    point = lake.last_query_id
    clock.advance(hours=1)
    lake.sql("INSERT INTO lake.src.b VALUES (10); INSERT INTO lake.src.a VALUES (2)")
    lake.sql("CREATE TABLE lake.src.late (id INT)")
    clock.advance(minutes=30)

    lake.sql(f"CREATE SCHEMA lake.at_statement CLONE lake.src AT(STATEMENT => '{point}')")
    lake.sql("CREATE SCHEMA lake.at_offset CLONE lake.src AT(OFFSET => -3600)")  # 00:30: before b's insert
    lake.sql("CREATE SCHEMA lake.now CLONE lake.src")
    assert lake.current_schema == "NOW"

    def tables(schema: str) -> dict[str, list[tuple]]:
        names = sorted(r.name for r in lake.sql(f"SHOW TABLES IN SCHEMA lake.{schema}").collect())
        return {n: rows(lake, f"SELECT * FROM lake.{schema}.{n}") for n in names}

    at_point = {"A": [(1,)], "B": []}
    assert tables("at_statement") == at_point
    assert tables("at_offset") == at_point
    assert tables("now") == {"A": [(1,), (2,)], "B": [(10,)], "LATE": []}
    (created,) = history(lake, "lake.at_statement.a")
    assert created.operationParameters == {"source": "LAKE.SRC.A", "sourceVersion": "1", "isShallow": "true"}

    # Clones and source go their own ways.
    lake.sql("INSERT INTO lake.at_statement.b VALUES (99)")
    assert rows(lake, "SELECT * FROM lake.src.b") == [(10,)]

    with pytest.raises(lakeclone.LakecloneError, match="already exists"):
        lake.sql("CREATE SCHEMA lake.now CLONE lake.src")
    with pytest.raises(lakeclone.LakecloneError, match="VERSION is not a point in time"):
        lake.sql("CREATE SCHEMA lake.v CLONE lake.src AT(VERSION => 1)")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist or not authorized"):
        lake.sql("CREATE SCHEMA lake.early CLONE lake.src AT(TIMESTAMP => '2023-12-31 00:00:00'::TIMESTAMP)")
    lake.sql(f"CREATE OR REPLACE SCHEMA lake.now CLONE lake.src BEFORE(STATEMENT => '{point}')")
    assert tables("now") == {"A": [], "B": []}
    assert_all_readable(lake)


def test_schema_clone_if_not_exists(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA lake.src; CREATE SCHEMA lake.copy")
    status = lake.sql("CREATE SCHEMA IF NOT EXISTS lake.copy CLONE lake.src").collect()
    assert "already exists, statement succeeded" in status[0].status
    status = lake.sql("CREATE DATABASE IF NOT EXISTS lake CLONE lake").collect()
    assert "already exists, statement succeeded" in status[0].status


def test_database_clone(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE DATABASE d1 DATA_RETENTION_TIME_IN_DAYS = 4")
    lake.sql("CREATE TABLE d1.public.t (id INT); INSERT INTO d1.public.t VALUES (1)")
    lake.sql("CREATE SCHEMA d1.other; CREATE TABLE d1.other.u (id INT); INSERT INTO d1.other.u VALUES (5)")
    clock.advance(hours=1)
    lake.sql("CREATE SCHEMA d1.late; CREATE TABLE d1.late.x (id INT)")
    lake.sql("CREATE DATABASE d2 CLONE d1 AT(OFFSET => -1800)")
    assert lake.current_database == "D2"
    assert sorted(r.name for r in lake.sql("SHOW SCHEMAS IN DATABASE d2").collect()) == ["OTHER", "PUBLIC"]
    assert rows(lake, "SELECT * FROM d2.public.t") == [(1,)]
    assert rows(lake, "SELECT * FROM d2.other.u") == [(5,)]
    assert parameters(lake, "d2.other.u")["DATA_RETENTION_TIME_IN_DAYS"] == ("4", "DATABASE")
    lake.sql("INSERT INTO d1.public.t VALUES (2); DELETE FROM d2.other.u")
    assert rows(lake, "SELECT * FROM d2.public.t") == [(1,)]
    assert rows(lake, "SELECT * FROM d1.other.u") == [(5,)]
    with pytest.raises(lakeclone.LakecloneError, match="already exists"):
        lake.sql("CREATE DATABASE d2 CLONE d1")
    lake.sql("CREATE OR REPLACE DATABASE d2 CLONE d1")
    assert sorted(r.name for r in lake.sql("SHOW SCHEMAS IN DATABASE d2").collect()) == ["LATE", "OTHER", "PUBLIC"]
    assert rows(lake, "SELECT * FROM d2.public.t") == [(1,), (2,)]
    assert_all_readable(lake)
