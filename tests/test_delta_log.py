"""What lakeclone reads of a Delta log without Spark jobs is what Delta's own state reconstruction gives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lake_helpers import location, spark_jobs_run

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
