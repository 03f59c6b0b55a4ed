"""A script run in a terminal: no progress unless asked, and a failed statement prints its error, never a Java trace.

Both rules are read off one script in a process of its own (a cold JVM costs
half a minute of CPU on two cores): it works and fails quietly on one Lake,
then stops Spark and works again on a Lake that asked for progress.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest
from jvm_settings import worker_env

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.spark

SCRIPT = textwrap.dedent(
    """
    import sys
    import lakeclone
    import lakeclone.progress

    lakeclone.progress.THRESHOLD = 0.0  # any progress there is to show, shows

    def work(lake):
        lake.sql("CREATE TABLE t (id INT, name STRING)")
        lake.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        print(lake.sql("SELECT COUNT(*) AS n FROM t").collect()[0].N, flush=True)

    def fail(lake):
        lake.sql("CREATE TABLE people (id INT, name STRING); INSERT INTO people VALUES (1, 'ann'), (2, 'bob')")
        for sql in (
            "SELECT CAST(name AS INT) FROM people WHERE id = 1",
            "SELECT id / 0 FROM people",
            "INSERT INTO people SELECT name, id FROM people WHERE id = 1",
            "SELECT nope FROM people",
        ):
            try:
                lake.sql(sql).toPandas()
            except lakeclone.LakecloneError as error:
                print("FAILED:", str(error).splitlines()[-1], flush=True)

    def mark(text):
        print(text, flush=True)
        print(text, file=sys.stderr, flush=True)

    quiet = lakeclone.connect(sys.argv[1] + "/quiet")
    work(quiet)
    fail(quiet)
    mark("=== asked")
    lakeclone.lake.latest().spark.stop()  # so the next connect starts Spark again
    work(lakeclone.connect(sys.argv[1] + "/asked", progress=True))
    """
)


@pytest.fixture(scope="module")
def script_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The script's stdout and stderr, as text."""
    folder: Path = tmp_path_factory.mktemp("terminal")
    script = folder / "script.py"
    script.write_text(SCRIPT)
    run = subprocess.run(
        [sys.executable, str(script), str(folder)],
        capture_output=True,
        cwd=folder,
        env={**worker_env(), "PYTHONIOENCODING": "utf-8"},
        timeout=300,
        check=False,
    )
    # Bytes, not text: text mode would turn the "\r" of a rewritten line into "\n".
    out, err = run.stdout.decode(), run.stderr.decode(errors="replace")
    assert run.returncode == 0, err[-3000:]
    return out, err


FAILURES = [
    "FAILED: Numeric value 'ann' is not recognized",
    "FAILED: Division by zero",
    "FAILED: Numeric value 'ann' is not recognized",
    "FAILED: invalid identifier 'NOPE'",
]


def test_a_terminal_script_shows_progress_only_when_asked(script_run: tuple[str, str]) -> None:
    out, err = script_run
    assert out.splitlines() == ["2", *FAILURES, "=== asked", "2"]
    quiet, asked = err.split("=== asked\n")
    # Spark's own start-up lines may be there; nothing of lakeclone's progress, nor Spark's console bar.
    for text in ("Starting Spark", "Spark: ", "\r", "[Stage"):
        assert text not in quiet, quiet
    assert "[Stage" not in asked
    assert "Starting Spark…\n" in asked, asked
    assert "\rSpark: " in asked, asked


def test_a_terminal_script_prints_no_java_traces(script_run: tuple[str, str]) -> None:
    out, err = script_run
    assert [line for line in out.splitlines() if line.startswith("FAILED:")] == FAILURES
    for noise in ("at org.apache", "ERROR Executor", "ERROR TaskSetManager", "Exception in task", "Traceback"):
        assert noise not in err, err
