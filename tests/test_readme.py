"""README.md's examples run top to bottom as written, and its quick start's commands are there.

Every fenced block is run in order in one real IPython shell (so ``%load_ext
lakeclone`` and ``%%lsql`` cells are the real thing):

* ```python blocks run as notebook cells;
* ```sql blocks starting with ``%%lsql`` run as notebook cells too;
* other ```sql blocks run statement by statement through the ``lake`` variable
  the earlier blocks made, each result fetched so that a failing query fails;
* ```bash blocks (setup commands) are not run;
* a block right after ``<!-- not run: why -->`` is not run.

Any other fence is an error, so no example is skipped by accident.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import lakeclone
import lakeclone.lake

if TYPE_CHECKING:
    from collections.abc import Iterator

    from IPython.core.interactiveshell import InteractiveShell
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(?P<why>.+?)\s*-->$")
NOT_RUN_LANGS = {"bash", "sh", "shell", "console"}
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    not_run: str | None  # why, when the README marks it

    def __str__(self) -> str:
        return f"README.md:{self.line} ```{self.lang}"


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    found = []
    lines = text.splitlines()
    previous = ""  # the last non-blank line before the current one
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            if lines[index].strip():
                previous = lines[index].strip()
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        assert end < len(lines), f"README.md:{index + 1}: a code block is never closed"
        marker = NOT_RUN.match(previous)
        found.append(Block(index + 1, opening["lang"], "\n".join(lines[index + 1 : end]) + "\n", marker and marker["why"]))
        previous = "```"
        index = end + 1
    return found


def test_blocks_are_found_with_their_language_and_marker() -> None:
    text = "intro\n```bash\nls\n```\n<!-- not run: needs /data -->\n\n```python\nx = 1\n```\n```sql\nSELECT 1;\n```\n"
    assert blocks(text) == [
        Block(2, "bash", "ls\n", None),
        Block(7, "python", "x = 1\n", "needs /data"),
        Block(10, "sql", "SELECT 1;\n", None),
    ]


def runnable(block: Block) -> bool:
    if block.not_run is not None or block.lang in NOT_RUN_LANGS:
        return False
    assert block.lang in {"python", "sql"}, (
        f"{block}: the README test runs python and sql blocks; mark this one `<!-- not run: why -->` "
        "or give it a language it knows"
    )
    return True


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False  # no history database in ~/.ipython
    ip = InteractiveShell.instance(config=config)
    try:
        yield ip
    finally:
        InteractiveShell.clear_instance()


@pytest.fixture
def fresh_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spark: SparkSession) -> Iterator[Path]:
    """An empty warehouse where the README's ``lakeclone.connect()`` finds it, and the shared session left as found."""
    warehouse = tmp_path / "warehouse"
    monkeypatch.setenv(lakeclone.lake.WAREHOUSE_ENV, str(warehouse))
    monkeypatch.chdir(tmp_path)  # anything the examples write to the current folder lands here
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # and so do their temporary folders
    monkeypatch.setattr(lakeclone.lake, "_latest", lakeclone.lake.latest())  # %%lsql's Lake, put back afterwards
    before = spark.conf.get(RETENTION_CHECK, None)
    try:
        yield warehouse
    finally:
        if before is None:
            spark.conf.unset(RETENTION_CHECK)
        else:
            spark.conf.set(RETENTION_CHECK, before)


def run_sql(block: Block, shell: InteractiveShell) -> None:
    """A plain SQL example, one statement at a time on the ``lake`` the README made."""
    from lakeclone.dialect import parse

    lake = shell.user_ns.get("lake")
    assert isinstance(lake, lakeclone.Lake), f"{block}: no `lake` to run it on; an earlier example makes one"
    statements = parse(block.code)
    assert statements, f"{block}: no SQL statements in it"
    for statement in statements:
        try:
            lake.sql(statement.sql).collect()
        except Exception as error:
            raise AssertionError(f"{block}: {statement.sql!r} failed: {error}") from error


def run_cell(block: Block, shell: InteractiveShell) -> None:
    result = shell.run_cell(block.code, store_history=False)
    if not result.success:
        error = result.error_before_exec or result.error_in_exec
        raise AssertionError(f"{block} failed: {type(error).__name__}: {error}\n{block.code}") from error


@pytest.mark.spark
@pytest.mark.usefixtures("fresh_warehouse")
def test_readme_examples_run_top_to_bottom(shell: InteractiveShell) -> None:
    found = blocks(README.read_text(encoding="utf-8"))
    ran = []
    for block in found:
        if not runnable(block):
            continue
        started = time.perf_counter()
        if block.lang == "sql" and not block.code.lstrip().startswith("%%lsql"):
            run_sql(block, shell)
        else:
            run_cell(block, shell)
        print(f"{block}: {time.perf_counter() - started:.1f} s")
        ran.append(block)

    # Python, %%lsql cells and plain SQL all ran, and most of the README's examples, not just a few.
    kinds = {"%%lsql" if b.code.lstrip().startswith("%%lsql") else b.lang for b in ran}
    assert kinds == {"python", "%%lsql", "sql"}, kinds
    assert len(ran) >= 8 and len(ran) >= 0.75 * len(found), (
        f"ran {len(ran)} of the README's {len(found)} code blocks: {[str(b) for b in found if b not in ran]} were not run"
    )


# --- the quick start's commands ---


def test_bin_lab_starts_jupyterlab_from_the_venv() -> None:
    lab = ROOT / "bin" / "lab"
    assert os.access(lab, os.X_OK), "bin/lab is not executable"
    assert "jupyter-lab" in lab.read_text(encoding="utf-8")
    jupyter_lab = Path(sys.executable).with_name("jupyter-lab")  # bin/setup installs the `lab` extra
    version = subprocess.run([jupyter_lab, "--version"], capture_output=True, text=True, check=True, timeout=120)
    assert re.fullmatch(r"4\.\d+\.\d+\S*", version.stdout.strip()), version.stdout


def test_run_notebooks_saves_each_executed_notebook_as_ipynb_and_html_beside_a_run_log(tmp_path: Path) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("print('all' + ' fine')")]), good)
    cells = [new_code_cell("print('first' + ' cell')"), new_code_cell("raise ValueError('bo' + 'om')"), new_code_cell("1")]
    nbformat.write(new_notebook(cells=cells), bad)
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.html").write_text("from the last run")

    run = subprocess.run(
        [ROOT / "bin" / "run-notebooks", "--out", out, good, bad], check=False, capture_output=True, text=True, timeout=300
    )

    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 passed, 1 failed" in run.stdout and str(out) in run.stdout
    assert sorted(p.name for p in out.iterdir()) == ["bad.html", "bad.ipynb", "good.html", "good.ipynb", "run.log"]
    log = (out / "run.log").read_text()
    assert re.search(rf"^ok +{re.escape(str(good))} +\d+ s$", log, re.M), log
    assert re.search(rf"^FAILED +{re.escape(str(bad))} +\d+ s\n +ValueError: boom$", log, re.M), log
    # What ran is kept, the failing cell's error included; what never ran has no output.
    executed = nbformat.read(out / "bad.ipynb", as_version=4)
    assert [[o.output_type for o in c.outputs] for c in executed.cells] == [["stream"], ["error"], []]
    assert "first cell" in (out / "bad.html").read_text() and "boom" in (out / "bad.html").read_text()
    assert "all fine" in (out / "good.html").read_text()
