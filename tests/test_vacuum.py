"""VACUUM [RETAIN n HOURS] [DRY RUN], the keep reasons, and VACUUM/purge never breaking a clone."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from delta_reader import kernel_rows
from lake_helpers import location, rows

import lakeclone
from lakeclone.catalog.store import Catalog
from lakeclone.delta.log import DeltaLog

pytestmark = pytest.mark.spark

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
LOW_RETENTION = "Are you sure you would like to vacuum files with such a low retention period"


def current_files(folder: str) -> list[str]:
    return sorted(f.local_path for f in DeltaLog(folder).snapshot().files)


def dry_run(lake: lakeclone.Lake, sql: str) -> dict[str, tuple[int, str, str]]:
    return {r.path: (r.size_bytes, r.action, r.reason) for r in lake.sql(sql).collect()}


def vacuum(lake: lakeclone.Lake, sql: str) -> tuple[int, int]:
    (counts,) = lake.sql(sql).collect()
    return counts["number of files deleted"], counts["number of bytes deleted"]


def assert_all_readable(lake: lakeclone.Lake) -> None:
    """Every live table reads the same through lakeclone's SELECT and the Delta kernel."""
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        tables = [t for d in catalog.databases() for s in catalog.schemas(d) for t in catalog.tables(s)]
    finally:
        catalog.close()
    assert tables
    for table in tables:
        assert rows(lake, f"SELECT * FROM {table.qualified}") == kernel_rows(table.location), table.qualified


def stray(folder: str, name: str, moment: dt.datetime) -> str:
    """A file no commit references, written in a table's folder with the given mtime."""
    path = os.path.join(folder, name)
    Path(path).write_bytes(b"PAR1 not really parquet")
    os.utime(path, (moment.timestamp(), moment.timestamp()))
    return path


# DRY RUN and the keep reasons -----------------------------------------------------------------


