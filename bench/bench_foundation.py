"""Foundation benchmark: lakeclone's INSERT, UPDATE and point SELECT against plain Spark.

Run from the repository root::

    .venv/bin/python bench/bench_foundation.py [--rows 1000000] [--repeat 3]

Every figure is a ratio against a baseline measured in the same run (the
machine is noisy), or a count. See bench/README.md for what each figure means.
The script exits 0 whatever the figures are: it is a report, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as dt
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # run as a script, or imported by a test
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import (  # noqa: E402
    PhaseTimer,
    Timing,
    environment,
    format_table,
    interleave,
    print_closing,
    ratio,
    seconds,
    timed,
    write_json,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    import lakeclone

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = BENCH_DIR / "results" / "foundation.json"

COLUMNS = "ID BIGINT, NAME STRING, AMOUNT DOUBLE"
UPDATE_FILES = 20

SELECT_WARMUP = 5  # untimed point SELECTs of each kind per --warmup round

INSERT_TARGET = 1.3
SELECT_TARGET = 1.2


def source_sql(rows: int, partitions: int | None = None) -> str:
    """The rows every workload writes; lakeclone passes this query to Spark as it is."""
    spread = f"range({rows})" if partitions is None else f"range(0, {rows}, 1, {partitions})"
    return f"SELECT id AS ID, CAST(id % 1000 AS STRING) AS NAME, rand() AS AMOUNT FROM {spread}"


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def table_location(lake: lakeclone.Lake, name: str) -> str:
    uri = lake.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"]
    return os.path.normpath(unquote(urlparse(uri).path))


def parquet_files(folder: str) -> list[str]:
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".parquet"))


# 1. INSERT ... SELECT ------------------------------------------------------------------


def insert_figure(
    lake: lakeclone.Lake, spark: SparkSession, scratch: str, rows: int, repeat: int, warmup: int
) -> dict[str, Any]:
    """INSERT INTO t <source> through lakeclone vs ``spark.sql(<source>).write.parquet``."""
    import lakeclone.delta.log as delta_log
    import lakeclone.delta.writer as writer
    import lakeclone.engine.dml as dml
    import lakeclone.engine.executor as executor
    from lakeclone.catalog.store import Catalog
    from lakeclone.delta.log import DeltaLog
    from lakeclone.delta.writer import ROW_ID
    from lakeclone.engine import results
    from lakeclone.engine.schema import new_row_id
    from lakeclone.engine.tables import Tables

    source = source_sql(rows)
    lake_files: list[int] = []
    plain_files: list[int] = []

    def new_table(round_: int) -> tuple[str, bool]:
        name = f"BENCH_INSERT_{round_}"
        lake.sql(f"CREATE TABLE {name} ({COLUMNS})")
        return name, round_ >= warmup

    def lake_insert(table: tuple[str, bool]) -> None:
        name, record = table
        # Phases are recorded in timed rounds only: the first INSERT of a JVM is several times slower.
        with phases.recording() if record else contextlib.nullcontext():
            with phases.section("lake.sql() total") if record else contextlib.nullcontext():
                status = lake.sql(f"INSERT INTO {name} {source}")
            with phases.section("collect() of the status row") if record else contextlib.nullcontext():
                status.collect()

    def lake_done(table: tuple[str, bool]) -> None:
        name, _ = table
        lake_files.append(len(DeltaLog(table_location(lake, name)).snapshot().files))
        lake.sql(f"DROP TABLE {name}")

    def new_folder(round_: int) -> str:
        return os.path.join(scratch, f"plain_{round_}_{time.monotonic_ns()}")

    def plain_write(folder: str) -> None:
        spark.sql(source).write.parquet(folder)

    def plain_done(folder: str) -> None:
        plain_files.append(len(parquet_files(folder)))
        shutil.rmtree(folder, ignore_errors=True)

    def row_id_write(folder: str) -> None:
        spark.sql(source).withColumn(ROW_ID, new_row_id()).write.parquet(folder)

    with PhaseTimer(enabled=False) as phases:
        phases.wrap(executor, "parse", "  parse (sqlglot)")
        phases.wrap(Catalog, "record_query", "  catalog: record/finish query (sqlite)")
        phases.wrap(Catalog, "finish_query", "  catalog: record/finish query (sqlite)")
        phases.wrap(DeltaLog, "snapshot", "  delta-rs: snapshot load")
        phases.wrap(Tables, "view", "  target view (Spark)")
        phases.wrap(dml, "write_data_files", "  write_data_files (Spark write + rename + footers)")
        phases.wrap(writer, "_data_file", "    of which: footer stats (pyarrow)")
        phases.wrap(delta_log.DeltaLog, "commit", "  delta-rs: commit")
        phases.wrap(results, "counts", "  status frame (results.counts)")
        timings = interleave(
            {
                "lakeclone": (lake_insert, new_table, lake_done),
                "plain": (plain_write, new_folder, plain_done),
                "plain + row id": (row_id_write, new_folder, lambda f: shutil.rmtree(f, ignore_errors=True)),
            },
            repeat=repeat,
            warmup=warmup,
        )
        per_call = phases.per_call(repeat)
    total, collect = per_call.pop("lake.sql() total"), per_call.pop("collect() of the status row")
    listed = sum(v for k, v in per_call.items() if not k.startswith("    "))
    breakdown = {
        "lake.sql() total": total,
        **per_call,
        "  rest: source analysis, conform, row-id column, Execution setup": max(0.0, total - listed),
        "collect() of the status row": collect,
    }

    lake_t, plain_t = timings["lakeclone"], timings["plain"]
    value = ratio(lake_t, plain_t)
    return {
        "figure": "insert_vs_plain_parquet",
        "rows": rows,
        "source": source,
        "lakeclone": lake_t.to_dict(),
        "plain_parquet": plain_t.to_dict(),
        "plain_parquet_with_row_id": timings["plain + row id"].to_dict(),
        "ratio_median": value,
        "ratio_best": ratio(lake_t, plain_t, "best"),
        "row_id_share_of_ratio": ratio(timings["plain + row id"], plain_t),
        "output_files": {"lakeclone": lake_files[warmup:], "plain": plain_files[warmup:]},
        "phases_per_insert_s": breakdown,
        "phases_missing": phases.missing,
        "target": INSERT_TARGET,
        "passed": value <= INSERT_TARGET,
    }


# 2. UPDATE of 1% of the rows --------------------------------------------------------------


def files_with_matches(files: list[Any], threshold: int) -> dict[str, int]:
    """Rows with ID < threshold in each data file, read straight from the Parquet (not from Delta stats)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    counts = {}
    for f in files:
        ids = pq.read_table(f.local_path, columns=["ID"]).column("ID")
        n = pc.sum(pc.less(ids, threshold)).as_py() or 0
        if n:
            counts[f.path] = n
    return counts


