"""Databases, schemas, table identity, parameters, persistence, and the SQLite catalog store."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from lake_helpers import catalog_entry, location

import lakeclone
from lakeclone.catalog.folders import PendingFolder
from lakeclone.catalog.store import Catalog

pytestmark = pytest.mark.spark


def names(lake: lakeclone.Lake, sql: str) -> list[str]:
    return [r.name for r in lake.sql(sql).collect()]


def error_of(lake: lakeclone.Lake, sql: str) -> str:
    with pytest.raises(lakeclone.LakecloneError) as error:
        lake.sql(sql).collect()
    return str(error.value)


def parameters(lake: lakeclone.Lake, sql: str) -> dict[str, tuple[str, str, str]]:
    return {r.key: (r.value, r.default, r.level) for r in lake.sql(sql).collect()}


# Databases and schemas -----------------------------------------------------------------------------


def test_new_warehouse_has_lake_public(lake: lakeclone.Lake) -> None:
    assert (lake.current_database, lake.current_schema) == ("LAKE", "PUBLIC")
    (database,) = lake.sql("SHOW DATABASES").collect()
    assert (database.name, database.is_current, database.retention_time) == ("LAKE", "Y", 7)
    (schema,) = lake.sql("SHOW SCHEMAS").collect()
    assert (schema.name, schema.database_name, schema.is_current) == ("PUBLIC", "LAKE", "Y")
    assert lake.sql("SHOW TABLES").collect() == []


def test_catalog_is_sqlite_in_the_warehouse(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT)")
    path = lake.warehouse / "catalog.sqlite"
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    with sqlite3.connect(path) as db:
        found = db.execute(
            "SELECT d.name, s.name, t.name, t.kind FROM tables t JOIN schemas s ON t.schema_id = s.id "
            "JOIN databases d ON s.database_id = d.id"
        ).fetchall()
    assert found == [("LAKE", "PUBLIC", "T", "MANAGED")]


def test_create_database_creates_public_and_switches_to_it(lake: lakeclone.Lake) -> None:
    status = lake.sql("CREATE DATABASE sales").collect()
    assert status[0].status == "Database SALES successfully created."
    assert (lake.current_database, lake.current_schema) == ("SALES", "PUBLIC")
    assert names(lake, "SHOW SCHEMAS IN DATABASE sales") == ["PUBLIC"]
    lake.sql("CREATE TABLE orders (id INT)")
    assert names(lake, "SHOW TABLES IN SCHEMA SALES.PUBLIC") == ["ORDERS"]
    assert names(lake, "SHOW TABLES IN SCHEMA LAKE.PUBLIC") == []
    current = {r.name: r.is_current for r in lake.sql("SHOW DATABASES").collect()}
    assert current == {"LAKE": "N", "SALES": "Y"}


def test_create_database_if_not_exists_and_or_replace(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE DATABASE d; CREATE TABLE keep (id INT)")
    assert error_of(lake, "CREATE DATABASE d") == "SQL compilation error:\nObject 'D' already exists."
    status = lake.sql("CREATE DATABASE IF NOT EXISTS d").collect()
    assert status[0].status == "D already exists, statement succeeded."
    assert names(lake, "SHOW TABLES IN DATABASE d") == ["KEEP"]
    lake.sql("CREATE OR REPLACE DATABASE d")
    assert names(lake, "SHOW TABLES IN DATABASE d") == []
    assert names(lake, "SHOW DATABASES") == ["D", "LAKE"]


def test_create_schema_switches_to_it(lake: lakeclone.Lake) -> None:
    status = lake.sql("CREATE SCHEMA staging").collect()
    assert status[0].status == "Schema STAGING successfully created."
    assert (lake.current_database, lake.current_schema) == ("LAKE", "STAGING")
    lake.sql("CREATE TABLE t (id INT)")
    assert catalog_entry(lake, "T", schema="STAGING") is not None
    lake.sql("CREATE DATABASE other; CREATE SCHEMA LAKE.qualified")
    assert (lake.current_database, lake.current_schema) == ("LAKE", "QUALIFIED")
    assert names(lake, "SHOW SCHEMAS IN DATABASE LAKE") == ["PUBLIC", "QUALIFIED", "STAGING"]
    assert error_of(lake, "CREATE SCHEMA staging") == "SQL compilation error:\nObject 'STAGING' already exists."
    assert lake.sql("CREATE SCHEMA IF NOT EXISTS staging").collect()[0].status == ("STAGING already exists, statement succeeded.")


def test_create_or_replace_schema_empties_it(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA s; CREATE TABLE t (id INT)")
    lake.sql("CREATE OR REPLACE SCHEMA s")
    assert names(lake, "SHOW TABLES IN SCHEMA LAKE.S") == []
    assert "does not exist" in error_of(lake, "SELECT * FROM LAKE.S.T")


def test_use_database_and_schema(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE DATABASE d2; CREATE SCHEMA s2; CREATE TABLE t (v STRING); INSERT INTO t VALUES ('d2.s2')")
    lake.sql("USE DATABASE LAKE")
    assert (lake.current_database, lake.current_schema) == ("LAKE", "PUBLIC")
    lake.sql("CREATE TABLE t (v STRING); INSERT INTO t VALUES ('lake.public')")
    lake.sql("USE SCHEMA D2.S2")
    assert (lake.current_database, lake.current_schema) == ("D2", "S2")
    assert [r.V for r in lake.sql("SELECT v FROM t").collect()] == ["d2.s2"]
    lake.sql("USE SCHEMA PUBLIC")  # relative to the current database
    assert (lake.current_database, lake.current_schema) == ("D2", "PUBLIC")
    lake.sql("USE LAKE")
    assert [r.V for r in lake.sql("SELECT v FROM t").collect()] == ["lake.public"]
    assert [r.V for r in lake.sql("SELECT v FROM d2.s2.t").collect()] == ["d2.s2"]


def test_use_schema_switches_schema_within_the_database(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA s2; CREATE TABLE t (v STRING); INSERT INTO t VALUES ('s2')")
    lake.sql("USE SCHEMA PUBLIC")
    assert (lake.current_database, lake.current_schema) == ("LAKE", "PUBLIC")
    lake.sql("CREATE TABLE t (v STRING); INSERT INTO t VALUES ('public')")
    lake.sql("USE SCHEMA LAKE.S2")
    assert lake.current_schema == "S2"
    assert [r.V for r in lake.sql("SELECT v FROM t").collect()] == ["s2"]
    assert [r.V for r in lake.sql("SELECT v FROM public.t").collect()] == ["public"]


def test_use_unknown_database_fails_and_keeps_the_session(lake: lakeclone.Lake) -> None:
    assert error_of(lake, "USE DATABASE nope") == "SQL compilation error:\nDatabase 'NOPE' does not exist or not authorized."
    assert (lake.current_database, lake.current_schema) == ("LAKE", "PUBLIC")


def test_use_unknown_schema_fails_and_keeps_the_session(lake: lakeclone.Lake) -> None:
    assert error_of(lake, "USE SCHEMA nope") == "SQL compilation error:\nSchema 'LAKE.NOPE' does not exist or not authorized."
    assert (lake.current_database, lake.current_schema) == ("LAKE", "PUBLIC")


def test_drop_and_undrop_database_brings_its_tables_back(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE DATABASE d; CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    table_id = catalog_entry(lake, "T", database="D").id
    assert lake.sql("DROP DATABASE d").collect()[0].status == "D successfully dropped."
    assert names(lake, "SHOW DATABASES") == ["LAKE"]
    assert "does not exist" in error_of(lake, "SELECT * FROM d.public.t")
    assert lake.sql("UNDROP DATABASE d").collect()[0].status == "Database D successfully restored."
    assert [r.ID for r in lake.sql("SELECT id FROM d.public.t").collect()] == [1]
    assert catalog_entry(lake, "T", database="D").id == table_id


def test_drop_and_undrop_schema_brings_its_tables_back(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA s; CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    lake.sql("DROP SCHEMA s")
    assert names(lake, "SHOW SCHEMAS IN DATABASE LAKE") == ["PUBLIC"]
    assert "does not exist" in error_of(lake, "SELECT * FROM LAKE.S.T")
    assert lake.sql("UNDROP SCHEMA s").collect()[0].status == "Schema S successfully restored."
    assert [r.ID for r in lake.sql("SELECT id FROM LAKE.S.T").collect()] == [1]


def test_drop_missing_objects(lake: lakeclone.Lake) -> None:
    assert (
        error_of(lake, "DROP TABLE nope") == "SQL compilation error:\nObject 'LAKE.PUBLIC.NOPE' does not exist or not authorized."
    )
    assert "does not exist" in error_of(lake, "DROP SCHEMA nope")
    assert "does not exist" in error_of(lake, "DROP DATABASE nope")
    for kind in ("TABLE", "SCHEMA", "DATABASE"):
        status = lake.sql(f"DROP {kind} IF EXISTS nope").collect()[0].status
        assert status.startswith("Drop statement executed successfully")


def test_drop_database_hides_its_tables(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE DATABASE d; CREATE TABLE t (id INT)")
    assert lake.sql("DROP DATABASE d").collect()[0].status == "D successfully dropped."
    assert names(lake, "SHOW DATABASES") == ["LAKE"]
    assert "does not exist" in error_of(lake, "SELECT * FROM d.public.t")
    assert "does not exist" in error_of(lake, "SHOW TABLES IN DATABASE d")


def test_undrop_schema_when_the_name_is_taken_fails(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA s; DROP SCHEMA s; CREATE SCHEMA s")
    assert error_of(lake, "UNDROP SCHEMA s") == "SQL compilation error:\nObject 'S' already exists."


def test_undrop_database_when_the_name_is_taken_fails(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE DATABASE d; DROP DATABASE d; CREATE DATABASE d")
    assert error_of(lake, "UNDROP DATABASE d") == "SQL compilation error:\nObject 'D' already exists."


def test_undrop_something_never_dropped_fails(lake: lakeclone.Lake) -> None:
    assert error_of(lake, "UNDROP TABLE never") == "SQL compilation error:\nTable NEVER did not exist or was purged."
    assert error_of(lake, "UNDROP SCHEMA never") == "SQL compilation error:\nSchema NEVER did not exist or was purged."


def test_undrop_database_never_dropped_fails(lake: lakeclone.Lake) -> None:
    assert error_of(lake, "UNDROP DATABASE never") == "SQL compilation error:\nDatabase NEVER did not exist or was purged."


# SHOW ... LIKE / IN ----------------------------------------------------------------------------------


def test_show_like_and_in(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE DATABASE sales; CREATE SCHEMA raw; CREATE TABLE orders (id INT); CREATE TABLE order_lines (id INT);"
        "CREATE TABLE customers (id INT); USE SCHEMA sales.public; CREATE TABLE summary (id INT)"
    )
    assert names(lake, "SHOW DATABASES LIKE 'SAL%'") == ["SALES"]
    assert names(lake, "SHOW DATABASES LIKE 'sal%'") == ["SALES"]  # LIKE in SHOW ignores case
    assert names(lake, "SHOW SCHEMAS IN DATABASE sales") == ["PUBLIC", "RAW"]
    assert names(lake, "SHOW SCHEMAS LIKE 'r_w' IN DATABASE sales") == ["RAW"]
    # Without IN, SHOW TABLES covers the current database, every schema of it.
    assert names(lake, "SHOW TABLES") == ["SUMMARY", "CUSTOMERS", "ORDERS", "ORDER_LINES"]
    assert names(lake, "SHOW TABLES IN SCHEMA sales.raw") == ["CUSTOMERS", "ORDERS", "ORDER_LINES"]
    assert names(lake, "SHOW TABLES LIKE 'order%' IN SCHEMA sales.raw") == ["ORDERS", "ORDER_LINES"]
    assert names(lake, "SHOW TABLES IN DATABASE sales") == ["SUMMARY", "CUSTOMERS", "ORDERS", "ORDER_LINES"]
    assert names(lake, "SHOW TABLES IN DATABASE LAKE") == []
    assert "does not exist" in error_of(lake, "SHOW TABLES IN SCHEMA sales.nope")


def test_show_tables_reports_rows_bytes_and_location(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2), (3)")
    (row,) = lake.sql("SHOW TABLES").collect()
    entry = catalog_entry(lake, "T")
    assert (row.database_name, row.schema_name, row.kind, row.rows, row.is_external) == ("LAKE", "PUBLIC", "TABLE", 3, "N")
    assert row.bytes > 0
    assert row.location == entry.location == f"{lake.location}/tables/{entry.id}"


def test_connect_removes_what_a_dead_session_wrote_into_a_new_table_s_folder(lake: lakeclone.Lake) -> None:
    from lakeclone.catalog.store import PendingFolder

    lake.sql("CREATE TABLE kept (id INT); INSERT INTO kept VALUES (1)")
    recorded = catalog_entry(lake, "KEPT")
    assert recorded is not None
    tables = lake.warehouse / "tables"
    for name in ("made", "found", "running"):
        (tables / name / "_delta_log").mkdir(parents=True)
        (tables / name / "_delta_log" / f"{0:020d}.json").write_text("{}")
        (tables / name / "part-0.parquet").write_bytes(b"PAR1")
    live = lake._executor.session.id  # type: ignore[attr-defined]
    pending = [
        PendingFolder(f"{lake.location}/tables/made", "q1", "a-dead-session", made=True),
        PendingFolder(f"{lake.location}/tables/found", "q2", "a-dead-session", made=False),
        PendingFolder(f"{lake.location}/tables/running", "q3", live, made=True),
        PendingFolder(recorded.location, "q4", "a-dead-session", made=True),  # died after the catalog record
    ]
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        for folder in pending:
            catalog.folders.pend_folder(folder)
        lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock)
        assert catalog.folders.pending_folders() == [pending[2]]  # its session still runs
    finally:
        catalog.close()
    assert not (tables / "made").exists()
    assert list((tables / "found").iterdir()) == []  # the folder was there before the statement: it stays, empty
    assert sorted(p.name for p in (tables / "running").iterdir()) == ["_delta_log", "part-0.parquet"]
    assert lake.sql("SELECT * FROM kept").collect()[0].ID == 1


def test_a_statement_s_new_folder_is_pending_only_while_it_runs(lake: lakeclone.Lake) -> None:
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        lake.sql("CREATE TABLE t (id INT); CREATE TABLE c CLONE t")
        assert catalog.folders.pending_folders() == []
        before = set((lake.warehouse / "tables").iterdir())
        with pytest.raises(lakeclone.LakecloneError):
            lake.sql("CREATE TABLE broken AS SELECT CAST(raise_error('no rows for you') AS INT) AS id")
        assert catalog.folders.pending_folders() == []
        assert set((lake.warehouse / "tables").iterdir()) == before  # and the failed statement's folder is gone
    finally:
        catalog.close()


def test_a_statements_names_hold_what_they_first_held(tmp_path: Path) -> None:
    """Within names_held, a name another connection points elsewhere finds nothing; the statement's own changes and
    its transaction's reads see the catalog as it is."""
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    mine, other = Catalog(tmp_path / "catalog.sqlite"), Catalog(tmp_path / "catalog.sqlite")
    try:
        with other.transaction():
            first = other.objects.create_database("FIRST", now)
        with mine.names_held():
            assert mine.objects.database("FIRST") == first
            assert mine.objects.database("LATER") is None
            with other.transaction():
                other.objects.drop_database(first, now)
                replacement = other.objects.create_database("FIRST", now)
                other.objects.create_database("LATER", now)
            # The name now holds another database, and a name that held none now holds one: neither is seen.
            assert mine.objects.database("FIRST") is None
            assert mine.objects.database("LATER") is None
            with mine.committed_at_once():  # under the write lock, a check sees the catalog as it is
                assert mine.objects.database("FIRST") == replacement
                mine.objects.rename_database(replacement, "RENAMED")  # the statement's own change of a name
            assert mine.objects.database("RENAMED") is not None
            assert mine.objects.database("LATER") is not None
        assert mine.objects.database("FIRST") is None  # after the block, as it is
        assert other.objects.database("RENAMED") == dataclasses.replace(replacement, name="RENAMED")
    finally:
        mine.close()
        other.close()


