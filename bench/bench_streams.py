"""Streams benchmark: reading a stream, and consuming it with MERGE, against what a delta-spark user writes instead.

Run from the repository root::

    .venv/bin/python bench/bench_streams.py [--rows 1000000] [--large-rows 10000000] [--repeat 5]

A 20-file table gets a small change (an UPDATE of 1% of its rows in one
clustered ID range, a DELETE of 0.1% in another, an INSERT of 0.1% new rows);
the figures time a stream over that change against a full snapshot diff of the
two versions, against the same stream on a 10x larger table, an append-only
stream against a standard one, and a consuming MERGE against the same MERGE
written by hand on Delta's change data feed. Every figure is a ratio of medians
of runs interleaved with their baseline in the same run (the machine is
noisy). See bench/README.md ("bench_streams.py") for what each figure means.
The script exits 0 whatever the figures are: it is a report, not a test.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # run as a script, or imported by a test
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _deltalog import local_path, replay
from _timing import (
    PhaseTimer,
    environment,
    format_table,
    interleave,
    print_closing,
    ratio,
    seconds,
    timed,
    write_json,
)
from bench_foundation import (
    _folder,
    counted,
    dml_phases,
    jobs_report,
    lake_location,
    log,
    path_table,
    phase_breakdown,
    table_properties,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    import lakeclone

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = BENCH_DIR / "results" / "streams.json"

COLUMNS = "ID BIGINT, NAME STRING, AMOUNT DOUBLE"
TABLE_FILES = 20
RAW, RAW_LARGE = "RAW", "RAW_LARGE"
STREAM, STREAM_LARGE, STREAM_MERGE = "S_RAW", "S_RAW_LARGE", "S_MERGE"
STREAM_APPEND_STANDARD, STREAM_APPEND_ONLY = "S_APPEND_STANDARD", "S_APPEND_ONLY"
CHANGE_FEED_VIEW = "bench_change_feed_latest"

# Figures in the order they run: the append figure appends to RAW, so it runs last.
FIGURES = ("diff", "scale", "merge", "append")

DIFF_TARGET = 10.0  # full snapshot diff / stream read: at least this much faster
SCALE_TARGET = 1.5  # stream read on the large table / on the small one: at most
MERGE_TARGET = 1.2  # lakeclone's MERGE from the stream / the hand-written change-feed MERGE: at most

MATERIALISED = "materialised: SUM(xxhash64(<every column>)) and COUNT(*) of its rows, collected"


def source_sql(rows: int, files: int, first: int = 0) -> str:
    """``rows`` rows from ID ``first`` in ``files`` Spark partitions (one file each, file k holding the k-th ID range).

    The values are a function of the ID (no ``rand()``), so a table built
    twice from this query holds the same rows: the MERGE figure's curated
    tables are copies of RAW before its change.
    """
    return (
        "SELECT id AS ID, CAST(id % 1000 AS STRING) AS NAME, CAST(id % 9973 AS DOUBLE) / 8 AS AMOUNT "
        f"FROM range({first}, {first + rows}, 1, {files})"
    )


@dataclass(frozen=True)
class Change:
    """The change made to each RAW table after its stream: the same three statements on both tables.

    The UPDATE and the DELETE each take a clustered ID range inside one file
    of the small table (file 5 and file 12 of 20); the large table, whose files
    hold as many rows as the small one's, has those IDs in its files 5 and 12
    too. The INSERT's IDs are above every table's.
    """

    update_low: int
    update_rows: int
    delete_low: int
    delete_rows: int
    insert_first: int
    insert_rows: int
    append_first: int  # the append figure's 1% new rows
    append_rows: int

    @classmethod
    def for_table(cls, rows: int, large_rows: int) -> Change:
        per_file = rows // TABLE_FILES
        top = 2 * max(rows, large_rows)
        return cls(
            update_low=(TABLE_FILES // 4) * per_file,
            update_rows=max(1, rows // 100),
            delete_low=(TABLE_FILES * 3 // 5) * per_file + per_file // 2,
            delete_rows=max(1, rows // 1000),
            insert_first=top,
            insert_rows=max(1, rows // 1000),
            append_first=2 * top,
            append_rows=max(1, rows // 100),
        )

    def statements(self, table: str) -> list[str]:
        return [
            f"UPDATE {table} SET NAME = 'updated', AMOUNT = AMOUNT + 1 "
            f"WHERE ID >= {self.update_low} AND ID < {self.update_low + self.update_rows}",
            f"DELETE FROM {table} WHERE ID >= {self.delete_low} AND ID < {self.delete_low + self.delete_rows}",
            f"INSERT INTO {table} {source_sql(self.insert_rows, 1, self.insert_first)}",
        ]

    def expected_actions(self) -> dict[str, int]:
        """The stream's rows by (METADATA$ACTION, METADATA$ISUPDATE)."""
        return {
            "DELETE/update": self.update_rows,
            "INSERT/update": self.update_rows,
            "DELETE": self.delete_rows,
            "INSERT": self.insert_rows,
        }

    @property
    def changed_rows(self) -> int:
        return self.update_rows + self.delete_rows + self.insert_rows


