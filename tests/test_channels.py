"""Channels: rows pushed through named channels with offset tokens, committed to Delta exactly once.

Every table is read back with delta-spark and the Delta kernel; the token is
checked in the table's own log (the commit's ``txn`` action and its
``commitInfo``), the source of truth.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from delta_reader import kernel_rows, spark_rows
from lake_helpers import location, rows, spark_jobs_run

import lakeclone
from lakeclone.catalog.store import Catalog
from lakeclone.channels import (
    ChannelInsertError,
    ChannelInvalidError,
    ChannelOpenError,
    ChannelStatusCode,
    OnError,
    StreamingClient,
)
from lakeclone.errors import InvalidParameterError, LakecloneError, ObjectNotFoundError

pytestmark = pytest.mark.spark

LONG_LAG = "10 minutes"  # no background flush unless a test moves the clock that far


@pytest.fixture
def client(lake: lakeclone.Lake) -> Iterator[StreamingClient]:
    lake.sql("CREATE TABLE t (id INT, v STRING)")
    with lake.streaming_client("ingest") as streaming:
        yield streaming


def log_commits(lake: lakeclone.Lake, table: str) -> list[dict[str, object]]:
    """Each commit file of the table's log, its actions by kind (read, never written, by the test)."""
    folder = Path(location(lake, table)) / "_delta_log"
    found = []
    for path in sorted(folder.glob("*.json")):
        actions: dict[str, object] = {}
        for line in path.read_text().splitlines():
            ((kind, body),) = json.loads(line).items()
            actions.setdefault(kind, []).append(body)  # type: ignore[attr-defined]
        found.append(actions)
    return found


def read_back(lake: lakeclone.Lake, table: str) -> list[tuple[object, ...]]:
    """The table's rows as delta-spark and the Delta kernel read them, which must agree."""
    folder = location(lake, table)
    by_spark = spark_rows(lake.spark, folder)
    assert kernel_rows(folder) == by_spark
    return by_spark


# Committing ------------------------------------------------------------------------------------------


def test_a_flush_is_one_commit_with_the_rows_the_txn_action_and_the_token(lake, client) -> None:
    channel, status = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    assert status.latest_committed_offset_token is None
    assert status.status_code is ChannelStatusCode.SUCCESS
    channel.append_rows([{"id": 1, "v": "a"}, {"ID": 2, "V": "b"}], offset_token="2")
    channel.append_row({"id": 3}, offset_token="3")
    assert read_back(lake, "t") == []  # buffered, not committed
    channel.flush()

    assert read_back(lake, "t") == [(1, "a"), (2, "b"), (3, None)]
    assert channel.get_latest_committed_offset_token() == "3"
    last = log_commits(lake, "t")[-1]
    (txn,) = last["txn"]  # type: ignore[misc]
    (info,) = last["commitInfo"]  # type: ignore[misc]
    assert txn["appId"].startswith("lakeclone-channel-")
    assert json.loads(info["userMetadata"])["operationParameters"]["offsetToken"] == "3"
    assert json.loads(info["userMetadata"])["operationParameters"]["channelTxnVersion"] == str(txn["version"])
    assert len(last["add"]) >= 1  # type: ignore[arg-type]
    status = channel.get_channel_status()
    assert (status.latest_committed_offset_token, status.rows_inserted_count, status.buffered_row_count) == ("3", 3, 0)


def test_rows_wait_for_max_client_lag_on_the_lakes_clock(lake, client, clock) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag="2 seconds")
    channel.append_rows([{"id": 1}], offset_token="1")
    time.sleep(0.5)  # real time passes; the Lake's clock does not
    assert channel.get_channel_status().latest_committed_offset_token is None
    clock.advance(seconds=1)
    time.sleep(0.3)
    assert read_back(lake, "t") == []
    assert channel.get_channel_status().lag >= dt.timedelta(seconds=1)
    clock.advance(seconds=1)
    assert channel.wait_for_commit("1", timeout_seconds=120)
    assert read_back(lake, "t") == [(1, None)]
    assert channel.wait_for_commit(lambda token: token is not None and int(token) >= 1, timeout_seconds=1)


def spark_jobs(spark: object) -> list[Any]:
    """Spark's records of the jobs this JVM has run (its status store, as the Spark UI shows them)."""
    jobs = spark.sparkContext._jsc.sc().statusStore().jobsList(None)  # type: ignore[attr-defined]
    return [jobs.apply(i) for i in range(jobs.size())]


