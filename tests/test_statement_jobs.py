"""Spark jobs per statement: lakeclone runs no job that delta-spark's own statement on a like table does not.

Job counts do not depend on the machine's load, so these are exact rules
where timings could only be ratios (``bench/bench_latency.py`` has those). An
untracked lakeclone table is compared with a Delta table of lakeclone's own
table properties, a tracked one with a Delta table that also has row tracking
and the change data feed, which is what change tracking turns on. Both sides
run the same statements on the same rows in the same order, so whatever Delta
caches between statements it caches on both.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from lake_helpers import location, rows, spark_jobs_run

import lakeclone
from lakeclone.delta import log
from lakeclone.delta.log import Delta
from lakeclone.delta.statements import TABLE_PROPERTIES
from lakeclone.session import session_setting

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

ROWS = ", ".join(f"({i}, 'v{i}')" for i in range(20))

STATEMENTS = {
    "INSERT 1 row": "INSERT INTO {t} VALUES (100, 'new')",
    "INSERT 1,000 rows": "INSERT INTO {t} SELECT ID + 1000, V FROM {s}",
    "UPDATE 1 row": "UPDATE {t} SET V = 'changed' WHERE ID = 3",
    "DELETE 1 row": "DELETE FROM {t} WHERE ID = 4",
    "MERGE 10 rows": (
        "MERGE INTO {t} AS t USING (SELECT ID, V FROM {s} WHERE ID BETWEEN 15 AND 24) AS s ON t.ID = s.ID "
        "WHEN MATCHED THEN UPDATE SET V = s.V WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (s.ID, s.V)"
    ),
}


def _jobs(spark, run) -> int:  # type: ignore[no-untyped-def]
    with spark_jobs_run(spark) as jobs:
        run()
    return len(jobs)


def _compare(lake: lakeclone.Lake, folder: Path, *, tracked: bool) -> dict[str, tuple[int, int]]:
    """Each statement's jobs on a lakeclone table and on a like Delta table of delta-spark's own."""
    spark = lake.spark
    tracking = " CHANGE_TRACKING = TRUE" if tracked else ""
    lake.sql(f"CREATE TABLE t (id INT, v STRING){tracking}; CREATE TABLE s (id INT, v STRING)")
    lake.sql(f"INSERT INTO t VALUES {ROWS}")
    lake.sql("INSERT INTO s SELECT id, 'source' FROM range(1000)")
    properties = dict(TABLE_PROPERTIES)
    if tracked:
        properties.update({"delta.enableRowTracking": "true", "delta.enableChangeDataFeed": "true"})
    listed = ", ".join(f"'{key}' = '{value}'" for key, value in properties.items())
    delta_t, delta_s = f"delta.`{folder / 'delta_t'}`", f"delta.`{folder / 'delta_s'}`"
    spark.sql(f"CREATE TABLE {delta_t} (ID INT, V STRING) USING delta TBLPROPERTIES ({listed})")
    spark.sql(f"CREATE TABLE {delta_s} (ID INT, V STRING) USING delta")
    spark.sql(f"INSERT INTO {delta_t} VALUES {ROWS}")
    spark.sql(f"INSERT INTO {delta_s} SELECT id, 'source' FROM range(1000)")
    counts = {}
    for name, statement in STATEMENTS.items():
        ours = _jobs(spark, lambda statement=statement: lake.sql(statement.format(t="t", s="s")))
        theirs = _jobs(spark, lambda statement=statement: spark.sql(statement.format(t=delta_t, s=delta_s)))
        counts[name] = (ours, theirs)
    assert sorted(lake.sql("SELECT * FROM t").collect()) == sorted(spark.sql(f"SELECT * FROM {delta_t}").collect())
    return counts


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory, spark) -> dict[bool, dict[str, tuple[int, int]]]:  # type: ignore[no-untyped-def]
    """Each statement's (lakeclone, delta-spark) jobs, untracked (False) and tracked (True)."""
    found = {}
    for tracked in (False, True):
        folder = tmp_path_factory.mktemp("tracked" if tracked else "untracked")
        clock = lakeclone.ManualClock(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
        lake = lakeclone.connect(folder / "warehouse", spark=spark, clock=clock)
        found[tracked] = _compare(lake, folder, tracked=tracked)
    return found


@pytest.mark.parametrize("statement", list(STATEMENTS))
@pytest.mark.parametrize("tracked", [False, True], ids=["untracked", "tracked"])
def test_a_statement_runs_no_more_jobs_than_delta_sparks_own(counted, tracked: bool, statement: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = counted[tracked][statement]
    assert ours <= theirs, (ours, theirs)


def test_an_untracked_insert_runs_only_its_write_and_a_tracked_one_pays_for_row_ids(counted) -> None:  # type: ignore[no-untyped-def]
    assert counted[False]["INSERT 1 row"][0] == 1  # the write alone, as with Delta's defaults
    # Row ids cost every commit a look at the table's state: what tracking costs, and only where it is on.
    assert counted[True]["INSERT 1 row"][0] > 1


def test_create_table_runs_no_job_and_its_checksum_lists_the_files_to_come(lake: lakeclone.Lake) -> None:
    spark = lake.spark
    assert _jobs(spark, lambda: lake.sql("CREATE TABLE t (id INT, v STRING)")) == 0
    table = Delta(spark).table(location(lake, "T"))
    assert table.listed_add_actions(0) == []  # an empty table's checksum lists no files
    assert _jobs(spark, lambda: lake.sql("INSERT INTO t VALUES (1, 'a')")) == 1
    listed = table.listed_add_actions(1)
    assert listed is not None and len(listed) == 1  # so the next version's checksum lists its files too
    assert spark.conf.get("spark.databricks.delta.allFilesInCrc.enabled", "true") == "true"  # the setting is put back
    lake.sql("CREATE TABLE c AS SELECT 1 AS id")  # a table created with rows lists them
    listed = Delta(spark).table(location(lake, "C")).listed_add_actions(0)
    assert listed is not None and len(listed) == 1


@pytest.mark.parametrize("statement", ["UPDATE 1 row", "DELETE 1 row"])
def test_an_untracked_rewrite_runs_no_more_jobs_than_delta_with_its_defaults(
    tmp_path: Path, lake: lakeclone.Lake, statement: str
) -> None:
    spark = lake.spark
    lake.sql(f"CREATE TABLE t (id INT, v STRING); INSERT INTO t VALUES {ROWS}")
    delta_t = f"delta.`{tmp_path / 'delta_t'}`"
    spark.sql(f"CREATE TABLE {delta_t} (ID INT, V STRING) USING delta")
    spark.sql(f"INSERT INTO {delta_t} VALUES {ROWS}")
    ours = _jobs(spark, lambda: lake.sql(STATEMENTS[statement].format(t="t")))
    theirs = _jobs(spark, lambda: spark.sql(STATEMENTS[statement].format(t=delta_t)))
    assert ours <= theirs, (ours, theirs)


def test_show_tables_reads_counts_and_sizes_from_deltas_checksums(lake: lakeclone.Lake) -> None:
    for name in ("a", "b", "c"):
        lake.sql(f"CREATE TABLE {name} (id INT); INSERT INTO {name} VALUES (1), (2), (3)")
    lake.sql("DELETE FROM b WHERE id = 2")
    with spark_jobs_run(lake.spark) as jobs:
        result = lake.sql("SHOW TABLES").collect()  # the figures from the checksums, the rows collected on the driver
    assert jobs == []
    shown = {r["name"]: (r["rows"], r["bytes"]) for r in result}
    assert {name: rows for name, (rows, _) in shown.items()} == {"A": 3, "B": 2, "C": 3}
    for name, (_, size) in shown.items():
        (detail,) = lake.sql(f"DESCRIBE DETAIL {name}").collect()
        assert size == detail.sizeInBytes > 0


def test_show_tables_counts_each_table_once_per_version_whoever_writes_it(
    tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)
    other = lakeclone.connect(tmp_path / "warehouse", spark=spark)  # another session: its own Delta reader
    for name in ("a", "b", "c"):
        lake.sql(f"CREATE TABLE {name} (id INT); INSERT INTO {name} VALUES (1), (2)")
    counted: list[str] = []
    latest_counts = log.TableLog.latest_counts

    def counting(table_log: log.TableLog) -> log.TableCounts:
        counted.append(table_log.location)
        return latest_counts(table_log)

    monkeypatch.setattr(log.TableLog, "latest_counts", counting)

    folders: dict[str, str] = {}

    def shown() -> dict[str, int]:
        listing = lake.sql("SHOW TABLES").collect()
        folders.update({r["location"]: r["name"] for r in listing})
        return {r["name"]: r["rows"] for r in listing}

    assert shown() == {"A": 2, "B": 2, "C": 2}
    assert sorted(folders[f] for f in counted) == ["A", "B", "C"]
    assert shown() == {"A": 2, "B": 2, "C": 2}
    assert len(counted) == 3  # no table changed: none is asked for again
    other.sql("INSERT INTO b VALUES (3)")
    lake.sql("ALTER TABLE c SET CHANGE_TRACKING = TRUE")  # a commit that changes no count
    assert shown() == {"A": 2, "B": 3, "C": 2}
    assert sorted(folders[f] for f in counted[3:]) == ["B", "C"]


def test_which_files_exist_is_asked_in_one_glob_of_literal_names(
    tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakeclone.storage import Storage

    storage = Storage(spark)
    folders = ["plain", "a,b", "{x}", "[0-9]", "star*", "q?", "back\\slash", "per%20cent", "sp ace", "ünï"]
    present = []
    for name in folders:
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.json").write_text("{}")
        present.append(storage.qualify(str(tmp_path / name / "f.json")))
    absent = [storage.qualify(str(tmp_path / name / "g.json")) for name in folders]
    absent.append(storage.qualify(str(tmp_path / "plain" / "*.json")))  # would match f.json as a pattern
    asked_alone: list[str] = []
    exists = storage.exists
    monkeypatch.setattr(storage, "exists", lambda uri: asked_alone.append(uri) or exists(uri))
    assert storage.existing(present + absent) == set(present)
    # Only names with a character globs read as a pattern are asked about one by one.
    assert set(asked_alone) == {uri for uri in present + absent if set(uri) & set("\\{}[]*?,")}
    assert len(asked_alone) == 13
    assert storage.existing(absent) == set()
    assert storage.existing([]) == set()


def test_describe_reads_files_and_size_from_deltas_checksum(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, v STRING); INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (2, 'b')")
    lake.sql("DELETE FROM t WHERE id = 1")
    with spark_jobs_run(lake.spark) as jobs:
        (detail,) = lake.sql("DESCRIBE DETAIL t").collect()
        columns = [r.name for r in lake.sql("DESCRIBE TABLE t").collect()]
    assert jobs == []
    assert columns == ["ID", "V"]
    # Delta's own DESCRIBE DETAIL counts them from the version's reconstructed state.
    (delta_detail,) = lake.spark.sql(f"DESCRIBE DETAIL delta.`{detail.location}`").collect()
    assert (detail.numFiles, detail.sizeInBytes) == (delta_detail.numFiles, delta_detail.sizeInBytes)
    assert detail.numFiles == 1 and detail.sizeInBytes > 0  # the DELETE removed the first INSERT's file whole


def test_with_compute_ahead_a_tracked_insert_after_think_time_runs_only_its_write(
    tmp_path: Path, spark: SparkSession, clock: lakeclone.ManualClock
) -> None:
    # In a notebook the Lake computes, after each statement, the state of the tables it wrote.
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=clock, compute_ahead=True)
    waiting = lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=clock, compute_ahead=False)
    lake.sql("CREATE TABLE t (id INT, v STRING) CHANGE_TRACKING = TRUE; INSERT INTO t VALUES (1, 'a')")
    ahead = lake._executor.state_ahead
    assert ahead is not None and waiting._executor.state_ahead is None
    assert ahead.wait_idle(timeout=120)  # the user's think time
    # The state the row-id high-water mark is read from is there: the INSERT runs its write alone.
    assert _jobs(spark, lambda: lake.sql("INSERT INTO t VALUES (2, 'b')")) == 1
    # A Lake without it commits, and its next INSERT computes that commit's state itself.
    assert ahead.wait_idle(timeout=120)
    waiting.sql("INSERT INTO t VALUES (3, 'c')")
    assert _jobs(spark, lambda: waiting.sql("INSERT INTO t VALUES (4, 'd')")) > 1
    assert sorted(r.ID for r in lake.sql("SELECT id FROM t").collect()) == [1, 2, 3, 4]


def test_show_results_are_built_on_the_driver_from_an_arrow_batch(spark: SparkSession) -> None:
    from lakeclone import frame_notes
    from lakeclone.engine import results

    every_ascii = "".join(map(chr, range(128))) + "\u2028"
    texts = ["a'b", 'q"q', "back\\slash", "new\nline", "ünï ☃", "${x}", "", "\\'", "--", "/*", every_ascii]
    data = [
        (text, i, i / 3, i % 2 == 0, dt.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=dt.timezone.utc), dt.date(2024, 2, 29),
         decimal.Decimal("1.50"), {"k": text, "z": None}, [text, None], None, i, text.encode(), dt.datetime(2024, 3, 1, 8, 30))
        for i, text in enumerate(texts)
    ]  # fmt: skip
    schema = (
        "s STRING, i BIGINT, f DOUBLE, b BOOLEAN, ts TIMESTAMP, d DATE, dec DECIMAL(10,2), m MAP<STRING,STRING>, "
        "a ARRAY<STRING>, n INT, k INT, bin BINARY, naive TIMESTAMP"
    )
    many = data * 20  # a SHOW of hundreds of rows is local too
    with spark_jobs_run(spark) as jobs:
        local = [results.rows(spark, schema, rows).collect() for rows in (data, [data[-1]], many)]
        empty = results.rows(spark, schema, [])
        assert empty.collect() == []
    assert jobs == []
    # As createDataFrame reads them: a naive datetime is the process's local time.
    assert local == [spark.createDataFrame(rows, schema).collect() for rows in (data, [data[-1]], many)]
    assert results.rows(spark, schema, data).dtypes == empty.dtypes == spark.createDataFrame([], schema).dtypes
    # The same rows again reuse Spark's planned frame, in a Python frame of their own: what is noted
    # on one (the statement of a text that made it) is not on the other.
    first = frame_notes.note(results.rows(spark, schema, data), "statement", 2)
    again = results.rows(spark, schema, data)
    assert again is not first and frame_notes.noted(again, "statement") is None
    assert again._jdf.equals(first._jdf) and again.collect() == local[0]
    # Spark's setting for Arrow's large strings and binaries: the batch is written as Spark reads it.
    with session_setting(spark, "spark.sql.execution.arrow.useLargeVarTypes", "true"):
        assert results.rows(spark, schema, data[::-1]).collect() == local[0][::-1]  # rows not asked for before
    # A value Arrow cannot hold in its column's type (a decimal of more places) is left to createDataFrame.
    finer = [(decimal.Decimal("1.125"),)]
    assert (
        results.rows(spark, "dec DECIMAL(10,3)", finer).collect() == spark.createDataFrame(finer, "dec DECIMAL(10,3)").collect()
    )
    assert (
        results.rows(spark, "dec DECIMAL(10,2)", finer).collect() == spark.createDataFrame(finer, "dec DECIMAL(10,2)").collect()
    )


