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
def test_clones_benchmark_runs(bench_clones, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "clones.json"
    sources = tmp_path / "sources"
    report = bench_clones.main(spark=spark, warehouse=tmp_path / "warehouse", small=True, output=output, sources=sources)
    scale = bench_clones.SMALL

    figures = report["figures"]
    assert set(figures) == set(bench_clones.FIGURES)
    errors = {k: f["error"] + "\n" + f["traceback"] for k, f in figures.items() if "error" in f}
    assert not errors, errors

    # Sources written by delta-spark: the file counts asked for, the large one 50x the bytes.
    size = figures["clone_size"]
    assert size["sources"]["small"]["files"] == size["sources"]["large"]["files"] == scale.size_files
    assert size["bytes_ratio"] > 30
    assert size["ratio_median"] > 0
    assert size["spark_jobs_median"]["lakeclone large"] > 0

    many = figures["clone_many"]
    assert many["source"]["files"] == scale.many_files
    assert many["lakeclone"]["median_s"] > 0
    assert many["lakeclone_over_delta_median"] > 0
    assert many["spark_jobs"]["delta"]["jobs_median"] > 0
    assert any("SHALLOW CLONE" in phase for phase in many["phases_per_clone_s"])

    vacuum = figures["vacuum"]
    assert vacuum["clones"] == scale.vacuum_clones
    assert vacuum["wrongful_deletions"] == 0
    assert vacuum["deleted_but_read_by_a_clone_version"] == 0
    # The plan deletes exactly what the log says nothing reads any more: the rows updated
    # before cloning, their old deletion vectors, and the orphans.
    assert vacuum["expected_deletes"] >= vacuum["orphan_files"] > 0
    assert vacuum["expected_deletes_missed"] == vacuum["deletes_not_expected"] == 0
    assert {"current", "delete", "clone (any)"} <= set(vacuum["totals_grouped"])
    # After the real VACUUM, the source and every clone still read whole.
    assert vacuum["readable_after_vacuum"] == dict.fromkeys(["VSRC", "VCLONE_0", "VCLONE_1"], True)
    assert vacuum["passed_wrongful"]
    # delta-spark's own VACUUM, which knows nothing of clones, would delete files they read.
    assert vacuum["delta_dry_run_deletes_clones_read"] > 0
    assert vacuum["plan"]["median_s"] > 0

    assert len(report["summary"]) == 5
    assert [row["result"] for row in report["summary"]].count("INFO") == 1
    assert json.loads(output.read_text())["small"] is True
    # The sources folder given is kept for a later run to reuse; nothing else outlives the run.
    assert {p.name for p in sources.iterdir()} == {"size_small", "size_large", "many"}
    assert "VACUUM plan: wrongful deletions" in capsys.readouterr().out
