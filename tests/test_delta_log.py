"""What lakeclone reads of a Delta log without Spark jobs is what Delta's own state reconstruction gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from lake_helpers import catalog_entry, location, spark_jobs_run

import lakeclone
from lakeclone.delta.log import Delta, TableLog

pytestmark = pytest.mark.spark


def reconstructed(log: TableLog, version: int) -> list[dict[str, Any]]:
    """The version's add actions as Delta's state reconstruction gives them (Spark jobs)."""
    snapshot = log.snapshot_object(version)
    return [json.loads(line) for line in snapshot.allFiles().toJSON().collect()]


def by_path(adds: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The actions by path; empty tags (which a log may spell as {} or leave out) left out."""
    return {add["path"]: {k: v for k, v in add.items() if k != "tags" or v} for add in adds}


def test_add_actions_come_from_the_checksum_and_are_deltas_own(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE a (id INT, v STRING) ENABLE_DELETION_VECTORS = TRUE;"
        "INSERT INTO a VALUES (1, 'a'), (2, 'b'), (3, 'c'); INSERT INTO a VALUES (4, 'd');"
        "DELETE FROM a WHERE id = 2; UPDATE a SET v = 'D' WHERE id = 4;"
        "CREATE TABLE shallow CLONE a; INSERT INTO shallow VALUES (5, 'e'); DELETE FROM shallow WHERE id = 1;"
        "CREATE TABLE deep DEEP CLONE a;"
        "CREATE TABLE tracked (id INT); INSERT INTO tracked VALUES (1), (2);"
        "ALTER TABLE tracked SET CHANGE_TRACKING = TRUE; INSERT INTO tracked VALUES (3); DELETE FROM tracked WHERE id = 1"
    )
    delta = Delta(lake.spark)
    read_from_checksum = []
    for name in ("a", "shallow", "deep", "tracked"):
        log = delta.table(location(lake, name))
        for version in range(log.version() + 1):
            lake.spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # no state computed yet
            with spark_jobs_run(lake.spark) as jobs:
                adds = log.add_actions(version)
            assert by_path(adds) == by_path(reconstructed(log, version)), (name, version)
            if not jobs:
                read_from_checksum.append((name, version))
    assert len(read_from_checksum) == 5 + 3 + 1 + 7  # every version


def test_a_latest_version_known_before_is_checked_with_storage_not_asked_of_delta(
    lake: lakeclone.Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    entry = catalog_entry(lake, "T")
    assert entry is not None
    delta = Delta(lake.spark)
    delta_version = TableLog.version

    def latest() -> tuple[int, bool]:
        """The latest version of t, and whether Delta was asked for it."""
        asked: list[str] = []
        with monkeypatch.context() as patch:
            patch.setattr(TableLog, "version", lambda log: asked.append(log.location) or delta_version(log))
            return delta.latest_version(entry.location), bool(asked)

    assert latest() == (1, True)
    assert latest() == (1, False)
    # A commit made elsewhere (here by the Lake's own Delta object) is its file: the next version's is there.
    lake.sql("INSERT INTO t VALUES (2)")
    assert latest() == (2, True)
    assert latest() == (2, False)
    # A log deleted outside lakeclone: the known version's file is gone, so Delta is asked, and finds no table.
    shutil.rmtree(Path(location(lake, "t")) / "_delta_log")
    assert latest() == (-1, True)


def test_a_write_and_the_statement_after_it_ask_delta_for_no_version(
    lake: lakeclone.Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    asked: list[str] = []
    delta_latest = TableLog._latest  # Delta's update(): a listing of the log for its newest commits
    monkeypatch.setattr(TableLog, "_latest", lambda log: asked.append(log.location) or delta_latest(log))
    # INSERT's count comes from the commit Delta just made; the SELECT after it reads the version it made.
    assert lake.sql("INSERT INTO t VALUES (2), (3)").collect()[0][0] == 2
    assert sorted(r.ID for r in lake.sql("SELECT id FROM t").collect()) == [1, 2, 3]
    assert lake.sql("INSERT INTO t SELECT id + 10 FROM t").collect()[0][0] == 3
    assert asked == []
    # A commit made elsewhere is still found: its file follows the version this process made, so Delta is asked.
    lake.spark.sql(f"INSERT INTO delta.`{location(lake, 't')}` VALUES (99)")
    assert sorted(r.ID for r in lake.sql("SELECT id FROM t").collect()) == [1, 2, 3, 11, 12, 13, 99]
    assert asked != []
