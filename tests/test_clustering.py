"""Clustering keys, SUSPEND/RESUME RECLUSTER, clones of clustered tables, OPTIMIZE and automatic clustering."""

from __future__ import annotations

import itertools
import json

import pytest
from delta_reader import commit_actions, kernel_rows, latest_version, live_files, live_stats, sorted_rows
from lake_helpers import location, rows

import lakeclone
from lakeclone.clustering import optimize as clustering
from lakeclone.session import session_setting

pytestmark = pytest.mark.spark


def shown(lake: lakeclone.Lake, name: str, scope: str = "") -> tuple[str, str]:
    (row,) = lake.sql(f"SHOW TABLES LIKE '{name}'{scope}").collect()
    return row.cluster_by, row.automatic_clustering


def stored_rows(lake: lakeclone.Lake, folder: str) -> list[tuple]:
    """Every live row with its row id, as delta-spark reads them (row tracking's ``_metadata.row_id``)."""
    return sorted_rows(lake.spark.read.format("delta").load(folder).select("*", "_metadata.row_id").collect())


def fill(lake: lakeclone.Lake, table: str, inserts: int) -> None:
    for i in range(inserts):
        lake.sql(f"INSERT INTO {table} VALUES ({(i * 7) % 10}, 'r{i}'), ({100 + i}, 's{i}')")


# Keys -----------------------------------------------------------------------------------


def test_create_table_cluster_by(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING, c INT) CLUSTER BY (a, b)")
    lake.sql("CREATE TABLE plain (a INT)")
    assert shown(lake, "T") == ("LINEAR(A, B)", "ON")
    assert shown(lake, "PLAIN") == ("", "OFF")
    assert lake.sql("DESCRIBE DETAIL t").collect()[0].clusteringColumns == ["A", "B"]
    assert lake.sql("DESCRIBE DETAIL plain").collect()[0].clusteringColumns == []
    lake.sql("CREATE TABLE ctas CLUSTER BY (x) AS SELECT 1 AS x, 'a' AS y")
    assert shown(lake, "CTAS") == ("LINEAR(X)", "ON")


def test_cluster_by_an_unknown_column_creates_nothing(lake: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier 'NOPE'"):
        lake.sql("CREATE TABLE t (a INT) CLUSTER BY (nope)")
    assert lake.sql("SHOW TABLES").collect() == []


def test_alter_cluster_by_and_drop_clustering_key(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING)")
    lake.sql("ALTER TABLE t CLUSTER BY (b)")
    assert shown(lake, "T") == ("LINEAR(B)", "ON")
    lake.sql("ALTER TABLE t SUSPEND RECLUSTER")
    lake.sql("ALTER TABLE t CLUSTER BY (a, b)")  # a new key keeps the suspension
    assert shown(lake, "T") == ("LINEAR(A, B)", "OFF")
    lake.sql("ALTER TABLE t DROP CLUSTERING KEY")
    assert shown(lake, "T") == ("", "OFF")
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier 'Z'"):
        lake.sql("ALTER TABLE t CLUSTER BY (z)")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist"):
        lake.sql("ALTER TABLE nope CLUSTER BY (a)")
    lake.sql("ALTER TABLE IF EXISTS nope CLUSTER BY (a)")


def test_suspend_and_resume_recluster(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT) CLUSTER BY (a)")
    lake.sql("ALTER TABLE t SUSPEND RECLUSTER")
    assert shown(lake, "T") == ("LINEAR(A)", "OFF")
    lake.sql("ALTER TABLE t RESUME RECLUSTER")
    assert shown(lake, "T") == ("LINEAR(A)", "ON")
    lake.sql("CREATE TABLE plain (a INT)")
    with pytest.raises(lakeclone.LakecloneError, match="has no clustering key"):
        lake.sql("ALTER TABLE plain SUSPEND RECLUSTER")


# Clones ---------------------------------------------------------------------------------


def test_clone_keeps_the_key_with_automatic_clustering_suspended(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING) CLUSTER BY (a)")
    lake.sql("INSERT INTO t VALUES (1, 'x')")
    lake.sql("CREATE TABLE c CLONE t")
    assert shown(lake, "T") == ("LINEAR(A)", "ON")
    assert shown(lake, "C") == ("LINEAR(A)", "OFF")
    lake.sql("ALTER TABLE c RESUME RECLUSTER")
    assert shown(lake, "C") == ("LINEAR(A)", "ON")


def test_clone_at_a_past_point_takes_the_current_key(lake: lakeclone.Lake, clock) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING) CLUSTER BY (a)")
    lake.sql("INSERT INTO t VALUES (1, 'x')")
    clock.advance(minutes=5)
    lake.sql("ALTER TABLE t CLUSTER BY (b, a)")
    lake.sql("CREATE TABLE c CLONE t AT (OFFSET => -120)")
    assert shown(lake, "C") == ("LINEAR(B, A)", "OFF")