# Tables ---------------------------------------------------------------------------------------


def current_version(lake: lakeclone.Lake, table: str) -> int:
    return int(lake.sql(f"DESCRIBE HISTORY {table} LIMIT 1").collect()[0]["version"])


def build_raw(lake: lakeclone.Lake, table: str, stream: str, rows: int, files: int, change: Change) -> dict[str, Any]:
    """A lakeclone table of ``rows`` rows in ``files`` files, a stream on it, then the change: its versions and files.

    The table has deletion vectors, as a large table's UPDATE would want: the
    change then touches few files, and the stream reads only their changed rows.
    """
    lake.sql(f"CREATE TABLE {table} ({COLUMNS}) ENABLE_DELETION_VECTORS = TRUE")
    load_s, _ = timed(lambda: lake.sql(f"INSERT INTO {table} {source_sql(rows, files)}").collect())
    lake.sql(f"CREATE STREAM {stream} ON TABLE {table}")  # turns change tracking on: a commit
    before = current_version(lake, table)
    change_s, _ = timed(lambda: [lake.sql(s).collect() for s in change.statements(table)])
    after = current_version(lake, table)
    location = lake_location(lake, table)
    return {
        "table": table,
        "stream": stream,
        "location": location,
        "rows": rows,
        "files": len(replay(location, before).live),
        "version_before_change": before,
        "version_after_change": after,
        "change_statements": change.statements(table),
        "files_the_change_touched": touched_files(location, before, after),
        "load_s": load_s,
        "change_s": change_s,
    }


def touched_files(location: str, before: int, after: int) -> dict[str, int]:
    """The files a net change between two versions must read, from an independent replay of the Delta log.

    A file counts on the old side when version ``before`` reads it (with its
    deletion vector) and ``after`` does not, and on the new side the other way
    round; the rows are the files' own row counts.
    """
    old, new = replay(location, before).live, replay(location, after).live
    gone = [f for path, f in old.items() if path not in new or new[path].deletion_vector != f.deletion_vector]
    came = [f for path, f in new.items() if path not in old or old[path].deletion_vector != f.deletion_vector]
    return {
        "files_in_table": len(new),
        "old_side_files": len(gone),
        "new_side_files": len(came),
        "rows_in_those_files": sum(f.num_records for f in gone + came),
    }


def diff_sql(location: str, before: int, after: int) -> str:
    """A full snapshot diff of two versions with Delta's time travel: EXCEPT ALL both ways, labelled as a stream's actions."""
    table = path_table(location)
    new, old = f"SELECT * FROM {table} VERSION AS OF {after}", f"SELECT * FROM {table} VERSION AS OF {before}"
    return (
        f"SELECT d.*, 'INSERT' AS ACTION FROM ({new} EXCEPT ALL {old}) d "
        f"UNION ALL SELECT d.*, 'DELETE' AS ACTION FROM ({old} EXCEPT ALL {new}) d"
    )


def materialise(frame: DataFrame) -> None:
    """Compute every row and column of ``frame``: a hash of all its columns, summed to one row.

    Nothing is left for Spark to prune. (Spark's ``noop`` sink would do the
    same, but delta-spark 4.4 refuses a ``noop`` write of a read of a table
    with deletion vectors: "Cannot work with a non-pinned table snapshot of
    the TahoeFileIndex". The hash and sum run on the result's rows only,
    which both sides have the same number of.)
    """
    from pyspark.sql import functions as F

    hashed = F.xxhash64(*[F.col("`" + c.replace("`", "``") + "`") for c in frame.columns])
    frame.select(hashed.cast("decimal(38, 0)").alias("h")).agg(F.count(F.lit(1)), F.sum("h")).collect()


def action_counts(lake: lakeclone.Lake, stream: str) -> dict[str, int]:
    """A stream's rows by action, ``/update`` marking METADATA$ISUPDATE."""
    found = lake.sql(f"SELECT METADATA$ACTION AS A, METADATA$ISUPDATE AS U, COUNT(*) AS N FROM {stream} GROUP BY 1, 2").collect()
    return {f"{r['A']}{'/update' if r['U'] else ''}": int(r["N"]) for r in found}


def stream_phases(phases: PhaseTimer) -> None:
    """Where a stream read's ``lake.sql`` goes: the commits and files of the interval, and the frame built on them."""
    from lakeclone.streams import binding, reader

    phases.wrap(binding, "stream_changes", "    bind the stream (binding.stream_changes)")
    phases.wrap(reader, "file_changes", "      the interval's commits: files added and removed")
    phases.wrap(reader, "files_frame", "      Delta frames over those files")


