"""Clone benchmark: zero-copy clone cost against the source's bytes and file count, and VACUUM planning with clones.

Run from the repository root::

    .venv/bin/python bench/bench_clones.py            # full run (~2 GB of data)
    .venv/bin/python bench/bench_clones.py --small    # a tiny run

Every source table is written by delta-spark itself (``spark.range`` with
random string columns, one Spark task per file or ``maxRecordsPerFile``) and
adopted with ``CREATE EXTERNAL TABLE name LOCATION = '<folder>'``, or made with
``lake.sql``; every change to a source or a clone is ``lake.sql`` DML. What is
timed goes through ``lake.sql`` / ``lake.vacuum_plan``, beside delta-spark's
own statement where there is one. See bench/README.md ("bench_clones.py") for
what each figure means. The script exits 0 whatever the figures are.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # run as a script, or imported by a test
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _deltalog import Replayed, data_files, local_path, replay
from _timing import (
    PhaseTimer,
    environment,
    format_table,
    interleave,
    job_summary,
    print_closing,
    ratio,
    seconds,
    spark_jobs,
    timed,
    write_json,
)

from lakeclone.session import session_setting

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    import lakeclone

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = BENCH_DIR / "results" / "clones.json"

SIZE_TARGET = 1.2  # zero-copy clone time, large source / small source (same file count)
MANY_TARGET_S = 1.0  # zero-copy clone of the many-file source, absolute seconds (median)
VACUUM_TARGET_S = 5.0  # vacuum_plan of the source with its clones, absolute seconds (median)
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
LISTING_PARALLELISM = "spark.sql.sources.parallelPartitionDiscovery.parallelism"
FIGURES = ("clone_size", "clone_many", "vacuum")


@dataclass(frozen=True)
class Scale:
    """How big each figure's tables are."""

    size_files: int  # files in both sources of the size pair
    small_rows: int  # rows per file of the small source
    large_rows: int  # rows per file of the large source
    payload_chars: int  # random characters per row (≈ bytes: incompressible)
    many_files: int  # files of the many-file source
    clone_repeat: int
    clone_warmup: int
    vacuum_files: int  # files in the VACUUM source
    vacuum_clones: int
    vacuum_repeat: int
    vacuum_warmup: int
    rows_per_tiny_file: int = 10
    small: bool = False  # the --small run


FULL = Scale(
    size_files=200,
    small_rows=10,  # 200 files x 10 rows x 10,000 characters: 20 MB
    large_rows=1000,  # 200 files x 1,000 rows x 10,000 characters: 2 GB
    payload_chars=10_000,
    many_files=10_000,
    clone_repeat=7,
    clone_warmup=1,
    vacuum_files=2000,
    vacuum_clones=10,
    vacuum_repeat=5,
    vacuum_warmup=1,
)

SMALL = Scale(
    size_files=10,
    small_rows=2,  # 10 files of 20 KB
    large_rows=100,  # 10 files of 1 MB
    payload_chars=10_000,
    many_files=200,
    clone_repeat=1,
    clone_warmup=0,
    vacuum_files=60,
    vacuum_clones=2,
    vacuum_repeat=1,
    vacuum_warmup=0,
    small=True,
)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def sql_name(location: str) -> str:
    from lakeclone.delta.log import sql_name as name

    return name(location)


def table_properties() -> str:
    """``TBLPROPERTIES (...)`` with the properties lakeclone gives every table it creates."""
    from lakeclone.delta.statements import TABLE_PROPERTIES

    return "TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in TABLE_PROPERTIES.items()) + ")"


def catalog_location(lake: lakeclone.Lake, name: str) -> str | None:
    """Where table ``name`` lives (a ``file:`` URI), from lakeclone's catalog; None if there is no such table."""
    from lakeclone.catalog.store import DEFAULT_DATABASE, DEFAULT_SCHEMA

    entry = lake._executor.catalog.objects.table(DEFAULT_DATABASE, DEFAULT_SCHEMA, name.upper())  # the benchmark reads internals
    return entry.location if entry is not None else None


def drop_table(lake: lakeclone.Lake, name: str) -> None:
    """DROP a clone and remove its folder (a dropped table's files stay for UNDROP otherwise)."""
    location = catalog_location(lake, name)
    if location is None:
        return
    lake.sql(f"DROP TABLE {name}")
    shutil.rmtree(local_path(location), ignore_errors=True)


# Sources ------------------------------------------------------------------------------------


