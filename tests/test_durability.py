"""Several OS processes on one warehouse, and a process dying in the middle of a write.

Each subprocess starts its own embedded Spark (seconds of JVM start-up), so
the subprocesses of a test run side by side and there are only two such tests.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from delta_reader import kernel_rows, latest_version, live_files, sorted_rows
from lake_helpers import location, rows, start_worker

import lakeclone

pytestmark = [pytest.mark.spark, pytest.mark.worker_processes]

CRASHED = 137

INSERTER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import lakeclone

    warehouse, tag, go = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    lake = lakeclone.connect(warehouse)
    lake.sql("SELECT count(*) FROM t").collect()  # Spark is up and the table resolves
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.01)
    for i in range(4):
        lake.sql(f"INSERT INTO t VALUES ({tag * 100 + i}, 'p{tag}')")
    print("done", flush=True)
    """
)

CRASHER = textwrap.dedent(
    """
    import os, sys, threading, time
    import lakeclone

    warehouse, folder, statement = sys.argv[1], sys.argv[2], sys.argv[3]
    lake = lakeclone.connect(warehouse)
    lake.sql("SELECT count(*) FROM ins").collect()  # Spark is up before the watch starts
    before = set(os.listdir(folder))

    def die_at_the_first_new_data_file():
        # Delta writes data (and deletion vector) files straight into the table's
        # folder and commits only once they are all complete: dying as soon as
        # one appears is dying after data was written and before the commit.
        while not (set(os.listdir(folder)) - before):
            time.sleep(0.001)
        os._exit(137)

    threading.Thread(target=die_at_the_first_new_data_file, daemon=True).start()
    lake.sql(statement)
    print("the statement finished without the process dying", flush=True)
    os._exit(1)
    """
)

DIES_AFTER_THE_COMMIT = textwrap.dedent(
    """
    import os, sys
    import lakeclone
    from lakeclone.engine import registry

    warehouse, statement = sys.argv[1], sys.argv[2]
    lake = lakeclone.connect(warehouse)

    def die(execution, table):
        # Runs once the statement's Delta commit is made, before lakeclone
        # records that the statement finished.
        print(execution.query_id, flush=True)
        os._exit(137)

    registry.AFTER_DML.insert(0, die)
    lake.sql(statement)
    print("the statement finished without the process dying", flush=True)
    os._exit(1)
    """
)

DIES_AFTER_THE_NEW_TABLE_S_COMMIT = textwrap.dedent(
    """
    import contextlib, os, sys
    import lakeclone
    from lakeclone.engine import work

    warehouse, statement = sys.argv[1], sys.argv[2]
    lake = lakeclone.connect(warehouse)
    commit = work.UnitOfWork.delta

    @contextlib.contextmanager
    def dying(self, **options):
        # Dies once the new table's Delta commit is made, before lakeclone records the table.
        with commit(self, **options):
            yield
        print("committed", flush=True)
        os._exit(137)

    work.UnitOfWork.delta = dying
    lake.sql(statement)
    print("the statement finished without the process dying", flush=True)
    os._exit(1)
    """
)


_started = 0


def start(tmp_path: Path, source: str, *args: str) -> subprocess.Popen[str]:
    """Run ``source`` in a new Python process; its stderr (Spark's logs) goes to a file, never a full pipe."""
    global _started
    _started += 1
    script = tmp_path / f"worker_{_started}.py"
    script.write_text(source)
    errors = tmp_path / f"worker_{_started}.err"
    worker = start_worker(script, *args, errors=errors)
    worker.err_path = errors  # type: ignore[attr-defined]
    return worker


def stderr_of(worker: subprocess.Popen) -> str:
    return worker.err_path.read_text()[-3000:]  # type: ignore[attr-defined]


def test_two_processes_insert_into_one_table_at_once(lake: lakeclone.Lake, tmp_path: Path) -> None:
    lake.sql("CREATE TABLE t (id INT, who STRING); INSERT INTO t VALUES (0, 'parent')")
    go = tmp_path / "go"
    workers = [start(tmp_path, INSERTER, str(lake.warehouse), str(tag), str(go)) for tag in (1, 2)]
    try:
        for worker in workers:  # both have Spark up before either writes
            line = worker.stdout.readline()
            assert line.strip() == "ready", stderr_of(worker)
        go.touch()
        for worker in workers:
            out, _ = worker.communicate(timeout=300)
            assert worker.returncode == 0, stderr_of(worker)
            assert out.strip() == "done"
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()

    expected = [(0, "parent")] + [(tag * 100 + i, f"p{tag}") for tag in (1, 2) for i in range(4)]
    assert sorted_rows(lake.sql("SELECT * FROM t").collect()) == expected
    commits = lake.sql("DESCRIBE HISTORY t").collect()
    assert [c.version for c in commits] == list(range(9, -1, -1))  # create, 1 + 8 inserts, none lost
    assert sorted(c.operation for c in commits[:8]) == ["WRITE"] * 8
    assert kernel_rows(location(lake, "T")) == expected