def last_job(spark: object) -> int:
    """The id of the latest Spark job this JVM started (-1: none)."""
    return max((job.jobId() for job in spark_jobs(spark)), default=-1)


def states_computed_since(job: int, *sessions: Any) -> set[int]:
    """The versions whose state Delta computed in the jobs ``sessions`` ran after ``job`` (Delta names them in the job's description).

    Only those sessions' jobs (Spark tags each with its session's tag): other
    tests' sessions run theirs in the same JVM at the same time.
    """
    prefix = "Delta: Compute snapshot for version: "
    tags = {session._jsparkSession.sessionJobTag() for session in sessions}
    found = set()
    for data in spark_jobs(sessions[0]):
        description = data.description()
        if (
            data.jobId() > job
            and description.isDefined()
            and description.get().startswith(prefix)
            and tags & set(str(data.jobTags().mkString("\n")).split("\n"))
        ):
            found.add(int(description.get()[len(prefix) :]))
    return found


def test_the_flusher_computes_the_state_of_the_next_commit_while_its_rows_gather(lake, client, clock) -> None:
    log = lake._executor.delta.table(lake._executor.resolve("t").location)  # reads no table state, as DESCRIBE DETAIL would
    channel, _ = client.open_channel("c1", table="t", max_client_lag="1 second")
    channel.append_rows([{"id": 0}], offset_token="0")
    clock.advance(seconds=1)
    appended = 1
    while channel.get_channel_status().latest_committed_offset_token is None:  # rows keep coming during the commit
        channel.append_rows([{"id": appended}], offset_token=str(appended))
        appended += 1
        time.sleep(0.01)
    assert channel.get_channel_status().buffered_row_count > 0
    version = log.version()
    deadline = time.monotonic() + 120
    # Delta's own flag that the snapshot's state is computed (set when its computation ends); only the flusher computes it
    while not log.snapshot_object()._computedStateTriggered() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.snapshot_object()._computedStateTriggered()
    assert log.version() == version  # before the next flush is due
    computed = last_job(lake.spark)
    assert version in states_computed_since(-1, lake.spark, client._session.spark)  # the flusher's job, found by its session
    clock.advance(seconds=1)
    assert channel.wait_for_commit(str(appended - 1), timeout_seconds=120)
    assert log.version() == version + 1
    # The commit from `version` found its state computed.
    assert states_computed_since(computed, lake.spark, client._session.spark) == set()
    assert read_back(lake, "t") == [(i, None) for i in range(appended)]


def test_no_state_is_computed_ahead_for_a_channel_holding_no_rows(lake, client) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    flushed = last_job(lake.spark)
    time.sleep(1)  # many rounds of the flusher
    assert states_computed_since(flushed, lake.spark, client._session.spark) == set()
    assert read_back(lake, "t") == [(1, None)]


def test_max_client_lag_is_checked(client) -> None:
    with pytest.raises(InvalidParameterError):
        client.open_channel("c1", table="t", max_client_lag="11 minutes")
    with pytest.raises(InvalidParameterError):
        client.open_channel("c1", table="t", max_client_lag="soon")


def test_channels_of_one_table_keep_their_own_tokens(lake, client) -> None:
    first, _ = client.open_channel("p0", table="t", max_client_lag=LONG_LAG)
    second, _ = client.open_channel("p1", table="t", max_client_lag=LONG_LAG)
    first.append_rows([{"id": 1}], offset_token="a-1")
    second.append_rows([{"id": 10}, {"id": 11}], offset_token="b-2")
    first.flush()
    second.flush()
    assert (first.get_latest_committed_offset_token(), second.get_latest_committed_offset_token()) == ("a-1", "b-2")
    shown = {r["name"]: r for r in lake.sql("SHOW CHANNELS IN TABLE t").collect()}
    assert {n: (r["offset_token"], r["rows_inserted"]) for n, r in shown.items()} == {"p0": ("a-1", 1), "p1": ("b-2", 2)}


