"""Latency benchmark: one small statement at a time, as a notebook user runs them, against delta-spark's own.

Run from the repository root::

    .venv/bin/python bench/bench_latency.py [--repeat 20] [--big-rows 1000000] [--tables 50]

Each statement runs ``--repeat`` times on four tables of like rows, the
runs interleaved: a lakeclone table without change tracking, the same
statement in delta-spark's SQL on a path table with Delta's default
properties, a lakeclone table with change tracking on (``--think`` seconds of
idle time after each run, as a user reading the result, on a Lake that
computes state ahead meanwhile as in a notebook, while no other side is timed), and delta-spark
on a path table with row tracking and the change data feed. For each it
prints the median, the spread (fastest to slowest) and the Spark jobs run;
then SHOW TABLES over ``--tables`` tables against Spark's own SHOW TABLES, a
1M-row INSERT … SELECT against plain Parquet and delta-spark, and
``connect()`` to a first result in a new process against a bare delta-spark
session's ``SELECT 1``. Ratios compare medians of runs in the same process,
since the machine is noisy. It exits 0 whatever the figures: a report, not a
test (``tests/test_statement_jobs.py`` holds the job-count rules).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # run as a script
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import Timing, environment, format_table, seconds, spark_jobs, write_json

import lakeclone
from lakeclone.delta.log import Delta

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "build" / "bench" / "latency.json"

UNTRACKED, DELTA, TRACKED, DELTA_ROW_TRACKING = "lakeclone", "delta-spark", "lakeclone tracked", "delta-spark row tracking"
SIDES = (UNTRACKED, DELTA, TRACKED, DELTA_ROW_TRACKING)

# Each statement as a template: {t} the table, {s} a 1,000-row source, {h} a 100-row table,
# {big} the large table, {new} a name no table has, {i} the run's number; {clone} and {using} the side's words.
STATEMENTS: list[tuple[str, str, bool]] = [  # (name, template, collect its rows)
    ("CREATE TABLE", "CREATE TABLE {new} (ID INT, V STRING){using}", False),
    ("INSERT 1 row", "INSERT INTO {t} VALUES (100000 + {i}, 'x')", False),
    ("INSERT 1,000 rows", "INSERT INTO {t} SELECT ID + 200000 + {i} * 1000, V FROM {s}", False),
    ("UPDATE 1 row", "UPDATE {t} SET V = 'u{i}' WHERE ID = {i}", False),
    ("DELETE 1 row", "DELETE FROM {t} WHERE ID = 500 + {i}", False),
    (
        "MERGE 10 rows",
        "MERGE INTO {t} AS t USING (SELECT ID, V FROM {s} WHERE ID BETWEEN {i} * 10 AND {i} * 10 + 9) AS s "
        "ON t.ID = s.ID WHEN MATCHED THEN UPDATE SET V = s.V WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (s.ID, s.V)",
        False,
    ),
    ("SELECT * (100 rows)", "SELECT * FROM {h}", True),
    ("point SELECT (big table)", "SELECT * FROM {big} WHERE ID = {i} * 997", True),
    ("CREATE … CLONE", "CREATE TABLE {new} {clone} {h}", False),
    ("DESCRIBE HISTORY", "DESCRIBE HISTORY {t}", True),
]


class Side:
    """One of the four kinds of table a statement runs on, and how to run SQL there."""

    def __init__(self, name: str, lake: lakeclone.Lake, folder: Path) -> None:
        self.name = name
        self.lake = lake
        self.spark = lake.spark
        self.folder = folder
        self.ours = name in (UNTRACKED, TRACKED)
        self.prefix = {UNTRACKED: "u", DELTA: "d", TRACKED: "k", DELTA_ROW_TRACKING: "r"}[name]

    def ref(self, table: str) -> str:
        return f"{self.prefix}_{table}" if self.ours else f"delta.`{self.folder / table}`"

    def sql(self, text: str, *, collect: bool = False) -> Any:
        frame = self.lake.sql(text) if self.ours else self.spark.sql(text)
        return frame.collect() if collect else frame

    def create(self, table: str, columns: str = "ID INT, V STRING") -> None:
        if self.name == UNTRACKED:
            self.sql(f"CREATE TABLE {self.ref(table)} ({columns})")
        elif self.name == TRACKED:
            self.sql(f"CREATE TABLE {self.ref(table)} ({columns}) CHANGE_TRACKING = TRUE")
        else:
            tracked = self.name == DELTA_ROW_TRACKING
            properties = (
                " TBLPROPERTIES ('delta.enableRowTracking' = 'true', 'delta.enableChangeDataFeed' = 'true')" if tracked else ""
            )
            self.sql(f"CREATE TABLE {self.ref(table)} ({columns}) USING delta{properties}")

    def fill(self, table: str, rows: int) -> None:
        self.sql(f"INSERT INTO {self.ref(table)} SELECT id, CONCAT('v', CAST(id AS STRING)) FROM range({rows})")

    def render(self, template: str, i: int) -> str:
        new = f"n{i}_{time.monotonic_ns()}"
        return template.format(
            t=self.ref("t"),
            s=self.ref("s"),
            h=self.ref("h"),
            big=self.ref("big"),
            new=self.ref(new),
            i=i,
            clone="CLONE" if self.ours else "SHALLOW CLONE",
            using="" if self.ours else " USING delta",
        )


def _time_statements(sides: dict[str, Side], repeat: int, think: float) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for name, template, collect in STATEMENTS:
        timings = {side: Timing() for side in sides}
        jobs = {side: [] for side in sides}  # type: dict[str, list[int]]
        for i in range(repeat + 1):  # the first round warms up, untimed
            order = list(sides) if i % 2 else list(reversed(sides))
            for side_name in order:
                side = sides[side_name]
                text = side.render(template, i)
                with spark_jobs(side.spark) as run_jobs:
                    start = time.perf_counter()
                    side.sql(text, collect=collect)
                    elapsed = time.perf_counter() - start
                if i:
                    timings[side_name].samples.append(elapsed)
                    jobs[side_name].append(len(run_jobs))
                if side_name == TRACKED and think:
                    # The user reads the result: the tracked Lake computes state ahead now, not while another side is timed.
                    time.sleep(think)
        found[name] = {side: {**timings[side].to_dict(), "jobs": sorted(jobs[side])[len(jobs[side]) // 2]} for side in sides}
        print(f"  {name}: " + ", ".join(f"{s} {seconds(timings[s].median)}" for s in sides), flush=True)
    found.update(_stream_figures(sides, repeat, think))
    return found


def _stream_figures(sides: dict[str, Side], repeat: int, think: float) -> dict[str, dict[str, Any]]:
    """A read of a stream's 10 pending changes, and a consuming INSERT … SELECT, against ``table_changes``."""
    ours, theirs = sides[TRACKED], sides[DELTA_ROW_TRACKING]
    for side in (ours, theirs):
        side.create("src")
        side.create("sink")
        side.fill("src", 100)
    ours.sql(f"CREATE STREAM k_st ON TABLE {ours.ref('src')}")
    start = int(theirs.sql(f"DESCRIBE HISTORY {theirs.ref('src')} LIMIT 1", collect=True)[0].version)

    def change(side: Side, i: int) -> None:
        side.sql(f"INSERT INTO {side.ref('src')} SELECT ID + 1000 + {i} * 10, V FROM {side.ref('s')} WHERE ID < 10")

    figures: dict[str, dict[str, Any]] = {}
    change(ours, 0)
    change(theirs, 0)
    read = {TRACKED: Timing(), DELTA_ROW_TRACKING: Timing()}
    read_jobs: dict[str, list[int]] = {TRACKED: [], DELTA_ROW_TRACKING: []}
    for i in range(repeat + 1):
        for side, text in (
            (ours, "SELECT * FROM k_st"),
            (theirs, f"SELECT * FROM table_changes_by_path('{theirs.folder / 'src'}', {start + 1}, {start + 1})"),
        ):
            with spark_jobs(side.spark) as run_jobs:
                began = time.perf_counter()
                got = side.sql(text, collect=True)
                elapsed = time.perf_counter() - began
            assert len(got) == 10, (side.name, len(got))
            if i:
                read[side.name].samples.append(elapsed)
                read_jobs[side.name].append(len(run_jobs))
    figures["stream read, 10 changes"] = {
        s: {**read[s].to_dict(), "jobs": sorted(read_jobs[s])[len(read_jobs[s]) // 2]} for s in read
    }

    consume = {TRACKED: Timing(), DELTA_ROW_TRACKING: Timing()}
    consume_jobs: dict[str, list[int]] = {TRACKED: [], DELTA_ROW_TRACKING: []}
    consumed = start + 1  # the delta-spark user's own offset: the last version consumed
    ours.sql(f"INSERT INTO {ours.ref('sink')} SELECT ID, V FROM k_st")
    changes = f"table_changes_by_path('{theirs.folder / 'src'}', {consumed}, {consumed})"
    theirs.sql(f"INSERT INTO {theirs.ref('sink')} SELECT ID, V FROM {changes}")
    for i in range(1, repeat + 2):
        change(ours, i)
        change(theirs, i)
        latest = int(theirs.sql(f"DESCRIBE HISTORY {theirs.ref('src')} LIMIT 1", collect=True)[0].version)
        if think:
            time.sleep(think)
        # delta-spark's first: what the tracked Lake computes ahead after its INSERT runs before the next think, untimed.
        for side, text in (
            (
                theirs,
                f"INSERT INTO {theirs.ref('sink')} SELECT ID, V FROM table_changes_by_path('{theirs.folder / 'src'}', "
                f"{consumed + 1}, {latest}) WHERE _change_type = 'insert'",
            ),
            (ours, f"INSERT INTO {ours.ref('sink')} SELECT ID, V FROM k_st"),
        ):
            with spark_jobs(side.spark) as run_jobs:
                began = time.perf_counter()
                side.sql(text)
                elapsed = time.perf_counter() - began
            if i > 1:
                consume[side.name].samples.append(elapsed)
                consume_jobs[side.name].append(len(run_jobs))
        consumed = latest
    figures["consuming INSERT … SELECT from a stream"] = {
        s: {**consume[s].to_dict(), "jobs": sorted(consume_jobs[s])[len(consume_jobs[s]) // 2]} for s in consume
    }
    return figures


def _show_tables(spark: SparkSession, folder: Path, tables: int, repeat: int) -> dict[str, Any]:
    """SHOW TABLES over ``tables`` lakeclone tables against Spark's SHOW TABLES over as many Delta tables."""
    lake = lakeclone.connect(folder / "show_wh", spark=spark)
    database = f"bench_show_{os.getpid()}"
    spark.sql(f"CREATE DATABASE {database} LOCATION '{folder / 'spark_db'}'")
    try:
        for n in range(tables):
            lake.sql(f"CREATE TABLE t{n} (id INT); INSERT INTO t{n} VALUES ({n})")
            spark.sql(f"CREATE TABLE {database}.t{n} (id INT) USING delta")
        ours, after_write, theirs = Timing(), Timing(), Timing()
        our_jobs: list[int] = []
        for i in range(repeat + 1):
            with spark_jobs(spark) as run_jobs:
                began = time.perf_counter()
                assert len(lake.sql("SHOW TABLES").collect()) == tables
                elapsed = time.perf_counter() - began
            began = time.perf_counter()
            assert len(spark.sql(f"SHOW TABLES IN {database}").collect()) == tables
            spark_elapsed = time.perf_counter() - began
            # A table changed since the last listing: its counts are read again, and the result is new.
            lake.sql(f"INSERT INTO t{i % tables} VALUES ({i})")
            with spark_jobs(spark) as written_jobs:
                began = time.perf_counter()
                assert len(lake.sql("SHOW TABLES").collect()) == tables
                written_elapsed = time.perf_counter() - began
            if i:
                ours.samples.append(elapsed)
                after_write.samples.append(written_elapsed)
                theirs.samples.append(spark_elapsed)
                our_jobs.extend((len(run_jobs), len(written_jobs)))
        return {
            "lakeclone": ours.to_dict(),
            "lakeclone after a write": after_write.to_dict(),
            "spark": theirs.to_dict(),
            "jobs": max(our_jobs),
            "tables": tables,
        }
    finally:
        spark.sql(f"DROP DATABASE {database} CASCADE")


def _bulk_insert(sides: dict[str, Side], folder: Path, repeat: int) -> dict[str, Any]:
    """INSERT … SELECT of the big table into an untracked table, against plain Parquet and delta-spark."""
    ours, theirs = sides[UNTRACKED], sides[DELTA]
    spark = ours.spark
    timings = {"lakeclone": Timing(), "delta-spark": Timing(), "parquet": Timing()}
    for i in range(repeat + 1):
        ours.sql(f"CREATE TABLE {ours.ref(f'bulk{i}')} (ID INT, V STRING)")
        theirs.create(f"bulk{i}")
        runs: list[tuple[str, Callable[[], object]]] = [
            ("lakeclone", lambda i=i: ours.sql(f"INSERT INTO {ours.ref(f'bulk{i}')} SELECT * FROM {ours.ref('big')}")),
            ("delta-spark", lambda i=i: theirs.sql(f"INSERT INTO {theirs.ref(f'bulk{i}')} SELECT * FROM {theirs.ref('big')}")),
            (
                "parquet",
                lambda i=i: (
                    spark.read.format("delta").load(str(theirs.folder / "big")).write.parquet(str(folder / f"parquet{i}"))
                ),
            ),
        ]
        for name, run in runs if i % 2 else list(reversed(runs)):
            began = time.perf_counter()
            run()
            if i:
                timings[name].samples.append(time.perf_counter() - began)
    return {name: timing.to_dict() for name, timing in timings.items()}


def _tracking_on(spark: SparkSession, folder: Path, files: int) -> dict[str, Any]:
    """``ALTER TABLE … SET CHANGE_TRACKING = TRUE`` on a table of ``files`` files: its time, commits, and files rewritten."""
    lake = lakeclone.connect(folder / "tracking_wh", spark=spark)
    lake.sql("CREATE TABLE wide (id BIGINT)")
    lake.sql(f"INSERT INTO wide SELECT id FROM range(0, {files * 10}, 1, {files})")
    (detail,) = lake.sql("DESCRIBE DETAIL wide").collect()
    log = Delta(spark).table(detail.location)
    before, version = {f.uri for f in log.files()}, log.version()
    began = time.perf_counter()
    lake.sql("ALTER TABLE wide SET CHANGE_TRACKING = TRUE")
    elapsed = time.perf_counter() - began
    after = {f.uri for f in log.files()}
    operations = [c.operation for c in log.history() if c.version > version]
    comment_began = time.perf_counter()
    lake.sql("ALTER TABLE wide SET COMMENT = 'a metadata commit, for scale'")
    comment = time.perf_counter() - comment_began
    return {
        "files": len(before),
        "seconds": elapsed,
        "comment_seconds": comment,
        "commits": operations,
        "data_files_rewritten": len(before - after),
        "data_files_added": len(after - before),
    }


COLD_LAKECLONE = textwrap.dedent(
    """
    import sys, tempfile, time
    began = time.perf_counter()
    import lakeclone
    lake = lakeclone.connect(tempfile.mkdtemp() + "/wh")
    lake.sql("SELECT 1").collect()
    print(time.perf_counter() - began)
    """
)
COLD_DELTA = textwrap.dedent(
    """
    import time
    began = time.perf_counter()
    from pyspark.sql import SparkSession
    from lakeclone.session import embedded_builder
    spark = embedded_builder().getOrCreate()
    spark.sql("SELECT 1").collect()
    print(time.perf_counter() - began)
    """
)


def _cold_start(runs: int) -> dict[str, Any]:
    """``connect()`` to a first result in a new process, against a bare delta-spark session's ``SELECT 1``."""
    timings = {"lakeclone": Timing(), "delta-spark": Timing()}
    for i in range(runs):
        order = [("lakeclone", COLD_LAKECLONE), ("delta-spark", COLD_DELTA)]
        for name, script in order if i % 2 == 0 else list(reversed(order)):
            began = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
            total = time.perf_counter() - began
            float(out.stdout.strip().splitlines()[-1])  # the script reached its result
            timings[name].samples.append(total)
    return {name: timing.to_dict() for name, timing in timings.items()}


def _ratio(figure: dict[str, Any], numerator: str, denominator: str) -> float:
    return float(figure[numerator]["median_s"]) / float(figure[denominator]["median_s"])


def summary(report: dict[str, Any]) -> list[list[Any]]:
    """The figures with their targets, as the issue states them."""
    rows: list[list[Any]] = []
    statements = report["statements"]
    for name, figure in statements.items():
        if UNTRACKED in figure:
            jobs_ok = figure[UNTRACKED]["jobs"] <= figure[DELTA]["jobs"]
            time_ratio = _ratio(figure, UNTRACKED, DELTA)
            rows.append(
                [
                    f"{name}: untracked / delta-spark",
                    f"{time_ratio:.2f}, jobs {figure[UNTRACKED]['jobs']} vs {figure[DELTA]['jobs']}",
                    "≤ 1.2, jobs ≤",
                    "PASS" if jobs_ok and time_ratio <= 1.2 else "FAIL",
                ]
            )
        if TRACKED in figure and DELTA in figure:
            time_ratio = _ratio(figure, TRACKED, DELTA)
            jobs_ok = figure[TRACKED]["jobs"] <= figure[DELTA_ROW_TRACKING]["jobs"]
            rows.append(
                [
                    f"{name}: tracked / delta-spark",
                    f"{time_ratio:.2f}, jobs {figure[TRACKED]['jobs']} vs {figure[DELTA_ROW_TRACKING]['jobs']} (row tracking)",
                    "≤ 1.5, jobs ≤",
                    "PASS" if jobs_ok and time_ratio <= 1.5 else "FAIL",
                ]
            )
        elif TRACKED in figure:
            time_ratio = _ratio(figure, TRACKED, DELTA_ROW_TRACKING)
            rows.append(
                [
                    f"{name}: lakeclone / table_changes",
                    f"{time_ratio:.2f}, jobs {figure[TRACKED]['jobs']} vs {figure[DELTA_ROW_TRACKING]['jobs']}",
                    "≤ 1.5",
                    "PASS" if time_ratio <= 1.5 else "FAIL",
                ]
            )
    show = report.get("show_tables")
    if show:
        for side, label in (("lakeclone", "unchanged"), ("lakeclone after a write", "one changed since")):
            show_ratio = show[side]["median_s"] / show["spark"]["median_s"]
            rows.append(
                [
                    f"SHOW TABLES, {show['tables']} tables, {label} / Spark's",
                    f"{show_ratio:.2f}, jobs {show['jobs']}",
                    "≤ 2, 0 jobs",
                    "PASS" if show_ratio <= 2 and show["jobs"] == 0 else "FAIL",
                ]
            )
    bulk = report.get("bulk_insert")
    if bulk:
        parquet, delta = _ratio(bulk, "lakeclone", "parquet"), _ratio(bulk, "lakeclone", "delta-spark")
        rows.append(["1M-row INSERT … SELECT / Parquet", f"{parquet:.2f}", "≤ 1.3", "PASS" if parquet <= 1.3 else "FAIL"])
        rows.append(["1M-row INSERT … SELECT / delta-spark", f"{delta:.2f}", "≤ 1.1", "PASS" if delta <= 1.1 else "FAIL"])
    tracking = report.get("tracking_on")
    if tracking:
        rows.append(
            [
                f"CHANGE_TRACKING = TRUE on {tracking['files']:,} files",
                f"{seconds(tracking['seconds'])} (a COMMENT: {seconds(tracking['comment_seconds'])}); "
                f"commits {', '.join(tracking['commits'])}; files rewritten {tracking['data_files_rewritten']}",
                "no data file rewritten",
                "PASS" if tracking["data_files_rewritten"] == tracking["data_files_added"] == 0 else "FAIL",
            ]
        )
    cold = report.get("cold_start")
    if cold:
        cold_ratio = _ratio(cold, "lakeclone", "delta-spark")
        rows.append(
            [
                "connect() to first result / bare delta-spark",
                f"{cold_ratio:.2f}",
                "≤ 1.2",
                "PASS" if cold_ratio <= 1.2 else "FAIL",
            ]
        )
    return rows


def statement_table(report: dict[str, Any]) -> str:
    headers = ["statement", *[f"{side} (jobs)" for side in SIDES]]
    rows = []
    for name, figure in report["statements"].items():
        cells = [name]
        for side in SIDES:
            if side in figure:
                f = figure[side]
                cells.append(f"{seconds(f['median_s'])} [{seconds(f['best_s'])}–{seconds(f['worst_s'])}] ({f['jobs']})")
            else:
                cells.append("–")
        rows.append(cells)
    return format_table(headers, rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="timed runs of each statement (default 20)")
    parser.add_argument("--big-rows", type=int, default=1_000_000, help="rows of the large table (default 1,000,000)")
    parser.add_argument("--tables", type=int, default=50, help="tables SHOW TABLES lists (default 50)")
    parser.add_argument("--think", type=float, default=2.0, help="idle seconds after each tracked statement (default 2)")
    parser.add_argument("--bulk-runs", type=int, default=7, help="timed runs of the 1M-row INSERT … SELECT (default 7)")
    parser.add_argument("--tracking-files", type=int, default=1000, help="files of the table tracking starts on (default 1,000)")
    parser.add_argument("--cold-runs", type=int, default=3, help="new processes timed for connect() (default 3)")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="where the JSON report goes")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    from lakeclone.session import embedded_spark

    began = time.perf_counter()
    spark = embedded_spark()
    folder = Path(tempfile.mkdtemp(prefix="bench-latency-"))
    try:
        lake = lakeclone.connect(folder / "warehouse", spark=spark, compute_ahead=False)
        # The tracked side is a notebook user's: state computed ahead during the think time before each run.
        thinking = lakeclone.connect(folder / "warehouse", spark=spark, compute_ahead=True)
        sides = {name: Side(name, thinking if name == TRACKED else lake, folder / name.replace(" ", "_")) for name in SIDES}
        print(f"Setting up: tables of 20, 100, 1,000 and {args.big_rows:,} rows on each side", flush=True)
        for side in sides.values():
            for table, rows in (("t", 1000), ("s", 1000), ("h", 100), ("big", args.big_rows)):
                side.create(table)
                side.fill(table, rows)
        print("Statements:", flush=True)
        report: dict[str, Any] = {
            "environment": environment(spark),
            "statements": _time_statements(sides, args.repeat, args.think),
        }
        print("SHOW TABLES, bulk INSERT, cold start:", flush=True)
        report["show_tables"] = _show_tables(spark, folder, args.tables, args.repeat)
        report["bulk_insert"] = _bulk_insert(sides, folder, args.bulk_runs)
        report["tracking_on"] = _tracking_on(spark, folder, args.tracking_files)
        report["cold_start"] = _cold_start(args.cold_runs) if args.cold_runs else None
        report["elapsed_s"] = time.perf_counter() - began
        report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        write_json(args.output, report)
        print()
        print(statement_table(report))
        print()
        print(format_table(["figure", "value", "target", "result"], summary(report)))
        print()
        print(
            f"Load average at start {report['environment']['load_average']}, at end {report['load_average_end']}; "
            f"{dt.timedelta(seconds=round(report['elapsed_s']))} in all; JSON: {args.output}"
        )
        return report
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