def test_dry_run_gives_every_file_with_its_action_and_reason(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    source = location(lake, "s")
    by_row = {_row_of(f): f for f in current_files(source)}
    removed, kept = by_row[1], by_row[2]
    lake.sql("CREATE TABLE c CLONE s")
    lake.sql("DELETE FROM s WHERE id = 1")
    clock.advance(days=8)
    old = stray(source, "orphan-old.parquet", clock.peek() - dt.timedelta(days=30))
    recent = stray(source, "orphan-recent.parquet", clock.peek() - dt.timedelta(hours=1))
    rel = lambda p: os.path.relpath(p, source)

    plan = dry_run(lake, "VACUUM s DRY RUN")
    assert plan == {
        rel(kept): (os.path.getsize(kept), "KEEP", "current"),
        rel(removed): (os.path.getsize(removed), "KEEP", "clone LAKE.PUBLIC.C@0"),
        rel(old): (os.path.getsize(old), "DELETE", "delete"),
        rel(recent): (os.path.getsize(recent), "KEEP", "retention"),
    }
    # A longer RETAIN reaches back to the version that still had the removed file.
    longer = dry_run(lake, "VACUUM s RETAIN 200 HOURS DRY RUN")
    assert longer[rel(removed)] == (os.path.getsize(removed), "KEEP", "retention")
    assert longer[rel(old)][1:] == ("DELETE", "delete")
    # The Python API gives the same plan.
    api = lake.vacuum_plan("s")
    assert {os.path.relpath(d.path, source): d.reason for d in api.decisions} == {k: v[2] for k, v in plan.items()}
    assert api.totals()["delete"] == (1, os.path.getsize(old))
    # DRY RUN deletes nothing; VACUUM deletes exactly the DELETE rows.
    assert all(os.path.exists(p) for p in (kept, removed, old, recent))
    assert vacuum(lake, "VACUUM s") == (1, plan[rel(old)][0])
    assert not os.path.exists(old)
    assert all(os.path.exists(p) for p in (kept, removed, recent))
    assert_all_readable(lake)


def _row_of(file: str) -> int:
    import pyarrow.parquet as pq

    return pq.read_table(file).column(0)[0].as_py()


def test_retention_under_the_configured_one_is_refused_unless_the_check_is_off(
    lake: lakeclone.Lake, retention_check
) -> None:
    lake.sql("CREATE TABLE s (id INT); CREATE TABLE short (id INT) DATA_RETENTION_TIME_IN_DAYS = 1")
    retention_check(True)
    for sql in ("VACUUM s RETAIN 0 HOURS", "VACUUM s RETAIN 167 HOURS DRY RUN"):
        with pytest.raises(lakeclone.LakecloneError, match=LOW_RETENTION) as error:
            lake.sql(sql)
        assert '"168 hours"' in str(error.value)
        assert f"{RETENTION_CHECK} = false" in str(error.value)
    assert vacuum(lake, "VACUUM s RETAIN 168 HOURS") == (0, 0)
    assert vacuum(lake, "VACUUM short RETAIN 24 HOURS") == (0, 0)
    with pytest.raises(lakeclone.LakecloneError, match='"24 hours"'):
        lake.sql("VACUUM short RETAIN 23 HOURS")
    retention_check(False)
    assert vacuum(lake, "VACUUM s RETAIN 0 HOURS") == (0, 0)


def test_expired_files_are_deleted_and_their_versions_are_gone(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)")
    source = location(lake, "s")
    lake.sql("CREATE TABLE c CLONE s AT(VERSION => 1)")
    needed = set(current_files(location(lake, "c")))
    unneeded = set(current_files(source)) - needed
    lake.sql("DELETE FROM s")  # version 3: no file left
    assert current_files(source) == []

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
    with pytest.raises(lakeclone.LakecloneError, match="Data is not available."):
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
    (first,) = current_files(location(lake, "c1"))
    (second,) = set(current_files(source)) - {first}
    lake.sql("DELETE FROM s WHERE id = 1")
    lake.sql("CREATE TABLE dropped CLONE s")  # the second file
    lake.sql("DELETE FROM c1")  # only c2 (a clone of a clone) needs the first file now
    lake.sql("DROP TABLE dropped")  # only a dropped, still undroppable clone needs the second
    lake.sql("DELETE FROM s")

    plan = dry_run(lake, "VACUUM s RETAIN 0 HOURS DRY RUN")
    assert plan == {
        os.path.relpath(first, source): (os.path.getsize(first), "KEEP", "clone LAKE.PUBLIC.C2@0"),
        os.path.relpath(second, source): (os.path.getsize(second), "KEEP", "clone LAKE.PUBLIC.DROPPED@0"),
    }
    assert vacuum(lake, "VACUUM s RETAIN 0 HOURS") == (0, 0)
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
    source_files = {f: os.path.getsize(f) for f in current_files(source)}
    lake.sql("CREATE TABLE c CLONE s")
    clone = location(lake, "c")
    lake.sql("UPDATE c SET v = 'A' WHERE id = 1")  # a file of c's own
    (own,) = [f for f in current_files(clone) if f.startswith(clone + os.sep)]
    lake.sql("CREATE TABLE cc CLONE c")  # references c's own file and one of s's
    lake.sql("DELETE FROM c WHERE id = 1")  # c itself no longer needs its file
    lake.sql("DROP TABLE cc")

    plan = dry_run(lake, "VACUUM c RETAIN 0 HOURS DRY RUN")
    assert plan == {os.path.relpath(own, clone): (os.path.getsize(own), "KEEP", "clone LAKE.PUBLIC.CC@0")}
    assert vacuum(lake, "VACUUM c RETAIN 0 HOURS") == (0, 0)
    # VACUUM of a clone never touches another table's folder.
    assert {f: os.path.getsize(f) for f in source_files} == source_files
    lake.sql("UNDROP TABLE cc")
    assert rows(lake, "SELECT * FROM cc") == [(1, "A"), (2, "b")]
    assert rows(lake, "SELECT * FROM c") == [(2, "b")]
    assert_all_readable(lake)

    # Once cc is purged, nothing needs c's file any more.
    lake.sql("DROP TABLE cc")
    clock.advance(days=8)
    size = os.path.getsize(own)
    assert vacuum(lake, "VACUUM c RETAIN 0 HOURS") == (1, size)
    assert rows(lake, "SELECT * FROM c") == kernel_rows(clone) == [(2, "b")]
    assert rows(lake, "SELECT * FROM s") == kernel_rows(source) == [(1, "a"), (2, "b")]


def test_an_in_retention_version_of_a_clone_keeps_source_files(lake: lakeclone.Lake, retention_check_off: None) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    source = location(lake, "s")
    (file,) = current_files(source)
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
