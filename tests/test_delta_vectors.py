"""Deletion vectors compared: the rows of one file a change hid or showed again, read by Delta alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from lake_helpers import location

import lakeclone
from lakeclone.delta.changes import file_changes, files_frame, narrowed
from lakeclone.delta.log import Delta, TableLog
from lakeclone.delta.vectors import DeletionVectors

if TYPE_CHECKING:
    from collections.abc import Callable

    from warehouse_templates import Build

pytestmark = pytest.mark.spark


def _vectors(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id BIGINT) ENABLE_DELETION_VECTORS = TRUE")
    lake.sql("INSERT INTO t SELECT id FROM range(0, 10, 1, 1)")
    lake.sql("DELETE FROM t WHERE id IN (2, 3)")
    lake.sql("DELETE FROM t WHERE id = 7")


@pytest.fixture
def table(copy_of: Callable[[Build], lakeclone.Lake]) -> TableLog:
    """T: ids 0..9 in one file (v1), ids 2 and 3 deleted (v2), then id 7 (v3), each DELETE a deletion vector."""
    lake = copy_of(_vectors)
    log = Delta(lake.spark).table(location(lake, "t"))
    assert log.version() == 3
    return log


def only_file(log: TableLog, version: int) -> dict:
    (add,) = log.add_actions(version)
    return add


def ids(log: TableLog, add: dict | None) -> list[int]:
    assert add is not None
    return sorted(r.ID for r in files_frame(log, [add], version=log.version()).collect())


def test_rows_a_second_vector_hides(table: TableLog) -> None:
    before, after = only_file(table, 2), only_file(table, 3)
    assert before["path"] == after["path"] and before["deletionVector"] != after["deletionVector"]
    hidden, shown = DeletionVectors(table).only(before, after)
    assert ids(table, hidden) == [7]
    assert shown is None


def test_rows_the_first_vector_hides_in_a_file_that_had_none(table: TableLog) -> None:
    before, after = only_file(table, 1), only_file(table, 2)
    assert "deletionVector" not in before or not before["deletionVector"]
    hidden, shown = DeletionVectors(table).only(before, after)
    assert ids(table, hidden) == [2, 3]
    assert shown is None


def test_rows_shown_again_as_a_restore_does(table: TableLog) -> None:
    hidden, shown = DeletionVectors(table).only(only_file(table, 3), only_file(table, 1))
    assert hidden is None
    assert ids(table, shown) == [2, 3, 7]


def test_the_narrowed_file_keeps_its_row_tracking(lake: lakeclone.Lake) -> None:
    # T as the fixture's, with row tracking from its first version.
    lake.sql("CREATE TABLE t (id BIGINT) CHANGE_TRACKING = TRUE ENABLE_DELETION_VECTORS = TRUE")
    lake.sql("INSERT INTO t SELECT id FROM range(0, 10, 1, 1)")
    lake.sql("DELETE FROM t WHERE id IN (2, 3)")
    lake.sql("DELETE FROM t WHERE id = 7")
    table = Delta(lake.spark).table(location(lake, "t"))
    before, after = only_file(table, 2), only_file(table, 3)
    hidden, _ = DeletionVectors(table).only(before, after)
    assert hidden is not None
    assert (hidden["baseRowId"], hidden["defaultRowCommitVersion"]) == (before["baseRowId"], before["defaultRowCommitVersion"])
    (row,) = files_frame(table, [hidden], version=3).select("ID", "_metadata.row_id").collect()
    assert row["row_id"] == before["baseRowId"] + 7


def test_narrowed_changes_read_only_the_changed_rows(table: TableLog) -> None:
    whole = file_changes(table, 1, 3)
    assert [len(whole.removed), len(whole.added)] == [1, 1]
    found = narrowed(table, whole)
    assert [ids(table, add) for add in found.removed] == [[2, 3, 7]]
    assert found.added == []


def test_a_file_without_a_row_count_stays_whole(table: TableLog) -> None:
    whole = file_changes(table, 2, 3)
    for add in whole.added:
        add.pop("stats", None)
    with pytest.raises(ValueError, match="no row count"):
        DeletionVectors(table).only(whole.removed[0], whole.added[0])
    found = narrowed(table, whole)
    assert (found.removed, found.added) == (whole.removed, whole.added)
