"""A process consuming a stream dies: before its commit the changes stay pending, after it they are consumed, once.

Each subprocess starts an embedded Spark of its own, so the two crashes run side by side.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lake_helpers import location, rows
from test_durability import CRASHED, CRASHER, DIES_AFTER_THE_COMMIT, start, stderr_of

import lakeclone

pytestmark = [pytest.mark.spark, pytest.mark.worker_processes]


def test_a_consuming_statement_that_dies_neither_loses_nor_repeats_a_change(tmp_path: Path, spark) -> None:
    # The workers run on the system clock, so this Lake does too: a stream made by
    # a manual clock's 2024 would be long stale by theirs.
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)
    lake.sql(
        "CREATE TABLE src (id INT); CREATE STREAM before_commit ON TABLE src; CREATE STREAM after_commit ON TABLE src;"
        "CREATE TABLE ins (id INT); INSERT INTO ins VALUES (0); CREATE TABLE aft (id INT);"
        "INSERT INTO src VALUES (1), (2)"
    )
    workers = [
        start(tmp_path, CRASHER, str(lake.warehouse), location(lake, "ins"), "INSERT INTO ins SELECT id FROM before_commit"),
        start(tmp_path, DIES_AFTER_THE_COMMIT, str(lake.warehouse), "INSERT INTO aft SELECT id FROM after_commit"),
    ]
    for worker in workers:
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == CRASHED, (out, stderr_of(worker))

    # The next session resolves what the dead ones left, from the tables' logs.
    lake = lakeclone.connect(lake.warehouse, spark=spark)
    assert rows(lake, "SELECT id FROM before_commit") == [(1,), (2,)]  # died before committing: still pending
    assert rows(lake, "SELECT * FROM ins") == [(0,)]
    assert rows(lake, "SELECT id FROM after_commit") == []  # died after committing: consumed
    assert rows(lake, "SELECT * FROM aft") == [(1,), (2,)]

    lake.sql("INSERT INTO ins SELECT id FROM before_commit; INSERT INTO src VALUES (3); INSERT INTO aft SELECT id FROM after_commit")
    assert rows(lake, "SELECT * FROM ins") == [(0,), (1,), (2,)]
    assert rows(lake, "SELECT * FROM aft") == [(1,), (2,), (3,)]