def update_figure(
    lake: lakeclone.Lake, rows: int, repeat: int, warmup: int, insert_time: Timing | None
) -> dict[str, Any]:
    """UPDATE 1% of a table of UPDATE_FILES files; which files it rewrites, and how long it takes."""
    import lakeclone.engine.dml as dml
    from lakeclone.catalog.store import Catalog
    from lakeclone.delta.log import DeltaLog

    name = "BENCH_UPDATE"
    threshold = max(1, rows // 100)
    lake.sql(f"CREATE TABLE {name} ({COLUMNS})")
    build_s, _ = timed(lambda: lake.sql(f"INSERT INTO {name} {source_sql(rows, UPDATE_FILES)}").collect())
    location = table_location(lake, name)
    built = DeltaLog(location).snapshot()
    statement = f"UPDATE {name} SET AMOUNT = AMOUNT + 1 WHERE ID < {threshold}"

    rounds = []
    timing = Timing()
    with PhaseTimer(enabled=False) as phases:
        phases.wrap(Catalog, "record_query", "catalog: record/finish query")
        phases.wrap(Catalog, "finish_query", "catalog: record/finish query")
        phases.wrap(DeltaLog, "snapshot", "delta-rs: snapshot load")
        phases.wrap(dml, "_affected", "find files: Spark scan counting matches per file")
        phases.wrap(dml, "write_data_files", "rewrite: Spark write of the affected files")
        phases.wrap(DeltaLog, "commit", "delta-rs: commit")
        for round_ in range(warmup + repeat):  # warm-up rounds are checked but not timed
            record = update_round(lake, name, location, statement, threshold, phases if round_ >= warmup else None)
            record["warmup"] = round_ < warmup
            rounds.append(record)
            if round_ >= warmup:
                timing.samples.append(record["seconds"])
        breakdown = phases.per_call(repeat)

    total_rows = lake.sql(f"SELECT COUNT(*) AS N FROM {name}").collect()[0][0]
    exact = all(r["rewrote_exactly_matching_files"] for r in rounds) and total_rows == rows
    figure: dict[str, Any] = {
        "figure": "update_one_percent",
        "rows": rows,
        "statement": statement,
        "files_in_table": len(built.files),
        "build_insert_s": build_s,
        "update": timing.to_dict(),
        "phases_per_update_s": breakdown,
        "phases_missing": phases.missing,
        "rounds": rounds,
        "rows_after_updates": total_rows,
        "files_rewritten_equal_files_matching": exact,
        "location": location,
        "table": name,
    }
    if insert_time is not None:
        figure["update_over_insert_median"] = ratio(timing, insert_time)
        figure["update_over_insert_best"] = ratio(timing, insert_time, "best")
    return figure


def update_round(
    lake: lakeclone.Lake,
    name: str,
    location: str,
    statement: str,
    threshold: int,
    phases: PhaseTimer | None,
) -> dict[str, Any]:
    """One checked UPDATE: the files with matching rows before it, and what its commit says it did."""
    import json

    from lakeclone.delta.log import DeltaLog

    log_ = DeltaLog(location)
    try:
        before = log_.snapshot(stats=True)
    except TypeError:  # a DeltaLog whose snapshots always carry stats
        before = log_.snapshot()
    matching = files_with_matches(list(before.files), threshold)
    # Files a reader skipping on Delta stats would still have to scan (no stats: must scan).
    stats_candidates = sum(
        1 for f in before.files if (json.loads(f.stats) if f.stats else {}).get("minValues", {}).get("ID", -1) < threshold
    )
    with phases.recording() if phases else contextlib.nullcontext():
        seconds_, result = timed(lambda: lake.sql(statement).collect())
    history = lake.sql(f"DESCRIBE HISTORY {name} LIMIT 1").collect()[0]
    metrics = history["operationMetrics"]
    after = DeltaLog(location).snapshot()
    record = {
        "seconds": seconds_,
        "operation": history["operation"],
        "rows_updated": int(result[0][0]),
        "files_before": len(before.files),
        "files_with_matching_rows": len(matching),
        "matching_rows": sum(matching.values()),
        "files_whose_stats_admit_matches": stats_candidates,
        "numRemovedFiles": int(metrics["numRemovedFiles"]),
        "numAddedFiles": int(metrics["numAddedFiles"]),
        "numUpdatedRows": int(metrics.get("numUpdatedRows", -1)),
        "numCopiedRows": int(metrics.get("numCopiedRows", -1)),
        "files_after": len(after.files),
    }
    record["rewrote_exactly_matching_files"] = (
        record["operation"] == "UPDATE"
        and record["numRemovedFiles"] == record["files_with_matching_rows"]
        and 0 < record["numAddedFiles"] <= record["numRemovedFiles"]
        and record["rows_updated"] == record["matching_rows"] == threshold
    )
    return record


# 3. Point SELECT ----------------------------------------------------------------------------


def select_figure(
    lake: lakeclone.Lake,
    spark: SparkSession,
    table: str,
    location: str,
    rows: int,
    runs: int,
    warmup: int,
    *,
    profile: bool,
) -> dict[str, Any]:
    """``lake.sql(point query).collect()`` vs ``spark.sql`` on a temp view over the same files."""
    import lakeclone.delta.log as delta_log
    import lakeclone.engine.executor as executor
    import lakeclone.engine.query as query
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.tables import Tables

    point = rows * 123456 // 1_000_000
    snapshot = delta_log.DeltaLog(location).snapshot()
    paths = [f.local_path for f in snapshot.files]
    spark.read.parquet(*paths).createOrReplaceTempView("bench_plain")
    lake_query = f"SELECT * FROM {table} WHERE ID = {point}"
    plain_query = f"SELECT ID, NAME, AMOUNT FROM bench_plain WHERE ID = {point}"
    # The Spark SQL lakeclone runs for lake_query, over its own snapshot view: running it
    # with spark.sql directly splits lakeclone's overhead into driver side and Spark side.
    view_query = bound_sql(lake, lake_query)

    with PhaseTimer() as phases:

        def lake_select() -> list[Any]:
            with phases.section("lake.sql() total"):
                frame = lake.sql(lake_query)
            with phases.section("lakeclone: collect()"):
                return frame.collect()

        def plain_select() -> list[Any]:
            with phases.section("plain: spark.sql()"):
                frame = spark.sql(plain_query)
            with phases.section("plain: collect()"):
                return frame.collect()

        def view_select() -> list[Any]:
            with phases.section("lakeclone's view via spark.sql(): spark.sql()"):
                frame = spark.sql(view_query)
            with phases.section("lakeclone's view via spark.sql(): collect()"):
                return frame.collect()

        lake_rows, plain_rows, view_rows = lake_select(), plain_select(), view_select()
        results = [[tuple(r) for r in found] for found in (lake_rows, plain_rows, view_rows)]
        same = len(lake_rows) == 1 and results[0] == results[1] == results[2]
        for _ in range(SELECT_WARMUP * warmup):  # Spark compiles and caches the plans' code
            lake_select()
            plain_select()
            view_select()

        phases.wrap(executor, "parse", "  parse (sqlglot)")
        phases.wrap(Catalog, "record_query", "  catalog: record/finish query (sqlite)")
        phases.wrap(Catalog, "finish_query", "  catalog: record/finish query (sqlite)")
        phases.wrap(query, "spark_sql", "  bind + transpile (query.spark_sql)")
        phases.wrap(Tables, "entry", "    catalog: table lookup")
        phases.wrap(Tables, "snapshot", "    delta-rs: snapshot load")
        phases.wrap(delta_log.DeltaLog, "_snapshot", "      of which: add actions -> DataFiles")
        phases.wrap(Tables, "view", "    temp view (cached per version)")
        phases.reset()
        timings = interleave(
            {
                "lakeclone": (lake_select, None, None),
                "plain": (plain_select, None, None),
                "view": (view_select, None, None),
            },
            repeat=runs,
        )
        breakdown = phases.per_call(runs)

    outer = breakdown["lake.sql() total"]
    inner = sum(
        breakdown.get(k, 0.0)
        for k in (
            "  parse (sqlglot)",
            "  catalog: record/finish query (sqlite)",
            "  bind + transpile (query.spark_sql)",
        )
    )
    breakdown["  rest: spark.sql() analysis + Execution setup"] = max(0.0, outer - inner)
    lake_t, plain_t, view_t = timings["lakeclone"], timings["plain"], timings["view"]
    value = ratio(lake_t, plain_t)
    figure: dict[str, Any] = {
        "figure": "point_select_overhead",
        "lakeclone_query": lake_query,
        "plain_query": plain_query,
        "lakeclone_spark_sql": view_query,
        "files": len(paths),
        "same_result": same,
        "lakeclone": lake_t.to_dict(),
        "plain": plain_t.to_dict(),
        "lakeclone_view_via_spark_sql": view_t.to_dict(),
        "spark_side_ratio": ratio(view_t, plain_t),
        "driver_side_ratio": ratio(lake_t, view_t),
        "scan": {
            "lakeclone": scan_summary(spark.sql(view_query)),
            "plain": scan_summary(spark.sql(plain_query)),
        },
        "ratio_median": value,
        "ratio_best": ratio(lake_t, plain_t, "best"),
        "overhead_median_s": lake_t.median - plain_t.median,
        "phases_per_query_s": breakdown,
        "phases_missing": phases.missing,
        "target": SELECT_TARGET,
        "passed": value <= SELECT_TARGET,
    }
    if profile or value > SELECT_TARGET:
        figure["profile_top"] = profile_select(lake, lake_query, runs)
    return figure


def bound_sql(lake: lakeclone.Lake, text: str) -> str:
    """The Spark SQL that lakeclone runs for the query ``text``."""
    import lakeclone.engine.query as query

    captured: list[str] = []
    original = query.spark_sql

    def capture(*args: Any, **kwargs: Any) -> str:
        captured.append(original(*args, **kwargs))
        return captured[-1]

    query.spark_sql = capture
    try:
        lake.sql(text)
    finally:
        query.spark_sql = original
    return captured[-1]


def scan_summary(frame: Any) -> list[str]:
    """The Parquet scan of a frame's physical plan: the columns it reads and the filters it pushes."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain("formatted")
    keep = ("PushedFilters", "ReadSchema")
    return [line.strip() for line in out.getvalue().splitlines() if line.strip().startswith(keep)]


def profile_select(lake: lakeclone.Lake, text: str, runs: int) -> list[str]:
    """cProfile of ``runs`` point selects: the top functions by cumulative time (Python side only)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        lake.sql(text).collect()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("cumulative")
    stats.print_stats(30)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    return [f"(cProfile over {runs} runs; times are totals)"] + [line for line in lines[start:] if line]


# Report -----------------------------------------------------------------------------------


def summary_rows(report: dict[str, Any]) -> list[list[str]]:
    figures = report["figures"]
    rows: list[list[str]] = []

    insert = figures.get("insert")
    if insert and "error" not in insert:
        rows.append([
            f"INSERT {report['rows']:,} rows: lakeclone / plain parquet",
            f"{insert['ratio_median']:.2f}x (best {insert['ratio_best']:.2f}x)",
            f"{seconds(insert['lakeclone']['median_s'])} vs {seconds(insert['plain_parquet']['median_s'])}",
            f"<= {INSERT_TARGET}x",
            "PASS" if insert["passed"] else "FAIL",
        ])
    else:
        rows.append(["INSERT: lakeclone / plain parquet", "ERROR", "", f"<= {INSERT_TARGET}x", "FAIL"])

    update = figures.get("update")
    if update and "error" not in update:
        timed_rounds = [r for r in update["rounds"] if not r["warmup"]] or update["rounds"]
        last = timed_rounds[-1]
        rows.append([
            f"UPDATE 1%: files rewritten vs holding matches ({update['files_in_table']} files)",
            f"removed {last['numRemovedFiles']}, added {last['numAddedFiles']} / matching {last['files_with_matching_rows']}",
            f"{len(update['rounds'])} UPDATEs checked",
            "equal",
            "PASS" if update["files_rewritten_equal_files_matching"] else "FAIL",
        ])
        if "update_over_insert_median" in update:
            rows.append([
                "UPDATE 1% time / INSERT time",
                f"{update['update_over_insert_median']:.2f}x (best {update['update_over_insert_best']:.2f}x)",
                f"{seconds(update['update']['median_s'])} vs {seconds(insert['lakeclone']['median_s'])}",
                "none (info)",
                "INFO",
            ])
    else:
        rows.append(["UPDATE 1%: files rewritten vs holding matches", "ERROR", "", "equal", "FAIL"])

    select = figures.get("select")
    if select and "error" not in select:
        rows.append([
            "Point SELECT: lake.sql / spark.sql (same files)",
            f"{select['ratio_median']:.2f}x (best {select['ratio_best']:.2f}x)",
            f"{seconds(select['lakeclone']['median_s'])} vs {seconds(select['plain']['median_s'])}",
            f"<= {SELECT_TARGET}x",
            "PASS" if select["passed"] and select["same_result"] else "FAIL",
        ])
    else:
        rows.append(["Point SELECT: lake.sql / spark.sql", "ERROR", "", f"<= {SELECT_TARGET}x", "FAIL"])
    return rows


def print_report(report: dict[str, Any]) -> None:
    figures = report["figures"]
    print()
    print(f"lakeclone foundation benchmark: {report['rows']:,} rows, repeat {report['repeat']}, "
          f"{report['environment']['cores']} cores, Spark {report['environment']['spark']}")
    print("All figures compare medians of runs interleaved with their baseline in this same run.")
    for key, title, field in (
        ("insert", "INSERT phases (per statement)", "phases_per_insert_s"),
        ("update", "UPDATE phases (per statement)", "phases_per_update_s"),
        ("select", "Point SELECT phases (per query)", "phases_per_query_s"),
    ):
        figure = figures.get(key)
        if figure and field in figure:
            print()
            print(title)
            print(format_table(["phase", "time"], [[k, seconds(v)] for k, v in figure[field].items()]))
    insert = figures.get("insert")
    if insert and "plain_parquet_with_row_id" in insert:
        print()
        print(f"INSERT diagnostics: plain parquet + row-id column = {insert['row_id_share_of_ratio']:.2f}x plain; "
              f"output files lakeclone {insert['output_files']['lakeclone']} vs plain {insert['output_files']['plain']}")
    select = figures.get("select")
    if select and "spark_side_ratio" in select:
        print()
        print(
            "Point SELECT split: Spark side (lakeclone's view run by spark.sql / plain) = "
            f"{select['spark_side_ratio']:.2f}x; driver side (lake.sql / lakeclone's view run by spark.sql) = "
            f"{select['driver_side_ratio']:.2f}x"
        )
        for side, lines in select["scan"].items():
            print(f"  {side} scan: " + "; ".join(lines))
    if select and "profile_top" in select:
        print()
        print("Point SELECT profile (Python side):")
        print("\n".join(select["profile_top"][:40]))
    print_closing(report, summary_rows(report), baseline_header="lakeclone vs baseline")


def run(
    *,
    rows: int,
    repeat: int,
    select_runs: int,
    spark: SparkSession,
    warehouse: str | os.PathLike[str],
    warmup: int = 1,
    profile: bool = False,
) -> dict[str, Any]:
    """Run all figures; a figure that raises is recorded as an error and the others still run."""
    import lakeclone

    started = time.perf_counter()
    warehouse = Path(warehouse)
    scratch = str(warehouse / "_bench_plain")
    os.makedirs(scratch, exist_ok=True)
    lake = lakeclone.connect(warehouse, spark=spark)
    report: dict[str, Any] = {
        "benchmark": "foundation",
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "rows": rows,
        "repeat": repeat,
        "select_runs": select_runs,
        "warmup": warmup,
        "environment": environment(spark),
        "figures": {},
    }
    figures = report["figures"]

    def attempt(key: str, fn: Any) -> dict[str, Any] | None:
        log(f"{key} ...")
        try:
            seconds_, figure = timed(fn)
        except Exception as error:  # noqa: BLE001 - a report, not a test: record and go on
            figures[key] = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
            log(f"{key} failed: {error}")
            return None
        figure["elapsed_s"] = seconds_
        figures[key] = figure
        log(f"{key} done in {seconds_:.1f} s")
        return figure

    insert = attempt("insert", lambda: insert_figure(lake, spark, scratch, rows, repeat, warmup))
    insert_time = Timing(insert["lakeclone"]["samples_s"]) if insert else None
    update = attempt("update", lambda: update_figure(lake, rows, repeat, warmup, insert_time))
    if update:
        attempt(
            "select",
            lambda: select_figure(
                lake, spark, update["table"], update["location"], rows, select_runs, warmup, profile=profile
            ),
        )
    else:
        figures["select"] = {"error": "skipped: the UPDATE figure's table was not built", "traceback": ""}
    shutil.rmtree(scratch, ignore_errors=True)
    report["elapsed_s"] = time.perf_counter() - started
    report["summary"] = [
        dict(zip(["figure", "value", "lakeclone_vs_baseline", "target", "result"], row))
        for row in summary_rows(report)
    ]
    return report


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows written (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each INSERT and UPDATE (default 3)")
    parser.add_argument("--select-runs", type=int, default=21, help="timed runs of each point SELECT (default 21)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed warm-up rounds of each workload (default 1)")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="where the JSON report goes")
    parser.add_argument("--warehouse", help="warehouse folder to use (default: a temporary one, removed after)")
    parser.add_argument("--profile", action="store_true", help="cProfile the point SELECT even when within target")
    return parser.parse_args(argv)


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
    """
    args = parse_args(argv)
    if spark is None:
        from lakeclone.session import embedded_spark

        log("starting Spark ...")
        spark = embedded_spark()
    folder = warehouse or args.warehouse
    temporary = folder is None
    if temporary:
        folder = tempfile.mkdtemp(prefix="lakeclone-bench-")
    try:
        report = run(
            rows=args.rows,
            repeat=args.repeat,
            select_runs=args.select_runs,
            spark=spark,
            warehouse=folder,
            warmup=args.warmup,
            profile=args.profile,
        )
    finally:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)
    if args.output:
        report["output"] = args.output
        write_json(args.output, report)
    print_report(report)
    return report


if __name__ == "__main__":
    main()
    sys.exit(0)