def test_a_running_statement_writes_to_the_catalog_only_through_its_unit_of_work(tmp_path: Path) -> None:
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    catalog = Catalog(tmp_path / "catalog.sqlite")
    try:
        with catalog.statement_running():
            for write in (
                lambda: catalog.objects.create_database("LOOSE", now),
                lambda: catalog.folders.pend_folder(PendingFolder("f", "q", "s", made=True)),
            ):
                with pytest.raises(RuntimeError, match="outside its unit of work"):
                    write()
            with catalog.committed_at_once():  # a durable write, before the statement's records begin
                catalog.objects.create_database("AT_ONCE", now)
            with catalog.statement_block():
                catalog.objects.create_database("KEPT", now)
            with pytest.raises(ZeroDivisionError), catalog.statement_block():
                catalog.objects.create_database("UNDONE", now)
                _ = 1 / 0
            assert catalog.objects.database("KEPT") is not None  # the statement's own connection reads what it recorded
        catalog.end_statement(commit=False)
        assert [catalog.objects.database(name) is not None for name in ("LOOSE", "KEPT", "UNDONE", "AT_ONCE")] == [
            False,
            False,
            False,
            True,
        ]
        with catalog.statement_running(), catalog.statement_block():
            catalog.objects.create_database("KEPT", now)
        catalog.end_statement(commit=True)
        assert catalog.objects.database("KEPT") is not None and not catalog.in_statement
    finally:
        catalog.close()


