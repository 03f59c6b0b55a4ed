"""Remote benchmark: the same statements on a warehouse on S3 and on the local disk, and the S3 requests each makes.

Run from the repository root::

    .venv/bin/python bench/bench_remote.py [--rows 1000000] [--files 1000] [--repeat 3]

The S3 server is the one in ``AWS_ENDPOINT_URL`` if set, else one that
``bin/s3-server`` starts for the run (moto's, in memory, on loopback: its
latency is a loopback HTTP server's, not a region's). One SparkSession, set up
for object storage, serves both warehouses; each figure times a statement on
the S3 warehouse and the same statement on the local one, interleaved, and
reports the ratio of their medians. Requests are counted by Hadoop's S3A
statistics around the statement's last run on S3. Catalog on PostgreSQL
against SQLite is not measured: the catalog runs on SQLite only so far. The
script exits 0 whatever the figures are: it is a report, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # run as a script, or imported by a test
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import environment, interleave, print_closing, ratio, write_json

import lakeclone
from lakeclone.session import embedded_spark

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DEFAULT_OUTPUT = BENCH_DIR / "results" / "remote.json"
BUCKET = "bench-remote"

# S3A's counters of requests to the store, by what the report calls them.
REQUESTS = {
    "LIST": "object_list_request",
    "HEAD": "object_metadata_request",
    "GET": "action_http_get_request",
    "PUT": "object_put_request",
    "DELETE": "object_delete_request",
    "COPY": "object_copy_requests",
}
PUT_BYTES = "object_put_bytes"
# Hadoop's calls that list a folder (each one LIST request per 1,000 keys).
LISTINGS = ("op_list_files", "op_list_status", "op_glob_status")


@contextlib.contextmanager
def s3_server() -> Iterator[None]:
    """``AWS_ENDPOINT_URL``'s server if set, else one bin/s3-server starts for the run, with the bucket."""
    if os.environ.get("AWS_ENDPOINT_URL"):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="bench-s3-") as state, socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        server = [str(REPO_DIR / "bin" / "s3-server")]
        subprocess.run(
            [*server, "start", "--dir", state, "--port", str(port), "--bucket", BUCKET], capture_output=True, check=True
        )
        # What `start` prints for a shell to export: the server, and a key to sign with (any will do).
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "lakeclone")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "lakeclone")
        try:
            yield
        finally:
            subprocess.run([*server, "stop", "--dir", state], capture_output=True, check=True)


class RequestCounter:
    """S3A's request counters for the bucket, read before and after a block."""

    def __init__(self, spark: Any, bucket: str) -> None:
        path = spark._jvm.org.apache.hadoop.fs.Path(f"s3a://{bucket}/")
        self._statistics = path.getFileSystem(spark._jsc.hadoopConfiguration()).getStorageStatistics()

    def snapshot(self) -> dict[str, int]:
        names = [*REQUESTS.values(), PUT_BYTES, *LISTINGS]
        return {name: int(self._statistics.getLong(name) or 0) for name in names}

    @contextlib.contextmanager
    def counting(self, into: dict[str, int]) -> Iterator[None]:
        before = self.snapshot()
        yield
        after = self.snapshot()
        into.clear()
        into.update({label: after[name] - before[name] for label, name in REQUESTS.items()})
        into["PUT bytes"] = after[PUT_BYTES] - before[PUT_BYTES]
        into["listings"] = sum(after[name] - before[name] for name in LISTINGS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the INSERT, UPDATE and stream table")
    parser.add_argument("--files", type=int, default=1000, help="files of the clone and VACUUM table")
    parser.add_argument("--clones", type=int, default=5, help="clones of it when VACUUM plans")
    parser.add_argument("--channel-rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each statement on each warehouse first")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT))
    args = parser.parse_args()
    began = time.perf_counter()
    with s3_server(), tempfile.TemporaryDirectory(prefix="bench-remote-") as scratch:
        spark = embedded_spark(object_storage=True)
        spark.sparkContext.setLogLevel("ERROR")
        run = uuid.uuid4().hex[:8]
        lakes = {
            "s3": lakeclone.connect(f"s3a://{BUCKET}/{run}", catalog=Path(scratch) / "s3-catalog", spark=spark, progress=False),
            "local": lakeclone.connect(Path(scratch) / "local", spark=spark, progress=False),
        }
        counter = RequestCounter(spark, BUCKET)
        report: dict[str, Any] = {"environment": environment(spark), "arguments": vars(args), "figures": {}}
        report["environment"]["s3_endpoint"] = os.environ.get("AWS_ENDPOINT_URL")
        summary = []
        for key, figure in FIGURES.items():
            print(f"{key}…", flush=True)
            try:
                result = figure(lakes, counter, args)
            except Exception:
                result = {"error": True, "traceback": traceback.format_exc()}
            report["figures"][key] = result
            if "error" not in result:
                summary.append(
                    [key, f"{result['ratio']:.2f}x", result["local"], result.get("target", "-"), result.get("check", "-")]
                )
        report["elapsed_s"] = round(time.perf_counter() - began, 1)
        report["output"] = args.output
        write_json(args.output, report)
    print_closing(report, summary, baseline_header="local disk (median)")
    for key, result in report["figures"].items():
        if "requests" in result:
            print(f"{key}: S3 requests {result['requests']}")
    return 0