@dataclass
class Source:
    """A source table the benchmark built (or found from an earlier run, with ``--sources``)."""

    table: str
    folder: str
    files: int
    bytes: int
    rows: int
    build_s: float
    reused: bool

    @property
    def location(self) -> str:
        return f"file:{self.folder}"


def write_source(spark: SparkSession, folder: str, frame: DataFrame, *, max_records_per_file: int | None = None) -> None:
    """A delta-spark table in ``folder``: created with lakeclone's table properties, then one append of ``frame``."""
    location = f"file:{folder}"
    columns = ", ".join(f"{f.name} {f.dataType.simpleString().upper()}" for f in frame.schema.fields)
    spark.sql(f"CREATE TABLE {sql_name(location)} ({columns}) USING delta {table_properties()}")
    writer = frame.write.format("delta").mode("append")
    if max_records_per_file is not None:
        writer = writer.option("maxRecordsPerFile", max_records_per_file)
    writer.save(location)


def source(
    lake: lakeclone.Lake,
    sources: str,
    name: str,
    files: int,
    build: Callable[[str], None],
) -> Source:
    """Table ``name`` over a delta-spark table of ``files`` files in ``sources``/``name``, built unless already there."""
    folder = os.path.join(sources, name.lower())
    started = time.perf_counter()
    reused = False
    if os.path.isdir(os.path.join(folder, "_delta_log")):
        try:
            reused = len(replay(folder).live) == files
        except ValueError:
            reused = False
        if not reused:
            shutil.rmtree(folder)
    if not reused:
        build(folder)
    lake.sql(f"CREATE EXTERNAL TABLE {name} LOCATION = '{folder}'")
    state = replay(folder)
    if len(state.live) != files:
        raise RuntimeError(f"{name}: expected {files} files, the write made {len(state.live)}")
    return Source(
        table=name,
        folder=folder,
        files=len(state.live),
        bytes=sum(f.size for f in state.live.values()),
        rows=sum(f.num_records for f in state.live.values()),
        build_s=time.perf_counter() - started,
        reused=reused,
    )


def payload_source(
    lake: lakeclone.Lake, spark: SparkSession, sources: str, name: str, scale: Scale, rows_per_file: int
) -> Source:
    """``size_files`` files of ``rows_per_file`` rows of random characters: one Spark task, one file."""
    rows = scale.size_files * rows_per_file

    def build(folder: str) -> None:
        frame = spark.range(0, rows, 1, scale.size_files).selectExpr("id AS ID", f"randstr({scale.payload_chars}) AS PAYLOAD")
        write_source(spark, folder, frame)

    return source(lake, sources, name, scale.size_files, build)


def many_file_source(
    lake: lakeclone.Lake, spark: SparkSession, sources: str, name: str, files: int, rows_per_file: int
) -> Source:
    """``files`` tiny files in one append: two Spark tasks, each cutting its rows into files with ``maxRecordsPerFile``."""

    def build(folder: str) -> None:
        frame = spark.range(0, files * rows_per_file, 1, 2).selectExpr("id AS ID", "rand() AS AMOUNT")
        write_source(spark, folder, frame, max_records_per_file=rows_per_file)

    return source(lake, sources, name, files, build)


# 6. Zero-copy clones --------------------------------------------------------------------------


def clone_workloads(
    lake: lakeclone.Lake,
    spark: SparkSession,
    scratch: str,
    src: Source,
    label: str,
    jobs: dict[str, list[list[int]]],
    *,
    delta: bool = True,
) -> dict[str, Any]:
    """``CREATE TABLE c CLONE src`` through lakeclone, and delta-spark's own SHALLOW CLONE of the same version.

    Each run's Spark jobs (those started on this thread) go into ``jobs`` under the workload's name.
    """
    clone = f"C_{src.table}"
    version = replay(src.folder).version

    def lake_clone(_: Any) -> None:
        with spark_jobs(spark) as found:
            lake.sql(f"CREATE TABLE {clone} CLONE {src.table}").collect()
        jobs.setdefault(f"lakeclone {label}", []).append(found)

    def delta_prepare(round_: int) -> str:
        return os.path.join(scratch, f"{label}_{round_}_{time.monotonic_ns()}")

    def delta_clone(folder: str) -> None:
        target, origin = sql_name(f"file:{folder}"), sql_name(src.location)
        with spark_jobs(spark) as found:
            spark.sql(f"CREATE TABLE {target} SHALLOW CLONE {origin} VERSION AS OF {version}").collect()
        jobs.setdefault(f"delta {label}", []).append(found)

    workloads: dict[str, Any] = {
        f"lakeclone {label}": (lake_clone, lambda _: drop_table(lake, clone), lambda _: drop_table(lake, clone)),
    }
    if delta:
        workloads[f"delta {label}"] = (delta_clone, delta_prepare, lambda f: shutil.rmtree(f, ignore_errors=True))
    return workloads