def test_a_statement_s_catalog_records_commit_with_it_or_not_at_all(lake: lakeclone.Lake, monkeypatch) -> None:
    from lakeclone.engine import registry

    lake.sql("CREATE TABLE src (id INT); INSERT INTO src VALUES (1); CREATE TABLE c (id INT)")
    tables = {row.name for row in lake.sql("SHOW TABLES").collect()}
    folders = set((lake.warehouse / "tables").iterdir())

    def fails(execution: object) -> None:
        raise RuntimeError("the statement fails once it recorded what it did")

    # The last step before the statement's records commit fails: what it recorded goes with it.
    monkeypatch.setattr(registry, "FINISH", [*registry.FINISH, fails])
    for statement in ("CREATE OR REPLACE TABLE c CLONE src", "CREATE SCHEMA s", "CREATE ROLE r", "ALTER TABLE c RENAME TO d"):
        with pytest.raises(lakeclone.LakecloneError):
            lake.sql(statement)
    monkeypatch.undo()
    assert (lake.current_database, lake.current_schema) == ("LAKE", "PUBLIC")  # CREATE SCHEMA did not move the session
    assert {row.name for row in lake.sql("SHOW TABLES").collect()} == tables
    assert lake.sql("SELECT count(*) AS n FROM c").collect()[0].N == 0  # still the table it was
    assert set((lake.warehouse / "tables").iterdir()) == folders  # the clone's folder is gone
    assert lake.sql("SHOW SCHEMAS LIKE 'S'").collect() == []
    assert lake.sql("SHOW ROLES LIKE 'R'").collect() == []
    statuses = lake.sql(
        "SELECT execution_status FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY()) "
        "WHERE query_text IN ('CREATE SCHEMA s', 'CREATE ROLE r')"
    ).collect()
    assert [row.EXECUTION_STATUS for row in statuses] == ["FAILED_WITH_ERROR"] * 2