def test_closing_flushes_or_discards(lake, client) -> None:
    kept, _ = client.open_channel("kept", table="t", max_client_lag=LONG_LAG)
    dropped, _ = client.open_channel("dropped", table="t", max_client_lag=LONG_LAG)
    kept.append_rows([{"id": 1}], offset_token="1")
    dropped.append_rows([{"id": 2}], offset_token="1")
    kept.close(timeout_seconds=120)
    dropped.close(wait_for_flush=False)
    assert read_back(lake, "t") == [(1, None)]
    assert kept.get_channel_status().status_code is ChannelStatusCode.CLOSED
    with pytest.raises(ChannelInvalidError, match="closed"):
        kept.append_row({"id": 3})
    _reopened, status = client.open_channel("dropped", table="t")
    assert status.latest_committed_offset_token is None
    # A handle's status still reads once its client is closed.
    client.close()
    closed = kept.get_channel_status()
    assert (closed.status_code, closed.rows_inserted_count, closed.latest_committed_offset_token) == (
        ChannelStatusCode.CLOSED,
        1,
        "1",
    )


def test_leaving_the_client_block_flushes_its_channels(lake) -> None:
    lake.sql("CREATE TABLE t (id INT)")
    with lake.streaming_client("c") as streaming:
        channel, _ = streaming.open_channel("c1", table="t", max_client_lag=LONG_LAG)
        channel.append_rows([{"id": 1}, {"id": 2}], offset_token="2")
    assert read_back(lake, "t") == [(1,), (2,)]
    assert lake.sql("SHOW CHANNELS").first()["offset_token"] == "2"


# Reopening -------------------------------------------------------------------------------------------


def test_reopening_invalidates_the_old_handle_and_drops_its_buffer(lake, client) -> None:
    old, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    old.append_rows([{"id": 1}], offset_token="1")
    old.flush()
    old.append_rows([{"id": 2}], offset_token="2")  # buffered when the channel is reopened
    with lake.streaming_client("other") as other:
        new, status = other.open_channel("c1", table="t", max_client_lag=LONG_LAG)
        assert status.latest_committed_offset_token == "1"
        assert not old.is_valid
        assert old.get_channel_status().status_code is ChannelStatusCode.INVALID
        for call in (old.flush, lambda: old.append_row({"id": 3}), old.get_latest_committed_offset_token):
            with pytest.raises(ChannelInvalidError, match="reopened"):
                call()
        new.append_rows([{"id": 20}], offset_token="2")
        new.flush()
    assert read_back(lake, "t") == [(1, None), (20, None)]


def test_a_stale_flush_that_passed_the_catalog_check_cannot_land(lake, client) -> None:
    """The race the catalog cannot close: the log refuses an older handle's version after a reopen."""
    old, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    old.append_rows([{"id": 1}], offset_token="1")
    new, _status = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    # As if the old handle had checked its generation just before the reopen.
    current = client._state(old._entry.id)
    assert current is not None
    old._entry = current
    with pytest.raises(ChannelInvalidError):
        old.flush()
    assert read_back(lake, "t") == []
    assert new.get_latest_committed_offset_token() is None
    new.append_rows([{"id": 5}], offset_token="5")
    new.flush()
    assert read_back(lake, "t") == [(5, None)]


def test_unknown_tables_and_names(client) -> None:
    with pytest.raises(ObjectNotFoundError):
        client.open_channel("c1", table="missing")
    with pytest.raises(InvalidParameterError):
        client.open_channel("", table="t")


def test_a_table_s_name_resolves_in_the_lake_s_current_schema_when_the_channel_opens(lake, client) -> None:
    lake.sql("CREATE DATABASE d; CREATE SCHEMA d.s; CREATE TABLE t (id INT, v STRING)")  # D.S.T beside LAKE.PUBLIC.T
    channel, _ = client.open_channel("c", table="t")
    channel.append_rows([{"id": 1, "v": "in d.s"}], offset_token="1")
    channel.flush()
    assert rows(lake, "SELECT * FROM d.s.t") == [(1, "in d.s")]
    assert rows(lake, "SELECT * FROM lake.public.t") == []
    lake.sql("USE SCHEMA lake.public")
    channel, _ = client.open_channel("c", table="t")
    assert channel.table.qualified == "LAKE.PUBLIC.T"


# ON_ERROR and conversions --------------------------------------------------------------------------------