def _figure(
    lakes: dict[str, lakeclone.Lake],
    counter: RequestCounter,
    args: argparse.Namespace,
    statement: Callable[[lakeclone.Lake], Any],
    *,
    prepare: Callable[[lakeclone.Lake, int], Any] | None = None,
) -> dict[str, Any]:
    """Time ``statement`` on each warehouse in alternation; count the S3 requests of its last run on S3."""
    requests: dict[str, int] = {}

    def on(name: str) -> tuple[Callable[..., Any], Callable[[int], Any] | None, None]:
        lake = lakes[name]

        def run(_: Any = None) -> Any:
            if name != "s3":
                return statement(lake)
            with counter.counting(requests):
                return statement(lake)

        return run, (lambda round_: prepare(lake, round_)) if prepare else None, None

    timings = interleave({name: on(name) for name in lakes}, repeat=args.repeat, warmup=args.warmup)
    return {
        "ratio": round(ratio(timings["s3"], timings["local"]), 3),
        "local": f"{timings['local'].median:.2f} s",
        "s3_median_s": round(timings["s3"].median, 3),
        "timings": {name: timing.to_dict() for name, timing in timings.items()},
        "requests": dict(requests),
    }


def insert(lakes: dict[str, lakeclone.Lake], counter: RequestCounter, args: argparse.Namespace) -> dict[str, Any]:
    for lake in lakes.values():
        lake.sql("CREATE TABLE facts (id BIGINT, grp BIGINT, amount DOUBLE) CHANGE_TRACKING = TRUE")
    return _figure(
        lakes, counter, args, lambda lake: lake.sql(f"INSERT INTO facts SELECT id, id % 1000, id * 0.5 FROM range({args.rows})")
    )


def update(lakes: dict[str, lakeclone.Lake], counter: RequestCounter, args: argparse.Namespace) -> dict[str, Any]:
    return _figure(lakes, counter, args, lambda lake: lake.sql("UPDATE facts SET amount = amount + 1 WHERE id % 100 = 7"))


def stream_read(lakes: dict[str, lakeclone.Lake], counter: RequestCounter, args: argparse.Namespace) -> dict[str, Any]:
    for lake in lakes.values():
        lake.sql("CREATE STREAM facts_changes ON TABLE facts")

    def change(lake: lakeclone.Lake, round_: int) -> None:
        lake.sql(f"UPDATE facts SET amount = amount + 1 WHERE id % 100 = {round_ % 100}")

    return _figure(lakes, counter, args, lambda lake: lake.sql("SELECT COUNT(*) FROM facts_changes").collect(), prepare=change)


def _wide_source(lake: lakeclone.Lake, files: int) -> None:
    """A table of ``files`` files written by delta-spark itself beside the warehouse, adopted as an external table."""
    location = f"{lake.location}-sources/wide"
    lake.spark.range(files * 100).repartition(files).selectExpr("id", "uuid() AS tag").write.format("delta").save(location)
    lake.sql(f"CREATE EXTERNAL TABLE wide LOCATION = '{location}'")


def clone(lakes: dict[str, lakeclone.Lake], counter: RequestCounter, args: argparse.Namespace) -> dict[str, Any]:
    for lake in lakes.values():
        _wide_source(lake, args.files)
    result = _figure(lakes, counter, args, lambda lake: lake.sql("CREATE OR REPLACE TABLE wide_clone CLONE wide"))
    # Zero-copy: a clone writes its log, never the source's data (1,000 files of a few KB each).
    result["check"] = (
        "no data copied" if result["requests"]["COPY"] == 0 and result["requests"]["PUT bytes"] < 1_000_000 else "COPIED DATA"
    )
    return result


def vacuum_plan(lakes: dict[str, lakeclone.Lake], counter: RequestCounter, args: argparse.Namespace) -> dict[str, Any]:
    for lake in lakes.values():
        for number in range(args.clones):
            lake.sql(f"CREATE TABLE wide_{number} CLONE wide")
        lake.sql("UPDATE wide SET tag = 'changed' WHERE id % 100 = 0")  # every file rewritten: the old ones only clones need
    result = _figure(lakes, counter, args, lambda lake: lake.vacuum_plan("wide"))
    # The source's folder is listed for its files; a clone's files are read from its log, never by listing its folder.
    listings = result["requests"]["listings"]
    result["check"] = f"{listings} listings ({result['requests']['LIST']} LIST requests) for {1 + args.clones} tables"
    return result


def channel(lakes: dict[str, lakeclone.Lake], counter: RequestCounter, args: argparse.Namespace) -> dict[str, Any]:
    batch = 1000
    for lake in lakes.values():
        lake.sql("CREATE TABLE events (id BIGINT, payload STRING)")
    counters = {name: 0 for name in lakes}

    def send(lake: lakeclone.Lake) -> None:
        name = "s3" if lake is lakes["s3"] else "local"
        with lake.streaming_client("bench") as client:
            handle, _ = client.open_channel("events_channel", table="events", max_client_lag="1 second")
            for _ in range(args.channel_rows // batch):
                first = counters[name]
                handle.append_rows(
                    [{"id": first + i, "payload": "x" * 40} for i in range(batch)], offset_token=str(first + batch)
                )
                counters[name] += batch
            handle.flush()

    result = _figure(lakes, counter, args, send)
    for name in lakes:
        seconds = result["timings"][name]["median_s"]
        result[f"{name}_rows_per_s"] = round(args.channel_rows / seconds)
    result["check"] = f"{result['s3_rows_per_s']} rows/s on S3"
    return result


FIGURES: dict[str, Callable[[dict[str, lakeclone.Lake], RequestCounter, argparse.Namespace], dict[str, Any]]] = {
    "insert": insert,
    "update": update,
    "stream_read": stream_read,
    "clone": clone,
    "vacuum_plan": vacuum_plan,
    "channel": channel,
}

if __name__ == "__main__":
    sys.exit(main())