def _state_jobs(spark: SparkSession, jobs: list[int]) -> list[int]:
    """Which of ``jobs`` Delta ran to reconstruct a version's state (it names them "Compute snapshot for version")."""
    store = spark.sparkContext._jsc.sc().statusStore()  # type: ignore[union-attr]
    return [job for job in jobs if "Compute snapshot" in str(store.job(job).description())]


def test_the_first_read_after_a_write_reads_the_files_the_checksum_lists(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, v STRING) CHANGE_TRACKING = TRUE; ALTER TABLE t SET ENABLE_DELETION_VECTORS = TRUE")
    lake.sql("INSERT INTO t SELECT id, 'v' FROM range(0, 20, 1, 1)")
    lake.sql("DELETE FROM t WHERE id < 18")  # a deletion vector hides most of the file's rows
    lake.sql("INSERT INTO t VALUES (100, 'new')")
    with spark_jobs_run(lake.spark) as jobs:
        read = lake.sql("SELECT id FROM t").collect()
    assert sorted(r.ID for r in read) == [18, 19, 100]
    assert len(jobs) == 1 and _state_jobs(lake.spark, jobs) == []  # the scan alone
    # An INSERT … SELECT's source reads the same way: the write is its one job.
    lake.sql("CREATE TABLE u (id INT, v STRING)")
    with spark_jobs_run(lake.spark) as jobs:
        lake.sql("INSERT INTO u SELECT id, v FROM t")
    assert len(jobs) == 1
    lake.sql("MERGE INTO u USING t ON u.id = t.id WHEN MATCHED THEN UPDATE SET v = 'matched'")
    assert rows(lake, "SELECT id, v FROM u") == [(18, "matched"), (19, "matched"), (100, "matched")]