@pytest.fixture
def typed(lake: lakeclone.Lake) -> Iterator[StreamingClient]:
    lake.sql(
        "CREATE TABLE typed (i INT, n NUMBER(10, 2), f FLOAT, b BOOLEAN, d DATE, ts TIMESTAMP_NTZ, "
        "tz TIMESTAMP_LTZ, bin BINARY, v VARIANT, s VARCHAR NOT NULL)"
    )
    with lake.streaming_client("typed") as streaming:
        yield streaming


def test_values_convert_as_snowpipe_streaming_converts_them(lake, typed) -> None:
    channel, _ = typed.open_channel("c1", table="typed", max_client_lag=LONG_LAG)
    response = channel.insert_rows(
        [
            {
                "i": "42",
                "n": "3.14159",
                "f": "2.5",
                "b": "yes",
                "d": "2024-02-29",
                "ts": "2024-02-29T10:11:12.5",
                "tz": "2024-02-29 10:11:12 +02:00",
                "bin": "CAFE",
                "v": '{"a": [1, 2]}',
                "s": 7,
            },
            {
                "i": 7.0,
                "n": 1,
                "f": 1,
                "b": 0,
                "d": "29-Feb-2024",
                "ts": 1709201472,
                "tz": "1709201472000",
                "bin": b"\x01",
                "v": {"k": "x"},
                "s": "x",
            },
            {"b": "F", "d": "02/29/2024", "ts": "Thu, 29 Feb 2024 10:11:12 +0000", "v": [1, "two"], "s": True},
        ],
        offset_token="3",
    )
    assert not response.has_errors() and response.inserted_row_count == 3
    channel.flush()
    got = lake.sql("SELECT i, n, f, b, d, ts, tz, bin, to_json(v) AS v, s FROM typed ORDER BY i NULLS LAST").collect()
    assert [tuple(r) for r in got] == [
        (
            7,
            decimal.Decimal("1.00"),
            1.0,
            False,
            dt.date(2024, 2, 29),
            dt.datetime(2024, 2, 29, 10, 11, 12),
            dt.datetime(2024, 2, 29, 10, 11, 12),
            bytearray(b"\x01"),
            '{"k":"x"}',
            "x",
        ),
        (
            42,
            decimal.Decimal("3.14"),
            2.5,
            True,
            dt.date(2024, 2, 29),
            dt.datetime(2024, 2, 29, 10, 11, 12, 500000),
            dt.datetime(2024, 2, 29, 8, 11, 12),
            bytearray(b"\xca\xfe"),
            '{"a":[1,2]}',
            "7",
        ),
        (None, None, None, False, dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 10, 11, 12), None, None, '[1,"two"]', "true"),
    ]


def test_on_error_continue_loads_the_good_rows_and_lists_every_error(lake, typed) -> None:
    channel, _ = typed.open_channel("c1", table="typed", on_error="CONTINUE", max_client_lag=LONG_LAG)
    response = channel.insert_rows(
        [
            {"i": 1, "s": "ok"},
            {"i": "x", "d": "not a date", "s": "bad"},
            {"i": 3, "bin": "XYZ", "s": "bad"},
            {"i": 4},
            {"i": 5, "s": "ok", "nope": 1},
        ],
        offset_token="5",
    )
    assert [(e.row_index, e.column) for e in response.errors] == [(1, "I"), (1, "D"), (2, "BIN"), (3, "S"), (4, "nope")]
    assert "not recognized" in response.errors[0].message and "hex" in response.errors[2].message
    assert "non-nullable" in response.errors[3].message
    assert response.error_row_count == 4 and response.inserted_row_count == 1
    channel.flush()
    assert rows(lake, "SELECT i, s FROM typed") == [(1, "ok")]
    status = channel.get_channel_status()
    assert (status.rows_error_count, status.latest_committed_offset_token) == (4, "5")
    assert status.last_error_message is not None and "nope" in status.last_error_message
    # The client's work ran as statements of its session, each in the query history as the user ran it.
    history = lake.sql(
        "SELECT QUERY_TYPE, QUERY_TEXT, USER_NAME, EXECUTION_STATUS FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY()) "
        "WHERE QUERY_TEXT LIKE '-- %channel c1%' ORDER BY START_TIME"
    ).collect()
    assert [tuple(row) for row in history] == [
        ("INSERT", "-- open channel c1 on typed", "ADMIN", "SUCCESS"),
        ("UNKNOWN", "-- errors of channel c1", "ADMIN", "SUCCESS"),
        ("INSERT", "-- flush channel c1 of LAKE.PUBLIC.TYPED", "ADMIN", "SUCCESS"),
    ]