def stream_read(lake: lakeclone.Lake, stream: str, phases: PhaseTimer, record: bool) -> None:
    """``SELECT * FROM stream``, fully materialised; in timed rounds, its two steps are timed apart."""
    with phases.record(f"read {stream}", when=record):
        with phases.record(f"  {stream}: lake.sql(SELECT * FROM stream)", when=record):
            frame = lake.sql(f"SELECT * FROM {stream}")
        with phases.record(f"  {stream}: Spark: read and net the files, hash the rows", when=record):
            materialise(frame)


def read_breakdown(phases: PhaseTimer, runs: int, stream: str) -> dict[str, float]:
    """Per read of ``stream``: its two steps, and the functions :func:`stream_phases` wrapped, if it did."""
    label = f"read {stream}"
    per_call = phases.per_call(runs)
    steps = {k: v for k, v in per_call.items() if k.startswith(f"  {stream}:")}
    inner = {k: v for k, v in per_call.items() if k.startswith("    ") and phases.calls.get(k)}
    return {label: per_call.get(label, 0.0), **steps, **inner}


# 1. Stream vs a full snapshot diff ---------------------------------------------------------------


def diff_figure(
    lake: lakeclone.Lake, spark: SparkSession, raw: dict[str, Any], change: Change, repeat: int, warmup: int
) -> dict[str, Any]:
    """``SELECT * FROM stream`` after the change vs a full diff of the two versions (EXCEPT ALL both ways)."""
    stream, location = raw["stream"], raw["location"]
    before, after = raw["version_before_change"], raw["version_after_change"]
    diff = diff_sql(location, before, after)
    jobs: dict[str, list[list[int]]] = {}

    # Untimed, once: the stream and the diff hold the same rows.
    stream_rows = lake.sql(f"SELECT ID, NAME, AMOUNT, METADATA$ACTION AS ACTION FROM {stream}")
    diff_rows = spark.sql(diff)
    counts = {"stream": stream_rows.count(), "diff": diff_rows.count()}
    same = counts["stream"] == counts["diff"] and stream_rows.exceptAll(diff_rows).count() == 0
    actions = action_counts(lake, stream)

    def lake_read(record: bool) -> None:
        with counted(spark, jobs, "stream"):
            stream_read(lake, stream, phases, record)

    def diff_read(_: int) -> None:
        with counted(spark, jobs, "diff"):
            materialise(spark.sql(diff))

    with PhaseTimer(enabled=False) as phases:
        stream_phases(phases)
        timings = interleave(
            {"stream": (lake_read, lambda r: r >= warmup, None), "diff": (diff_read, lambda r: r, None)},
            repeat=repeat,
            warmup=warmup,
        )
        breakdown = read_breakdown(phases, repeat, stream)

    stream_t, diff_t = timings["stream"], timings["diff"]
    speedup = ratio(diff_t, stream_t)
    correct = same and actions == change.expected_actions()
    return {
        "figure": "diff",
        "rows": raw["rows"],
        "files": raw["files"],
        "change": raw["change_statements"],
        "files_the_change_touched": raw["files_the_change_touched"],
        "stream_query": f"lake.sql('SELECT * FROM {stream}'), {MATERIALISED}",
        "diff_query": f"spark.sql({diff!r}), {MATERIALISED}",
        "stream": stream_t.to_dict(),
        "diff": diff_t.to_dict(),
        "speedup_median": speedup,
        "speedup_best": ratio(diff_t, stream_t, "best"),
        "row_counts": counts,
        "stream_rows_by_action": actions,
        "expected_rows_by_action": change.expected_actions(),
        "same_rows": same,
        "correct": correct,
        "phases_per_read_s": breakdown,
        "spark_jobs": jobs_report(spark, jobs),
        "phases_missing": phases.missing,
        "target": DIFF_TARGET,
        "passed": speedup >= DIFF_TARGET and correct,
    }


# 2. The same change on a 10x larger table ----------------------------------------------------------


def scale_figure(
    lake: lakeclone.Lake,
    spark: SparkSession,
    small: dict[str, Any],
    large: dict[str, Any],
    change: Change,
    repeat: int,
    warmup: int,
) -> dict[str, Any]:
    """``SELECT * FROM stream`` after the same change on the large table vs on the small one."""
    jobs: dict[str, list[list[int]]] = {}
    actions = {"small": action_counts(lake, small["stream"]), "large": action_counts(lake, large["stream"])}

    def reader_of(raw: dict[str, Any], key: str) -> Callable[[bool], None]:
        def read(record: bool) -> None:
            with counted(spark, jobs, key):
                stream_read(lake, raw["stream"], phases, record)

        return read

    with PhaseTimer(enabled=False) as phases:
        timings = interleave(
            {
                "small": (reader_of(small, "small"), lambda r: r >= warmup, None),
                "large": (reader_of(large, "large"), lambda r: r >= warmup, None),
            },
            repeat=repeat,
            warmup=warmup,
        )
        breakdown = {key: read_breakdown(phases, repeat, raw["stream"]) for key, raw in (("small", small), ("large", large))}

    small_t, large_t = timings["small"], timings["large"]
    value = ratio(large_t, small_t)
    correct = actions["small"] == actions["large"] == change.expected_actions()
    return {
        "figure": "scale",
        "tables": {
            key: {k: raw[k] for k in ("table", "rows", "files", "files_the_change_touched")}
            for key, raw in (("small", small), ("large", large))
        },
        "change": change.statements("<table>"),
        "stream_query": f"lake.sql('SELECT * FROM <stream>'), {MATERIALISED}",
        "small": small_t.to_dict(),
        "large": large_t.to_dict(),
        "ratio_median": value,
        "ratio_best": ratio(large_t, small_t, "best"),
        "stream_rows_by_action": actions,
        "correct": correct,
        "phases_per_read_s": breakdown,
        "spark_jobs": jobs_report(spark, jobs),
        "target": SCALE_TARGET,
        "passed": value <= SCALE_TARGET and correct,
    }