def test_schema_clone_suspends_automatic_clustering(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA app")
    lake.sql("CREATE TABLE lake.app.t (a INT) CLUSTER BY (a)")
    lake.sql("CREATE SCHEMA lake.dev CLONE lake.app")
    assert shown(lake, "T", " IN SCHEMA lake.dev") == ("LINEAR(A)", "OFF")
    assert shown(lake, "T", " IN SCHEMA lake.app") == ("LINEAR(A)", "ON")


# OPTIMIZE --------------------------------------------------------------------------------


def test_optimize_compacts_into_one_commit_without_data_change(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING) CHANGE_TRACKING = TRUE")  # row ids, to see OPTIMIZE keep them
    fill(lake, "t", 4)
    folder = location(lake, "T")
    before_files = len(live_files(folder))
    before = stored_rows(lake, folder)
    version = latest_version(folder)
    assert before_files >= 4

    (result,) = lake.sql("OPTIMIZE t").collect()
    assert (result.metrics.numFilesRemoved, result.metrics.numFilesAdded) == (before_files, 1)

    assert latest_version(folder) == version + 1
    assert len(live_files(folder)) == 1
    assert stored_rows(lake, folder) == before  # same rows, same row ids
    assert kernel_rows(folder) == rows(lake, "SELECT * FROM t") == [r[:2] for r in before]

    actions = commit_actions(folder, version + 1)
    changes = [a.get("add") or a.get("remove") for a in actions if "add" in a or "remove" in a]
    assert len(changes) == before_files + 1
    assert all(change["dataChange"] is False for change in changes)
    # Delta reports no row count for OPTIMIZE; the new file's statistics say it holds every row.
    (added,) = [a["add"] for a in actions if "add" in a]
    assert json.loads(added["stats"])["numRecords"] == len(before) == 8
    commit = lake.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert commit.operation == "OPTIMIZE"
    assert commit.operationParameters["auto"] == "false"
    assert commit.operationMetrics["numAddedFiles"] == "1"
    assert commit.operationMetrics["numRemovedFiles"] == str(before_files)


MAX_FILE_SIZE = "spark.databricks.delta.optimize.maxFileSize"


def test_optimize_clusters_files_by_the_key(lake: lakeclone.Lake) -> None:
    """Delta's Z-order on the key range-partitions the rows: the new files' key ranges do not overlap."""
    lake.sql("CREATE TABLE t (a INT, b STRING) CLUSTER BY (a)")
    lake.sql("ALTER TABLE t SUSPEND RECLUSTER")
    for start in range(4):  # every INSERT spans the whole key range
        values = ", ".join(f"({a}, '{'x' * 40}{a}')" for a in range(start, 400, 4))
        lake.sql(f"INSERT INTO t VALUES {values}")
    before = rows(lake, "SELECT * FROM t")
    folder = location(lake, "T")
    with session_setting(lake.spark, MAX_FILE_SIZE, str(4 * 1024)):  # several small files, so that ranges show
        lake.sql("OPTIMIZE t")

    # The key ranges the log records for each file, which are what data skipping prunes by.
    stats = list(live_stats(folder).values())
    assert len(stats) >= 2
    assert sum(s["numRecords"] for s in stats) == len(before) == 400
    ranges = sorted((s["minValues"]["A"], s["maxValues"]["A"]) for s in stats)
    assert all(low_max < high_min for (_, low_max), (high_min, _) in itertools.pairwise(ranges))
    assert rows(lake, "SELECT * FROM t") == before == kernel_rows(folder)
    commit = lake.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert commit.operationParameters["clusterBy"] == '["A"]'
    assert commit.operationParameters["zOrderBy"] == '["A"]'  # Delta's own record of it


def test_optimize_zorder_by_orders_files_by_the_columns_named(lake: lakeclone.Lake) -> None:
    """Delta's spelling, on a table without a clustering key: the columns named are the Z-order's."""
    lake.sql("CREATE TABLE t (a INT, b STRING)")
    for start in range(4):  # every INSERT spans the whole range of b
        values = ", ".join(f"({start}, 'b{b:03d}{'x' * 40}')" for b in range(start, 400, 4))
        lake.sql(f"INSERT INTO t VALUES {values}")
    before = rows(lake, "SELECT * FROM t")
    folder = location(lake, "T")
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier 'NOPE'"):
        lake.sql("OPTIMIZE t ZORDER BY (nope)")
    with pytest.raises(lakeclone.LakecloneError, match="ZORDER BY names column B twice"):
        lake.sql("OPTIMIZE t ZORDER BY (b, B)")
    with session_setting(lake.spark, MAX_FILE_SIZE, str(4 * 1024)):
        lake.sql("OPTIMIZE t ZORDER BY b")

    stats = list(live_stats(folder).values())
    assert len(stats) >= 2
    ranges = sorted((s["minValues"]["B"], s["maxValues"]["B"]) for s in stats)
    assert all(low_max < high_min for (_, low_max), (high_min, _) in itertools.pairwise(ranges))
    assert rows(lake, "SELECT * FROM t") == before == kernel_rows(folder)
    commit = lake.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert (commit.operation, commit.operationParameters["zOrderBy"]) == ("OPTIMIZE", '["B"]')
    assert commit.operationParameters["clusterBy"] == "[]"  # the table has no clustering key


def test_optimize_with_nothing_to_compact_commits_nothing(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING)")
    lake.sql("INSERT INTO t VALUES (1, 'x')")
    folder = location(lake, "T")
    version = latest_version(folder)
    (result,) = lake.sql("OPTIMIZE t").collect()
    assert (result.metrics.numFilesAdded, result.metrics.numFilesRemoved) == (0, 0)
    assert latest_version(folder) == version


def test_time_travel_before_optimize_still_reads(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING)")
    fill(lake, "t", 2)
    version = latest_version(location(lake, "T"))
    lake.sql("OPTIMIZE t")
    assert rows(lake, f"SELECT * FROM t AT (VERSION => {version})") == rows(lake, "SELECT * FROM t")


# Automatic clustering -----------------------------------------------------------------------


def test_automatic_clustering_compacts_after_dml(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING) CLUSTER BY (a)")
    folder = location(lake, "T")
    expected: list[tuple] = []
    inserts = 0
    while len(live_files(folder)) <= clustering.AUTO_MIN_SMALL_FILES and inserts < 3 * clustering.AUTO_MIN_SMALL_FILES:
        lake.sql(f"INSERT INTO t VALUES ({inserts}, 'x')")
        expected.append((inserts, "x"))
        inserts += 1
        history = lake.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
        if history.operation == "OPTIMIZE":
            break
    assert history.operation == "OPTIMIZE"
    assert history.operationParameters["auto"] == "true"
    assert inserts == clustering.AUTO_MIN_SMALL_FILES + 1
    assert len(live_files(folder)) == 1
    assert rows(lake, "SELECT * FROM t") == sorted_rows(expected) == kernel_rows(folder)
    # The DML's own commit came first, as a commit of its own.
    previous = lake.sql("DESCRIBE HISTORY t LIMIT 2").collect()[1]
    assert previous.operation == "WRITE"


def test_suspended_or_unclustered_tables_are_never_reclustered(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (a INT) CLUSTER BY (a)")
    lake.sql("ALTER TABLE s SUSPEND RECLUSTER")
    lake.sql("CREATE TABLE u (a INT)")
    for i in range(clustering.AUTO_MIN_SMALL_FILES + 2):
        lake.sql(f"INSERT INTO s VALUES ({i})")
        lake.sql(f"INSERT INTO u VALUES ({i})")
    for table in ("s", "u"):
        operations = {r.operation for r in lake.sql(f"DESCRIBE HISTORY {table}").collect()}
        assert "OPTIMIZE" not in operations
        assert len(live_files(location(lake, table.upper()))) == clustering.AUTO_MIN_SMALL_FILES + 2