def test_on_error_skip_batch_loads_nothing_of_a_batch_with_an_error(lake, typed) -> None:
    channel, _ = typed.open_channel("c1", table="typed", on_error=OnError.SKIP_BATCH, max_client_lag=LONG_LAG)
    response = channel.insert_rows([{"i": 1, "s": "a"}, {"i": 2, "b": "maybe", "s": "b"}], offset_token="2")
    assert [(e.row_index, e.column) for e in response.errors] == [(1, "B")]
    assert response.inserted_row_count == 0
    assert not channel.insert_rows([{"i": 3, "s": "c"}], offset_token="3").has_errors()
    channel.flush()
    assert rows(lake, "SELECT i FROM typed") == [(3,)]
    assert channel.get_latest_committed_offset_token() == "3"


def test_on_error_abort_raises_at_the_first_error_and_keeps_nothing_of_the_batch(lake, typed) -> None:
    channel, _ = typed.open_channel("c1", table="typed", max_client_lag=LONG_LAG)
    channel.append_rows([{"i": 1, "s": "a"}], offset_token="1")
    with pytest.raises(ChannelInsertError, match="Row 1, column F") as raised:
        channel.append_rows([{"i": 2, "s": "b"}, {"f": "fast", "s": "c"}, {"n": "1e40", "s": "d"}], offset_token="3")
    assert len(raised.value.errors) == 1
    channel.flush()
    assert rows(lake, "SELECT i FROM typed") == [(1,)]
    assert channel.get_latest_committed_offset_token() == "1"  # the rejected batch's token is not committed


@pytest.mark.parametrize(
    ("ddl", "reason"),
    [
        ("CREATE SEQUENCE seq; CREATE TABLE r (id INT DEFAULT seq.NEXTVAL, v STRING)", "AUTOINCREMENT/IDENTITY"),
        ("CREATE TABLE r (id INT AUTOINCREMENT, v STRING)", "AUTOINCREMENT/IDENTITY"),
        ("CREATE TABLE r (id INT, v STRING DEFAULT 'x')", "default value"),
    ],
)
def test_tables_channels_cannot_fill_are_refused_at_open(lake, ddl: str, reason: str) -> None:
    lake.sql(ddl)
    with lake.streaming_client("c") as streaming, pytest.raises(ChannelOpenError, match=reason):
        streaming.open_channel("c1", table="r")
    assert lake.sql("SHOW CHANNELS").collect() == []


# Lifecycle: drop and recreate, clones, expiry --------------------------------------------------------------


def test_a_recreated_table_and_a_clone_start_their_channels_at_null(lake, client) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    lake.sql("CREATE TABLE t_clone CLONE t")
    _on_clone, status = client.open_channel("c1", table="t_clone")
    assert status.latest_committed_offset_token is None
    assert rows(lake, "SELECT id FROM t_clone") == [(1,)]  # the rows came along, the channel did not
    assert channel.get_latest_committed_offset_token() == "1"

    lake.sql("DROP TABLE t; CREATE TABLE t (id INT, v STRING)")
    with pytest.raises(ChannelInvalidError, match="dropped"):
        channel.append_rows([{"id": 2}], offset_token="2")
        channel.flush()
    _again, status = client.open_channel("c1", table="t")
    assert status.latest_committed_offset_token is None


def test_a_channel_idle_for_30_days_starts_over_at_null(lake, client, clock) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    clock.advance(days=29)
    assert lake.sql("SHOW CHANNELS").first()["offset_token"] == "1"
    _, status = client.open_channel("c1", table="t")
    assert status.latest_committed_offset_token == "1"
    clock.advance(days=31)
    assert lake.sql("SHOW CHANNELS").first()["offset_token"] is None
    _, status = client.open_channel("c1", table="t")
    assert status.latest_committed_offset_token is None
    assert rows(lake, "SELECT id FROM t") == [(1,)]


# Streams, transactions, SHOW CHANNELS ----------------------------------------------------------------------


