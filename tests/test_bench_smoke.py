"""Keeps bench/bench_foundation.py runnable: a tiny run on the shared SparkSession."""

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
def bench_foundation():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_foundation

        yield bench_foundation
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.spark
def test_foundation_benchmark_runs(
    bench_foundation, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "foundation.json"
    argv = ["--rows", "4000", "--repeat", "1", "--select-runs", "1", "--warmup", "0", "--output", str(output)]
    report = bench_foundation.main(argv, spark=spark, warehouse=tmp_path / "warehouse")

    figures = report["figures"]
    assert set(figures) == {"insert", "update", "select"}
    errors = {k: f["error"] + "\n" + f["traceback"] for k, f in figures.items() if "error" in f}
    assert not errors, errors
    assert figures["insert"]["ratio_median"] > 0
    assert figures["select"]["ratio_median"] > 0
    assert figures["select"]["same_result"]
    assert "update_over_insert_median" in figures["update"]

    update = figures["update"]
    assert update["files_in_table"] == bench_foundation.UPDATE_FILES
    assert update["files_rewritten_equal_files_matching"]
    for round_ in update["rounds"]:
        assert round_["numRemovedFiles"] == round_["files_with_matching_rows"] == 1
        assert round_["rows_updated"] == 40

    assert [row["result"] for row in report["summary"]].count("INFO") == 1
    assert json.loads(output.read_text())["rows"] == 4000
    assert "Point SELECT" in capsys.readouterr().out
