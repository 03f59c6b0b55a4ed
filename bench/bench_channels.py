"""Channels benchmark: rows through a channel against delta-spark's own append, latency, commits, compaction.

Run from the repository root::

    .venv/bin/python bench/bench_channels.py [--rows 200000] [--batch-rows 20000] [--repeat 3]

Four figures, in one run (see bench/README.md, "bench_channels.py"):

* ``throughput``: rows per second through one channel (rows of 10 mixed
  columns) as channels are used: an application appends 10,000-row batches as
  fast as it can, without calling ``flush``, and the client's background
  flusher commits at the default lag; a run ends when its last token is
  committed. Then the target rate offered on a schedule for a while, and how
  long after the last append its token lands (a channel that falls behind
  shows here). And each batch appended and flushed (one Delta commit per
  batch) against the same batches written with delta-spark's own
  ``spark.createDataFrame(batch, schema).write.format("delta").mode("append")``,
  interleaved; the ratio of medians (channel / delta-spark).
* ``latency``: append-to-visible latency at the default ``max_client_lag``
  (1 s, by a real clock): rows appended every few milliseconds, each timed
  from its ``append_rows`` until its token is committed; p50 and p99.
* ``commits``: Delta commits per lag period on one table with 1, 4 and 16
  channels of one client appending all the time.
* ``compaction``: the table's file count after an ingest of 10 minutes by the
  Lake's (manual) clock, one flush per lag, with compaction held off, and
  after the client's background compaction has run; rows and stream changes
  are checked to be exact.

The script exits 0 whatever the figures are: it is a report, not a test.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import decimal
import io
import os
import pstats
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # run as a script, or imported by a test
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import environment, format_table, interleave, print_closing, ratio, seconds, write_json
from bench_foundation import _folder, log

from lakeclone.delta.log import Delta

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    import lakeclone

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = BENCH_DIR / "results" / "channels.json"

FIGURES = ("throughput", "latency", "commits", "compaction")

COLUMNS = (
    "ID BIGINT, DEVICE STRING, KIND STRING, AMOUNT DOUBLE, QTY INT, PRICE NUMBER(10, 2), "
    "OK BOOLEAN, AT TIMESTAMP_NTZ, DAY DATE, NOTE STRING"
)
ROWS_PER_SECOND_TARGET = 100_000
RATIO_TARGET = 1.2  # channel time / delta-spark append time, at most
LAG_SECONDS = 1.0  # the default max_client_lag
LATENCY_SLACK = 0.5  # p50 at most lag + this
CHANNEL_COUNTS = (1, 4, 16)

_KINDS = ("click", "view", "cart", "buy")
_START = dt.datetime(2024, 1, 5, 10, 0, 0)


def make_rows(first: int, count: int) -> list[dict[str, Any]]:
    """``count`` source rows from ID ``first``: the Python values an application pushes (10 columns)."""
    rows = []
    for i in range(first, first + count):
        rows.append(
            {
                "ID": i,
                "DEVICE": f"device-{i % 997}",
                "KIND": _KINDS[i % 4],
                "AMOUNT": (i % 9973) / 8,
                "QTY": i % 50,
                "PRICE": decimal.Decimal(i % 100_000).scaleb(-2),
                "OK": i % 3 != 0,
                "AT": _START + dt.timedelta(seconds=i),
                "DAY": (_START + dt.timedelta(seconds=i)).date(),
                "NOTE": None if i % 5 == 0 else f"note {i}",
            }
        )
    return rows


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# Figures ----------------------------------------------------------------------------------------


def throughput(lake: lakeclone.Lake, spark: SparkSession, base: str, args: argparse.Namespace) -> dict[str, Any]:
    """One channel, one flush per batch, against delta-spark's DataFrame append of the same batches."""
    from delta.tables import DeltaTable

    from lakeclone.delta.statements import TABLE_PROPERTIES

    lake.sql(f"CREATE TABLE events ({COLUMNS})")
    location = lake._executor.resolve("events").location  # the benchmark reads lakeclone's internals
    schema = lake._executor.delta.table(location).schema()
    baseline = os.path.join(base, "baseline_events")
    builder = DeltaTable.create(spark).location(baseline).addColumns(schema)
    for key, value in TABLE_PROPERTIES.items():
        builder = builder.property(key, value)
    builder.execute()

    batches = [make_rows(b * args.batch_rows, args.batch_rows) for b in range(args.rows // args.batch_rows)]
    total = len(batches) * args.batch_rows
    client = lake.streaming_client("bench")
    channel, _ = client.open_channel("throughput", table="events", max_client_lag="10 minutes")
    rounds = {"n": 0}

    def through_channel() -> None:
        rounds["n"] += 1
        for index, batch in enumerate(batches):
            channel.append_rows(batch, offset_token=f"{rounds['n']}:{index}")
            channel.flush()

    def through_delta_spark() -> None:
        for batch in batches:
            spark.createDataFrame(batch, schema).write.format("delta").mode("append").save(baseline)

    timings = interleave(
        {"channel": (through_channel, None, None), "delta": (through_delta_spark, None, None)},
        repeat=args.repeat,
        warmup=args.warmup,
    )
    streamed = streamed_throughput(client, args)
    profile_text = None
    rows_per_second = total / timings["channel"].median
    if args.profile or streamed["rows_per_second_median"] < ROWS_PER_SECOND_TARGET:
        profiler = cProfile.Profile()
        profiler.enable()
        through_channel()
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        profile_text = out.getvalue()
    client.close()
    runs = rounds["n"]
    lake_rows = lake.sql("SELECT COUNT(*), COUNT(DISTINCT ID) FROM events").first()
    delta_rows = spark.read.format("delta").load(baseline).count()
    return {
        "rows_per_run": total,
        "batches": len(batches),
        "batch_rows": args.batch_rows,
        "rows_per_second_median": rows_per_second,
        "rows_per_second_best": total / timings["channel"].best,
        "delta_rows_per_second_median": total / timings["delta"].median,
        "streamed": streamed,
        "ratio_median": ratio(timings["channel"], timings["delta"]),
        "ratio_best": ratio(timings["channel"], timings["delta"], "best"),
        "timings": {k: t.to_dict() for k, t in timings.items()},
        "correct": (
            lake_rows[0] == runs * total + streamed["rows"]
            and lake_rows[1] == max(total, streamed["rows_per_run"])
            and delta_rows == (args.repeat + args.warmup) * total
        ),
        "profile": profile_text,
    }


def streamed_throughput(client: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Rows per second as channels are used: batches appended as fast as the application can, no flush call.

    The client's background flusher commits at the default lag (1 s) whatever
    has gathered; a run's time ends when its last token is committed.
    """
    channel, _ = client.open_channel("streamed", table="events")  # max_client_lag: the default, 1 second
    size = args.stream_batch_rows
    batches = [make_rows(b * size, size) for b in range(args.stream_rows // size)]
    rows = len(batches) * size
    samples, commits = [], []
    for run in range(args.repeat):
        before = channel.get_channel_status().rows_inserted_count
        table_log = Delta(client.lake.spark).table(channel.table.location)
        versions = table_log.version()
        started = time.perf_counter()
        for index, batch in enumerate(batches):
            channel.append_rows(batch, offset_token=f"{run}:{index}")
        if not channel.wait_for_commit(f"{run}:{len(batches) - 1}", timeout_seconds=600):
            raise RuntimeError("the streamed rows were not committed within 10 minutes")
        samples.append(time.perf_counter() - started)
        commits.append(table_log.version() - versions)
        if channel.get_channel_status().rows_inserted_count - before != rows:
            raise RuntimeError(f"streamed run {run} did not commit each of its {rows} rows once")
    sustained = _sustained(channel, batches, args)
    channel.close()
    return {
        "sustained": sustained,
        "rows_per_run": rows,
        "batch_rows": size,
        "samples_s": samples,
        "commits_per_run": commits,
        "rows_per_second_median": rows / statistics.median(samples),
        "rows_per_second_best": rows / min(samples),
        "rows": rows * args.repeat + sustained["rows"],
    }


def _sustained(channel: Any, batches: list[list[dict[str, Any]]], args: argparse.Namespace) -> dict[str, Any]:
    """The target rate held for a while: batches appended on a schedule of ROWS_PER_SECOND_TARGET rows/s.

    Whether the channel keeps up shows in how long after the last append its
    token is committed (a channel falling behind would take ever longer).
    """
    per_batch = len(batches[0])
    count = int(ROWS_PER_SECOND_TARGET * args.sustain_seconds) // per_batch
    started = time.perf_counter()
    for index in range(count):
        due = started + index * per_batch / ROWS_PER_SECOND_TARGET
        time.sleep(max(0.0, due - time.perf_counter()))
        channel.append_rows(batches[index % len(batches)], offset_token=f"sustained:{index}")
    appended = time.perf_counter()
    if not channel.wait_for_commit(f"sustained:{count - 1}", timeout_seconds=600):
        raise RuntimeError("the sustained rows were not committed within 10 minutes")
    committed = time.perf_counter()
    return {
        "rows_per_second_offered": ROWS_PER_SECOND_TARGET,
        "seconds": args.sustain_seconds,
        "rows": count * per_batch,
        "appending_s": appended - started,
        "last_commit_after_last_append_s": committed - appended,
        "rows_per_second": count * per_batch / (committed - started),
    }


def latency(lake: lakeclone.Lake, args: argparse.Namespace) -> dict[str, Any]:
    """Rows appended all the time at the default lag; each row's time from append to its commit."""
    lake.sql(f"CREATE TABLE latency ({COLUMNS})")
    appended: dict[int, float] = {}
    visible: dict[int, float] = {}
    with lake.streaming_client("latency") as client:
        channel, _ = client.open_channel("latency", table="latency")  # max_client_lag: the default, 1 second
        stop = threading.Event()

        def watch() -> None:
            seen, give_up = -1, time.monotonic() + args.latency_seconds + 300
            while not (stop.is_set() and seen >= max(appended, default=-1)) and time.monotonic() < give_up:
                token = channel.get_channel_status().latest_committed_offset_token
                now = time.perf_counter()
                latest = -1 if token is None else int(token)
                for i in range(seen + 1, latest + 1):
                    visible[i] = now
                seen = max(seen, latest)
                time.sleep(0.005)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        deadline = time.perf_counter() + args.latency_seconds
        i = 0
        while time.perf_counter() < deadline:
            row = make_rows(i, 1)
            appended[i] = time.perf_counter()
            channel.append_rows(row, offset_token=str(i))
            i += 1
            time.sleep(args.latency_interval)
        stop.set()
        watcher.join(timeout=120)
    delays = [visible[i] - appended[i] for i in appended if i in visible]
    p50, p99 = _percentile(delays, 0.5), _percentile(delays, 0.99)
    count = lake.sql("SELECT COUNT(*) FROM latency").first()[0]
    return {
        "lag_s": LAG_SECONDS,
        "samples": len(delays),
        "p50_s": p50,
        "p99_s": p99,
        "mean_s": statistics.fmean(delays),
        "max_s": max(delays),
        "correct": count == len(appended) == len(delays),
    }


def commits(lake: lakeclone.Lake, args: argparse.Namespace) -> dict[str, Any]:
    """Commits per lag period on one table, with 1, 4 and 16 channels (`--channel-counts`) of one client appending all along."""
    found: dict[str, Any] = {}
    for count in args.channel_counts:
        table = f"commits_{count}"
        lake.sql(f"CREATE TABLE {table} ({COLUMNS})")
        with lake.streaming_client(f"commits{count}") as client:
            channels = [client.open_channel(f"c{k}", table=table)[0] for k in range(count)]
            before = int(lake.sql(f"DESCRIBE HISTORY {table} LIMIT 1").first()["version"])
            started = time.perf_counter()
            sent = 0
            while time.perf_counter() - started < args.period_seconds:
                for channel in channels:
                    channel.append_rows(make_rows(sent, 10), offset_token=str(sent))
                    sent += 10
                time.sleep(0.01)
        # After the client's close, which flushes what its channels still buffered: the window ends there.
        window = time.perf_counter() - started
        after = int(lake.sql(f"DESCRIBE HISTORY {table} LIMIT 1").first()["version"])
        total = lake.sql(f"SELECT COUNT(*) FROM {table}").first()[0]
        found[str(count)] = {
            "channels": count,
            "window_s": window,
            "commits": after - before,
            "commits_per_lag": (after - before) / (window / LAG_SECONDS),
            "rows": sent,
            "correct": total == sent,
        }
    return {"by_channels": found, "correct": all(f["correct"] for f in found.values())}


def compaction(spark: SparkSession, warehouse: str, args: argparse.Namespace) -> dict[str, Any]:
    """A 10-minute ingest by a manual clock (one flush per lag), then the client's background compaction."""
    import lakeclone
    from lakeclone.channels import compaction as policy

    clock = lakeclone.ManualClock(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
    lake = lakeclone.connect(os.path.join(warehouse, "compaction"), spark=spark, clock=clock)
    lake.sql(f"CREATE TABLE ingest ({COLUMNS})")
    lake.sql("CREATE STREAM ingest_changes ON TABLE ingest")
    location = lake._executor.resolve("ingest").location
    off = f"ALTER TABLE delta.`{location}` SET TBLPROPERTIES ('{policy.AUTO_COMPACT_PROPERTY}' = 'false')"
    spark.sql(off)  # held off while the small files gather, with Delta's own table property
    if args.min_files is not None:
        lake.spark.conf.set(policy.MIN_NUM_FILES_CONF, str(args.min_files))
    lag = dt.timedelta(seconds=args.ingest_lag)
    flushes = int(dt.timedelta(minutes=args.ingest_minutes) / lag)
    with lake.streaming_client("compaction") as client:
        channel, _ = client.open_channel("source", table="ingest", max_client_lag=lag)
        sent = 0
        for flush in range(flushes):
            channel.append_rows(make_rows(sent, args.ingest_batch), offset_token=str(flush))
            sent += args.ingest_batch
            clock.advance(seconds=lag.total_seconds())  # the background flush is due
            if not channel.wait_for_commit(str(flush), timeout_seconds=300):
                raise RuntimeError(f"flush {flush} did not land")
        files_before = int(lake.sql("DESCRIBE DETAIL ingest").first()["numFiles"])
        spark.sql(off.replace("'false'", "'true'"))
        started = time.perf_counter()
        channel.append_rows(make_rows(sent, 1), offset_token="last")  # the next flush makes the flusher look
        sent += 1
        clock.advance(seconds=lag.total_seconds())
        channel.wait_for_commit("last", timeout_seconds=300)
        deadline = time.monotonic() + 300
        while client.compactions == 0 and client.last_compaction_error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        compaction_s = time.perf_counter() - started
        compactions, error = client.compactions, client.last_compaction_error
        token = channel.get_latest_committed_offset_token()
    if args.min_files is not None:
        lake.spark.conf.unset(policy.MIN_NUM_FILES_CONF)
    files_after = int(lake.sql("DESCRIBE DETAIL ingest").first()["numFiles"])
    rows = lake.sql("SELECT COUNT(*), COUNT(DISTINCT ID) FROM ingest").first()
    inserts = lake.sql('SELECT "METADATA$ACTION" AS a, COUNT(*) AS n FROM ingest_changes GROUP BY 1').collect()
    changes = {r[0]: r[1] for r in inserts}
    return {
        "ingest_minutes_by_lake_clock": args.ingest_minutes,
        "lag_s": lag.total_seconds(),
        "flushes": flushes + 1,
        "rows": sent,
        "files_before": files_before,
        "files_after": files_after,
        "compactions": compactions,
        "compaction_error": error,
        "compaction_s": compaction_s,
        "stream_changes": changes,
        "correct": (compactions >= 1 and rows[0] == rows[1] == sent and changes == {"INSERT": sent} and token == "last"),
    }


# Report -----------------------------------------------------------------------------------------


def run(spark: SparkSession, warehouse: str, args: argparse.Namespace) -> dict[str, Any]:
    import lakeclone

    started = time.perf_counter()
    lake = lakeclone.connect(os.path.join(warehouse, "lake"), spark=spark)
    base = os.path.join(os.path.dirname(warehouse), "baselines")
    steps: dict[str, Callable[[], dict[str, Any]]] = {
        "throughput": lambda: throughput(lake, spark, base, args),
        "latency": lambda: latency(lake, args),
        "commits": lambda: commits(lake, args),
        "compaction": lambda: compaction(spark, warehouse, args),
    }
    figures: dict[str, Any] = {}
    for name in args.figures:
        log(f"{name} ...")
        try:
            figures[name] = steps[name]()
        except Exception as error:  # a report, not a test: the other figures still run
            figures[name] = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
    report = {
        "environment": environment(spark),
        "arguments": vars(args),
        "figures": figures,
        "elapsed_s": time.perf_counter() - started,
    }
    report["summary"] = summary(figures)
    return report


def summary(figures: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = []

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    if "throughput" in figures and "error" not in figures["throughput"]:
        f = figures["throughput"]
        streamed = f["streamed"]
        rows.append(
            [
                "rows/s through one channel, background flushes",
                f"{streamed['rows_per_second_median']:,.0f}",
                f"{streamed['batch_rows']:,}-row appends, lag {LAG_SECONDS:g} s",
                f">= {ROWS_PER_SECOND_TARGET:,}",
                verdict(streamed["rows_per_second_median"] >= ROWS_PER_SECOND_TARGET and f["correct"]),
            ]
        )
        held = streamed["sustained"]
        rows.append(
            [
                f"{ROWS_PER_SECOND_TARGET:,} rows/s offered for {held['seconds']:g} s",
                f"last commit {seconds(held['last_commit_after_last_append_s'])} after the last append",
                f"{held['rows_per_second']:,.0f} rows/s end to end",
                "reported",
                "INFO" if f["correct"] else "FAIL",
            ]
        )
        rows.append(
            [
                f"rows/s, one flush per {f['batch_rows']:,}-row append",
                f"{f['rows_per_second_median']:,.0f}",
                f"delta-spark append {f['delta_rows_per_second_median']:,.0f} rows/s",
                "reported",
                "INFO" if f["correct"] else "FAIL",
            ]
        )
        rows.append(
            [
                "channel / delta-spark append time",
                f"{f['ratio_median']:.2f}",
                seconds(f["timings"]["delta"]["median_s"]),
                f"<= {RATIO_TARGET}",
                verdict(f["ratio_median"] <= RATIO_TARGET and f["correct"]),
            ]
        )
    if "latency" in figures and "error" not in figures["latency"]:
        f = figures["latency"]
        rows.append(
            [
                "append-to-visible p50 (p99)",
                f"{seconds(f['p50_s'])} ({seconds(f['p99_s'])})",
                f"lag {f['lag_s']:g} s, {f['samples']} rows",
                f"p50 <= {LAG_SECONDS + LATENCY_SLACK:g} s",
                verdict(f["p50_s"] <= LAG_SECONDS + LATENCY_SLACK and f["correct"]),
            ]
        )
    if "commits" in figures and "error" not in figures["commits"]:
        f = figures["commits"]["by_channels"]
        value = ", ".join(f"{k} ch: {v['commits_per_lag']:.2f}" for k, v in f.items())
        rows.append(["commits per lag period", value, "-", "report", "INFO" if figures["commits"]["correct"] else "FAIL"])
    if "compaction" in figures and "error" not in figures["compaction"]:
        f = figures["compaction"]
        rows.append(
            [
                "files before -> after compaction",
                f"{f['files_before']} -> {f['files_after']}",
                f"{f['flushes']} flushes, {f['rows']:,} rows",
                "fewer files, rows exact",
                verdict(f["files_after"] < f["files_before"] and f["correct"]),
            ]
        )
    for name, f in figures.items():
        if "error" in f:
            rows.append([name, "ERROR", "-", "-", "FAIL"])
    return rows


def print_report(report: dict[str, Any]) -> None:
    figures = report["figures"]
    print("Channels benchmark")
    print(f"environment: {report['environment']}")
    if "throughput" in figures and figures["throughput"].get("profile"):
        print("\nthroughput profile (one channel run):\n" + figures["throughput"]["profile"])
    if "commits" in figures and "error" not in figures["commits"]:
        table = [
            [v["channels"], v["commits"], f"{v['window_s']:.1f}", f"{v['commits_per_lag']:.2f}", v["correct"]]
            for v in figures["commits"]["by_channels"].values()
        ]
        print()
        print(format_table(["channels", "commits", "window s", "commits per lag", "rows exact"], table))
    print_closing(report, report["summary"], baseline_header="beside it")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000, help="rows per throughput run")
    parser.add_argument("--batch-rows", type=int, default=100_000, help="rows per append (and flush)")
    parser.add_argument("--repeat", type=int, default=3, help="timed throughput runs of each side")
    parser.add_argument("--stream-rows", type=int, default=1_000_000, help="rows per streamed throughput run")
    parser.add_argument("--stream-batch-rows", type=int, default=10_000, help="rows per append of a streamed run")
    parser.add_argument("--sustain-seconds", type=float, default=20.0, help="how long the target rate is offered")
    parser.add_argument("--warmup", type=int, default=1, help="untimed throughput runs of each side")
    parser.add_argument("--latency-seconds", type=float, default=10.0, help="how long rows are appended for latency")
    parser.add_argument("--latency-interval", type=float, default=0.02, help="seconds between appended rows")
    parser.add_argument("--period-seconds", type=float, default=6.0, help="how long channels append, per channel count")
    parser.add_argument(
        "--channel-counts",
        type=lambda s: [int(n) for n in s.split(",") if n],
        default=list(CHANNEL_COUNTS),
        help="channels of the commits figure, one run each (default 1,4,16)",
    )
    parser.add_argument("--ingest-minutes", type=float, default=10.0, help="the compaction ingest, by the Lake's clock")
    parser.add_argument("--ingest-lag", type=float, default=5.0, help="max_client_lag of the compaction ingest, seconds")
    parser.add_argument("--ingest-batch", type=int, default=100, help="rows per flush of the compaction ingest")
    parser.add_argument(
        "--min-files", type=int, default=None, help="small files that make a compaction due (default: Delta's, 50)"
    )
    parser.add_argument("--figures", type=lambda s: [f for f in s.split(",") if f], default=list(FIGURES))
    parser.add_argument("--profile", action="store_true", help="cProfile a channel run even when within target")
    parser.add_argument("--warehouse", default=None)
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT))
    args = parser.parse_args(argv)
    unknown = set(args.figures) - set(FIGURES)
    if unknown:
        parser.error(f"unknown figures: {', '.join(sorted(unknown))}")
    return args


def main(
    argv: list[str] | None = None,
    *,
    spark: SparkSession | None = None,
    warehouse: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Run the benchmark, print the report, write the JSON, and return the report (what the JSON holds)."""
    args = parse_args(argv)
    if spark is None:
        from lakeclone.session import embedded_spark

        log("starting Spark ...")
        spark = embedded_spark()
    with _folder(warehouse or args.warehouse) as folder:
        report = run(spark, folder, args)
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
