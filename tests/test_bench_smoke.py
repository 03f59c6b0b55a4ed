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
    # Two fresh JVMs take about a minute on a loaded 2-core machine, so the cold-start
    # figure runs its steps in this process here: the code path, not a measurement.
    argv = [
        "--rows", "4000", "--repeat", "1", "--select-runs", "1", "--warmup", "0",
        "--cold-runs", "1", "--cold-in-process", "--output", str(output),
    ]  # fmt: skip
    report = bench_foundation.main(argv, spark=spark, warehouse=tmp_path / "warehouse")

    figures = report["figures"]
    assert set(figures) == set(bench_foundation.FIGURES)
    errors = {k: f["error"] + "\n" + f["traceback"] for k, f in figures.items() if "error" in f}
    assert not errors, errors

    insert = figures["insert"]
    assert insert["ratio_vs_delta_median"] > 0
    assert insert["ratio_vs_parquet_median"] > 0
    assert insert["all_rows_inserted"]
    assert set(insert["spark_jobs"]) == {"lakeclone", "delta", "parquet"}
    assert all(n > 0 for counts in insert["output_files"].values() for n in counts)

    update = figures["update"]
    assert update["files_in_table"] == bench_foundation.TABLE_FILES
    assert update["ratio_median"] > 0
    # With deletion vectors a 1% UPDATE marks rows in the one file holding them: no file is rewritten.
    assert update["deletion_vectors_not_rewrites"], update["rounds"]
    for round_ in update["rounds"]:
        assert len(round_["files_holding_matches"]) == 1
        assert round_["files_rewritten"] == round_["files_gone"] == round_["numCopiedRows"] == 0
        assert round_["files_given_a_new_deletion_vector"] == round_["numDeletionVectorsAdded"] == 1
        assert round_["changed_files_are_the_matching_files"]
        assert round_["rows_updated"] == round_["numUpdatedRows"] == 40
        assert round_["delta_metrics"]["numUpdatedRows"] == 40
    assert update["spark_jobs"]["lakeclone"]["jobs_median"] > 0
    assert update["copy_on_write_reference"]["found"] is False

    merge = figures["merge"]
    assert merge["ratio_median"] > 0
    assert merge["counts_correct"]
    assert all(r["operation"] == "MERGE" and r["numTargetRowsInserted"] == 40 for r in merge["rounds"])

    select = figures["select"]
    assert select["ratio_median"] > 0
    assert select["same_result"]
    assert "VERSION AS OF" in select["lakeclone_spark_sql"]

    cold = figures["cold_start"]
    assert cold["in_process"]
    assert cold["same_result"]
    assert cold["ratio_median"] > 0
    assert not cold["passed"]  # an in-process run is never a pass

    titles = [row["figure"] for row in report["summary"]]
    assert len(titles) == 8
    assert [row["result"] for row in report["summary"]].count("INFO") == 1
    assert json.loads(output.read_text())["rows"] == 4000
    out = capsys.readouterr().out
    assert "Point SELECT: lake.sql / spark.sql" in out
    assert "Cold start to first result" in out
