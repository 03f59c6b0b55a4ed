"""Streams and CHANGES: net changes, append-only, initial rows, offsets moved only by consumption, tracking, staleness."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest
from delta_reader import kernel_rows, live_adds, spark_rows
from lake_helpers import location, rows
from pyspark.sql import Row
from warehouse_templates import Build

import lakeclone
from lakeclone.catalog.entries import Consumption
from lakeclone.catalog.store import Catalog

pytestmark = pytest.mark.spark

METADATA = "METADATA$ACTION, METADATA$ISUPDATE"


def changes(lake: lakeclone.Lake, source: str, columns: str = "*") -> list[tuple]:
    return rows(lake, f"SELECT {columns} FROM {source}")


def stream(lake: lakeclone.Lake, name: str) -> Row:
    (row,) = lake.sql(f"DESCRIBE STREAM {name}").collect()
    return row


def _raw_and_stream(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE raw (id INT, v STRING)")
    lake.sql("INSERT INTO raw VALUES (1, 'a'), (2, 'b')")
    lake.sql("CREATE STREAM s ON TABLE raw")


@pytest.fixture
def raw(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """A table RAW (ID, V) holding (1, 'a'), (2, 'b'), and a stream S on it made after them."""
    return copy_of(_raw_and_stream)


# What a stream returns ------------------------------------------------------------------------


def test_new_stream_is_empty_and_has_the_source_columns_then_metadata(raw: lakeclone.Lake) -> None:
    frame = raw.sql("SELECT * FROM s")
    assert frame.columns == ["ID", "V", "METADATA$ACTION", "METADATA$ISUPDATE", "METADATA$ROW_ID"]
    assert frame.collect() == []


def test_update_is_a_delete_insert_pair_sharing_the_row_id(raw: lakeclone.Lake) -> None:
    raw.sql("UPDATE raw SET v = 'B' WHERE id = 2")
    got = raw.sql("SELECT * FROM s").collect()
    assert sorted((r.ID, r.V, r["METADATA$ACTION"], r["METADATA$ISUPDATE"]) for r in got) == [
        (2, "B", "INSERT", True),
        (2, "b", "DELETE", True),
    ]
    assert len({r["METADATA$ROW_ID"] for r in got}) == 1


def test_net_change_folds_each_rows_history(raw: lakeclone.Lake) -> None:
    raw.sql("INSERT INTO raw VALUES (3, 'c'), (4, 'd')")
    raw.sql("UPDATE raw SET v = 'c2' WHERE id = 3")  # inserted then updated: one INSERT
    raw.sql("DELETE FROM raw WHERE id = 4")  # inserted then deleted: nothing
    raw.sql("UPDATE raw SET v = 'a2' WHERE id = 1")
    raw.sql("UPDATE raw SET v = 'a3' WHERE id = 1")  # updated twice: one pair, old -> newest
    raw.sql("DELETE FROM raw WHERE id = 2")
    assert changes(raw, "s", f"id, v, {METADATA}") == [
        (1, "a", "DELETE", True),
        (1, "a3", "INSERT", True),
        (2, "b", "DELETE", False),
        (3, "c2", "INSERT", False),
    ]


def test_row_id_is_stable_across_later_changes(raw: lakeclone.Lake) -> None:
    raw.sql("CREATE TABLE sink (id INT, rid STRING)")
    raw.sql("UPDATE raw SET v = 'x' WHERE id = 1")
    raw.sql("INSERT INTO sink SELECT id, METADATA$ROW_ID FROM s WHERE METADATA$ACTION = 'INSERT'")
    raw.sql("UPDATE raw SET v = 'y' WHERE id = 1")
    (later,) = raw.sql("SELECT METADATA$ROW_ID AS rid FROM s WHERE METADATA$ACTION = 'INSERT'").collect()
    assert rows(raw, "SELECT rid FROM sink") == [(later.RID,)]


def test_seed_offset_between_v3_and_v4_returns_the_changes_of_v4_to_v10(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (n INT) CHANGE_TRACKING = TRUE")
    version = lake.sql("DESCRIBE HISTORY t LIMIT 1").first().version
    while version < 3:
        lake.sql(f"INSERT INTO t VALUES ({version + 1})")
        version = lake.sql("DESCRIBE HISTORY t LIMIT 1").first().version
    lake.sql("CREATE STREAM s1 ON TABLE t")
    assert stream(lake, "s1").offset_version == 3
    for n in range(4, 11):
        lake.sql(f"INSERT INTO t VALUES ({n})")
    assert lake.sql("DESCRIBE HISTORY t LIMIT 1").first().version == 10
    assert changes(lake, "s1", "n") == [(n,) for n in range(4, 11)]


def test_optimize_produces_no_changes(raw: lakeclone.Lake) -> None:
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    raw.sql("CREATE OR REPLACE STREAM s ON TABLE raw")
    raw.sql("OPTIMIZE raw")
    assert raw.sql("DESCRIBE HISTORY raw LIMIT 1").first().operation == "OPTIMIZE"
    assert changes(raw, "s") == []


def test_append_only_stream_keeps_inserts_later_deleted(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (n INT)")
    lake.sql("CREATE STREAM a ON TABLE t APPEND_ONLY = TRUE")
    lake.sql("INSERT INTO t SELECT id FROM range(1, 11)")
    lake.sql("DELETE FROM t WHERE n <= 5")
    lake.sql("UPDATE t SET n = n * 100 WHERE n = 6")
    assert changes(lake, "a", f"n, {METADATA}") == [(n, "INSERT", False) for n in range(1, 11)]
    assert stream(lake, "a").mode == "APPEND_ONLY"


def test_show_initial_rows_returns_the_rows_at_creation_first(raw: lakeclone.Lake) -> None:
    raw.sql("CREATE STREAM i ON TABLE raw SHOW_INITIAL_ROWS = TRUE")
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    assert changes(raw, "i", f"id, {METADATA}") == [(1, "INSERT", False), (2, "INSERT", False)]
    raw.sql("CREATE TABLE sink (id INT)")
    raw.sql("INSERT INTO sink SELECT id FROM i")
    assert changes(raw, "i", f"id, {METADATA}") == [(3, "INSERT", False)]


# Offsets move only on consumption ---------------------------------------------------------------


def test_select_never_moves_the_offset_and_dml_consumes(raw: lakeclone.Lake) -> None:
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    before = stream(raw, "s").offset_version
    for _ in range(3):
        assert changes(raw, "s", "id") == [(3,)]
    assert stream(raw, "s").offset_version == before
    raw.sql("CREATE TABLE sink (id INT)")
    raw.sql("INSERT INTO sink SELECT id FROM s")
    assert changes(raw, "s") == []
    assert stream(raw, "s").offset_version == before + 1
    assert rows(raw, "SELECT * FROM sink") == [(3,)]


def test_where_false_advances_without_consuming_rows(raw: lakeclone.Lake) -> None:
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    raw.sql("CREATE TABLE sink (id INT)")
    assert raw.sql("INSERT INTO sink SELECT id FROM s WHERE 0 = 1").first()[0] == 0
    assert changes(raw, "s") == []
    assert rows(raw, "SELECT * FROM sink") == []


def test_snowflakes_stream_merge_applies_updates_deletes_and_inserts(raw: lakeclone.Lake) -> None:
    # The MERGE Snowflake's documentation writes on a stream: an update's DELETE half meets no clause.
    raw.sql("CREATE TABLE cur (id INT, v STRING)")
    raw.sql("INSERT INTO cur VALUES (1, 'a'), (2, 'b')")
    raw.sql("UPDATE raw SET v = 'A' WHERE id = 1")
    raw.sql("DELETE FROM raw WHERE id = 2")
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    merged = raw.sql(
        "MERGE INTO cur c USING s ON c.id = s.id "
        "WHEN MATCHED AND s.METADATA$ACTION = 'DELETE' AND NOT s.METADATA$ISUPDATE THEN DELETE "
        "WHEN MATCHED AND s.METADATA$ACTION = 'INSERT' AND s.METADATA$ISUPDATE THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED AND s.METADATA$ACTION = 'INSERT' THEN INSERT (id, v) VALUES (s.id, s.v)"
    ).first()
    assert tuple(merged) == (1, 1, 1)
    assert rows(raw, "SELECT * FROM cur") == [(1, "A"), (3, "c")]
    assert changes(raw, "s") == []


@pytest.mark.parametrize(
    "consume",
    [
        "MERGE INTO cur c USING s ON c.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)",
        "UPDATE cur SET v = s.v FROM s WHERE cur.id = s.id",
        "DELETE FROM cur USING s WHERE cur.id = s.id",
        "CREATE TABLE copy AS SELECT * FROM s",
    ],
    ids=["merge", "update-from", "delete-using", "ctas"],
)
def test_every_dml_form_consumes(raw: lakeclone.Lake, consume: str) -> None:
    raw.sql("CREATE TABLE cur (id INT, v STRING)")
    raw.sql("INSERT INTO cur VALUES (3, 'old')")
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    raw.sql(consume)
    assert changes(raw, "s") == []


def test_failed_statement_keeps_the_offset(raw: lakeclone.Lake) -> None:
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    raw.sql("CREATE TABLE narrow (id INT NOT NULL)")
    with pytest.raises(lakeclone.LakecloneError):
        raw.sql("INSERT INTO narrow SELECT NULL FROM s")
    assert changes(raw, "s", "id") == [(3,)]


def test_each_stream_has_its_own_offset_and_replace_starts_over(raw: lakeclone.Lake) -> None:
    raw.sql("CREATE STREAM s2 ON TABLE raw")
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    raw.sql("CREATE TABLE sink (id INT)")
    raw.sql("INSERT INTO sink SELECT id FROM s")
    assert changes(raw, "s") == []
    assert changes(raw, "s2", "id") == [(3,)]
    raw.sql("CREATE OR REPLACE STREAM s2 ON TABLE raw")
    assert changes(raw, "s2") == []


def test_stream_at_a_point_and_at_another_stream(raw: lakeclone.Lake) -> None:
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    inserted = raw.last_query_id
    raw.sql("INSERT INTO raw VALUES (4, 'd')")
    raw.sql(f"CREATE STREAM before_3 ON TABLE raw BEFORE(STATEMENT => '{inserted}')")
    assert changes(raw, "before_3", "id") == [(3,), (4,)]
    raw.sql("CREATE STREAM like_s ON TABLE raw AT(STREAM => 's')")
    assert changes(raw, "like_s", "id") == changes(raw, "s", "id") == [(3,), (4,)]


# Change tracking and CHANGES ----------------------------------------------------------------------


def test_first_stream_turns_tracking_on(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (n INT)")
    assert lake.sql("SHOW TABLES LIKE 'T'").first().change_tracking == "OFF"
    lake.sql("CREATE STREAM s ON TABLE t")
    assert lake.sql("SHOW TABLES LIKE 'T'").first().change_tracking == "ON"
    detail = lake.sql("DESCRIBE DETAIL t").first()
    assert detail.properties["delta.enableChangeDataFeed"] == "true"


def test_row_tracking_starts_with_change_tracking_and_rewrites_no_data_file(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (n INT); INSERT INTO t VALUES (1), (2); INSERT INTO t VALUES (3)")
    untracked = lake.sql("DESCRIBE DETAIL t").first()
    assert "rowTracking" not in untracked.tableFeatures and "delta.enableRowTracking" not in untracked.properties
    files = {a["path"] for a in live_adds(location(lake, "t")).values()}
    lake.sql("ALTER TABLE t SET CHANGE_TRACKING = TRUE")
    tracked = lake.sql("DESCRIBE DETAIL t").first()
    assert "rowTracking" in tracked.tableFeatures and tracked.properties["delta.enableRowTracking"] == "true"
    adds = live_adds(location(lake, "t"))
    assert {a["path"] for a in adds.values()} == files  # Delta numbered the rows in its log
    assert all("baseRowId" in a for a in adds.values())
    lake.sql("CREATE STREAM s ON TABLE t; UPDATE t SET n = 20 WHERE n = 2")
    assert changes(lake, "s", "n, METADATA$ACTION") == [(2, "DELETE"), (20, "INSERT")]


def test_a_clone_is_tracked_only_from_a_point_tracking_covers(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (n INT); INSERT INTO t VALUES (1)")
    untracked_version = lake.sql("DESCRIBE HISTORY t LIMIT 1").first().version
    lake.sql("ALTER TABLE t SET CHANGE_TRACKING = TRUE; INSERT INTO t VALUES (2)")
    lake.sql(f"CREATE TABLE early CLONE t AT(VERSION => {untracked_version}); CREATE TABLE late CLONE t")
    shown = {r.name: r.change_tracking for r in lake.sql("SHOW TABLES").collect()}
    assert shown == {"T": "ON", "EARLY": "OFF", "LATE": "ON"}
    # Each clone's stream reads its own changes: the early one's first stream turns its tracking on.
    lake.sql("CREATE STREAM on_early ON TABLE early; CREATE STREAM on_late ON TABLE late")
    lake.sql("UPDATE early SET n = 10; UPDATE late SET n = 20 WHERE n = 2")
    assert changes(lake, "on_early", "n, METADATA$ACTION") == [(1, "DELETE"), (10, "INSERT")]
    assert changes(lake, "on_late", "n, METADATA$ACTION") == [(2, "DELETE"), (20, "INSERT")]


def test_changes_before_tracking_started_are_refused_and_change_nothing(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (n INT)")
    lake.sql("INSERT INTO t VALUES (1)")
    with pytest.raises(lakeclone.LakecloneError, match="Change tracking is not enabled"):
        lake.sql("CREATE STREAM s ON TABLE t AT(VERSION => 0)")
    assert lake.sql("SHOW STREAMS").collect() == []
    assert lake.sql("SHOW TABLES LIKE 'T'").first().change_tracking == "OFF"
    lake.sql("ALTER TABLE t SET CHANGE_TRACKING = TRUE")
    with pytest.raises(lakeclone.LakecloneError, match="Change tracking is not enabled"):
        lake.sql("SELECT * FROM t CHANGES(INFORMATION => DEFAULT) AT(VERSION => 0)")


def test_changes_of_a_table_never_tracked_are_refused_even_with_nothing_to_read(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t1 (n INT); INSERT INTO t1 VALUES (1)")
    latest = lake.sql("DESCRIBE HISTORY t1 LIMIT 1").first().version
    with pytest.raises(lakeclone.LakecloneError, match=r"Change tracking is not enabled .* on table 'T1'"):
        lake.sql(f"SELECT * FROM t1 CHANGES(INFORMATION => DEFAULT) AT(VERSION => {latest})")
    # Once tracked, the same empty interval reads as no changes.
    lake.sql("ALTER TABLE t1 SET CHANGE_TRACKING = TRUE")
    latest = lake.sql("DESCRIBE HISTORY t1 LIMIT 1").first().version
    assert rows(lake, f"SELECT n FROM t1 CHANGES(INFORMATION => DEFAULT) AT(VERSION => {latest})") == []


def test_changes_clause_over_an_interval_never_moves_anything(raw: lakeclone.Lake) -> None:
    start = raw.sql("DESCRIBE HISTORY raw LIMIT 1").first().version
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    raw.sql("UPDATE raw SET v = 'B' WHERE id = 2")
    end = raw.sql("DESCRIBE HISTORY raw LIMIT 1").first().version
    raw.sql("DELETE FROM raw WHERE id = 1")
    query = f"SELECT id, v, {METADATA} FROM raw CHANGES(INFORMATION => DEFAULT) AT(VERSION => {start}) END(VERSION => {end})"
    assert rows(raw, query) == [(2, "B", "INSERT", True), (2, "b", "DELETE", True), (3, "c", "INSERT", False)]
    appended = f"SELECT id FROM raw CHANGES(INFORMATION => APPEND_ONLY) AT(VERSION => {start})"
    assert rows(raw, appended) == [(3,)]
    assert stream(raw, "s").offset_version == start


def test_table_changes_has_deltas_columns_and_the_lakes_clock(raw: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    clock.advance(hours=1)
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    when = raw.now()
    version = raw.sql("DESCRIBE HISTORY raw LIMIT 1").first().version
    got = raw.sql(f"SELECT * FROM table_changes('raw', {version})").collect()
    assert [(r.ID, r._change_type, r._commit_version) for r in got] == [(3, "insert", version)]
    assert abs(got[0]._commit_timestamp.replace(tzinfo=dt.timezone.utc) - when) < dt.timedelta(seconds=1)


# Staleness and retention ---------------------------------------------------------------------------


@pytest.mark.parametrize(("retention", "extension", "days"), [(14, 0, 14), (1, 14, 14), (0, 90, 90), (30, 14, 30)])
def test_consume_within_follows_retention_and_extension(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, retention: int, extension: int, days: int
) -> None:
    lake.sql(f"CREATE TABLE t (n INT) DATA_RETENTION_TIME_IN_DAYS = {retention} MAX_DATA_EXTENSION_TIME_IN_DAYS = {extension}")
    lake.sql("CREATE STREAM s ON TABLE t")
    created = stream(lake, "s")
    assert created.stale_after - created.created_on == dt.timedelta(days=days)
    clock.advance(days=days, seconds=-1)
    assert stream(lake, "s").stale == "false"
    clock.advance(seconds=2)
    assert stream(lake, "s").stale == "true"
    with pytest.raises(lakeclone.LakecloneError, match="is stale"):
        lake.sql("SELECT * FROM s")


def test_consuming_pushes_stale_after_forward(raw: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    first = stream(raw, "s").stale_after
    clock.advance(days=10)
    raw.sql("CREATE TABLE sink (id INT)")
    raw.sql("INSERT INTO sink SELECT id FROM s")
    assert abs(stream(raw, "s").stale_after - first - dt.timedelta(days=10)) < dt.timedelta(seconds=1)


def test_replacing_the_table_makes_its_streams_stale_rename_does_not(raw: lakeclone.Lake) -> None:
    raw.sql("ALTER TABLE raw RENAME TO renamed")
    raw.sql("INSERT INTO renamed VALUES (3, 'c')")
    assert changes(raw, "s", "id") == [(3,)]
    assert stream(raw, "s").table_name == "LAKE.PUBLIC.RENAMED"
    raw.sql("CREATE OR REPLACE TABLE renamed (id INT, v STRING)")
    assert stream(raw, "s").stale == "true"
    with pytest.raises(lakeclone.LakecloneError, match="dropped or replaced"):
        raw.sql("SELECT * FROM s")


def test_drop_and_recreate_is_a_new_table_the_stream_does_not_follow(raw: lakeclone.Lake) -> None:
    raw.sql("DROP TABLE raw")
    raw.sql("CREATE TABLE raw (id INT, v STRING)")
    assert stream(raw, "s").stale == "true"
    raw.sql("DROP TABLE raw")
    raw.sql("UNDROP TABLE raw")
    assert stream(raw, "s").stale == "true"


def test_vacuum_keeps_what_a_live_stream_needs(
    raw: lakeclone.Lake, clock: lakeclone.ManualClock, retention_check_off: None
) -> None:
    raw.sql("ALTER TABLE raw SET DATA_RETENTION_TIME_IN_DAYS = 0")
    raw.sql("DELETE FROM raw WHERE id = 1")
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    clock.advance(hours=1)
    plan = raw.sql("VACUUM raw RETAIN 0 HOURS DRY RUN").collect()
    assert {r.reason for r in plan} >= {"stream LAKE.PUBLIC.S"}
    raw.sql("VACUUM raw RETAIN 0 HOURS")
    assert changes(raw, "s", f"id, {METADATA}") == [(1, "DELETE", False), (3, "INSERT", False)]
    clock.advance(days=15)
    assert stream(raw, "s").stale == "true"
    assert "stream LAKE.PUBLIC.S" not in {r.reason for r in raw.sql("VACUUM raw RETAIN 0 HOURS DRY RUN").collect()}


# Clones --------------------------------------------------------------------------------------------


def test_schema_clone_carries_its_streams_at_the_clone_point(raw: lakeclone.Lake) -> None:
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    raw.sql("CREATE SCHEMA dev CLONE public")
    assert changes(raw, "dev.s") == []
    assert stream(raw, "dev.s").table_name == "LAKE.DEV.RAW"
    raw.sql("INSERT INTO dev.raw VALUES (4, 'd')")
    assert changes(raw, "dev.s", "id") == [(4,)]
    assert changes(raw, "public.s", "id") == [(3,)]
    assert kernel_rows(location(raw, "dev.raw")) == spark_rows(raw.spark, location(raw, "dev.raw"))


# SHOW, DESCRIBE, DROP, errors ------------------------------------------------------------------------


def test_show_and_describe_streams(raw: lakeclone.Lake) -> None:
    raw.sql("CREATE SCHEMA other")
    raw.sql("CREATE STREAM a ON TABLE public.raw APPEND_ONLY = TRUE COMMENT = 'appends'")
    shown = {r.name: r for r in raw.sql("SHOW STREAMS IN DATABASE lake").collect()}
    assert set(shown) == {"S", "A"}
    a = shown["A"]
    assert (
        a.database_name,
        a.schema_name,
        a.owner,
        a.comment,
        a.table_name,
        a.source_type,
        a.base_tables,
        a.type,
        a.stale,
        a.mode,
    ) == (
        "LAKE",
        "OTHER",
        "ACCOUNTADMIN",
        "appends",
        "LAKE.PUBLIC.RAW",
        "Table",
        "LAKE.PUBLIC.RAW",
        "DELTA",
        "false",
        "APPEND_ONLY",
    )
    assert [r.name for r in raw.sql("SHOW STREAMS LIKE 's%' IN SCHEMA public").collect()] == ["S"]
    raw.sql("DROP STREAM other.a")
    assert raw.sql("SHOW STREAMS IN SCHEMA other").collect() == []
    assert raw.sql("DROP STREAM IF EXISTS other.a").first()[0].endswith("already dropped).")


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("CREATE STREAM x ON TABLE missing", "does not exist or not authorized"),
        ("CREATE STREAM s ON TABLE raw", "already exists"),
        ("DROP STREAM missing", "does not exist or not authorized"),
        ("DESCRIBE STREAM missing", "does not exist or not authorized"),
        ("SELECT * FROM s AT(VERSION => 1)", "Time travel is not supported on stream"),
        ("SELECT * FROM raw CHANGES(INFORMATION => DEFAULT)", "AT or BEFORE"),
        ("SELECT * FROM raw CHANGES(INFORMATION => SOMETIMES) AT(VERSION => 1)", "INFORMATION"),
        ("CREATE STREAM x ON TABLE raw AT(STREAM => 'missing')", "does not exist"),
    ],
)
def test_misuse_is_a_clear_error_and_changes_nothing(raw: lakeclone.Lake, statement: str, message: str) -> None:
    before = raw.sql("SHOW STREAMS").collect()
    with pytest.raises(lakeclone.LakecloneError, match=message):
        raw.sql(statement)
    assert raw.sql("SHOW STREAMS").collect() == before


# Crashes ----------------------------------------------------------------------------------------------


def test_connect_finishes_a_consumption_whose_commit_landed(raw: lakeclone.Lake, tmp_path, spark, clock) -> None:
    """A session that died between its Delta commit and its catalog record: the offset moves on the next connect()."""
    raw.sql("CREATE TABLE sink (id INT)")
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    catalog = Catalog(raw.warehouse / "catalog.sqlite")
    s = catalog.streams.stream("LAKE", "PUBLIC", "S")
    sink = catalog.objects.table("LAKE", "PUBLIC", "SINK")
    end = raw.sql("DESCRIBE HISTORY raw LIMIT 1").first().version
    raw.sql("INSERT INTO sink VALUES (3)")  # the crashed statement's commit, under its query id
    landed = raw.last_query_id
    with catalog.transaction():
        catalog.streams.record_consumption(Consumption(s.id, landed, "dead-session", sink.location, {next(iter(s.offsets)): end}))
    catalog.close()
    lakeclone.connect(raw.warehouse, spark=spark, clock=clock)
    assert changes(raw, "s") == []


def test_connect_drops_a_consumption_whose_commit_never_landed(raw: lakeclone.Lake, spark, clock) -> None:
    raw.sql("CREATE TABLE sink (id INT)")
    raw.sql("INSERT INTO raw VALUES (3, 'c')")
    catalog = Catalog(raw.warehouse / "catalog.sqlite")
    s = catalog.streams.stream("LAKE", "PUBLIC", "S")
    sink = catalog.objects.table("LAKE", "PUBLIC", "SINK")
    with catalog.transaction():
        catalog.streams.record_consumption(
            Consumption(s.id, "never-committed", "dead-session", sink.location, {next(iter(s.offsets)): 99})
        )
    catalog.close()
    lakeclone.connect(raw.warehouse, spark=spark, clock=clock)
    assert changes(raw, "s", "id") == [(3,)]
    assert Catalog(raw.warehouse / "catalog.sqlite").streams.consumptions() == []
