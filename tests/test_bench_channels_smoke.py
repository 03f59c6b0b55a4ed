"""Keeps bench/bench_channels.py runnable: a tiny run on the shared SparkSession."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def bench_channels():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_channels

        yield bench_channels
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.spark
def test_channels_benchmark_runs(bench_channels, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "channels.json"
    argv = [
        "--rows", "600", "--batch-rows", "200", "--repeat", "1", "--warmup", "0",
        "--stream-rows", "400", "--stream-batch-rows", "100", "--sustain-seconds", "0.01",
        "--latency-seconds", "2.5", "--latency-interval", "0.05", "--period-seconds", "1.5", "--channel-counts", "1,4",
        "--ingest-minutes", "1", "--ingest-lag", "10", "--ingest-batch", "20", "--min-files", "3",
        "--output", str(output),
    ]  # fmt: skip
    report = bench_channels.main(argv, spark=spark, warehouse=tmp_path / "warehouse")

    figures = report["figures"]
    assert set(figures) == set(bench_channels.FIGURES)
    errors = {k: f["error"] + "\n" + f["traceback"] for k, f in figures.items() if "error" in f}
    assert not errors, errors

    throughput = figures["throughput"]
    assert (throughput["rows_per_run"], throughput["batches"]) == (600, 3)
    assert throughput["rows_per_second_median"] > 0 and throughput["ratio_median"] > 0
    assert throughput["correct"]
    streamed = throughput["streamed"]
    assert (streamed["rows_per_run"], streamed["rows"]) == (400, 400 + 1000)  # one run, then 10 sustained batches
    assert streamed["rows_per_second_median"] > 0 and len(streamed["commits_per_run"]) == 1
    assert streamed["sustained"]["last_commit_after_last_append_s"] >= 0

    latency = figures["latency"]
    assert latency["samples"] >= 10 and latency["correct"]
    assert 0 < latency["p50_s"] <= latency["p99_s"]

    commits = figures["commits"]["by_channels"]
    assert list(commits) == ["1", "4"]
    assert all(c["commits"] >= 1 and c["correct"] for c in commits.values())

    compaction = figures["compaction"]
    assert (compaction["flushes"], compaction["rows"]) == (7, 121)
    assert compaction["files_before"] >= 6 and compaction["files_after"] < compaction["files_before"]
    assert compaction["stream_changes"] == {"INSERT": 121}
    assert compaction["correct"], compaction

    assert len(report["summary"]) == 7  # streamed, sustained, flushed, ratio, latency, commits, compaction
    assert all(row[1] != "ERROR" for row in report["summary"])
    assert json.loads(output.read_text())["arguments"]["rows"] == 600
    out = capsys.readouterr().out
    assert "rows/s through one channel" in out and "files before -> after compaction" in out