def test_an_open_commits_the_txn_action_alone_and_writes_no_file(lake, client) -> None:
    active = lake.spark._jvm.org.apache.spark.sql.SparkSession.getActiveSession()
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    fence = log_commits(lake, "t")[-1]
    assert sorted(fence) == ["commitInfo", "txn"]  # no add, no remove: no data file at all
    (txn,) = fence["txn"]  # type: ignore[misc]
    assert txn["appId"] == channel._entry.app_id and txn["version"] == 0
    assert list(Path(location(lake, "t")).glob("*.parquet")) == []  # not even an unreferenced empty one
    (last,) = lake.sql("DESCRIBE HISTORY t LIMIT 1").collect()
    assert (last.operation, last.operationParameters["channel"], last.operationParameters["channelOpened"]) == (
        "STREAMING UPDATE",
        "c1",
        "true",
    )
    # The Lake's own session is still the thread's active one: the open activated the client's only for its commit.
    assert lake.spark._jvm.org.apache.spark.sql.SparkSession.getActiveSession().equals(active)
    # A reopen fences again; the older handle's rows never land.
    channel.append_rows([{"id": 1}], offset_token="1")
    again, status = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    assert status.latest_committed_offset_token is None and log_commits(lake, "t")[-1]["txn"][0]["version"] == 1  # type: ignore[index]
    with pytest.raises(ChannelInvalidError):
        channel.flush()
    again.append_rows([{"id": 2}], offset_token="2")
    again.flush()
    assert read_back(lake, "t") == [(2, None)]
    assert again.get_latest_committed_offset_token() == "2"


def test_a_stream_sees_channel_rows_as_inserts_and_nothing_of_an_open(lake, client) -> None:
    lake.sql("CREATE STREAM s ON TABLE t")
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    assert lake.sql("SELECT * FROM s").collect() == []
    channel.append_rows([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}], offset_token="2")
    channel.flush()
    got = lake.sql('SELECT id, v, "METADATA$ACTION", "METADATA$ISUPDATE" FROM s').collect()
    assert sorted(tuple(r) for r in got) == [(1, "a", "INSERT", False), (2, "b", "INSERT", False)]
    lake.sql("CREATE TABLE sink (id INT); INSERT INTO sink SELECT id FROM s")
    assert rows(lake, "SELECT id FROM sink") == [(1,), (2,)]
    assert lake.sql("SELECT * FROM s").collect() == []


def test_a_flush_waits_for_another_sessions_transaction_on_the_table(lake, client) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 2}], offset_token="2")
    lake.sql("BEGIN; INSERT INTO t VALUES (1, 'txn')")
    lake.lock_timeout = 0.5
    with pytest.raises(LakecloneError, match="LOCK_TIMEOUT"):
        channel.flush()
    lake.sql("COMMIT")
    assert channel.get_channel_status().buffered_row_count == 1  # nothing landed; the rows wait
    channel.flush()
    assert read_back(lake, "t") == [(1, "txn"), (2, None)]
    assert channel.get_latest_committed_offset_token() == "2"


def test_show_channels(lake, client) -> None:
    lake.sql("CREATE SCHEMA other; CREATE TABLE other.u (id INT)")  # OTHER becomes the current schema
    a, _ = client.open_channel("alpha", table="public.t", max_client_lag=LONG_LAG)
    client.open_channel("beta", table="other.u")
    a.append_rows([{"id": 1}], offset_token="t:1")
    a.flush()
    everything = lake.sql("SHOW CHANNELS").collect()
    assert [(r["name"], r["schema_name"], r["table_name"]) for r in everything] == [
        ("beta", "OTHER", "U"),
        ("alpha", "PUBLIC", "T"),
    ]
    (alpha,) = lake.sql("SHOW CHANNELS LIKE 'al%' IN TABLE public.t").collect()
    assert (alpha["database_name"], alpha["offset_token"], alpha["rows_inserted"], alpha["status"]) == (
        "LAKE",
        "t:1",
        1,
        "ACTIVE",
    )
    assert alpha["created_on"] is not None and alpha["last_committed_on"] is not None
    assert [r["name"] for r in lake.sql("SHOW CHANNELS IN SCHEMA other").collect()] == ["beta"]
    assert lake.sql("SHOW CHANNELS LIKE 'zz%'").collect() == []


def test_the_token_shown_is_the_logs_even_when_the_catalog_trails(lake, client) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    # A process that died between its commit and its catalog record leaves the catalog behind.
    catalog = Catalog(lake.catalog_path)
    with catalog.transaction():
        catalog.channels.cache_channel_token(channel._entry.id, channel._entry.app_id, None, None)
    catalog.close()
    assert lake.sql("SHOW CHANNELS").first()["offset_token"] == "1"
    _, status = client.open_channel("c1", table="t")
    assert status.latest_committed_offset_token == "1"


