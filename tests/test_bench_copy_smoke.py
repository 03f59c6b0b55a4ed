"""Keeps bench/bench_copy.py runnable: a tiny run on the shared SparkSession."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.spark
def test_copy_benchmark_runs(spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import bench_copy
    finally:
        sys.path.remove(str(BENCH))
    output = tmp_path / "copy.json"
    report = bench_copy.main(
        ["--rows", "2000", "--files", "2", "--repeat", "1", "--warmup", "0", "--output", str(output)], spark=spark
    )
    assert (report["rows"], report["files"]) == (2000, 2)
    assert report["lakeclone"]["median_s"] > 0 and report["spark"]["median_s"] > 0
    assert report["ratio_median"] == pytest.approx(report["lakeclone"]["median_s"] / report["spark"]["median_s"], rel=0.01)
    assert json.loads(output.read_text())["ratio_median"] == report["ratio_median"]
    assert "ratio of medians" in capsys.readouterr().out
