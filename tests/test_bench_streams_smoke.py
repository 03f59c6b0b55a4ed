"""Keeps bench/bench_streams.py runnable: a tiny run on the shared SparkSession."""

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
def bench_streams():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_streams

        yield bench_streams
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.spark
def test_streams_benchmark_runs(bench_streams, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "streams.json"
    argv = ["--rows", "2000", "--large-rows", "4000", "--repeat", "1", "--warmup", "0", "--output", str(output)]
    report = bench_streams.main(argv, spark=spark, warehouse=tmp_path / "warehouse")

    figures = report["figures"]
    assert set(figures) == set(bench_streams.FIGURES)
    errors = {k: f["error"] + "\n" + f["traceback"] for k, f in figures.items() if "error" in f}
    assert not errors, errors
    change = bench_streams.Change.for_table(2000, 4000)
    assert (change.update_rows, change.delete_rows, change.insert_rows, change.append_rows) == (20, 2, 2, 20)

    # The tables: 20 files of 100 rows and 40 of 100; the change touches the same two files of each
    # (a new deletion vector each) and adds two (the UPDATE's rows and the INSERT's).
    raw, large = report["raw"], report["raw_large"]
    assert (raw["files"], large["files"]) == (20, 40)
    for table in (raw, large):
        touched = table["files_the_change_touched"]
        assert (touched["old_side_files"], touched["new_side_files"]) == (2, 4)
        assert table["version_after_change"] - table["version_before_change"] == 3
    assert raw["files_the_change_touched"]["rows_in_those_files"] == large["files_the_change_touched"]["rows_in_those_files"]

    diff = figures["diff"]
    assert diff["speedup_median"] > 0 and diff["speedup_best"] > 0
    assert diff["same_rows"] and diff["correct"]
    assert diff["row_counts"] == {"stream": 44, "diff": 44}  # 20 updates (a DELETE and an INSERT each), 2 deleted, 2 new
    assert diff["stream_rows_by_action"] == {"DELETE/update": 20, "INSERT/update": 20, "DELETE": 2, "INSERT": 2}
    assert diff["spark_jobs"]["stream"]["jobs_median"] > 0
    assert any("stream_changes" in phase for phase in diff["phases_per_read_s"])

    scale = figures["scale"]
    assert scale["ratio_median"] > 0
    assert scale["correct"]
    assert scale["tables"]["large"]["rows"] == 4000

    merge = figures["merge"]
    assert merge["ratio_median"] > 0
    assert merge["correct"], merge["rounds"]
    for side in ("lakeclone", "delta"):
        (round_,) = merge["rounds"][side]
        assert (round_["inserted"], round_["updated"], round_["deleted"]) == (2, 20, 2)
        assert round_["same_rows_as_raw_after_change"]
    assert merge["rounds"]["lakeclone"][0]["stream_consumed"]
    assert merge["readme_statement_outcome"]  # "ran", or what README's unfiltered MERGE raised

    append = figures["append"]
    assert append["ratio_median"] > 0
    assert append["correct"]
    assert append["stream_rows_by_action"]["append_only"] == {"INSERT": 20}

    assert len(report["summary"]) == 4
    assert [row["result"] for row in report["summary"]].count("INFO") == 1
    assert all(row["value"] != "ERROR" for row in report["summary"])
    assert json.loads(output.read_text())["large_rows"] == 4000
    out = capsys.readouterr().out
    assert "full snapshot diff / stream" in out
    assert "APPEND_ONLY stream / standard stream" in out