def test_the_txn_version_read_from_the_checksum_is_deltas_own(lake, client) -> None:
    from lakeclone.channels import log as channel_log
    from lakeclone.delta.log import Delta
    from lakeclone.session import session_setting

    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    other, _ = client.open_channel("c2", table="t", max_client_lag=LONG_LAG)
    log = Delta(lake.spark).table("file://" + location(lake, "t"))

    def reconstructed(app_id: str) -> int:
        found = log.snapshot_object().transactions().get(app_id)
        return int(found.get()) if found.isDefined() else -1

    for token in ("1", "2"):
        channel.append_rows([{"id": int(token)}], offset_token=token)
        channel.flush()
    assert log.snapshot_object().checksumOpt().isDefined()  # the fast path: Delta's checksum holds the txn versions
    for handle in (channel, other):
        assert channel_log.txn_version(log, handle._entry.app_id) == reconstructed(handle._entry.app_id) >= 0
    assert channel_log.txn_version(log, "no-such-app") == -1

    # A commit without its checksum (a writer that died after committing, say): the versions come from Delta's state.
    with session_setting(client._session.spark, "spark.databricks.delta.writeChecksumFile.enabled", "false"):
        channel.append_rows([{"id": 3}], offset_token="3")
        channel.flush()
    lake.spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # read the log from storage, as a new process would
    assert not log.snapshot_object().checksumOpt().isDefined()
    assert channel_log.txn_version(log, channel._entry.app_id) == reconstructed(channel._entry.app_id)
    assert channel.get_latest_committed_offset_token() == "3"


def test_opening_a_channel_reconstructs_no_table_state(lake, client) -> None:
    from lakeclone.delta.log import Delta

    log = Delta(lake.spark).table("file://" + location(lake, "t"))
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    lake.spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # a snapshot whose state nothing computed yet
    with spark_jobs_run(lake.spark) as jobs:
        _, status = client.open_channel("c1", table="t")  # the fence: Delta's txn action alone
        client.open_channel("c2", table="t")
    assert jobs == []
    assert status.latest_committed_offset_token == "1"
    # Why: Delta 4.4's own read of an app's version reconstructs the state its checksum holds. When an
    # upgrade reads the checksum itself, this fails: lakeclone.delta.transaction.app_version can go.
    lake.spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
    with spark_jobs_run(lake.spark) as jobs:
        log.snapshot_object().transactions()
    assert jobs != []


def test_a_flush_runs_its_write_alone(lake, client) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    lake.spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # a snapshot whose state nothing computed yet
    channel.append_rows([{"id": 2, "v": "b"}], offset_token="2")
    with spark_jobs_run(lake.spark) as jobs:
        channel.flush()
    # Delta's writer options (txnAppId/txnVersion) would reconstruct the table's state first: 3 more jobs.
    assert len(jobs) == 1
    assert channel.get_latest_committed_offset_token() == "2"
    assert sorted(rows(lake, "SELECT id, v FROM t")) == [(1, None), (2, "b")]


def test_a_channel_whose_table_lost_a_column_is_invalid_and_commits_nothing(lake, client) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1, "v": "a"}], offset_token="1")
    channel.flush()
    folder = location(lake, "t")
    lake.spark.sql(
        f"ALTER TABLE delta.`{folder}` SET TBLPROPERTIES "
        "('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')"
    )
    lake.spark.sql(f"ALTER TABLE delta.`{folder}` DROP COLUMN v")
    version = lake.sql("DESCRIBE HISTORY t LIMIT 1").first()["version"]
    channel.append_rows([{"id": 2, "v": "b"}], offset_token="2")
    with pytest.raises(ChannelInvalidError, match=r"Channel c1 is invalid: table LAKE.PUBLIC.T no longer has column\(s\) V as"):
        channel.flush()
    assert not channel.is_valid
    assert lake.sql("DESCRIBE HISTORY t LIMIT 1").first()["version"] == version
    assert rows(lake, "SELECT * FROM t") == [(1,)]
    _, status = client.open_channel("c1", table="t")
    assert status.latest_committed_offset_token == "1"


