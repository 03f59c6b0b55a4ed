"""Background compaction of the small files channels write: Delta's OPTIMIZE, dataChange=false, under the table locks.

Each table is read back with delta-spark and the Delta kernel; the compaction
commit is checked in the table's own log.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from delta_reader import kernel_rows, spark_rows
from lake_helpers import location, rows

import lakeclone
from lakeclone.channels import StreamingClient, compaction
from lakeclone.channels import client as channel_client
from lakeclone.errors import LakecloneError

pytestmark = pytest.mark.spark

LONG_LAG = "10 minutes"  # only explicit flushes: the test decides how many files there are
MIN_FILES = 4


@pytest.fixture
def few_files(lake: lakeclone.Lake) -> Iterator[None]:
    """Compaction due at MIN_FILES small files (Delta's own setting, in the Lake's session), restored after."""
    before = lake.spark.conf.get(compaction.MIN_NUM_FILES_CONF, None)
    lake.spark.conf.set(compaction.MIN_NUM_FILES_CONF, str(MIN_FILES))
    yield
    if before is None:
        lake.spark.conf.unset(compaction.MIN_NUM_FILES_CONF)
    else:
        lake.spark.conf.set(compaction.MIN_NUM_FILES_CONF, before)


@pytest.fixture
def client(lake: lakeclone.Lake, few_files: None) -> Iterator[StreamingClient]:
    lake.sql("CREATE TABLE t (id INT, v STRING)")
    with lake.streaming_client("ingest") as streaming:
        yield streaming


def log_commits(lake: lakeclone.Lake, table: str) -> list[dict[str, list[dict[str, object]]]]:
    """Each commit file of the table's log, its actions by kind (read, never written, by the test)."""
    folder = Path(location(lake, table)) / "_delta_log"
    found = []
    for path in sorted(folder.glob("*.json")):
        actions: dict[str, list[dict[str, object]]] = {}
        for line in path.read_text().splitlines():
            ((kind, body),) = json.loads(line).items()
            actions.setdefault(kind, []).append(body)
        found.append(actions)
    return found


def compaction_commits(lake: lakeclone.Lake, table: str) -> list[dict[str, list[dict[str, object]]]]:
    return [c for c in log_commits(lake, table) if c["commitInfo"][0]["operation"] == "OPTIMIZE"]


def wait_for(predicate: object, seconds: float = 120) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def settle(client: StreamingClient) -> None:
    """Wait until the flusher thread has looked at every table flushed so far (and compacted it if due)."""
    assert wait_for(lambda: not client._written)
    with client._work_lock:  # it holds the lock from taking the tables until it is done with them
        pass


def ingest(client: StreamingClient, batches: int, *, first: int = 0) -> list[tuple[int, str]]:
    """``batches`` flushes of three rows each through channel c1 (token = batch number); the rows sent."""
    channel, _ = client.open_channel("c1", table="t", max_client_lag=LONG_LAG)
    sent = []
    for batch in range(first, first + batches):
        chunk = [(batch * 10 + i, f"b{batch}") for i in range(3)]
        channel.append_rows([{"id": i, "v": v} for i, v in chunk], offset_token=str(batch))
        channel.flush()
        sent.extend(chunk)
    return sent


def test_a_channel_table_is_compacted_in_the_background_and_streams_see_only_the_inserts(lake, client) -> None:
    lake.sql("CREATE STREAM s ON TABLE t")
    sent = ingest(client, MIN_FILES + 2)
    settle(client)
    assert client.compactions >= 1, client.last_compaction_error
    channel, _ = client.open_channel("c2", table="t", max_client_lag=LONG_LAG)  # a fence; no rows
    assert client._compact_if_due(client._channels[0].table) is False  # the flusher left nothing due

    commits = compaction_commits(lake, "t")
    assert 1 <= len(commits) == client.compactions
    for commit in commits:
        assert commit["add"] and commit["remove"]
        assert all(a["dataChange"] is False for a in commit["add"] + commit["remove"])
        assert "txn" not in commit  # no channel's token moved
    history = lake.sql("DESCRIBE HISTORY t").collect()
    assert [r.operationParameters["auto"] for r in history if r.operation == "OPTIMIZE"] == ["true"] * len(commits)
    assert lake.sql("DESCRIBE DETAIL t").first()["numFiles"] < MIN_FILES

    table_rows = sorted(spark_rows(lake.spark, location(lake, "t")))
    assert table_rows == sorted(sent) == sorted(kernel_rows(location(lake, "t")))
    # The stream shows each row once, as an INSERT, and nothing of the compaction.
    changes = rows(lake, 'SELECT id, v, "METADATA$ACTION", "METADATA$ISUPDATE" FROM s')
    assert sorted(changes) == sorted((i, v, "INSERT", False) for i, v in sent)
    # Time travel to just before each compaction reads, from the small files, what it left in its big ones.
    for version in (r.version for r in history if r.operation == "OPTIMIZE"):
        before = sorted(rows(lake, f"SELECT id, v FROM t AT (VERSION => {version - 1})"))
        assert before == sorted(rows(lake, f"SELECT id, v FROM t AT (VERSION => {version})")) and before
    # Every channel's token is where its last flush left it; ingestion goes on after the compaction.
    assert client._channels[0].get_latest_committed_offset_token() == str(MIN_FILES + 1)
    assert channel.get_latest_committed_offset_token() is None
    more_rows = ingest(client, 1, first=100)
    assert sorted(rows(lake, "SELECT id, v FROM t")) == sorted(sent + more_rows)
    assert lake.sql("SHOW CHANNELS LIKE 'c1'").first()["offset_token"] == "100"


