"""VACUUM [RETAIN n HOURS] [DRY RUN], the keep reasons, and VACUUM/purge never breaking a clone."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest
from delta_reader import (
    deletion_vector_file,
    folder_files,
    kernel_rows,
    live_adds,
    live_files,
    log_file_path,
    named_files,
    needed_files,
    spark_rows,
)
from lake_helpers import location, rows

import lakeclone
from lakeclone.catalog.store import Catalog

pytestmark = pytest.mark.spark

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
LOW_RETENTION = "would delete files inside the table's retention of"


def uncommitted_writes(folder: str) -> set[str]:
    """Files Delta wrote into a table's folder that no commit names.

    Delta's DELETE and UPDATE write a new file for every file they touch before
    they find that every row of it goes: without deletion vectors a rewrite
    with no rows left, with them a deletion vector. The file touched is then
    removed whole, and what was written for it is never committed. VACUUM
    deletes such a file like any other file nobody reads.
    """
    return folder_files(folder) - named_files(folder)


def dry_run(lake: lakeclone.Lake, sql: str) -> dict[str, tuple[int, str, str]]:
    return {r.path: (r.size_bytes, r.action, r.reason) for r in lake.sql(sql).collect()}


def vacuum(lake: lakeclone.Lake, sql: str) -> tuple[int, int]:
    (counts,) = lake.sql(sql).collect()
    return counts["number of files deleted"], counts["number of bytes deleted"]


def deleted(folder: str, files: set[str]) -> dict[str, tuple[int, str, str]]:
    """The DRY RUN rows of files VACUUM deletes from the table at ``folder``, keyed by path below it."""
    return {os.path.relpath(f, folder): (os.path.getsize(f), "DELETE", "delete") for f in files}


def footprint(files: set[str]) -> tuple[int, int]:
    """Files and bytes, as VACUUM counts what it deletes; read before the files go."""
    return len(files), sum(os.path.getsize(f) for f in files)


def assert_all_readable(lake: lakeclone.Lake) -> None:
    """Every live table reads the same through lakeclone's SELECT, the Delta kernel and delta-spark."""
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        tables = [t for d in catalog.objects.databases() for s in catalog.objects.schemas(d) for t in catalog.objects.tables(s)]
    finally:
        catalog.close()
    assert tables
    for table in tables:
        expected = rows(lake, f"SELECT * FROM {table.qualified}")
        assert expected == kernel_rows(table.location) == spark_rows(lake.spark, table.location), table.qualified


def stray(folder: str, written: float | None = None) -> str:
    """A data file no commit references, as a failed write leaves one: written now, or with the mtime ``written``.

    It is named as Delta names its data files, so VACUUM knows it for the
    table's own. A file's mtime is the machine's time (epoch seconds), and
    VACUUM dates it on the Lake's clock by the first commit made after it: a
    file older than every commit was written by the first commit's time, one
    newer than every commit may still be a write in flight.
    """
    path = os.path.join(folder, f"part-00000-{uuid.uuid4()}-c000.snappy.parquet")
    Path(path).write_bytes(b"PAR1 not really parquet")
    if written is not None:
        os.utime(path, (written, written))
    return path


# DRY RUN and the keep reasons -----------------------------------------------------------------