# Table identity --------------------------------------------------------------------------------------


def test_rename_keeps_identity_location_and_data(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    before = catalog_entry(lake, "T")
    assert lake.sql("ALTER TABLE t RENAME TO u").collect()[0].status == "Statement executed successfully."
    after = catalog_entry(lake, "U")
    assert catalog_entry(lake, "T") is None
    assert (after.id, after.location) == (before.id, before.location)
    assert [r.ID for r in lake.sql("SELECT id FROM u").collect()] == [1]
    # History continues: the rename is no commit, and the next write is version 2.
    lake.sql("INSERT INTO u VALUES (2)")
    assert [r.version for r in lake.sql("DESCRIBE HISTORY u").collect()] == [2, 1, 0]


def test_rename_into_another_schema(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA s; USE SCHEMA PUBLIC; CREATE TABLE t (id INT)")
    table_id = catalog_entry(lake, "T").id
    lake.sql("ALTER TABLE t RENAME TO LAKE.S.MOVED")
    assert catalog_entry(lake, "MOVED", schema="S").id == table_id
    assert names(lake, "SHOW TABLES IN SCHEMA LAKE.PUBLIC") == []


def test_rename_to_a_taken_name_fails(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); CREATE TABLE u (id INT)")
    assert error_of(lake, "ALTER TABLE t RENAME TO u") == "SQL compilation error:\nObject 'U' already exists."
    assert "does not exist" in error_of(lake, "ALTER TABLE nope RENAME TO v")


def test_drop_then_create_makes_a_new_table_and_undrop_needs_the_name(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (v STRING); INSERT INTO t VALUES ('first')")
    first = catalog_entry(lake, "T")
    lake.sql("DROP TABLE t; CREATE TABLE t (v STRING); INSERT INTO t VALUES ('second')")
    second = catalog_entry(lake, "T")
    assert second.id != first.id and second.location != first.location
    assert error_of(lake, "UNDROP TABLE t") == "SQL compilation error:\nObject 'T' already exists."
    lake.sql("DROP TABLE t")
    lake.sql("UNDROP TABLE t")  # the most recently dropped: the second
    assert catalog_entry(lake, "T").id == second.id
    lake.sql("ALTER TABLE t RENAME TO t2; UNDROP TABLE t")
    assert catalog_entry(lake, "T").id == first.id
    assert [r.V for r in lake.sql("SELECT v FROM t").collect()] == ["first"]


def test_undrop_within_and_after_the_retention_window(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE a (id INT); CREATE TABLE b (id INT); DROP TABLE a; DROP TABLE b")
    clock.advance(days=6, hours=23)
    lake.sql("UNDROP TABLE a")  # inside the default 7 days
    assert catalog_entry(lake, "A") is not None
    clock.advance(hours=2)
    assert error_of(lake, "UNDROP TABLE b") == "SQL compilation error:\nTable B did not exist or was purged."


def test_undrop_window_follows_the_table_retention(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE t (id INT) DATA_RETENTION_TIME_IN_DAYS = 1; DROP TABLE t")
    clock.advance(days=1, seconds=1)
    assert "did not exist or was purged" in error_of(lake, "UNDROP TABLE t")


@pytest.mark.parametrize("purge_first", [True, False], ids=["purged", "purge-not-run-yet"])
def test_undrop_schema_never_brings_back_a_table_whose_window_has_passed(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, purge_first: bool
) -> None:
    """The schema's window (7 days) is still open, the short-lived table's (1 day) is not.

    Whether a purge ran between (any DROP or VACUUM runs one) or not, the
    table stays gone, and a purge deletes its files; the long-lived one comes back.
    """
    lake.sql(
        "CREATE SCHEMA s2; CREATE TABLE s2.t (k INT) DATA_RETENTION_TIME_IN_DAYS = 1; INSERT INTO s2.t VALUES (1);"
        "CREATE TABLE s2.kept (k INT); INSERT INTO s2.kept VALUES (2); USE SCHEMA PUBLIC"
    )
    folder = Path(location(lake, "s2.t"))
    lake.sql("DROP SCHEMA s2")
    clock.advance(days=2)
    if purge_first:
        lake.sql("CREATE TABLE scratch (k INT); DROP TABLE scratch")
    assert lake.sql("UNDROP SCHEMA s2").collect()[0].status == "Schema S2 successfully restored."
    assert error_of(lake, "SELECT * FROM s2.t") == "SQL compilation error:\nObject 'LAKE.S2.T' does not exist or not authorized."
    assert "did not exist or was purged" in error_of(lake, "UNDROP TABLE s2.t")
    lake.sql("CREATE TABLE scratch2 (k INT); DROP TABLE scratch2")  # a purge, which deletes its files
    assert not folder.exists()
    assert [tuple(r) for r in lake.sql("SELECT * FROM s2.kept").collect()] == [(2,)]


def test_undrop_database_after_the_retention_window_fails(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE DATABASE d; DROP DATABASE d; CREATE DATABASE e2; DROP DATABASE e2")
    clock.advance(days=6)
    lake.sql("UNDROP DATABASE e2")
    clock.advance(days=2)
    assert "did not exist or was purged" in error_of(lake, "UNDROP DATABASE d")


# Parameters ------------------------------------------------------------------------------------------


def test_table_parameters_set_unset_and_show(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT)")
    shown = parameters(lake, "SHOW PARAMETERS IN TABLE t")
    assert shown == {
        "DATA_RETENTION_TIME_IN_DAYS": ("7", "7", ""),
        "MAX_DATA_EXTENSION_TIME_IN_DAYS": ("14", "14", ""),
        "CHANGE_TRACKING": ("false", "false", ""),
        "ENABLE_DELETION_VECTORS": ("false", "false", ""),
        "COMMENT": ("", "", ""),
    }
    lake.sql("ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 30 CHANGE_TRACKING = TRUE COMMENT = 'hi'")
    shown = parameters(lake, "SHOW PARAMETERS IN TABLE t")
    assert shown["DATA_RETENTION_TIME_IN_DAYS"] == ("30", "7", "TABLE")
    assert shown["CHANGE_TRACKING"] == ("true", "false", "TABLE")
    assert shown["COMMENT"] == ("hi", "", "TABLE")
    lake.sql("ALTER TABLE t UNSET DATA_RETENTION_TIME_IN_DAYS, COMMENT")
    shown = parameters(lake, "SHOW PARAMETERS IN TABLE t")
    assert shown["DATA_RETENTION_TIME_IN_DAYS"] == ("7", "7", "")
    assert shown["COMMENT"] == ("", "", "")
    assert shown["CHANGE_TRACKING"] == ("true", "false", "TABLE")


def test_parameters_inherit_database_to_schema_to_table(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA s; CREATE TABLE t (id INT)")
    lake.sql("ALTER DATABASE LAKE SET DATA_RETENTION_TIME_IN_DAYS = 20 COMMENT = 'db comment'")
    assert parameters(lake, "SHOW PARAMETERS IN DATABASE LAKE")["DATA_RETENTION_TIME_IN_DAYS"] == ("20", "7", "DATABASE")
    assert parameters(lake, "SHOW PARAMETERS IN SCHEMA s")["DATA_RETENTION_TIME_IN_DAYS"] == ("20", "7", "DATABASE")
    table = parameters(lake, "SHOW PARAMETERS IN TABLE t")
    assert table["DATA_RETENTION_TIME_IN_DAYS"] == ("20", "7", "DATABASE")
    assert table["COMMENT"] == ("", "", "")  # a comment is the object's own, never inherited
    (row,) = lake.sql("SHOW TABLES").collect()
    assert (row.retention_time, row.comment) == (20, "")
    lake.sql("ALTER SCHEMA s SET DATA_RETENTION_TIME_IN_DAYS = 10")
    assert parameters(lake, "SHOW PARAMETERS IN TABLE t")["DATA_RETENTION_TIME_IN_DAYS"] == ("10", "7", "SCHEMA")
    (row,) = lake.sql("SHOW TABLES").collect()
    assert row.retention_time == 10
    lake.sql("ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 2")
    assert parameters(lake, "SHOW PARAMETERS IN TABLE t")["DATA_RETENTION_TIME_IN_DAYS"] == ("2", "7", "TABLE")
    (row,) = lake.sql("SHOW TABLES").collect()
    assert row.retention_time == 2
    lake.sql("ALTER TABLE t UNSET DATA_RETENTION_TIME_IN_DAYS; ALTER SCHEMA s UNSET DATA_RETENTION_TIME_IN_DAYS")
    assert parameters(lake, "SHOW PARAMETERS IN TABLE t")["DATA_RETENTION_TIME_IN_DAYS"] == ("20", "7", "DATABASE")


def test_show_parameters_like(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT)")
    assert list(parameters(lake, "SHOW PARAMETERS LIKE '%retention%' IN TABLE t")) == ["DATA_RETENTION_TIME_IN_DAYS"]
    assert list(parameters(lake, "SHOW PARAMETERS LIKE 'CHANGE_TRACKING' IN TABLE t")) == ["CHANGE_TRACKING"]
    # CHANGE_TRACKING belongs to tables only.
    assert "CHANGE_TRACKING" not in parameters(lake, "SHOW PARAMETERS IN DATABASE LAKE")
    assert parameters(lake, "SHOW PARAMETERS LIKE 'nothing%' IN TABLE t") == {}


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("ALTER TABLE t SET NO_SUCH_PARAMETER = 1", "invalid property 'NO_SUCH_PARAMETER' for 'TABLE'"),
        ("ALTER DATABASE LAKE SET CHANGE_TRACKING = TRUE", "invalid property 'CHANGE_TRACKING' for 'DATABASE'"),
        (
            "ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 91",
            "invalid value [91] for parameter 'DATA_RETENTION_TIME_IN_DAYS': must be between 0 and 90",
        ),
        (
            "ALTER SCHEMA PUBLIC SET DATA_RETENTION_TIME_IN_DAYS = 'abc'",
            "invalid value [abc] for parameter 'DATA_RETENTION_TIME_IN_DAYS'",
        ),
        ("ALTER TABLE t SET CHANGE_TRACKING = 'maybe'", "invalid value [maybe] for parameter 'CHANGE_TRACKING'"),
        ("ALTER TABLE t UNSET NO_SUCH_PARAMETER", "invalid property 'NO_SUCH_PARAMETER' for 'TABLE'"),
        ("ALTER TABLE nope SET COMMENT = 'x'", "Object 'LAKE.PUBLIC.NOPE' does not exist or not authorized."),
    ],
)
def test_invalid_parameters_are_rejected(lake: lakeclone.Lake, statement: str, message: str) -> None:
    lake.sql("CREATE TABLE t (id INT) DATA_RETENTION_TIME_IN_DAYS = 3")
    assert error_of(lake, statement) == "SQL compilation error:\n" + message
    assert parameters(lake, "SHOW PARAMETERS IN TABLE t")["DATA_RETENTION_TIME_IN_DAYS"] == ("3", "7", "TABLE")


def test_a_failed_multi_parameter_set_changes_nothing(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT)")
    assert "invalid value" in error_of(lake, "ALTER TABLE t SET COMMENT = 'x' DATA_RETENTION_TIME_IN_DAYS = 'many'")
    assert parameters(lake, "SHOW PARAMETERS IN TABLE t")["COMMENT"] == ("", "", "")


# Persistence ---------------------------------------------------------------------------------------


def test_a_new_lake_on_the_same_warehouse_sees_everything(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql(
        "CREATE DATABASE d; CREATE SCHEMA s; CREATE TABLE t (id INT, v STRING) COMMENT = 'kept';"
        "INSERT INTO t VALUES (1, 'a'), (2, 'b'); ALTER SCHEMA s SET DATA_RETENTION_TIME_IN_DAYS = 3;"
        "CREATE TABLE gone (id INT); DROP TABLE gone"
    )
    table_id = catalog_entry(lake, "T", schema="S", database="D").id
    again = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=clock)
    # Session state is not persisted; the catalog is.
    assert (again.current_database, again.current_schema) == ("LAKE", "PUBLIC")
    assert names(again, "SHOW DATABASES") == ["D", "LAKE"]
    assert sorted(tuple(r) for r in again.sql("SELECT * FROM d.s.t").collect()) == [(1, "a"), (2, "b")]
    shown = parameters(again, "SHOW PARAMETERS IN TABLE d.s.t")
    assert shown["DATA_RETENTION_TIME_IN_DAYS"] == ("3", "7", "SCHEMA")
    assert shown["COMMENT"] == ("kept", "", "TABLE")
    again.sql("USE SCHEMA d.s; UNDROP TABLE gone; INSERT INTO t VALUES (3, 'c')")
    assert catalog_entry(again, "T", schema="S", database="D").id == table_id
    assert lake.sql("SELECT count(*) AS n FROM d.s.t").collect()[0].N == 3
    assert names(lake, "SHOW TABLES IN SCHEMA d.s") == ["GONE", "T"]


# The SQLite store under concurrent processes -------------------------------------------------------

STORE_WORKER = textwrap.dedent(
    """
    import datetime as dt, json, os, sqlite3, sys, time
    from pathlib import Path
    from lakeclone.catalog.entries import TableKind
    from lakeclone.catalog.store import Catalog

    path, me, other, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])
    while not go.exists():
        time.sleep(0.005)
    now = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    catalog = Catalog(path)
    catalog.objects.ensure_default(now)
    won = []
    for i in range(25):
        with catalog.transaction():
            database = catalog.objects.create_database(f"{me}_{i}", now)
            catalog.objects.create_schema(database, "PUBLIC", now)
        schema = catalog.objects.schema("LAKE", "PUBLIC")
        with catalog.transaction():
            catalog.objects.create_table(schema, f"{me}_T{i}", kind=TableKind.MANAGED, location=f"file:/x/{me}/{i}", now=now, table_id=f"{me}-{i}", owns_folder=True)
        # Both processes race for the same names: the catalog must let exactly one win.
        try:
            with catalog.transaction():
                if catalog.objects.table("LAKE", "PUBLIC", f"SHARED_{i}") is None:
                    catalog.objects.create_table(schema, f"SHARED_{i}", kind=TableKind.MANAGED, location=f"file:/x/{me}/s{i}", now=now, table_id=f"{me}-s{i}", owns_folder=True)
                    won.append(i)
        except sqlite3.IntegrityError:
            pass
    with catalog.transaction():
        catalog.objects.create_database(f"{me}_DONE", now)
    deadline = time.time() + 60
    while catalog.objects.database(f"{other}_DONE") is None and time.time() < deadline:
        time.sleep(0.01)
    seen = sorted(d.name for d in catalog.objects.databases())
    tables = sorted(t.name for t in catalog.objects.tables(catalog.objects.schema("LAKE", "PUBLIC")))
    print(json.dumps({"won": won, "databases": seen, "tables": tables}))
    """
)


def test_catalog_store_shared_by_two_processes(tmp_path: Path) -> None:
    path = tmp_path / "warehouse" / "catalog.sqlite"
    Catalog(path).close()  # opening a new catalog from two processes at once is another test
    go = tmp_path / "go"
    script = tmp_path / "worker.py"
    script.write_text(STORE_WORKER)
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), me, other, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me, other in (("A", "B"), ("B", "A"))
    ]
    time.sleep(0.5)
    go.touch()
    outputs = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        outputs.append(json.loads(out))

    expected_databases = sorted(["LAKE", "A_DONE", "B_DONE"] + [f"{p}_{i}" for p in "AB" for i in range(25)])
    own_tables = {f"{p}_T{i}" for p in "AB" for i in range(25)}
    shared = {f"SHARED_{i}" for i in range(25)}
    for output in outputs:  # each process sees the other's work
        assert output["databases"] == expected_databases
        assert set(output["tables"]) == own_tables | shared
    # Every contested name went to exactly one process.
    assert sorted(outputs[0]["won"] + outputs[1]["won"]) == list(range(25))

    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM databases WHERE name = 'LAKE'").fetchone() == (1,)
        duplicates = db.execute(
            "SELECT schema_id, name FROM tables WHERE dropped_at IS NULL GROUP BY schema_id, name HAVING count(*) > 1"
        ).fetchall()
        assert duplicates == []
        assert db.execute("SELECT count(*) FROM tables").fetchone() == (75,)


FIRST_OPEN_WORKER = textwrap.dedent(
    """
    import datetime as dt, sys
    from pathlib import Path
    from lakeclone.catalog.store import Catalog

    folder, me, other, rounds = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    failures = []
    for i in range(rounds):
        # Meet the other process, then both open the same brand-new catalog.
        (folder / f"ready_{me}_{i}").touch()
        while not (folder / f"ready_{other}_{i}").exists():
            pass
        try:
            catalog = Catalog(folder / f"w{i}" / "catalog.sqlite")
            catalog.objects.ensure_default(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
            catalog.close()
        except Exception as error:
            failures.append(f"round {i}: {type(error).__name__}: {error}")
    print("\\n".join(failures))
    """
)


def test_two_processes_opening_a_new_catalog_at_once(tmp_path: Path) -> None:
    script = tmp_path / "first_open.py"
    script.write_text(FIRST_OPEN_WORKER)
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path), me, other, "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me, other in (("A", "B"), ("B", "A"))
    ]
    failures = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        failures += [line for line in out.splitlines() if line]
    assert failures == []
    for i in range(60):
        with sqlite3.connect(tmp_path / f"w{i}" / "catalog.sqlite") as db:
            assert db.execute("SELECT name FROM databases").fetchall() == [("LAKE",)]


def test_alter_if_exists_on_a_missing_object_does_nothing(lake: lakeclone.Lake) -> None:
    for statement in (
        "ALTER TABLE IF EXISTS nope SET DATA_RETENTION_TIME_IN_DAYS = 1",
        "ALTER SCHEMA IF EXISTS nope UNSET DATA_RETENTION_TIME_IN_DAYS",
        "ALTER DATABASE IF EXISTS nope SET COMMENT = 'x'",
    ):
        assert lake.sql(statement).collect()[0].status == "Statement executed successfully."
    with pytest.raises(lakeclone.LakecloneError, match="does not exist or not authorized"):
        lake.sql("ALTER TABLE nope SET DATA_RETENTION_TIME_IN_DAYS = 1")


def test_show_starts_with_limit_from_and_terse(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE apples (a INT); CREATE TABLE apricots (a INT); CREATE TABLE bananas (a INT)")
    lake.sql('CREATE TABLE "april" (a INT)')
    # STARTS WITH compares case-sensitively, unlike LIKE.
    assert names(lake, "SHOW TABLES STARTS WITH 'AP'") == ["APPLES", "APRICOTS"]
    assert names(lake, "SHOW TABLES STARTS WITH 'ap'") == ["april"]
    assert names(lake, "SHOW TABLES LIKE 'ap%'") == ["APPLES", "APRICOTS", "april"]
    # LIMIT pages through the names in order; FROM starts a page at a name.
    assert names(lake, "SHOW TABLES LIMIT 2") == ["APPLES", "APRICOTS"]
    assert names(lake, "SHOW TABLES LIMIT 2 FROM 'APRICOTS'") == ["APRICOTS", "BANANAS"]
    assert names(lake, "SHOW TABLES LIKE 'A%' LIMIT 5 FROM 'B'") == ["april"]
    assert names(lake, "SHOW SCHEMAS LIMIT 1") == ["PUBLIC"]
    terse = lake.sql("SHOW TERSE TABLES STARTS WITH 'B'")
    assert terse.columns == ["created_on", "name", "kind", "database_name", "schema_name"]
    assert [tuple(r)[1:] for r in terse.collect()] == [("BANANAS", "TABLE", "LAKE", "PUBLIC")]
    # TERSE after the kind, where other systems put their options, is read as Snowflake's order.
    assert lake.sql("SHOW TABLES TERSE STARTS WITH 'B'").collect() == terse.collect()
    with pytest.raises(lakeclone.LakecloneError, match="must not be negative"):
        lake.sql("SHOW TABLES LIMIT -1")


def test_show_tables_history_lists_dropped_tables(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE kept (a INT); CREATE TABLE gone (a INT); DROP TABLE gone")
    assert names(lake, "SHOW TABLES") == ["KEPT"]
    listed = {r.name: r.dropped_on for r in lake.sql("SHOW TABLES HISTORY").collect()}
    assert set(listed) == {"KEPT", "GONE"}
    assert listed["KEPT"] is None
    assert listed["GONE"] is not None