def test_a_crash_before_the_commit_leaves_the_table_and_stream_as_they_were_and_after_it_the_commit_stands(
    tmp_path: Path, spark
) -> None:
    # The workers run on the system clock, so this Lake does too: a stream made by
    # a manual clock's 2024 would be long stale by theirs.
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)
    lake.sql(
        "CREATE TABLE src (id INT); CREATE STREAM before_commit ON TABLE src; CREATE STREAM after_commit ON TABLE src;"
        "INSERT INTO src VALUES (1), (2);"
        "CREATE TABLE ins (id INT); INSERT INTO ins VALUES (1), (2);"
        "CREATE TABLE upd (id INT, v STRING); INSERT INTO upd VALUES (1, 'a'), (2, 'b');"
        "CREATE TABLE aft (id INT); CREATE TABLE loaded_after (id INT)"
    )
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "one.csv").write_text("1\n2\n")
    copy = f"COPY INTO {{}} FROM 'file:{staged}' FILES = ('one.csv')"
    folders = {name: location(lake, name) for name in ("INS", "UPD")}
    versions = {name: latest_version(folder) for name, folder in folders.items()}
    files = {name: live_files(folder) for name, folder in folders.items()}
    on_disk = {name: set(os.listdir(folder)) for name, folder in folders.items()}

    tables_before = set(os.listdir(lake.warehouse / "tables"))

    # Side by side: each process starts a JVM of its own. The INSERT consumes
    # a stream, so its death before the commit must leave the offset too.
    workers = [
        start(tmp_path, CRASHER, str(lake.warehouse), folders["INS"], "INSERT INTO ins SELECT id + 2 FROM before_commit"),
        start(tmp_path, CRASHER, str(lake.warehouse), folders["UPD"], "UPDATE upd SET v = 'changed' WHERE id = 2"),
        start(tmp_path, DIES_AFTER_THE_COMMIT, str(lake.warehouse), "INSERT INTO aft SELECT id FROM after_commit"),
        start(tmp_path, DIES_AFTER_THE_NEW_TABLE_S_COMMIT, str(lake.warehouse), "CREATE TABLE copy DEEP CLONE src"),
        # A COPY that died after its commit: its files are loaded (test_loading covers one that died before).
        start(tmp_path, DIES_AFTER_THE_COMMIT, str(lake.warehouse), copy.format("loaded_after")),
    ]
    outputs = []
    for worker in workers:
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == CRASHED, (out, stderr_of(worker))
        outputs.append(out)

    # The clone's folder holds its committed Delta table, which no catalog row names.
    assert outputs[3].strip() == "committed"
    (leftover,) = set(os.listdir(lake.warehouse / "tables")) - tables_before
    assert latest_version(str(lake.warehouse / "tables" / leftover)) == 0

    # The next session resolves what the dead ones left, from the tables' logs.
    lake = lakeclone.connect(lake.warehouse, spark=spark)
    # The clone the catalog never recorded is gone, folder and files.
    assert set(os.listdir(lake.warehouse / "tables")) == tables_before
    assert "COPY" not in {r.name for r in lake.sql("SHOW TABLES").collect()}
    # The commit is the truth: the statement that died after committing took
    # effect and consumed its stream, and time travel to it finds its commit
    # through its query id.
    query_id = outputs[2].split()[-1]
    assert rows(lake, "SELECT * FROM aft") == kernel_rows(location(lake, "aft")) == [(1,), (2,)]
    assert rows(lake, "SELECT id FROM after_commit") == []
    assert rows(lake, f"SELECT * FROM aft AT(STATEMENT => '{query_id}')") == [(1,), (2,)]
    assert rows(lake, f"SELECT * FROM aft BEFORE(STATEMENT => '{query_id}')") == []

    for name, folder in folders.items():
        # The dead process got as far as writing a file into the table's folder...
        assert set(os.listdir(folder)) - on_disk[name], name
        # ...but the table is still at its previous version, with its previous files.
        assert latest_version(folder) == versions[name]
        assert live_files(folder) == files[name]

    assert rows(lake, "SELECT * FROM ins") == [(1,), (2,)]
    assert rows(lake, "SELECT id FROM before_commit") == [(1,), (2,)]  # died before committing: still pending
    assert rows(lake, "SELECT * FROM upd") == kernel_rows(folders["UPD"]) == [(1, "a"), (2, "b")]
    assert rows(lake, "SELECT * FROM loaded_after") == kernel_rows(location(lake, "LOADED_AFTER")) == [(1,), (2,)]
    assert [r.status for r in lake.sql(copy.format("loaded_after")).collect()] == ["Copy executed with 0 files processed."]

    # The next writes work, commit the next version, and consume each change once.
    lake.sql(
        "INSERT INTO ins SELECT id + 2 FROM before_commit; UPDATE upd SET v = 'B' WHERE id = 2;"
        "INSERT INTO src VALUES (3); INSERT INTO aft SELECT id FROM after_commit"
    )
    assert rows(lake, "SELECT * FROM ins") == [(1,), (2,), (3,), (4,)]
    assert rows(lake, "SELECT * FROM upd") == [(1, "a"), (2, "B")]
    assert rows(lake, "SELECT * FROM aft") == [(1,), (2,), (3,)]
    assert rows(lake, "SELECT id FROM before_commit") == [(3,)]
    for name, folder in folders.items():
        assert latest_version(folder) == versions[name] + 1, name
    lake.sql("CREATE TABLE copy DEEP CLONE src")
    assert rows(lake, "SELECT * FROM copy") == [(1,), (2,), (3,)]