# 3. Append-only vs standard stream on an insert-only change ------------------------------------------


def append_figure(
    lake: lakeclone.Lake, spark: SparkSession, raw: dict[str, Any], change: Change, repeat: int, warmup: int
) -> dict[str, Any]:
    """An APPEND_ONLY stream vs a standard one, after an INSERT of 1% new rows (and nothing else)."""
    table = raw["table"]
    lake.sql(f"CREATE OR REPLACE STREAM {STREAM_APPEND_STANDARD} ON TABLE {table}")
    lake.sql(f"CREATE OR REPLACE STREAM {STREAM_APPEND_ONLY} ON TABLE {table} APPEND_ONLY = TRUE")
    before = current_version(lake, table)
    insert = f"INSERT INTO {table} {source_sql(change.append_rows, 1, change.append_first)}"
    lake.sql(insert).collect()
    after = current_version(lake, table)
    actions = {
        "standard": action_counts(lake, STREAM_APPEND_STANDARD),
        "append_only": action_counts(lake, STREAM_APPEND_ONLY),
    }
    jobs: dict[str, list[list[int]]] = {}

    def reader_of(stream: str, key: str) -> Callable[[bool], None]:
        def read(record: bool) -> None:
            with counted(spark, jobs, key):
                stream_read(lake, stream, phases, record)

        return read

    with PhaseTimer(enabled=False) as phases:
        timings = interleave(
            {
                "append_only": (reader_of(STREAM_APPEND_ONLY, "append_only"), lambda r: r >= warmup, None),
                "standard": (reader_of(STREAM_APPEND_STANDARD, "standard"), lambda r: r >= warmup, None),
            },
            repeat=repeat,
            warmup=warmup,
        )

    append_t, standard_t = timings["append_only"], timings["standard"]
    expected = {"INSERT": change.append_rows}
    return {
        "figure": "append",
        "rows": raw["rows"],
        "change": [insert],
        "versions": [before, after],
        "files_the_change_touched": touched_files(raw["location"], before, after),
        "append_only": append_t.to_dict(),
        "standard": standard_t.to_dict(),
        "ratio_median": ratio(append_t, standard_t),
        "ratio_best": ratio(append_t, standard_t, "best"),
        "stream_rows_by_action": actions,
        "correct": actions["standard"] == actions["append_only"] == expected,
        "spark_jobs": jobs_report(spark, jobs),
    }


# 4. Consuming MERGE vs the change-feed MERGE a Delta user writes -----------------------------------------


# README's MERGE from a stream (its Streams section), with the same three clauses.
MERGE_README = (
    "MERGE INTO {curated} c USING {stream} s ON c.ID = s.ID "
    "WHEN MATCHED AND s.METADATA$ACTION = 'DELETE' AND NOT s.METADATA$ISUPDATE THEN DELETE "
    "WHEN MATCHED AND s.METADATA$ACTION = 'INSERT' THEN UPDATE SET NAME = s.NAME, AMOUNT = s.AMOUNT "
    "WHEN NOT MATCHED AND s.METADATA$ACTION = 'INSERT' THEN INSERT (ID, NAME, AMOUNT) VALUES (s.ID, s.NAME, s.AMOUNT)"
)
# The timed statement: README's, reading the stream without its updates' DELETE rows. An update is a DELETE and an
# INSERT of the same ID, both joining the curated row; no clause takes the DELETE, but Delta's MERGE refuses any
# target row that two source rows join ("Duplicate row detected during DML action"). lakeclone then runs README's
# form again without such rows (Snowflake's rule), so it works, at the price of a second pass: timed once, apart.
MERGE_FROM_STREAM = MERGE_README.replace(
    "USING {stream} s",
    "USING (SELECT * FROM {stream} WHERE NOT (METADATA$ACTION = 'DELETE' AND METADATA$ISUPDATE)) s",
)

MERGE_FROM_FEED = (
    "MERGE INTO {curated} c USING {view} s ON c.ID = s.ID "
    "WHEN MATCHED AND s._change_type = 'delete' THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET NAME = s.NAME, AMOUNT = s.AMOUNT "
    "WHEN NOT MATCHED AND s._change_type <> 'delete' THEN INSERT (ID, NAME, AMOUNT) VALUES (s.ID, s.NAME, s.AMOUNT)"
)

