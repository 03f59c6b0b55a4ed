"""Transactions: BEGIN … COMMIT | ROLLBACK, isolation between sessions, streams' repeatable read, recovery."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from delta_reader import kernel_rows
from lake_helpers import location, rows
from pyspark.sql import SparkSession

import lakeclone
from lakeclone.errors import LakecloneError

pytestmark = pytest.mark.spark


@pytest.fixture
def sessions(tmp_path: Path, spark: SparkSession, clock: lakeclone.ManualClock) -> tuple[lakeclone.Lake, lakeclone.Lake]:
    """Two sessions on one warehouse, with a table T (ID, V) holding (1, 'a')."""
    warehouse = tmp_path / "warehouse"
    first = lakeclone.connect(warehouse, spark=spark, clock=clock)
    first.sql("CREATE TABLE t (id INT, v STRING); INSERT INTO t VALUES (1, 'a')")
    second = lakeclone.connect(warehouse, spark=spark.newSession(), clock=clock)
    return first, second


def version(lake: lakeclone.Lake, table: str) -> int:
    return max(r.version for r in lake.sql(f"DESCRIBE HISTORY {table}").collect())


# Statements --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "begin",
    ["BEGIN", "BEGIN TRANSACTION", "BEGIN WORK", "START TRANSACTION", "BEGIN NAME nightly", "START TRANSACTION NAME nightly"],
)
def test_each_spelling_of_begin_opens_a_transaction(lake: lakeclone.Lake, begin: str) -> None:
    lake.sql("CREATE TABLE t (id INT)")
    lake.sql(begin)
    (open_one,) = lake.sql("SHOW TRANSACTIONS").collect()
    assert open_one.state == "running"
    assert open_one.name == ("NIGHTLY" if "NAME" in begin else None)
    lake.sql("INSERT INTO t VALUES (1)")
    lake.sql("COMMIT")
    assert lake.sql("SHOW TRANSACTIONS").collect() == []
    assert rows(lake, "SELECT * FROM t") == [(1,)]


def test_commit_or_rollback_without_a_transaction_is_an_error(lake: lakeclone.Lake) -> None:
    with pytest.raises(LakecloneError, match="no transaction to commit"):
        lake.sql("COMMIT")
    with pytest.raises(LakecloneError, match="no transaction to roll back"):
        lake.sql("ROLLBACK")


def test_begin_inside_a_transaction_is_an_error_and_keeps_it_open(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); BEGIN; INSERT INTO t VALUES (1)")
    with pytest.raises(LakecloneError, match="already open"):
        lake.sql("BEGIN")
    lake.sql("COMMIT")
    assert rows(lake, "SELECT * FROM t") == [(1,)]


# Isolation ---------------------------------------------------------------------------------


def test_writes_are_seen_by_the_transaction_and_no_one_else_until_commit(sessions) -> None:
    first, second = sessions
    first.sql("BEGIN")
    first.sql("INSERT INTO t VALUES (2, 'b')")
    first.sql("UPDATE t SET v = 'A' WHERE id = 1")
    assert rows(first, "SELECT * FROM t") == [(1, "A"), (2, "b")]
    assert rows(second, "SELECT * FROM t") == [(1, "a")]
    # Time travel by moment does not reach the uncommitted versions either.
    assert rows(second, "SELECT * FROM t AT(OFFSET => 0)") == [(1, "a")]
    with pytest.raises(LakecloneError, match="not committed yet"):
        second.sql(f"SELECT * FROM t AT(VERSION => {version(first, 't')})")
    first.sql("COMMIT")
    assert rows(second, "SELECT * FROM t") == [(1, "A"), (2, "b")]
    assert kernel_rows(location(second, "t")) == [(1, "A"), (2, "b")]


def test_a_worksheet_is_another_session_of_the_same_user_in_the_same_role(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA staging; CREATE TABLE public.t (id INT); CREATE TABLE staging.hidden (id INT)")
    lake.sql("CREATE ROLE analyst; CREATE USER bob; GRANT ROLE analyst TO USER bob")
    lake.sql("GRANT USAGE ON DATABASE lake TO ROLE analyst; GRANT USAGE ON SCHEMA public TO ROLE analyst")
    lake.sql("GRANT SELECT, INSERT ON TABLE public.t TO ROLE analyst")
    bob = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="bob", role="analyst")
    bob.lock_timeout = 7
    sheet = bob.worksheet()
    assert (sheet.current_user, sheet.current_role, sheet.lock_timeout) == ("BOB", "ANALYST", 7)
    assert sheet.spark is not bob.spark
    # Its role's privileges, no more.
    with pytest.raises(LakecloneError, match=r"Schema 'LAKE\.STAGING' does not exist or not authorized"):
        sheet.sql("SELECT * FROM staging.hidden")
    # Its settings and its transaction are its own.
    sheet.sql("ALTER SESSION SET LOCK_TIMEOUT = 3")
    sheet.sql("BEGIN; INSERT INTO t VALUES (1)")
    assert (bob.lock_timeout, sheet.lock_timeout) == (7, 3)
    assert rows(bob, "SELECT * FROM t") == []
    sheet.sql("COMMIT")
    assert rows(bob, "SELECT * FROM t") == [(1,)]
    # Ending it leaves the session it came from as it was.
    sheet.close()
    assert rows(bob, "SELECT * FROM t") == [(1,)]
    with pytest.raises(LakecloneError, match="session is closed"):
        sheet.sql("SELECT 1")


def test_a_clone_made_during_another_sessions_transaction_has_only_committed_rows(sessions) -> None:
    first, second = sessions
    first.sql("BEGIN; INSERT INTO t VALUES (2, 'b')")
    second.sql("CREATE TABLE now_clone CLONE t")
    second.sql("CREATE TABLE moment_clone CLONE t AT(OFFSET => 0)")
    first.sql("COMMIT")
    assert rows(second, "SELECT * FROM now_clone") == [(1, "a")]
    assert rows(second, "SELECT * FROM moment_clone") == [(1, "a")]
    assert kernel_rows(location(second, "now_clone")) == [(1, "a")]


def test_rollback_discards_every_write_and_hides_the_versions(sessions) -> None:
    first, second = sessions
    before = version(first, "t")
    first.sql("CREATE TABLE u (n INT)")
    first.sql("BEGIN")
    first.sql("INSERT INTO t VALUES (2, 'b')")
    first.sql("DELETE FROM t WHERE id = 1")
    first.sql("INSERT INTO u VALUES (7)")
    written = version(first, "t")
    first.sql("ROLLBACK")
    for lake in (first, second):
        assert rows(lake, "SELECT * FROM t") == [(1, "a")]
        assert rows(lake, "SELECT * FROM u") == []
    assert kernel_rows(location(first, "t")) == [(1, "a")]
    with pytest.raises(LakecloneError, match="never committed: the transaction that wrote it rolled back"):
        first.sql(f"SELECT * FROM t AT(VERSION => {written})")
    assert rows(first, f"SELECT * FROM t AT(VERSION => {before})") == [(1, "a")]
    assert rows(first, "SELECT * FROM t AT(OFFSET => 0)") == [(1, "a")]


def test_a_failed_statement_inside_a_transaction_leaves_the_rest_of_it(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); BEGIN; INSERT INTO t VALUES (1)")
    with pytest.raises(LakecloneError):
        lake.sql("INSERT INTO t SELECT * FROM missing")
    lake.sql("INSERT INTO t VALUES (2); COMMIT")
    assert rows(lake, "SELECT * FROM t") == [(1,), (2,)]


def test_ddl_commits_the_open_transaction_first(sessions) -> None:
    first, second = sessions
    first.sql("BEGIN; INSERT INTO t VALUES (2, 'b')")
    first.sql("CREATE TABLE other (x INT)")
    assert first.sql("SHOW TRANSACTIONS").collect() == []
    assert rows(second, "SELECT * FROM t") == [(1, "a"), (2, "b")]
    with pytest.raises(LakecloneError, match="no transaction to roll back"):
        first.sql("ROLLBACK")


def test_a_writer_waits_for_a_transaction_on_its_table(sessions) -> None:
    first, second = sessions
    first.sql("BEGIN; INSERT INTO t VALUES (2, 'b')")
    done = threading.Event()
    errors: list[BaseException] = []

    def insert() -> None:
        try:
            second.sql("INSERT INTO t VALUES (3, 'c')")
        except BaseException as error:
            errors.append(error)
        done.set()

    writer = threading.Thread(target=insert)
    writer.start()
    time.sleep(1.0)
    assert not done.is_set()  # it waits for the lock
    first.sql("ROLLBACK")
    writer.join(timeout=120)
    assert done.is_set() and not errors
    assert rows(first, "SELECT * FROM t") == [(1, "a"), (3, "c")]


def test_a_writer_gives_up_after_lock_timeout_and_changes_nothing(sessions) -> None:
    first, second = sessions
    first.sql("BEGIN; INSERT INTO t VALUES (2, 'b')")
    second.lock_timeout = 0.3
    with pytest.raises(LakecloneError, match="LOCK_TIMEOUT"):
        second.sql("UPDATE t SET v = 'z'")
    first.sql("COMMIT")
    assert rows(second, "SELECT * FROM t") == [(1, "a"), (2, "b")]


# Streams: repeatable read --------------------------------------------------------------------


def test_seed_timeline_two_transactions_and_a_stream(sessions) -> None:
    """Snowflake's repeatable-read example for streams.

    1. Session 1 begins transaction 1.
    2. It queries stream s1 on table t1: the changes from the offset to the transaction's start.
    3. It updates rows in t1 (and consumes s1 into a sink, in a DML statement).
    4. It queries s1 again: the same changes as at time 2.
    5. Transaction 2 (session 2) begins before transaction 1 commits: its reads stop at its own start.
    6. Session 1 commits: s1 advances to transaction 1's start.
    7. A transaction begun after that commit sees the changes transaction 1 committed.
    """
    first, second = sessions
    first.sql("CREATE STREAM s1 ON TABLE t")
    first.sql("CREATE TABLE sink (id INT, v STRING, action STRING)")
    first.sql("INSERT INTO t VALUES (2, 'b')")  # a change pending at the start

    first.sql("BEGIN")  # 1
    at_start = rows(first, "SELECT id, v, METADATA$ACTION FROM s1")  # 2
    assert at_start == [(2, "b", "INSERT")]
    second.sql("INSERT INTO t VALUES (9, 'late')")  # another session commits after transaction 1 began
    first.sql("UPDATE t SET v = 'B' WHERE id = 2")  # 3
    first.sql("INSERT INTO sink SELECT id, v, METADATA$ACTION FROM s1")
    assert rows(first, "SELECT id, v, METADATA$ACTION FROM s1") == at_start  # 4

    second.sql("BEGIN")  # 5
    assert rows(second, "SELECT id, v, METADATA$ACTION FROM s1") == [(2, "b", "INSERT"), (9, "late", "INSERT")]

    first.sql("COMMIT")  # 6
    assert rows(first, "SELECT * FROM sink") == [(2, "b", "INSERT")]
    # Transaction 2 began before the commit: still its own snapshot.
    assert rows(second, "SELECT id, v, METADATA$ACTION FROM s1") == [(2, "b", "INSERT"), (9, "late", "INSERT")]
    second.sql("COMMIT")

    second.sql("BEGIN")  # 7
    after = rows(second, "SELECT id, v, METADATA$ACTION, METADATA$ISUPDATE FROM s1")
    assert after == [(2, "B", "INSERT", True), (2, "b", "DELETE", True), (9, "late", "INSERT", False)]
    second.sql("COMMIT")


def test_rollback_leaves_the_stream_offset(sessions) -> None:
    first, _ = sessions
    first.sql("CREATE STREAM s ON TABLE t; CREATE TABLE sink (id INT)")
    first.sql("INSERT INTO t VALUES (2, 'b')")
    first.sql("BEGIN; INSERT INTO sink SELECT id FROM s; ROLLBACK")
    assert rows(first, "SELECT id FROM s") == [(2,)]
    assert rows(first, "SELECT * FROM sink") == []


def test_a_rolled_back_write_is_no_change_to_a_stream(sessions) -> None:
    first, second = sessions
    first.sql("CREATE STREAM s ON TABLE t")
    first.sql("BEGIN; UPDATE t SET v = 'x'; INSERT INTO t VALUES (5, 'e'); DELETE FROM t WHERE id = 1; ROLLBACK")
    assert rows(second, "SELECT * FROM s") == []
    first.sql("INSERT INTO t VALUES (6, 'f')")
    assert rows(second, "SELECT id, METADATA$ACTION FROM s") == [(6, "INSERT")]


def test_another_session_consuming_the_stream_waits_for_the_transaction(sessions) -> None:
    first, second = sessions
    first.sql("CREATE STREAM s ON TABLE t; CREATE TABLE sink (id INT); CREATE TABLE sink2 (id INT)")
    first.sql("INSERT INTO t VALUES (2, 'b')")
    first.sql("BEGIN; INSERT INTO sink SELECT id FROM s")
    result: list[object] = []
    consumer = threading.Thread(target=lambda: result.append(second.sql("INSERT INTO sink2 SELECT id FROM s")))
    consumer.start()
    time.sleep(1.0)
    assert not result
    first.sql("COMMIT")
    consumer.join(timeout=120)
    assert rows(first, "SELECT * FROM sink") == [(2,)]
    assert rows(first, "SELECT * FROM sink2") == []  # the change went to the transaction, once


# Crashes -----------------------------------------------------------------------------------


def test_a_dead_sessions_open_transaction_is_rolled_back_on_connect(tmp_path: Path, spark, clock) -> None:
    warehouse = tmp_path / "warehouse"
    first = lakeclone.connect(warehouse, spark=spark, clock=clock)
    first.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    first.sql("CREATE STREAM s ON TABLE t; CREATE TABLE sink (id INT)")
    first.sql("INSERT INTO t VALUES (2)")
    first.sql("BEGIN; INSERT INTO t VALUES (3); INSERT INTO sink SELECT id FROM s")
    first.close()  # the session ends with its transaction open
    first.close()  # once is enough
    with pytest.raises(LakecloneError, match="This Lake's session is closed: connect again"):
        first.sql("COMMIT")
    second = lakeclone.connect(warehouse, spark=spark.newSession(), clock=clock)
    assert second.sql("SHOW TRANSACTIONS").collect() == []
    assert rows(second, "SELECT * FROM t") == [(1,), (2,)]
    assert kernel_rows(location(second, "t")) == [(1,), (2,)]
    assert rows(second, "SELECT * FROM sink") == []
    assert rows(second, "SELECT id FROM s") == [(2,)]


def test_a_transaction_cannot_consume_what_another_consumed_after_its_first_read(sessions) -> None:
    first, second = sessions
    first.sql("CREATE STREAM s ON TABLE t; CREATE TABLE sink (id INT)")
    first.sql("INSERT INTO t VALUES (2, 'b')")
    second.sql("BEGIN")
    assert rows(second, "SELECT id FROM s") == [(2,)]
    first.sql("INSERT INTO sink SELECT id FROM s")  # autocommit: consumes (2)
    with pytest.raises(LakecloneError, match="consumed by another transaction"):
        second.sql("INSERT INTO sink SELECT id FROM s")
    second.sql("ROLLBACK")
    assert rows(first, "SELECT * FROM sink") == [(2,)]
    assert rows(second, "SELECT * FROM s") == []


def test_a_committed_transactions_intermediate_versions_are_hidden(sessions, clock) -> None:
    first, _ = sessions
    before = version(first, "t")
    first.sql("BEGIN; INSERT INTO t VALUES (2, 'b')")
    middle = version(first, "t")
    first.sql("INSERT INTO t VALUES (3, 'c'); COMMIT")
    with pytest.raises(LakecloneError, match="never committed: the transaction that wrote it went on"):
        first.sql(f"SELECT * FROM t AT(VERSION => {middle})")
    assert rows(first, f"SELECT * FROM t AT(VERSION => {middle + 1})") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(first, f"SELECT * FROM t AT(VERSION => {before})") == [(1, "a")]
