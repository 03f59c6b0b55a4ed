"""The S3-compatible server of a test run: bin/s3-server started once, before any JVM, its address in the environment.

The run's JVM (the shared session's) and every process the tests start
inherit ``AWS_ENDPOINT_URL`` and a key to sign with, as a user's would from
their shell, so that a warehouse on ``s3a://`` works in the tests' own
session, in notebook kernels and in driver processes alike.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import tempfile
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "bin" / "s3-server"
BUCKETS = ("lake-warehouse", "lake-other")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start() -> None:
    """Start the server with :data:`BUCKETS` and point this process's environment at it; stopped at exit."""
    state = tempfile.mkdtemp(prefix="lakeclone-test-s3-")
    port = free_port()
    buckets = [argument for bucket in BUCKETS for argument in ("--bucket", bucket)]
    started = subprocess.run(
        [str(SERVER), "start", "--dir", state, "--port", str(port), *buckets],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if started.returncode != 0:
        raise RuntimeError(f"bin/s3-server could not start: {started.stderr.strip()}")
    atexit.register(subprocess.run, [str(SERVER), "stop", "--dir", state], capture_output=True, timeout=60, check=False)
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    os.environ["AWS_ACCESS_KEY_ID"] = os.environ["AWS_SECRET_ACCESS_KEY"] = "lakeclone"
