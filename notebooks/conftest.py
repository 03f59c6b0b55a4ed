"""Each tutorial notebook run by nbval gets a fresh warehouse of its own.

A hook, not a fixture: nbval starts a notebook's kernel before any fixture
runs, and the kernel inherits LAKECLONE_WAREHOUSE from this process.
"""

from __future__ import annotations

import os
import tempfile

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    notebook = item.parent
    if notebook is not None and not hasattr(notebook, "lakeclone_warehouse"):
        notebook.lakeclone_warehouse = tempfile.mkdtemp(prefix="lakeclone-nb-")  # type: ignore[attr-defined]
        os.environ["LAKECLONE_WAREHOUSE"] = notebook.lakeclone_warehouse  # type: ignore[attr-defined]