def test_a_failed_compaction_does_not_stop_ingestion_and_is_tried_again(lake, client, monkeypatch) -> None:
    def failing(*args: object, **kwargs: object) -> object:
        raise LakecloneError("disk full")

    monkeypatch.setattr(channel_client, "optimize_table", failing)
    sent = ingest(client, MIN_FILES + 1)
    assert wait_for(lambda: client.last_compaction_error is not None)
    assert client.last_compaction_error == "disk full"
    assert client.compactions == 0
    sent += ingest(client, 2, first=50)  # flushes still land
    assert sorted(rows(lake, "SELECT id, v FROM t")) == sorted(sent)
    assert compaction_commits(lake, "t") == []

    monkeypatch.undo()
    sent += ingest(client, 1, first=60)  # the next flush makes the flusher look again
    assert wait_for(lambda: client.compactions == 1), client.last_compaction_error
    assert client.last_compaction_error is None
    assert sorted(spark_rows(lake.spark, location(lake, "t"))) == sorted(sent)
    assert client._channels[0].get_latest_committed_offset_token() == "60"


def test_compaction_waits_for_another_sessions_transaction_on_the_table(lake, client) -> None:
    folder = location(lake, "t")
    lake.spark.sql(f"ALTER TABLE delta.`{folder}` SET TBLPROPERTIES ('{compaction.AUTO_COMPACT_PROPERTY}' = 'false')")
    sent = ingest(client, MIN_FILES + 1)
    settle(client)  # the flusher has looked, and left the table alone
    table = client._channels[0].table
    lake.sql("BEGIN; INSERT INTO t VALUES (-1, 'txn')")
    lake.lock_timeout = 0.5
    lake.spark.conf.set(compaction.ENABLED_CONF, "true")
    try:
        with pytest.raises(LakecloneError, match="LOCK_TIMEOUT"):
            client._compact_if_due(table)  # due, but the table is held by the transaction
        lake.sql("COMMIT")
        assert compaction_commits(lake, "t") == []
        assert client._compact_if_due(table) is True
    finally:
        lake.spark.conf.unset(compaction.ENABLED_CONF)
    assert sorted(rows(lake, "SELECT id, v FROM t")) == sorted([*sent, (-1, "txn")])
    assert len(compaction_commits(lake, "t")) == 1


def test_the_table_property_and_the_session_setting_turn_it_off(lake, client) -> None:
    folder = location(lake, "t")
    # A user's Delta setting, made with delta-spark itself.
    lake.spark.sql(f"ALTER TABLE delta.`{folder}` SET TBLPROPERTIES ('{compaction.AUTO_COMPACT_PROPERTY}' = 'false')")
    ingest(client, MIN_FILES + 1)
    settle(client)
    table = client._channels[0].table
    assert client._compact_if_due(table) is False
    lake.spark.conf.set(compaction.ENABLED_CONF, "true")  # the session's setting wins over the table's
    try:
        assert client._compact_if_due(table) is True
    finally:
        lake.spark.conf.unset(compaction.ENABLED_CONF)
    assert len(compaction_commits(lake, "t")) == 1


def test_the_policy_reads_deltas_settings(spark) -> None:
    session = spark.newSession()
    policy = compaction.CompactionPolicy.read(session, {})
    assert policy == compaction.CompactionPolicy(True, 50, 64 * 1024 * 1024)  # on for channel tables; Delta's sizes
    assert not compaction.CompactionPolicy.read(session, {compaction.AUTO_COMPACT_PROPERTY: "FALSE"}).enabled
    assert compaction.CompactionPolicy.read(session, {compaction.AUTO_COMPACT_PROPERTY: "auto"}).enabled
    session.conf.set(compaction.MAX_FILE_SIZE_CONF, "1000")
    session.conf.set(compaction.MIN_NUM_FILES_CONF, "3")
    assert compaction.CompactionPolicy.read(session, {}) == compaction.CompactionPolicy(True, 3, 500)
    with pytest.raises(ValueError, match="autoCompact needs to be one of"):
        compaction.CompactionPolicy.read(session, {compaction.AUTO_COMPACT_PROPERTY: "sometimes"})
