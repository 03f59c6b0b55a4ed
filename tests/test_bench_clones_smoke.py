"""Keeps bench/bench_clones.py runnable: a tiny run on the shared SparkSession."""

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
def bench_clones():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_clones

        yield bench_clones
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.spark
def test_clones_benchmark_runs(
    bench_clones, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "clones.json"
    warehouse = tmp_path / "warehouse"
    report = bench_clones.main(spark=spark, warehouse=warehouse, small=True, output=output)

    figures = report["figures"]
    assert set(figures) == {"clone_size", "clone_count", "deep_clone", "vacuum"}
    errors = {k: f["error"] + "\n" + f["traceback"] for k, f in figures.items() if "error" in f}
    assert not errors, errors

    assert figures["clone_size"]["ratio_median"] > 0
    assert figures["clone_size"]["bytes_ratio"] > 50
    series = figures["clone_count"]["series"]
    assert [p["files"] for p in series] == list(bench_clones.SMALL.counts)
    assert all(p["ms_per_1000_files"] > 0 for p in series)
    assert figures["clone_count"]["flatness_ratio"] > 0
    assert figures["deep_clone"]["ratio_median"] > 0
    assert figures["deep_clone"]["files"] == bench_clones.SMALL.size_files

    vacuum = figures["vacuum"]
    assert vacuum["wrongful_deletions"] == 0
    assert vacuum["deleted_but_in_a_clone_version"] == 0
    assert vacuum["ratio_median"] > 0
    reasons = vacuum["totals_grouped"]
    assert {"current", "delete", "clone (any)"} <= set(reasons)
    # The files rewritten before cloning, and the orphans, are exactly what goes.
    assert vacuum["expected_deletes_missed"] == 0
    assert vacuum["deletes_not_expected"] == 0

    titles = [row["figure"] for row in report["summary"]]
    assert len(titles) == len(bench_clones.SMALL.counts) + 6
    assert json.loads(output.read_text())["small"] is True
    # The benchmark's data never outlives it.
    assert not (warehouse / "_bench_sources").exists()
    assert "VACUUM plan: wrongful deletions" in capsys.readouterr().out
