"""The tests' shared JVM: a process attached to it (an xdist worker, a notebook's kernel) interrupts only its own jobs."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from jvm_settings import gateway_address, worker_env

pytestmark = pytest.mark.spark

GROUP = "test-jvm-settings-sleeping-job"

ATTACHED = textwrap.dedent(
    """
    import sys
    import time

    sys.path.insert(0, sys.argv[1])
    from jvm_settings import attached_session

    spark = attached_session(sys.argv[2], sys.argv[3])
    print("attached", flush=True)
    try:
        time.sleep(120)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    """
)


def test_an_interrupted_attached_process_leaves_other_sessions_jobs_running(spark, tmp_path: Path) -> None:
    # jupyter_client sends a kernel SIGINT before it shuts it down; PySpark's own
    # handler would cancel every job of the JVM, this test process's included.
    script = tmp_path / "attached.py"
    script.write_text(ATTACHED)
    env = worker_env()
    env.pop("PYSPARK_SUBMIT_ARGS")  # it attaches to this JVM and starts none
    attached = subprocess.Popen(
        [sys.executable, str(script), str(Path(__file__).parent), *gateway_address()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert attached.stdout is not None
        assert attached.stdout.readline() == "attached\n", attached.stderr.read() if attached.stderr else ""
        outcome: dict[str, object] = {}
        started = threading.Event()

        def sleeping_job() -> None:
            spark.sparkContext.setJobGroup(GROUP, "sleeps while the other process is interrupted")
            started.set()
            try:
                # A task that sleeps 4 s: a job still running when the interrupt comes.
                outcome["rows"] = spark.range(1).selectExpr("java_method('java.lang.Thread', 'sleep', 4000L)").collect()
            except Exception as error:  # the assertion below shows it
                outcome["error"] = error

        job = threading.Thread(target=sleeping_job)
        job.start()
        started.wait(timeout=30)
        tracker = spark.sparkContext.statusTracker()
        for _ in range(600):  # until the job is running
            if set(tracker.getJobIdsForGroup(GROUP)) & set(tracker.getActiveJobsIds()):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the sleeping job never started")
        attached.send_signal(signal.SIGINT)
        out, err = attached.communicate(timeout=60)
        job.join(timeout=60)
    finally:
        if attached.poll() is None:
            attached.kill()
    assert out == "interrupted\n", err[-3000:]
    assert "error" not in outcome, outcome
    assert outcome["rows"] == [("null",)]  # Thread.sleep returns nothing
