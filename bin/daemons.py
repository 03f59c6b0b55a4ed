"""Background servers for bin/cluster and bin/s3-server: each in a process group of its own, its pid and log in a state folder."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path


def launch(state: Path, name: str, command: list[str], env: Mapping[str, str]) -> None:
    """Start ``command`` in the background, its output in NAME.log and its pid in NAME.pid under ``state``."""
    with open(state / f"{name}.log", "wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=dict(env), start_new_session=True
        )
    (state / f"{name}.pid").write_text(str(process.pid))


def stop(pid_files: list[Path]) -> None:
    """End each process group a pid file names, in order (TERM, then KILL after 20 s), and remove the file."""
    for pid_file in pid_files:
        pid = int(pid_file.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and running(pid):
            time.sleep(0.2)
        if running(pid):
            os.killpg(pid, signal.SIGKILL)
        pid_file.unlink()


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