def clone_size_figure(
    lake: lakeclone.Lake, spark: SparkSession, scratch: str, small: Source, large: Source, scale: Scale
) -> dict[str, Any]:
    """Clone time of a source 100x bigger, with the same number of files: a zero-copy clone reads no data.

    delta-spark's own SHALLOW CLONE of both runs beside it in a full run (the
    --small run leaves it out: clone_many times that code path already).
    """
    jobs: dict[str, list[list[int]]] = {}
    delta = not scale.small
    workloads = {
        **clone_workloads(lake, spark, scratch, small, "small", jobs, delta=delta),
        **clone_workloads(lake, spark, scratch, large, "large", jobs, delta=delta),
    }
    log(
        f"timing clones of the {small.bytes / 1e6:,.1f} MB and {large.bytes / 1e6:,.1f} MB sources "
        f"({scale.clone_warmup} warm-up + {scale.clone_repeat} timed rounds, interleaved) ..."
    )
    timings = interleave(workloads, repeat=scale.clone_repeat, warmup=scale.clone_warmup)
    lake_small, lake_large = timings["lakeclone small"], timings["lakeclone large"]
    value = ratio(lake_large, lake_small)
    figure: dict[str, Any] = {
        "figure": "clone_size",
        "sources": {"small": asdict(small), "large": asdict(large)},
        "bytes_ratio": large.bytes / small.bytes,
        "lakeclone_small": lake_small.to_dict(),
        "lakeclone_large": lake_large.to_dict(),
        "ratio_median": value,
        "ratio_best": ratio(lake_large, lake_small, "best"),
        "spark_jobs_median": {k: job_summary(spark, v)["jobs_median"] for k, v in jobs.items()},
        "target": SIZE_TARGET,
        "passed": value <= SIZE_TARGET,
    }
    if delta:
        delta_small, delta_large = timings["delta small"], timings["delta large"]
        figure.update(
            {
                "delta_small": delta_small.to_dict(),
                "delta_large": delta_large.to_dict(),
                "delta_ratio_median": ratio(delta_large, delta_small),
                "lakeclone_over_delta_small": ratio(lake_small, delta_small),
                "lakeclone_over_delta_large": ratio(lake_large, delta_large),
            }
        )
    return figure


def clone_many_figure(lake: lakeclone.Lake, spark: SparkSession, scratch: str, many: Source, scale: Scale) -> dict[str, Any]:
    """Clone time of a source of many files, absolute, beside delta-spark's own SHALLOW CLONE of it."""
    from lakeclone.catalog.queries import QueryStore
    from lakeclone.clones import create
    from lakeclone.delta import statements
    from lakeclone.engine import executor, results

    jobs: dict[str, list[list[int]]] = {}
    workloads = clone_workloads(lake, spark, scratch, many, "many", jobs)
    lake_fn, lake_prepare, lake_cleanup = workloads["lakeclone many"]
    total = "lake.sql(CREATE TABLE ... CLONE).collect()"

    def recorded_clone(round_: int) -> None:
        with phases.record(total, when=round_ >= scale.clone_warmup):
            lake_fn(None)

    def prepare(round_: int) -> int:
        lake_prepare(round_)
        return round_

    workloads["lakeclone many"] = (recorded_clone, prepare, lake_cleanup)
    log(
        f"timing clones of the {many.files:,}-file source ({scale.clone_warmup} warm-up + "
        f"{scale.clone_repeat} timed rounds, interleaved with delta-spark's SHALLOW CLONE) ..."
    )
    with PhaseTimer(enabled=False) as phases:
        phases.wrap(executor, "parse", "  parse (sqlglot)")
        phases.wrap(QueryStore, "record_query", "  catalog: record/finish query (sqlite)")
        phases.wrap(QueryStore, "finish_query", "  catalog: record/finish query (sqlite)")
        phases.wrap(create, "_version", "  source version (Delta history)")
        phases.wrap(statements, "shallow_clone", "  Delta: SHALLOW CLONE statement")
        phases.wrap(create, "_register", "  catalog: register the clone")
        phases.wrap(create, "_run_clone_hooks", "  clone hooks (sequences, keys, clustering)")
        phases.wrap(results, "status", "  status frame")
        timings = interleave(workloads, repeat=scale.clone_repeat, warmup=scale.clone_warmup)
        per_call = {k: v for k, v in phases.per_call(scale.clone_repeat).items() if phases.calls.get(k)}
    outer = per_call.pop(total, 0.0)
    breakdown = {total: outer, **per_call, "  rest (not in a listed phase)": max(0.0, outer - sum(per_call.values()))}

    lake_t, delta_t = timings["lakeclone many"], timings["delta many"]
    return {
        "figure": "clone_many",
        "source": asdict(many),
        "lakeclone": lake_t.to_dict(),
        "delta": delta_t.to_dict(),
        "delta_baseline": "spark.sql('CREATE TABLE delta.`<new>` SHALLOW CLONE delta.`<source>` VERSION AS OF <n>')",
        "lakeclone_over_delta_median": ratio(lake_t, delta_t),
        "spark_jobs": {"lakeclone": job_summary(spark, jobs["lakeclone many"]), "delta": job_summary(spark, jobs["delta many"])},
        "phases_per_clone_s": breakdown,
        "phases_missing": phases.missing,
        "target_s": MANY_TARGET_S,
        "passed": lake_t.median < MANY_TARGET_S,
    }