def test_of_two_fences_racing_for_one_channel_the_later_commit_fails(lake, client) -> None:
    from delta.exceptions import ConcurrentTransactionException

    from lakeclone.delta import transaction
    from lakeclone.delta.log import Delta

    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    delta, table = Delta(lake.spark), "file://" + location(lake, "t")
    app_id = channel._entry.app_id
    first, read_first = transaction.start_txn(delta, table, app_id)
    second, read_second = transaction.start_txn(delta, table, app_id)
    assert read_first == read_second >= 0

    def fence(txn: Any, version: int) -> None:
        jvm = delta.jvm
        action = jvm.action(json.dumps({"txn": {"appId": app_id, "version": version, "lastUpdated": 0}}))
        append = jvm.cls("org.apache.spark.sql.streaming.OutputMode").Append()
        txn.commit(jvm.seq([action]), jvm.operations().StreamingUpdate(append, app_id, version, jvm.none()))

    fence(second, read_second + 1)
    with pytest.raises(ConcurrentTransactionException):
        fence(first, read_first + 1)
    assert transaction.app_version(delta.table(table).snapshot_object(), app_id) == read_second + 1


def test_the_history_names_the_channel_and_token(lake, client) -> None:
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="7")
    channel.flush()
    last = max(lake.sql("DESCRIBE HISTORY t").collect(), key=lambda r: r.version)
    assert (last.operationParameters["channel"], last.operationParameters["offsetToken"]) == ("c1", "7")


def test_optimize_compacts_channel_files_without_a_change_streams_see(lake, client) -> None:
    lake.sql("CREATE STREAM s ON TABLE t")
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    for batch in range(3):
        channel.append_rows([{"id": batch * 10 + i} for i in range(3)], offset_token=str(batch))
        channel.flush()
    before = max(r.version for r in lake.sql("DESCRIBE HISTORY t").collect())
    files_before = lake.sql("DESCRIBE DETAIL t").first()["numFiles"]
    lake.sql("OPTIMIZE t")
    assert lake.sql("DESCRIBE DETAIL t").first()["numFiles"] < files_before
    compaction = log_commits(lake, "t")[-1]
    assert compaction["add"] and all(not a["dataChange"] for a in compaction["add"])  # type: ignore[union-attr]
    assert all(not r["dataChange"] for r in compaction["remove"])  # type: ignore[union-attr]
    expected = [(batch * 10 + i,) for batch in range(3) for i in range(3)]
    assert rows(lake, "SELECT id FROM s WHERE \"METADATA$ACTION\" = 'INSERT'") == expected
    assert lake.sql("SELECT count(*) FROM s WHERE \"METADATA$ACTION\" = 'DELETE'").first()[0] == 0
    assert rows(lake, f"SELECT id FROM t AT (VERSION => {before})") == expected
    assert channel.get_latest_committed_offset_token() == "2"


def test_opening_a_channel_needs_insert_on_the_table_and_usage_on_its_containers(lake: lakeclone.Lake) -> None:
    from lakeclone.errors import InsufficientPrivilegesError

    lake.sql("CREATE TABLE t (id INT)")
    lake.sql("CREATE ROLE loader")
    lake.sql("CREATE USER ingest_app")
    lake.sql("GRANT ROLE loader TO USER ingest_app")
    lake.sql("GRANT USAGE ON DATABASE lake TO ROLE loader")
    lake.sql("GRANT USAGE ON SCHEMA lake.public TO ROLE loader")
    lake.sql("GRANT SELECT ON TABLE t TO ROLE loader")
    app = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="ingest_app", role="loader")
    denied = pytest.raises(InsufficientPrivilegesError, match=re.escape("table 'LAKE.PUBLIC.T' as user INGEST_APP, role LOADER"))
    with app.streaming_client("app") as streaming, denied:
        streaming.open_channel("c", table="t", max_client_lag=LONG_LAG)
    assert rows(lake, "SHOW CHANNELS") == []
    lake.sql("GRANT INSERT ON TABLE t TO ROLE loader")
    with app.streaming_client("app") as streaming:
        channel, _ = streaming.open_channel("c", table="t", max_client_lag=LONG_LAG)
        channel.append_row({"id": 1}, offset_token="1")
        channel.close()
    assert rows(lake, "SELECT * FROM t") == [(1,)]