CHANGE_FEED_CODE = (
    "spark.read.format('delta').option('readChangeFeed', 'true').option('startingVersion', v + 1)"
    ".option('endingVersion', w).load(<raw>)"
    ".where(_change_type IN ('insert', 'update_postimage', 'delete'))"
    " -> the last row per ID by _commit_version (row_number over a window) -> a temporary view -> "
    "spark.sql(MERGE INTO delta.`<curated>` ...)"
)


def change_feed_latest(spark: SparkSession, location: str, start: int, end: int) -> DataFrame:
    """Delta's change data feed of versions ``start`` to ``end``, netted to each ID's latest change, as Delta users write it."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    feed = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", start)
        .option("endingVersion", end)
        .load(location)
        .where(F.col("_change_type").isin("insert", "update_postimage", "delete"))
    )
    latest = Window.partitionBy("ID").orderBy(F.col("_commit_version").desc())
    return feed.withColumn("_rank", F.row_number().over(latest)).where(F.col("_rank") == 1).drop("_rank")


def fingerprint_sql(table_sql: str) -> str:
    """Rows and an order-free sum of row hashes: equal for two tables holding the same rows (IDs are unique)."""
    return f"SELECT COUNT(*) AS N, SUM(CAST(xxhash64(ID, NAME, AMOUNT) AS DECIMAL(38, 0))) AS H FROM {table_sql}"


def fingerprint(spark: SparkSession, table_sql: str) -> tuple[int, str]:
    row = spark.sql(fingerprint_sql(table_sql)).collect()[0]
    return int(row["N"]), str(row["H"])


def merge_figure(
    lake: lakeclone.Lake,
    spark: SparkSession,
    raw: dict[str, Any],
    change: Change,
    scratch: str,
    repeat: int,
    warmup: int,
) -> dict[str, Any]:
    """MERGE of the change into a curated copy of RAW: from lakeclone's stream vs from Delta's change feed by hand."""
    table, location, rows = raw["table"], raw["location"], raw["rows"]
    before, after = raw["version_before_change"], raw["version_after_change"]
    if current_version(lake, table) != after:
        raise RuntimeError(f"{table} changed after the figure's change (version {current_version(lake, table)} != {after})")
    expected = fingerprint(spark, f"{path_table(location)} VERSION AS OF {after}")
    copy = source_sql(rows, TABLE_FILES)  # RAW's rows before the change, in as many files
    rounds: dict[str, list[dict[str, Any]]] = {"lakeclone": [], "delta": []}
    jobs: dict[str, list[list[int]]] = {}

    def new_curated(curated: str) -> None:
        lake.sql(f"CREATE TABLE {curated} ({COLUMNS})")
        lake.sql(f"INSERT INTO {curated} {copy}").collect()
        lake.sql(f"CREATE OR REPLACE STREAM {STREAM_MERGE} ON TABLE {table} AT(VERSION => {before})")

    def drop_curated(curated: str) -> None:
        curated_location = lake_location(lake, curated)
        lake.sql(f"DROP TABLE {curated}")
        shutil.rmtree(local_path(curated_location), ignore_errors=True)

    def lake_prepare(round_: int) -> tuple[str, bool]:
        curated = f"CURATED_{round_}"
        new_curated(curated)
        return curated, round_ >= warmup

    def lake_merge(arg: tuple[str, bool]) -> None:
        curated, record = arg
        statement = MERGE_FROM_STREAM.format(curated=curated, stream=STREAM_MERGE)
        with counted(spark, jobs, "lakeclone"), phases.record("lake.sql(MERGE ... USING stream).collect()", when=record):
            result = lake.sql(statement).collect()[0]
        rounds["lakeclone"].append(
            {
                "round": len(rounds["lakeclone"]),
                "inserted": int(result[0]),
                "updated": int(result[1]),
                "deleted": int(result[2]),
            }
        )

    def lake_check(arg: tuple[str, bool]) -> None:
        curated, _ = arg
        curated_location = lake_location(lake, curated)
        record = rounds["lakeclone"][-1]
        record["same_rows_as_raw_after_change"] = fingerprint(spark, path_table(curated_location)) == expected
        record["stream_consumed"] = lake.sql(f"SELECT COUNT(*) FROM {STREAM_MERGE}").collect()[0][0] == 0
        drop_curated(curated)

    def delta_prepare(round_: int) -> str:
        curated = f"file:{os.path.join(scratch, f'curated_{round_}_{time.monotonic_ns()}')}"
        spark.sql(f"CREATE TABLE {path_table(curated)} ({COLUMNS}) USING delta {table_properties()}")
        spark.sql(f"INSERT INTO {path_table(curated)} {copy}").collect()
        return curated

    def delta_merge(curated: str) -> None:
        with counted(spark, jobs, "delta"):
            change_feed_latest(spark, location, before + 1, after).createOrReplaceTempView(CHANGE_FEED_VIEW)
            result = spark.sql(MERGE_FROM_FEED.format(curated=path_table(curated), view=CHANGE_FEED_VIEW)).collect()[0]
        rounds["delta"].append(
            {
                "round": len(rounds["delta"]),
                "inserted": int(result["num_inserted_rows"]),
                "updated": int(result["num_updated_rows"]),
                "deleted": int(result["num_deleted_rows"]),
            }
        )

    def delta_check(curated: str) -> None:
        rounds["delta"][-1]["same_rows_as_raw_after_change"] = fingerprint(spark, path_table(curated)) == expected
        shutil.rmtree(local_path(curated), ignore_errors=True)

    # Once, apart from the figure: does README's own MERGE (without the filter) run on this change, and in how long?
    new_curated("CURATED_README")
    try:
        readme_s, _ = timed(lambda: lake.sql(MERGE_README.format(curated="CURATED_README", stream=STREAM_MERGE)).collect())
        readme_outcome = f"ran in {seconds(readme_s)}"
    except Exception as error:  # a report: say what it raised
        readme_outcome = f"{type(error).__name__}: {error}"
    finally:
        drop_curated("CURATED_README")

    with PhaseTimer(enabled=False) as phases:
        dml_phases(phases)
        from lakeclone.streams import binding

        phases.wrap(binding, "stream_changes", "    bind the stream (binding.stream_changes)")
        timings = interleave(
            {
                "lakeclone": (lake_merge, lake_prepare, lake_check),
                "delta": (delta_merge, delta_prepare, delta_check),
            },
            repeat=repeat,
            warmup=warmup,
        )
        breakdown = phase_breakdown(phases, repeat, "lake.sql(MERGE ... USING stream).collect()")
    spark.catalog.dropTempView(CHANGE_FEED_VIEW)

    lake_t, delta_t = timings["lakeclone"], timings["delta"]
    value = ratio(lake_t, delta_t)
    counts = {"inserted": change.insert_rows, "updated": change.update_rows, "deleted": change.delete_rows}
    correct = all(
        {k: r[k] for k in counts} == counts and r["same_rows_as_raw_after_change"] and r.get("stream_consumed", True)
        for side in rounds.values()
        for r in side
    )
    return {
        "figure": "merge",
        "rows": rows,
        "change": raw["change_statements"],
        "curated": f"a fresh table per run (untimed) from {copy}: RAW's rows before the change, {TABLE_FILES} files",
        "lakeclone_statement": MERGE_FROM_STREAM.format(curated="CURATED_<round>", stream=STREAM_MERGE),
        "readme_statement": MERGE_README.format(curated="CURATED_README", stream=STREAM_MERGE),
        "readme_statement_outcome": readme_outcome,
        "stream_reset": f"untimed before each run: CREATE OR REPLACE STREAM {STREAM_MERGE} ON TABLE {table} "
        f"AT(VERSION => {before})",
        "delta_baseline": CHANGE_FEED_CODE,
        "delta_statement": MERGE_FROM_FEED.format(curated="delta.`<curated>`", view=CHANGE_FEED_VIEW),
        "lakeclone": lake_t.to_dict(),
        "delta": delta_t.to_dict(),
        "ratio_median": value,
        "ratio_best": ratio(lake_t, delta_t, "best"),
        "rounds": rounds,
        "expected_counts": counts,
        "expected_fingerprint": list(expected),
        "correct": correct,
        "phases_per_merge_s": breakdown,
        "spark_jobs": jobs_report(spark, jobs),
        "phases_missing": phases.missing,
        "target": MERGE_TARGET,
        "passed": value <= MERGE_TARGET and correct,
    }


# Report -------------------------------------------------------------------------------------------


def _pass(ok: bool, correct: bool = True) -> str:
    if not correct:
        return "FAIL (wrong rows)"
    return "PASS" if ok else "FAIL"


def summary_rows(report: dict[str, Any]) -> list[list[str]]:
    figures = report["figures"]
    rows: list[list[str]] = []
    n, large = f"{report['rows']:,}", f"{report['large_rows']:,}"

    def ok(key: str) -> dict[str, Any] | None:
        figure = figures.get(key)
        return figure if figure and "error" not in figure else None

    if diff := ok("diff"):
        rows.append(
            [
                f"Stream read after a {report['change_share']} change of {n} rows ({diff['files']} files): "
                "full snapshot diff / stream",
                f"{diff['speedup_median']:.1f}x faster (best {diff['speedup_best']:.1f}x)",
                f"stream {seconds(diff['stream']['median_s'])} vs diff {seconds(diff['diff']['median_s'])}",
                f">= {DIFF_TARGET:g}x",
                _pass(diff["passed"], diff["correct"]),
            ]
        )
    elif "diff" in figures:
        rows.append(["Stream read: full snapshot diff / stream", "ERROR", "", f">= {DIFF_TARGET:g}x", "FAIL"])

    if scale := ok("scale"):
        tables = scale["tables"]
        rows.append(
            [
                f"Stream read, same change: {large} rows ({tables['large']['files']} files) / "
                f"{n} rows ({tables['small']['files']} files)",
                f"{scale['ratio_median']:.2f}x (best {scale['ratio_best']:.2f}x)",
                f"{seconds(scale['large']['median_s'])} vs {seconds(scale['small']['median_s'])}",
                f"<= {SCALE_TARGET}x",
                _pass(scale["passed"], scale["correct"]),
            ]
        )
    elif "scale" in figures:
        rows.append(["Stream read: large table / small table", "ERROR", "", f"<= {SCALE_TARGET}x", "FAIL"])

    if merge := ok("merge"):
        rows.append(
            [
                "Consuming MERGE of the change: lakeclone MERGE USING stream / hand-written change-feed MERGE",
                f"{merge['ratio_median']:.2f}x (best {merge['ratio_best']:.2f}x)",
                f"{seconds(merge['lakeclone']['median_s'])} vs {seconds(merge['delta']['median_s'])}",
                f"<= {MERGE_TARGET}x",
                _pass(merge["passed"], merge["correct"]),
            ]
        )
    elif "merge" in figures:
        rows.append(["Consuming MERGE: lakeclone / change-feed MERGE", "ERROR", "", f"<= {MERGE_TARGET}x", "FAIL"])

    if append := ok("append"):
        rows.append(
            [
                f"Insert-only change (1% appended to {n} rows): APPEND_ONLY stream / standard stream",
                f"{append['ratio_median']:.2f}x (best {append['ratio_best']:.2f}x)",
                f"{seconds(append['append_only']['median_s'])} vs {seconds(append['standard']['median_s'])}",
                "report",
                "INFO" if append["correct"] else "FAIL (wrong rows)",
            ]
        )
    elif "append" in figures:
        rows.append(["APPEND_ONLY stream / standard stream", "ERROR", "", "report", "FAIL"])
    return rows


def print_report(report: dict[str, Any]) -> None:
    figures = report["figures"]
    env = report["environment"]
    print()
    print(
        f"lakeclone streams benchmark: {report['rows']:,} and {report['large_rows']:,} rows, repeat {report['repeat']}, "
        f"{env['cores']} cores (load {env['load_average'][0]}), Spark {env['spark']}, delta-spark {env['delta_spark']}"
    )
    print("Figures compare medians of runs interleaved with their baseline in this same run.")
    tables = [t for t in (report.get("raw"), report.get("raw_large")) if t]
    if tables:
        print()
        print("The change: " + "; ".join(tables[0]["change_statements"]))
        print(
            format_table(
                ["table", "rows", "files", "versions", "files the stream reads (old + new)", "rows in them"],
                [
                    [
                        t["table"],
                        f"{t['rows']:,}",
                        t["files"],
                        f"{t['version_before_change']} -> {t['version_after_change']}",
                        f"{t['files_the_change_touched']['old_side_files']} + {t['files_the_change_touched']['new_side_files']}",
                        f"{t['files_the_change_touched']['rows_in_those_files']:,}",
                    ]
                    for t in tables
                ],
            )
        )
    for key, field_ in (("diff", "phases_per_read_s"), ("merge", "phases_per_merge_s")):
        figure = figures.get(key)
        if figure and field_ in figure:
            print()
            print(f"{key}: phases (per statement)")
            print(format_table(["phase", "time"], [[k, seconds(v)] for k, v in figure[field_].items()]))
    scale = figures.get("scale")
    if scale and "phases_per_read_s" in scale:
        print()
        print("scale: phases per read")
        for side, breakdown in scale["phases_per_read_s"].items():
            print(format_table(["phase", side], [[k, seconds(v)] for k, v in breakdown.items()]))
    job_rows = [
        [key, name, *counts.values()]
        for key in FIGURES
        for name, counts in (figures.get(key) or {}).get("spark_jobs", {}).items()
    ]
    if job_rows:
        print()
        print(format_table(["figure", "workload", "Spark jobs (median)", "stages (last run)", "tasks (last run)"], job_rows))
    merge = figures.get("merge")
    if merge and "readme_statement_outcome" in merge:
        print()
        print(f"merge: timed lakeclone statement: {merge['lakeclone_statement']}")
        print(f"merge: README's unfiltered MERGE on the same change (once, apart): {merge['readme_statement_outcome']}")
    print_closing(report, summary_rows(report), baseline_header="timings (medians)")


def run(
    *,
    rows: int,
    large_rows: int,
    repeat: int,
    spark: SparkSession,
    warehouse: str | os.PathLike[str],
    warmup: int = 1,
    figures_wanted: tuple[str, ...] = FIGURES,
) -> dict[str, Any]:
    """Build the tables and run the figures; a figure that raises is recorded as an error and the others still run."""
    import lakeclone

    started = time.perf_counter()
    warehouse = Path(warehouse)
    scratch = str(warehouse.parent / f"{warehouse.name}_bench_baselines")
    os.makedirs(scratch, exist_ok=True)
    lake = lakeclone.connect(warehouse, spark=spark)
    change = Change.for_table(rows, large_rows)
    per_file = rows // TABLE_FILES
    large_files = max(1, large_rows // per_file)
    report: dict[str, Any] = {
        "benchmark": "streams",
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "rows": rows,
        "large_rows": large_rows,
        "large_files": large_files,
        "repeat": repeat,
        "warmup": warmup,
        "change": asdict(change),
        "change_share": f"{100 * change.changed_rows / rows:.1f}%",
        "environment": environment(spark),
        "figures": {},
    }
    figures = report["figures"]

    def attempt(key: str, fn: Callable[[], dict[str, Any]]) -> None:
        if key not in figures_wanted:
            return
        log(f"{key} ...")
        try:
            seconds_, figure = timed(fn)
        except Exception as error:  # a report, not a test: record and go on
            figures[key] = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
            log(f"{key} failed: {error}")
            return
        figure["elapsed_s"] = seconds_
        figures[key] = figure
        log(f"{key} done in {seconds_:.1f} s")

    def build(
        key: str, table: str, stream: str, table_rows: int, files: int, needed_by: tuple[str, ...]
    ) -> dict[str, Any] | None:
        log(f"building {table}: {table_rows:,} rows in {files} files, a stream, then the change ...")
        try:
            report[key] = built = build_raw(lake, table, stream, table_rows, files, change)
        except Exception as error:  # a report: the figures that need the table say why they are missing
            for figure in set(figures_wanted) & set(needed_by):
                figures[figure] = {"error": f"building {table} failed: {error}", "traceback": traceback.format_exc()}
            return None
        return built

    try:
        raw = build("raw", RAW, STREAM, rows, TABLE_FILES, FIGURES)
        large = None
        if raw is not None and "scale" in figures_wanted:
            large = build("raw_large", RAW_LARGE, STREAM_LARGE, large_rows, large_files, ("scale",))
        if raw is not None:
            attempt("diff", lambda: diff_figure(lake, spark, raw, change, repeat, warmup))
            if large is not None:
                attempt("scale", lambda: scale_figure(lake, spark, raw, large, change, repeat, warmup))
            attempt("merge", lambda: merge_figure(lake, spark, raw, change, scratch, repeat, warmup))
            attempt("append", lambda: append_figure(lake, spark, raw, change, repeat, warmup))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report["elapsed_s"] = time.perf_counter() - started
    report["summary"] = [
        dict(zip(["figure", "value", "timings", "target", "result"], row, strict=True)) for row in summary_rows(report)
    ]
    return report


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the table (default 1,000,000, in 20 files)")
    parser.add_argument(
        "--large-rows",
        type=int,
        default=10_000_000,
        help="rows of the scale figure's large table (default 10,000,000, in files as big as the small table's)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each workload (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed warm-up rounds of each workload (default 1)")
    parser.add_argument(
        "--figures", default=",".join(FIGURES), help=f"comma-separated figures to run (default: all of {', '.join(FIGURES)})"
    )
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="where the JSON report goes")
    parser.add_argument("--warehouse", help="warehouse folder to use (default: a temporary one, removed after)")
    args = parser.parse_args(argv)
    args.figures = tuple(f.strip() for f in args.figures.split(",") if f.strip())
    unknown = set(args.figures) - set(FIGURES)
    if unknown:
        parser.error(f"unknown figures: {', '.join(sorted(unknown))}")
    if args.rows < 100 * TABLE_FILES or args.large_rows < args.rows:
        parser.error(f"--rows must be at least {100 * TABLE_FILES} and --large-rows at least --rows")
    return args


def main(
    argv: list[str] | None = None,
    *,
    spark: SparkSession | None = None,
    warehouse: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Run the benchmark, print the report, write the JSON, and return the report.

    Args:
        argv: command-line arguments (default: sys.argv[1:]).
        spark: a SparkSession to use (default: lakeclone's embedded one).
        warehouse: a warehouse folder to use (default: ``--warehouse``, else a temporary folder).
            The baselines' tables go in a folder beside it, removed afterwards.
    """
    args = parse_args(argv)
    if spark is None:
        from lakeclone.session import embedded_spark

        log("starting Spark ...")
        spark = embedded_spark()
    with _folder(warehouse or args.warehouse) as folder:
        report = run(
            rows=args.rows,
            large_rows=args.large_rows,
            repeat=args.repeat,
            spark=spark,
            warehouse=folder,
            warmup=args.warmup,
            figures_wanted=args.figures,
        )
    if args.output:
        report["output"] = args.output
        write_json(args.output, report)
    print_report(report)
    return report


if __name__ == "__main__":
    try:
        main()
    except Exception:  # a report, not a test
        traceback.print_exc()
    sys.exit(0)