def test_dry_run_gives_every_file_with_its_action_and_reason(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    source = location(lake, "s")
    by_row = {_row_of(f): f for f in live_files(source)}
    removed, kept = by_row[1], by_row[2]
    clock.advance(days=2)  # the table's first versions are older than the stray files' window below
    lake.sql("CREATE TABLE c CLONE s")
    lake.sql("DELETE FROM s WHERE id = 1")
    uncommitted = uncommitted_writes(source)
    clock.advance(days=8)
    old = stray(source, written=time.time() - 30 * 24 * 3600)  # before every commit
    recent = stray(source)  # after every commit: maybe a write in flight

    def rel(path: str) -> str:
        return os.path.relpath(path, source)

    plan = dry_run(lake, "VACUUM s DRY RUN")
    assert plan == {
        rel(kept): (os.path.getsize(kept), "KEEP", "current"),
        rel(removed): (os.path.getsize(removed), "KEEP", "clone LAKE.PUBLIC.C@0"),
        rel(old): (os.path.getsize(old), "DELETE", "delete"),
        rel(recent): (os.path.getsize(recent), "KEEP", "retention"),
        **deleted(source, uncommitted),
    }
    # A longer RETAIN reaches back to the version that still had the removed file, not to the old stray.
    longer = dry_run(lake, "VACUUM s RETAIN 200 HOURS DRY RUN")
    assert longer[rel(removed)] == (os.path.getsize(removed), "KEEP", "retention")
    assert longer[rel(old)][1:] == ("DELETE", "delete")
    # The Python API gives the same plan.
    api = lake.vacuum_plan("s")
    assert {d.relative: str(d.reason) for d in api.decisions} == {k: v[2] for k, v in plan.items()}
    doomed = {old, *uncommitted}
    assert api.totals()["delete"] == footprint(doomed)
    # DRY RUN deletes nothing; VACUUM deletes exactly the DELETE rows.
    assert all(os.path.exists(p) for p in (kept, removed, old, recent, *uncommitted))
    expected = footprint(doomed)
    assert vacuum(lake, "VACUUM s") == expected
    assert not any(os.path.exists(p) for p in doomed)
    assert all(os.path.exists(p) for p in (kept, removed, recent))
    assert_all_readable(lake)


def _row_of(file: str) -> int:
    import pyarrow.parquet as pq

    return pq.read_table(file).column(0)[0].as_py()


def test_retention_under_the_configured_one_is_refused_unless_the_check_is_off(lake: lakeclone.Lake, retention_check) -> None:
    lake.sql("CREATE TABLE s (id INT); CREATE TABLE short (id INT) DATA_RETENTION_TIME_IN_DAYS = 1")
    retention_check(True)
    for sql in ("VACUUM s RETAIN 0 HOURS", "VACUUM s RETAIN 167 HOURS"):
        with pytest.raises(lakeclone.LakecloneError, match=LOW_RETENTION) as error:
            lake.sql(sql)
        assert "retention of 168 hours" in str(error.value)
        assert f"ALTER SESSION SET {RETENTION_CHECK} = FALSE" in str(error.value)
    assert dry_run(lake, "VACUUM s RETAIN 0 HOURS DRY RUN") == {}  # a dry run plans at any retention
    assert vacuum(lake, "VACUUM s RETAIN 168 HOURS") == (0, 0)
    assert vacuum(lake, "VACUUM short RETAIN 24 HOURS") == (0, 0)
    with pytest.raises(lakeclone.LakecloneError, match="retention of 24 hours"):
        lake.sql("VACUUM short RETAIN 23 HOURS")
    retention_check(False)  # Delta's Spark setting turns it off too, for every session that has not set it
    assert vacuum(lake, "VACUUM s RETAIN 0 HOURS") == (0, 0)


def test_expired_files_are_deleted_and_their_versions_are_gone(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    source = location(lake, "s")
    lake.sql("CREATE TABLE c CLONE s AT(VERSION => 1)")
    needed = set(live_files(location(lake, "c")))
    unneeded = set(live_files(source)) - needed
    lake.sql("DELETE FROM s")  # version 3: no file left
    assert live_files(source) == []

    # Inside retention, VACUUM keeps everything.
    assert vacuum(lake, "VACUUM s") == (0, 0)
    clock.advance(days=8)
    (gone,) = unneeded
    size = os.path.getsize(gone)
    assert vacuum(lake, "VACUUM s") == (1, size)
    assert not os.path.exists(gone)
    assert all(os.path.exists(f) for f in needed)
    with pytest.raises(lakeclone.LakecloneError):
        lake.sql("SELECT * FROM s AT(VERSION => 2)").collect()
    with pytest.raises(lakeclone.LakecloneError, match=r"Data is not available\."):
        lake.sql("CREATE TABLE c2 CLONE s AT(VERSION => 2)")
    assert rows(lake, "SELECT * FROM c") == kernel_rows(location(lake, "c")) == [(1,)]
    assert_all_readable(lake)


# VACUUM never breaks a clone ----------------------------------------------------------------------


def test_vacuum_of_the_source_keeps_what_clones_need(lake: lakeclone.Lake, retention_check_off: None) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    source = location(lake, "s")
    lake.sql("CREATE TABLE c1 CLONE s AT(VERSION => 1)")  # the first file
    lake.sql("ALTER TABLE c1 SET DATA_RETENTION_TIME_IN_DAYS = 0")  # its old versions protect nothing
    lake.sql("CREATE TABLE c2 CLONE c1")  # the same file, referenced where it lives
    (first,) = live_files(location(lake, "c1"))
    (second,) = set(live_files(source)) - {first}
    lake.sql("DELETE FROM s WHERE id = 1")
    lake.sql("CREATE TABLE dropped CLONE s")  # the second file
    lake.sql("DELETE FROM c1")  # only c2 (a clone of a clone) needs the first file now
    lake.sql("DROP TABLE dropped")  # only a dropped, still undroppable clone needs the second
    lake.sql("DELETE FROM s")
    uncommitted = uncommitted_writes(source)

    plan = dry_run(lake, "VACUUM s RETAIN 0 HOURS DRY RUN")
    assert plan == {
        os.path.relpath(first, source): (os.path.getsize(first), "KEEP", "clone LAKE.PUBLIC.C2@0"),
        os.path.relpath(second, source): (os.path.getsize(second), "KEEP", "clone LAKE.PUBLIC.DROPPED@0"),
        **deleted(source, uncommitted),
    }
    expected = footprint(uncommitted)
    assert vacuum(lake, "VACUUM s RETAIN 0 HOURS") == expected
    assert os.path.exists(first) and os.path.exists(second)
    lake.sql("UNDROP TABLE dropped")
    assert rows(lake, "SELECT * FROM dropped") == [(2,)]
    assert rows(lake, "SELECT * FROM c2") == [(1,)]
    assert rows(lake, "SELECT * FROM s") == rows(lake, "SELECT * FROM c1") == []
    assert_all_readable(lake)


def test_vacuum_of_a_clone_keeps_what_others_need(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, retention_check_off: None
) -> None:
    lake.sql("CREATE TABLE s (id INT, v STRING); INSERT INTO s VALUES (1, 'a'); INSERT INTO s VALUES (2, 'b')")
    source = location(lake, "s")
    lake.sql("CREATE TABLE c CLONE s")
    clone = location(lake, "c")
    lake.sql("UPDATE c SET v = 'A' WHERE id = 1")  # a file of c's own
    (own,) = [f for f in live_files(clone) if f.startswith(clone + os.sep)]
    lake.sql("CREATE TABLE cc CLONE c")  # references c's own file and one of s's
    lake.sql("DELETE FROM c WHERE id = 1")  # c itself no longer needs its file
    lake.sql("DROP TABLE cc")
    uncommitted = uncommitted_writes(clone)
    source_before = {f: os.path.getsize(f) for f in folder_files(source)}

    plan = dry_run(lake, "VACUUM c RETAIN 0 HOURS DRY RUN")
    assert plan == {
        os.path.relpath(own, clone): (os.path.getsize(own), "KEEP", "clone LAKE.PUBLIC.CC@0"),
        **deleted(clone, uncommitted),
    }
    expected = footprint(uncommitted)
    assert vacuum(lake, "VACUUM c RETAIN 0 HOURS") == expected
    # VACUUM of a clone never touches another table's folder.
    assert {f: os.path.getsize(f) for f in folder_files(source)} == source_before
    lake.sql("UNDROP TABLE cc")
    assert rows(lake, "SELECT * FROM cc") == [(1, "A"), (2, "b")]
    assert rows(lake, "SELECT * FROM c") == [(2, "b")]
    assert_all_readable(lake)

    # Once cc is purged, nothing needs c's file any more.
    lake.sql("DROP TABLE cc")
    clock.advance(days=8)
    size = os.path.getsize(own)
    assert vacuum(lake, "VACUUM c RETAIN 0 HOURS") == (1, size)
    assert not os.path.exists(own)
    assert rows(lake, "SELECT * FROM c") == kernel_rows(clone) == [(2, "b")]
    assert rows(lake, "SELECT * FROM s") == kernel_rows(source) == [(1, "a"), (2, "b")]


def test_an_in_retention_version_of_a_clone_keeps_source_files(lake: lakeclone.Lake, retention_check_off: None) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    source = location(lake, "s")
    (file,) = live_files(source)
    lake.sql("CREATE TABLE c CLONE s")
    lake.sql("DELETE FROM c; DELETE FROM s")
    plan = dry_run(lake, "VACUUM s RETAIN 0 HOURS DRY RUN")
    assert plan == {os.path.relpath(file, source): (os.path.getsize(file), "KEEP", "clone LAKE.PUBLIC.C@0")}
    lake.sql("VACUUM s RETAIN 0 HOURS")
    assert rows(lake, "SELECT * FROM c AT(VERSION => 0)") == [(1,)]
    lake.sql("CREATE TABLE back CLONE c AT(VERSION => 0)")
    assert rows(lake, "SELECT * FROM back") == [(1,)]
    assert_all_readable(lake)


def test_purging_a_middle_clone_never_breaks_its_clones(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    lake.sql("CREATE TABLE c1 CLONE s; CREATE TABLE c2 CLONE c1")
    lake.sql("DROP TABLE c1; DROP TABLE s")
    clock.advance(days=8)
    lake.sql("DROP TABLE IF EXISTS nothing")  # purges c1; s stays (c2 needs its file)
    lake.sql("DROP TABLE IF EXISTS nothing")  # must still know that c2 needs it
    lake.sql("VACUUM c2")
    assert rows(lake, "SELECT * FROM c2") == kernel_rows(location(lake, "c2")) == [(1,)]


# Deletion vectors: files of the table like its data files ----------------------------------------

# Enough rows in one INSERT that each file Spark writes holds several, whatever its parallelism.
MANY_ROWS = ", ".join(f"({i}, 'v{i}')" for i in range(1, 25))


def ids_by_file(lake: lakeclone.Lake, folder: str) -> dict[str, set[int]]:
    """Each live data file of the table at ``folder`` and the ids of its live rows, read by delta-spark itself."""
    found: dict[str, set[int]] = {}
    for row in lake.spark.read.format("delta").load(folder).select("ID", "_metadata.file_path").collect():
        found.setdefault(log_file_path(folder, row.file_path), set()).add(row.ID)
    return found


def roomiest_file(lake: lakeclone.Lake, folder: str) -> tuple[str, list[int]]:
    """The live data file holding the most rows, and their ids, sorted."""
    layout = ids_by_file(lake, folder)
    file = max(layout, key=lambda f: len(layout[f]))
    # Three single-row updates must each leave rows behind, so each marks a deletion vector.
    assert len(layout[file]) >= 4, layout
    return file, sorted(layout[file])


def vector_of(folder: str, data_file: str) -> str | None:
    """The local path of the deletion vector file the live add of ``data_file`` reads, from the log's JSON."""
    vector = live_adds(folder)[data_file].get("deletionVector")
    return deletion_vector_file(folder, vector) if vector else None


def test_vacuum_keeps_the_files_and_deletion_vectors_a_table_and_its_earlier_clone_need(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, retention_check_off: None
) -> None:
    lake.sql(f"CREATE TABLE s (id INT, v STRING) ENABLE_DELETION_VECTORS = TRUE; INSERT INTO s VALUES {MANY_ROWS}")
    lake.sql("INSERT INTO s VALUES (100, 'alone')")
    source = location(lake, "s")
    shared, (first, second, third, *_) = roomiest_file(lake, source)
    (alone,) = [f for f, ids in ids_by_file(lake, source).items() if 100 in ids]
    lake.sql("CREATE TABLE c CLONE s")  # before any deletion vector: c reads both files whole
    clone = location(lake, "c")

    lake.sql(f"UPDATE s SET v = 'first' WHERE id = {first}")
    # The UPDATE marked the row in a deletion vector on the file it kept, instead of rewriting the file.
    old_vector = vector_of(source, shared)
    assert old_vector is not None and os.path.exists(old_vector)
    lake.sql(f"UPDATE s SET v = 'second' WHERE id = {second}")  # a new vector replaces the first
    new_vector = vector_of(source, shared)
    assert new_vector is not None and new_vector != old_vector
    lake.sql("DELETE FROM s WHERE id = 100")  # only the clone reads `alone` now
    lake.sql(f"UPDATE c SET v = 'clone' WHERE id = {third}")  # the clone's own vector on s's file
    clone_vector = vector_of(clone, shared)
    assert clone_vector is not None and clone_vector not in (old_vector, new_vector)
    assert vector_of(clone, alone) is None and alone not in live_files(source)

    clock.advance(days=8)
    plan = dry_run(lake, "VACUUM s RETAIN 0 HOURS DRY RUN")

    def rel(path: str) -> str:
        return os.path.relpath(path, source)

    assert plan[rel(shared)][1:] == plan[rel(new_vector)][1:] == ("KEEP", "current")
    assert plan[rel(alone)][1:] == ("KEEP", "clone LAKE.PUBLIC.C@1")
    assert plan[rel(old_vector)][1:] == ("DELETE", "delete")
    source_before, clone_before = folder_files(source), folder_files(clone)
    needed = needed_files(source) | needed_files(clone)
    assert {shared, alone, new_vector, clone_vector} <= needed and old_vector not in needed
    lake.sql("VACUUM s RETAIN 0 HOURS")
    lake.sql("VACUUM c RETAIN 0 HOURS")

    # Every file (data or deletion vector) either table reads is still there; nothing else is.
    assert all(os.path.exists(f) for f in needed)
    assert folder_files(source) == source_before & needed
    assert folder_files(clone) == clone_before & needed
    assert not os.path.exists(old_vector)
    values = {i: f"v{i}" for i in range(1, 25)}
    expected_s = sorted({**values, first: "first", second: "second"}.items())
    expected_c = sorted({**values, third: "clone", 100: "alone"}.items())
    assert rows(lake, "SELECT * FROM s") == kernel_rows(source) == spark_rows(lake.spark, source) == expected_s
    assert rows(lake, "SELECT * FROM c") == kernel_rows(clone) == spark_rows(lake.spark, clone) == expected_c


def test_a_deletion_vector_a_later_clone_reads_stays_until_that_clone_is_purged(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, retention_check_off: None
) -> None:
    lake.sql(f"CREATE TABLE s (id INT, v STRING) ENABLE_DELETION_VECTORS = TRUE; INSERT INTO s VALUES {MANY_ROWS}")
    source = location(lake, "s")
    shared, (first, second, *_) = roomiest_file(lake, source)
    lake.sql(f"UPDATE s SET v = 'first' WHERE id = {first}")
    vector = vector_of(source, shared)
    assert vector is not None
    lake.sql("CREATE TABLE c CLONE s")  # reads `shared` through s's vector
    clone = location(lake, "c")
    assert vector_of(clone, shared) == vector
    lake.sql(f"UPDATE s SET v = 'second' WHERE id = {second}")  # s itself no longer reads that vector
    assert vector_of(source, shared) not in (None, vector)

    clock.advance(days=8)
    plan = dry_run(lake, "VACUUM s RETAIN 0 HOURS DRY RUN")
    assert plan[os.path.relpath(vector, source)] == (os.path.getsize(vector), "KEEP", "clone LAKE.PUBLIC.C@0")
    assert [r for r in plan.values() if r[1] == "DELETE"] == []
    assert vacuum(lake, "VACUUM s RETAIN 0 HOURS") == (0, 0)
    expected_c = sorted({**{i: f"v{i}" for i in range(1, 25)}, first: "first"}.items())
    assert rows(lake, "SELECT * FROM c") == kernel_rows(clone) == spark_rows(lake.spark, clone) == expected_c

    # Once the clone is dropped and its UNDROP window has passed, nothing reads the vector.
    lake.sql("DROP TABLE c")
    clock.advance(days=8)
    size = os.path.getsize(vector)
    assert vacuum(lake, "VACUUM s RETAIN 0 HOURS") == (1, size)
    assert not os.path.exists(vector)
    assert all(os.path.exists(f) for f in needed_files(source))
    assert_all_readable(lake)


def test_time_travel_to_files_a_vacuum_removed_names_that_vacuum(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, retention_check_off: None
) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); DELETE FROM s")  # version 1's file goes at version 2
    clock.advance(hours=1)
    lake.sql("VACUUM s RETAIN 0 HOURS")
    first = lake.last_query_id
    lake.sql("INSERT INTO s VALUES (2); DELETE FROM s")  # versions 3 and 4
    clock.advance(hours=1)
    lake.sql("VACUUM s RETAIN 0 HOURS")
    second = lake.last_query_id
    for statement in ("SELECT * FROM s AT(VERSION => {v})", "CREATE TABLE c CLONE s AT(VERSION => {v})"):
        for version, by in ((1, first), (3, second)):
            with pytest.raises(lakeclone.LakecloneError) as error:
                lake.sql(statement.format(v=version)).collect()
            message = str(error.value)
            assert message.startswith("Data is not available. The VACUUM of table S at "), message
            assert f"(query {by}) removed files version {version} reads" in message
    assert rows(lake, "SELECT * FROM s AT(VERSION => 4)") == []  # what the VACUUMs kept reads
