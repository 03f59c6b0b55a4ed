"""A consumer killed with SIGKILL at random moments, 20 times: no change is lost, none is delivered twice.

One worker process at a time appends rows to SRC and consumes the stream S on
it into SINK, alternately by an autocommit INSERT … SELECT and by a
transaction that also copies the same changes into MIRROR. The parent kills
the worker's whole process group (Python and its Spark JVM at once, like a
machine going down) at a random moment after its first round, and starts the next;
each new worker's ``connect()`` recovers what the dead one left. At the end
SINK holds every id of SRC exactly once, and MIRROR exactly the ids SINK got
through transactions: no transaction was half applied.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from delta_reader import kernel_rows
from lake_helpers import location, rows, worker_env

import lakeclone

pytestmark = pytest.mark.spark

KILLS = 20

WORKER = textwrap.dedent(
    """
    import sys
    import lakeclone

    lake = lakeclone.connect(sys.argv[1])
    lake.sql("SELECT count(*) FROM src").collect()  # Spark is up and recovery has run
    print("ready", flush=True)
    round = 0
    while True:
        top = lake.sql("SELECT COALESCE(MAX(id), 0) AS top FROM src").first()[0]
        lake.sql(f"INSERT INTO src VALUES ({top + 1}), ({top + 2}), ({top + 3})")
        if round % 2:
            lake.sql("INSERT INTO sink SELECT id, 'auto' FROM s WHERE METADATA$ACTION = 'INSERT'")
        else:
            lake.sql(
                "BEGIN;"
                "INSERT INTO sink SELECT id, 'txn' FROM s WHERE METADATA$ACTION = 'INSERT';"
                "INSERT INTO mirror SELECT id FROM s WHERE METADATA$ACTION = 'INSERT';"
                "COMMIT"
            )
        round += 1
        print("round", round, flush=True)
    """
)


def test_random_kills_neither_lose_nor_repeat_a_change(tmp_path: Path, spark) -> None:
    # The workers run on the system clock, so this Lake does too.
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)
    lake.sql(
        "CREATE TABLE src (id INT); CREATE STREAM s ON TABLE src;"
        "CREATE TABLE sink (id INT, how STRING); CREATE TABLE mirror (id INT)"
    )
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    chooser = random.Random(20261124)
    for kill in range(KILLS):
        errors = (tmp_path / f"worker_{kill}.err").open("w")
        worker = subprocess.Popen(
            [sys.executable, str(script), str(lake.warehouse)],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            start_new_session=True,  # its own process group: the JVM dies with it
            env=worker_env(),
        )
        try:
            assert worker.stdout is not None
            for expected in ("ready", "round 1"):  # up, recovered, and one round done: progress between kills
                line = worker.stdout.readline().strip()
                assert line == expected, (line, (tmp_path / f"worker_{kill}.err").read_text()[-3000:])
            time.sleep(chooser.uniform(0.0, 3.0))
            assert worker.poll() is None, (tmp_path / f"worker_{kill}.err").read_text()[-3000:]
        finally:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=60)
            errors.close()

    lake = lakeclone.connect(lake.warehouse, spark=spark)  # recovers what the last worker left
    lake.sql("INSERT INTO sink SELECT id, 'final' FROM s WHERE METADATA$ACTION = 'INSERT'")
    source = rows(lake, "SELECT id FROM src")
    assert len(source) > KILLS  # the workers got work done between kills
    assert rows(lake, "SELECT id FROM sink") == source  # every id once: none lost, none twice
    assert kernel_rows(location(lake, "sink")) == rows(lake, "SELECT id, how FROM sink")
    assert rows(lake, "SELECT id FROM mirror") == rows(lake, "SELECT id FROM sink WHERE how = 'txn'")
    assert lake.sql("SHOW TRANSACTIONS").collect() == []
