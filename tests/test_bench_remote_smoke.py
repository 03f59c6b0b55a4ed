"""Keeps bench/bench_remote.py runnable: a tiny run in a process of its own (its session is set up for object storage)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jvm_settings import worker_env

pytestmark = pytest.mark.worker_processes

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_remote.py"


def test_remote_benchmark_runs(tmp_path: Path) -> None:
    output = tmp_path / "remote.json"
    tiny = ["--rows", "2000", "--files", "20", "--clones", "2", "--channel-rows", "2000", "--repeat", "1", "--warmup", "0"]
    env = {key: value for key, value in worker_env().items() if not key.startswith("AWS_")}  # the bench's own server
    ran = subprocess.run(
        [sys.executable, str(BENCH), *tiny, "--output", str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    figures = json.loads(output.read_text())["figures"]
    assert set(figures) == {"insert", "update", "stream_read", "clone", "vacuum_plan", "channel"}
    failed = {key: figure["traceback"] for key, figure in figures.items() if "error" in figure}
    assert not failed, failed
    assert all(figure["ratio"] > 0 and figure["requests"]["HEAD"] >= 0 for figure in figures.values())
    assert figures["clone"]["check"] == "no data copied"
    assert figures["insert"]["requests"]["PUT"] >= 1
    assert "S3 requests" in ran.stdout