# 7. VACUUM planning with clones ---------------------------------------------------------------------


def vacuum_figure(lake: lakeclone.Lake, spark: SparkSession, scale: Scale) -> dict[str, Any]:
    """Plan VACUUM of a source whose clones still read files it no longer does; time the plan and audit it."""
    n, r = scale.vacuum_files, scale.rows_per_tiny_file
    k = max(1, n // 20)  # 5% of the files; file j holds IDs j*r ... (j+1)*r - 1
    steps: dict[str, float] = {}

    def step(statement: str) -> None:
        seconds_, _ = timed(lambda: lake.sql(statement).collect())
        steps[statement] = round(seconds_, 3)

    log(f"building the VACUUM source: {n:,} files through lake.sql ...")
    # Deletion vectors on: VACUUM must also keep the vectors clones read and drop the ones nothing does.
    step("CREATE TABLE VSRC (ID BIGINT, AMOUNT DOUBLE) ENABLE_DELETION_VECTORS = TRUE")
    # One INSERT, cut into files of r rows by Spark's maxRecordsPerFile: file j holds IDs j*r ...
    with session_setting(spark, "spark.sql.files.maxRecordsPerFile", str(r)):
        step(f"INSERT INTO VSRC SELECT id AS ID, rand() AS AMOUNT FROM range(0, {n * r}, 1, 2)")
    location = catalog_location(lake, "VSRC")
    assert location is not None
    folder = local_path(location)
    built = len(replay(folder).live)
    if built != n:
        raise RuntimeError(f"VSRC: expected {n} files, the INSERT made {built}")
    # Before any clone: update 5% of the rows, so those rows' old copies are read by no current version.
    step(f"UPDATE VSRC SET AMOUNT = AMOUNT + 1 WHERE ID < {k * r}")
    # A failed write's leftovers: data files named as Delta names them, in the folder, that no commit names.
    live = sorted(replay(folder).live)
    orphans = []
    for index, path in enumerate(live[: max(2, n // 100)]):
        orphan = os.path.join(folder, f"part-{index:05d}-{uuid.uuid4()}-c000.snappy.parquet")
        shutil.copyfile(path, orphan)
        orphans.append(orphan)
    clones = [f"VCLONE_{i}" for i in range(scale.vacuum_clones)]
    log(f"cloning it {len(clones)} times, then changing the source and every clone with lake.sql DML ...")
    for name in clones:
        step(f"CREATE TABLE {name} CLONE VSRC")
    # After cloning: delete 10% and update 5% more of the source; the clones still read those files.
    step(f"DELETE FROM VSRC WHERE ID >= {k * r} AND ID < {3 * k * r}")
    step(f"UPDATE VSRC SET AMOUNT = 0 WHERE ID >= {3 * k * r} AND ID < {4 * k * r}")
    first_new = 10 * n * r
    for i, name in enumerate(clones):
        step(f"INSERT INTO {name} SELECT id + {first_new} AS ID, rand() AS AMOUNT FROM range({r})")
        if i == 0:
            # Rows whose files the source has deleted too: only this clone's older versions read them now.
            step(f"DELETE FROM {name} WHERE ID >= {k * r} AND ID < {k * r + max(1, k // 2) * r}")
    clone_folders = {}
    for name in clones:
        clone_location = catalog_location(lake, name)
        assert clone_location is not None
        clone_folders[name] = local_path(clone_location)

    from lakeclone.delta.log import TableLog
    from lakeclone.vacuum import plan as planner

    plans: list[Any] = []
    dry_runs: list[set[str]] = []
    total = "vacuum_plan total"

    def plan(round_: int) -> None:
        with phases.record(total, when=round_ >= scale.vacuum_warmup):
            plans.append(lake.vacuum_plan("VSRC", retain_hours=0))

    def delta_dry_run() -> None:
        rows = spark.sql(f"VACUUM {sql_name(location)} RETAIN 0 HOURS DRY RUN").collect()
        dry_runs.append({local_path(row[0]) for row in rows})

    log(
        f"timing vacuum_plan against delta-spark's VACUUM DRY RUN ({scale.vacuum_warmup} warm-up + "
        f"{scale.vacuum_repeat} timed rounds, interleaved) ..."
    )
    with contextlib.ExitStack() as settings, PhaseTimer(enabled=False) as phases:
        settings.enter_context(session_setting(spark, RETENTION_CHECK, "false"))
        # Delta lists a table's folder with one Spark task per partition of this setting, 10,000 by
        # default: over a minute for a 60-file table on 2 cores. The baseline gets the embedded
        # session's shuffle partitions instead.
        settings.enter_context(session_setting(spark, LISTING_PARALLELISM, spark.conf.get("spark.sql.shuffle.partitions") or "8"))
        phases.wrap(planner, "table_files", "  list the source's folder (Hadoop FileSystem)")
        phases.wrap(planner, "referenced_since", "  files read by a table's versions in retention")
        phases.wrap(TableLog, "history", "    Delta: history (commit infos)")
        phases.wrap(TableLog, "files", "    Delta: a version's files (state reconstruction)")
        phases.wrap(TableLog, "referenced_after", "    Delta: files named by later commits (Spark JSON read)")
        phases.wrap(planner, "protecting_clones", "  catalog: clones (generator set-up only)")
        timings = interleave(
            {"plan": (plan, lambda r: r, None), "delta": (delta_dry_run, None, None)},
            repeat=scale.vacuum_repeat,
            warmup=scale.vacuum_warmup,
        )
        per_call = phases.per_call(scale.vacuum_repeat)
        breakdown = {
            total: per_call.pop(total),
            **{f"{k} [{phases.calls[k] / scale.vacuum_repeat:g} calls]": v for k, v in per_call.items() if phases.calls.get(k)},
        }
    the_plan, delta_deletes = plans[-1], dry_runs[-1]

    # The audit, from an independent replay of each table's Delta log.
    source_state = replay(folder)
    clone_states = {name: replay(path) for name, path in clone_folders.items()}
    current = source_state.referenced.union(*(state.referenced for state in clone_states.values()))
    clone_ever = set().union(*(state.ever for state in clone_states.values()))
    listing = data_files(folder)
    deletes = {local_path(d.path) for d in the_plan.to_delete}
    wrongful = sorted(deletes & current)
    # What should go: files of the source's folder that neither its current version nor any version of any
    # clone reads (the clones are inside their retention, so all their versions count).
    expected = set(listing) - source_state.referenced - clone_ever
    grouped: dict[str, dict[str, int]] = {}
    for reason, (count, size) in the_plan.totals().items():
        group = grouped.setdefault("clone (any)" if reason.startswith("clone ") else reason, {"files": 0, "bytes": 0})
        group["files"] += count
        group["bytes"] += size

    rows = {"VSRC": live_rows(source_state), **{name: live_rows(state) for name, state in clone_states.items()}}
    readable = vacuum_and_read(lake, spark, rows) if not wrongful else {}
    plan_t, delta_t = timings["plan"], timings["delta"]
    return {
        "figure": "vacuum",
        "source_files_built": n,
        "clones": len(clones),
        "steps_s": steps,
        "files_in_source_folder": len(listing),
        "files_in_plan": len(the_plan.decisions),
        "orphan_files": len(orphans),
        "plan": plan_t.to_dict(),
        "delta_dry_run": delta_t.to_dict(),
        "delta_dry_run_setting": f"{LISTING_PARALLELISM} = the session's spark.sql.shuffle.partitions",
        "plan_over_delta_dry_run": ratio(plan_t, delta_t),
        "phases_per_plan_s": breakdown,
        "phases_missing": phases.missing,
        "totals_by_reason": {k: {"files": v[0], "bytes": v[1]} for k, v in the_plan.totals().items()},
        "totals_grouped": grouped,
        "files_marked_delete": len(deletes),
        "wrongful_deletions": len(wrongful),
        "wrongful_examples": wrongful[:10],
        "deleted_but_read_by_a_clone_version": len(deletes & clone_ever),
        "expected_deletes": len(expected),
        "expected_deletes_missed": len(expected - deletes),
        "expected_deletes_missed_examples": {
            os.path.relpath(local_path(d.path), folder): str(d.reason)
            for d in the_plan.decisions
            if local_path(d.path) in expected - deletes
        },
        "deletes_not_expected": len(deletes - expected),
        "delta_dry_run_deletes": len(delta_deletes),
        "delta_dry_run_deletes_clones_read": len(delta_deletes & current),
        "readable_after_vacuum": readable,
        "target_s": VACUUM_TARGET_S,
        "passed_time": plan_t.median < VACUUM_TARGET_S,
        "passed_wrongful": not wrongful and bool(readable) and all(readable.values()),
    }


def live_rows(state: Replayed) -> int:
    """Rows a replayed version holds: the files' rows less those their deletion vectors hide."""
    return sum(f.num_records - f.deleted_rows for f in state.live.values())


def vacuum_and_read(lake: lakeclone.Lake, spark: SparkSession, rows: dict[str, int]) -> dict[str, bool]:
    """Run the VACUUM for real, then read every row of every table (the first is the one vacuumed).

    Each table must still give the row count its Delta log says; SUM(AMOUNT)
    makes Spark read the data files (a COUNT alone may come from the stats).
    """
    tables = list(rows)
    with session_setting(spark, RETENTION_CHECK, "false"):
        lake.sql(f"VACUUM {tables[0]} RETAIN 0 HOURS").collect()
    readable = {}
    for name in tables:
        try:
            found = lake.sql(f"SELECT COUNT(*), SUM(AMOUNT) FROM {name}").collect()[0]
            readable[name] = int(found[0]) == rows[name]
        except Exception:  # a missing file fails the read
            readable[name] = False
    return readable


# Report ------------------------------------------------------------------------------------------------


def summary_rows(report: dict[str, Any]) -> list[list[str]]:
    figures = report["figures"]
    rows: list[list[str]] = []

    def ok(key: str) -> dict[str, Any] | None:
        figure = figures.get(key)
        return figure if figure and "error" not in figure else None

    if size := ok("clone_size"):
        small, large = size["sources"]["small"], size["sources"]["large"]
        megabytes = f"{large['bytes'] / 1e6:,.0f} MB / {small['bytes'] / 1e6:,.0f} MB"
        rows.append(
            [
                f"Zero-copy clone, {large['files']} files: {megabytes} source",
                f"{size['ratio_median']:.2f}x (best {size['ratio_best']:.2f}x)",
                f"{seconds(size['lakeclone_large']['median_s'])} vs {seconds(size['lakeclone_small']['median_s'])}"
                + (f"; delta-spark's own {size['delta_ratio_median']:.2f}x" if "delta_ratio_median" in size else ""),
                f"<= {SIZE_TARGET}x",
                "PASS" if size["passed"] else "FAIL",
            ]
        )
    elif "clone_size" in figures:
        rows.append(["Zero-copy clone: large / small source", "ERROR", "", f"<= {SIZE_TARGET}x", "FAIL"])

    if many := ok("clone_many"):
        rows.append(
            [
                f"Zero-copy clone of a {many['source']['files']:,}-file source",
                seconds(many["lakeclone"]["median_s"]),
                f"delta-spark SHALLOW CLONE {seconds(many['delta']['median_s'])} ({many['lakeclone_over_delta_median']:.2f}x)",
                f"< {MANY_TARGET_S:g} s",
                "PASS" if many["passed"] else "FAIL",
            ]
        )
    elif "clone_many" in figures:
        rows.append(["Zero-copy clone of a many-file source", "ERROR", "", f"< {MANY_TARGET_S:g} s", "FAIL"])

    if vac := ok("vacuum"):
        title = f"{vac['source_files_built']:,}-file source, {vac['clones']} clones"
        rows.append(
            [
                f"VACUUM plan time ({title})",
                seconds(vac["plan"]["median_s"]),
                f"delta-spark VACUUM DRY RUN {seconds(vac['delta_dry_run']['median_s'])}",
                f"< {VACUUM_TARGET_S:g} s",
                "PASS" if vac["passed_time"] else "FAIL",
            ]
        )
        readable = vac["readable_after_vacuum"]
        rows.append(
            [
                f"VACUUM plan: wrongful deletions ({title})",
                str(vac["wrongful_deletions"]),
                f"{vac['files_marked_delete']} of {vac['files_in_source_folder']} marked delete; "
                f"after VACUUM {sum(readable.values())}/{len(readable)} tables whole",
                "0",
                "PASS" if vac["passed_wrongful"] else "FAIL",
            ]
        )
        rows.append(
            [
                "VACUUM plan vs the log: expected deletes missed / not expected",
                f"{vac['expected_deletes_missed']} / {vac['deletes_not_expected']}",
                f"delta-spark's own VACUUM would delete {vac['delta_dry_run_deletes_clones_read']} files clones read",
                "info",
                "INFO",
            ]
        )
    elif "vacuum" in figures:
        rows.append(["VACUUM plan with clones", "ERROR", "", f"< {VACUUM_TARGET_S:g} s, 0 wrongful", "FAIL"])
    return rows


def print_report(report: dict[str, Any]) -> None:
    figures = report["figures"]
    env = report["environment"]
    print()
    print(
        f"lakeclone clone benchmark{' (--small)' if report['small'] else ''}: {env['cores']} cores "
        f"(load {env['load_average'][0]}), Spark {env['spark']}, delta-spark {env['delta_spark']}"
    )
    print("Ratios compare medians of runs interleaved with their baseline in this same run.")
    many = figures.get("clone_many")
    if many and "phases_per_clone_s" in many:
        print()
        print(
            f"Zero-copy clone phases (per clone of the {many['source']['files']:,}-file source; "
            f"Spark jobs: lakeclone {many['spark_jobs']['lakeclone']['jobs_median']}, "
            f"delta-spark {many['spark_jobs']['delta']['jobs_median']})"
        )
        print(format_table(["phase", "time"], [[k, seconds(v)] for k, v in many["phases_per_clone_s"].items()]))
        print(
            format_table(
                ["Spark work per clone", "jobs (median)", "stages (last run)", "tasks (last run)"],
                [[k, *v.values()] for k, v in many["spark_jobs"].items()],
            )
        )
    vac = figures.get("vacuum")
    if vac and "phases_per_plan_s" in vac:
        print()
        print("VACUUM plan phases (per plan)")
        print(format_table(["phase", "time"], [[k, seconds(v)] for k, v in vac["phases_per_plan_s"].items()]))
        print()
        print("VACUUM plan totals by reason")
        print(
            format_table(
                ["reason", "files", "MB"],
                [[k, v["files"], f"{v['bytes'] / 1e6:.2f}"] for k, v in sorted(vac["totals_by_reason"].items())],
            )
        )
    print_closing(report, summary_rows(report), baseline_header="vs baseline")


def rescaled(scale: Scale, *, repeat: int | None, warmup: int | None) -> Scale:
    """``scale`` with other numbers of timed and warm-up rounds."""
    if repeat is not None:
        scale = replace(scale, clone_repeat=repeat, vacuum_repeat=repeat)
    if warmup is not None:
        scale = replace(scale, clone_warmup=warmup, vacuum_warmup=warmup)
    return scale


def run(
    *,
    spark: SparkSession,
    warehouse: str | os.PathLike[str],
    sources: str | os.PathLike[str],
    scale: Scale,
    figures_wanted: tuple[str, ...] = FIGURES,
) -> dict[str, Any]:
    """Run the figures; a figure that raises is recorded as an error and the others still run."""
    import lakeclone

    started = time.perf_counter()
    sources = os.fspath(sources)
    scratch = tempfile.mkdtemp(prefix="lakeclone-bench-copies-")
    os.makedirs(sources, exist_ok=True)
    lake = lakeclone.connect(warehouse, spark=spark)
    report: dict[str, Any] = {
        "benchmark": "clones",
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "small": scale.small,
        "scale": asdict(scale),
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

    def built(fn: Callable[[], Source]) -> Source:
        result = fn()
        log(
            f"source {result.table}: {result.files:,} files, {result.bytes / 1e6:,.1f} MB "
            f"({'reused' if result.reused else 'built'} in {result.build_s:.1f} s)"
        )
        report.setdefault("sources", {})[result.table] = asdict(result)
        return result

    try:
        if "clone_size" in figures_wanted:

            def size_pair() -> dict[str, Any]:
                small_source = built(lambda: payload_source(lake, spark, sources, "SIZE_SMALL", scale, scale.small_rows))
                large_source = built(lambda: payload_source(lake, spark, sources, "SIZE_LARGE", scale, scale.large_rows))
                return clone_size_figure(lake, spark, scratch, small_source, large_source, scale)

            attempt("clone_size", size_pair)
        if "clone_many" in figures_wanted:

            def many_files() -> dict[str, Any]:
                many = built(lambda: many_file_source(lake, spark, sources, "MANY", scale.many_files, scale.rows_per_tiny_file))
                return clone_many_figure(lake, spark, scratch, many, scale)

            attempt("clone_many", many_files)
        attempt("vacuum", lambda: vacuum_figure(lake, spark, scale))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report["elapsed_s"] = time.perf_counter() - started
    report["summary"] = [
        dict(zip(["figure", "value", "vs_baseline", "target", "result"], row, strict=True)) for row in summary_rows(report)
    ]
    return report


def main(
    spark: SparkSession | None = None,
    warehouse: str | os.PathLike[str] | None = None,
    small: bool = False,
    output: str | os.PathLike[str] | None = DEFAULT_OUTPUT,
    sources: str | os.PathLike[str] | None = None,
    figures: tuple[str, ...] = FIGURES,
    repeat: int | None = None,
    warmup: int | None = None,
) -> dict[str, Any]:
    """Run the benchmark, print the report, write the JSON (unless ``output`` is None), return the report.

    Args:
        spark: a SparkSession to use (default: lakeclone's embedded one).
        warehouse: a warehouse folder to use (default: a temporary folder, removed afterwards).
        small: a tiny run instead of the full one (~2 GB of sources).
        output: where the JSON report goes.
        sources: a folder for the source tables, kept afterwards so that a later run reuses
            them (default: a temporary folder, removed afterwards). It must lie outside the warehouse.
        figures: which figures to run.
        repeat: timed rounds of the clones and of the VACUUM plan, instead of the scale's.
        warmup: untimed warm-up rounds of the same, instead of the scale's.
    """
    if spark is None:
        from lakeclone.session import embedded_spark

        log("starting Spark ...")
        spark = embedded_spark()
    with contextlib.ExitStack() as stack:
        root = tempfile.mkdtemp(prefix="lakeclone-bench-clones-")
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        report = run(
            spark=spark,
            warehouse=warehouse if warehouse is not None else os.path.join(root, "warehouse"),
            sources=sources if sources is not None else os.path.join(root, "sources"),
            scale=rescaled(SMALL if small else FULL, repeat=repeat, warmup=warmup),
            figures_wanted=figures,
        )
    if output:
        report["output"] = str(output)
        write_json(output, report)
    print_report(report)
    return report


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="a tiny run instead of the full one")
    parser.add_argument("--warehouse", help="warehouse folder to use (default: a temporary one, removed after)")
    parser.add_argument(
        "--sources", help="folder for the source tables, kept and reused by later runs (default: a temporary one)"
    )
    parser.add_argument(
        "--figures", default=",".join(FIGURES), help=f"comma-separated figures to run (default: all of {', '.join(FIGURES)})"
    )
    parser.add_argument("--repeat", type=int, help="timed rounds of the clones and of the VACUUM plan (default: 7 and 5)")
    parser.add_argument("--warmup", type=int, help="untimed warm-up rounds of the same (default: 1)")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="where the JSON report goes")
    args = parser.parse_args(argv)
    args.figures = tuple(f.strip() for f in args.figures.split(",") if f.strip())
    if set(args.figures) - set(FIGURES):
        parser.error(f"unknown figures: {', '.join(sorted(set(args.figures) - set(FIGURES)))}")
    return args


if __name__ == "__main__":
    arguments = parse_args(None)
    try:
        main(
            warehouse=arguments.warehouse,
            small=arguments.small,
            output=arguments.output,
            sources=arguments.sources,
            figures=arguments.figures,
            repeat=arguments.repeat,
            warmup=arguments.warmup,
        )
    except Exception:  # a report, not a test
        traceback.print_exc()
    sys.exit(0)