def test_a_version_named_twice_in_a_statement_is_listed_once(lake: lakeclone.Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    lake.sql("CREATE TABLE t (id INT, v STRING); INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    listed: list[int] = []
    read = log.TableLog.listed_frame

    def counted(self: log.TableLog, version: int) -> DataFrame | None:
        listed.append(version)
        return read(self, version)

    monkeypatch.setattr(log.TableLog, "listed_frame", counted)
    with spark_jobs_run(lake.spark) as jobs:
        joined = rows(lake, "SELECT a.id, b.v FROM t AS a JOIN t AS b ON a.id = b.id")
    assert joined == [(1, "a"), (2, "b")]
    assert listed == [1] and _state_jobs(lake.spark, jobs) == []


def test_a_version_whose_checksum_lists_no_files_is_read_through_deltas_state(lake: lakeclone.Lake) -> None:
    # Delta lists a version's files in its checksum only up to a number of files (50 by default).
    with session_setting(lake.spark, "spark.databricks.delta.allFilesInCrc.thresholdNumFiles", "1"):
        lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t VALUES (3)")
        lake.sql("DELETE FROM t WHERE id = 1")
    assert Delta(lake.spark).table(location(lake, "T")).listed_add_actions(4) is None
    with spark_jobs_run(lake.spark) as jobs:
        assert rows(lake, "SELECT * FROM t") == [(2,), (3,)]
    assert _state_jobs(lake.spark, jobs) != []
    assert rows(lake, "SELECT * FROM t AT(VERSION => 2)") == [(1,), (2,)]


def _file_index(frame: DataFrame) -> str:
    """The kind of Delta file index the frame's scan reads through."""
    leaf = frame._jdf.queryExecution().optimizedPlan().collectLeaves().head()
    return str(leaf.relation().location().getClass().getSimpleName())


def test_a_small_version_is_read_from_its_listed_files_even_once_delta_has_its_state_and_a_large_one_by_delta(
    lake: lakeclone.Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2)")
    assert _file_index(lake.sql("SELECT * FROM t WHERE id = 1")) == "TahoeBatchFileIndex"  # the checksum's list
    where = location(lake, "T")
    lake.spark.sql(f"SELECT COUNT(*) FROM delta.`{where}`").collect()  # Delta computes the version's state
    with spark_jobs_run(lake.spark) as delta_jobs:
        lake.spark.sql(f"SELECT * FROM delta.`{where}` VERSION AS OF 1 WHERE id = 1").collect()
    with spark_jobs_run(lake.spark) as jobs:
        assert rows(lake, "SELECT * FROM t WHERE id = 1") == [(1,)]
    # Delta still filters the files it holds for the query in a job of its own; the listed read has only its scan.
    assert (len(jobs), len(delta_jobs)) == (1, 2)
    assert _file_index(lake.sql("SELECT * FROM t WHERE id = 1")) == "TahoeBatchFileIndex"
    monkeypatch.setattr(log, "LISTED_READ_BYTES", 0)
    assert _file_index(lake.sql("SELECT * FROM t WHERE id = 1")) == "PreparedDeltaFileIndex"


def test_a_row_policy_reading_a_mapping_table_costs_no_job_once_its_values_are_known(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE plain (id INT, region STRING); CREATE TABLE protected (id INT, region STRING);"
        "CREATE TABLE region_map (role STRING, region STRING); INSERT INTO region_map VALUES ('ANALYST', 'EU');"
        "CREATE ROW ACCESS POLICY by_region AS (r STRING) RETURNS BOOLEAN -> "
        "EXISTS (SELECT 1 FROM region_map m WHERE m.role = CURRENT_ROLE() AND m.region = r);"
        "ALTER TABLE protected ADD ROW ACCESS POLICY by_region ON (region);"
        "CREATE ROLE analyst; CREATE USER ana; GRANT ROLE analyst TO USER ana;"
        "GRANT USAGE ON DATABASE lake TO ROLE analyst; GRANT USAGE ON SCHEMA lake.public TO ROLE analyst;"
        "GRANT SELECT ON TABLE plain TO ROLE analyst; GRANT SELECT ON TABLE protected TO ROLE analyst"
    )
    for table in ("plain", "protected"):
        lake.sql(f"INSERT INTO {table} VALUES (1, 'EU'), (2, 'US'), (3, 'EU')")
    analyst = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="ana", role="analyst")
    assert rows(analyst, "SELECT id FROM protected") == [(1,), (3,)]  # the policy's values computed here
    counts = []
    for table in ("plain", "protected"):
        with spark_jobs_run(lake.spark) as jobs:
            analyst.sql(f"SELECT * FROM {table} WHERE id = 3").collect()
        counts.append(len(jobs))
    assert counts == [1, 1]
