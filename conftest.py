"""Each tutorial notebook run by nbval gets a fresh warehouse of its own, and a kernel whose Spark is the tests' session's JVM.

And every run gets its S3 server first (tests/s3_server.py), for the tests and notebooks on ``s3a://``.

Hooks, not fixtures: nbval starts a notebook's kernel before any fixture
runs, and the kernel inherits this process's environment as it stands then.
Here at the root rather than in notebooks/, which holds the tutorials alone:
pytest reads it for a notebook however the run names it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
import s3_server
from jvm_settings import kernel_env, shared_spark  # the tests' folder is not a package: on sys.path above


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py's, which starts the shared JVM
def pytest_configure(config: pytest.Config) -> None:
    """Before any JVM starts: the run's S3 server, whose address the JVM, xdist's workers and the kernels inherit."""
    if not hasattr(config, "workerinput"):
        s3_server.start()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """Around the setup of a notebook's first cell, where nbval starts its kernel: the kernel's environment."""
    notebook = item.parent
    if item.path.suffix != ".ipynb" or notebook is None or hasattr(notebook, "lakeclone_warehouse"):
        return (yield)
    notebook.lakeclone_warehouse = tempfile.mkdtemp(prefix="lakeclone-nb-")  # type: ignore[attr-defined]
    env = {**kernel_env(shared_spark()), "LAKECLONE_WAREHOUSE": notebook.lakeclone_warehouse}  # type: ignore[attr-defined]
    before = dict(os.environ)
    os.environ.update(env)
    try:
        return (yield)
    finally:
        # Only the kernel runs with these: this process's later subprocesses choose their own.
        os.environ.clear()
        os.environ.update(before)
