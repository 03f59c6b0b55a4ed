"""Keeps bench/bench_policies.py runnable: a tiny run on the shared SparkSession."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def bench_policies() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCH))
    try:
        import bench_policies

        yield bench_policies
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.spark
def test_policies_benchmark_runs(
    bench_policies: ModuleType, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "policies.json"
    argv = ["--rows", "200", "--repeat", "1", "--warmup", "0", "--output", str(output)]
    report = bench_policies.main(argv, spark=spark, warehouse=tmp_path / "warehouse")

    assert report["check"] == {
        "administrator_rows": 200,
        "administrator_distinct_emails": 200,
        "restricted_rows": 100,
        "restricted_distinct_emails": 1,
        "correct": True,
    }
    assert set(report["figures"]) == {f"{r}_{q}" for r in bench_policies.ROLES for q in bench_policies.QUERIES}
    for figure in report["figures"].values():
        assert figure["ratio_median"] > 0
        assert figure["result"] in ("PASS", "FAIL")
    assert len(report["summary"]) == 4
    assert report["cold"]["ratio"] > 0
    assert json.loads(output.read_text())["rows"] == 200
    assert "restricted_scan" in capsys.readouterr().out
