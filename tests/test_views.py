"""Views: CREATE/DROP/SHOW/DESCRIBE/ALTER VIEW, querying them, their names, time travel and schema clones."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from lake_helpers import rows
from warehouse_templates import Build

import lakeclone
from lakeclone.catalog.names import QualifiedName
from lakeclone.catalog.store import Catalog
from lakeclone.delta.log import Delta
from lakeclone.engine.context import SessionContext
from lakeclone.engine.tables import Tables
from lakeclone.storage import Storage
from lakeclone.views import base_tables, view_definition

pytestmark = pytest.mark.spark


def _three_orders(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE orders (id INT, region STRING, amount INT)")
    lake.sql("INSERT INTO orders VALUES (1, 'EU', 10), (2, 'US', 20), (3, 'EU', 30)")


@pytest.fixture
def orders(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """A Lake whose LAKE.PUBLIC.ORDERS holds three rows."""
    return copy_of(_three_orders)


@pytest.fixture
def catalog(lake: lakeclone.Lake) -> Iterator[Catalog]:
    """The warehouse's catalog, opened beside the Lake's own connection."""
    opened = Catalog(lake.catalog_path)
    yield opened
    opened.close()


def views(lake: lakeclone.Lake, sql: str = "SHOW VIEWS") -> dict[str, Any]:
    """SHOW VIEWS' rows by qualified name."""
    return {f"{r.database_name}.{r.schema_name}.{r.name}": r for r in lake.sql(sql).collect()}


def view_rows(lake: lakeclone.Lake) -> list[tuple[str, str, str, str | None]]:
    """Every row of the catalog's views table, dropped ones too: (name, definition, columns, dropped_at)."""
    with sqlite3.connect(lake.catalog_path) as db:
        return db.execute("SELECT name, definition, columns, dropped_at FROM views ORDER BY rowid").fetchall()


def fails(lake: lakeclone.Lake, sql: str, message: str) -> None:
    """Running ``sql`` raises a LakecloneError whose message contains ``message``."""
    with pytest.raises(lakeclone.LakecloneError, match=re.escape(message)):
        lake.sql(sql).collect()


# CREATE, query, REPLACE, DROP -------------------------------------------------------------


def test_a_view_reads_its_tables_as_they_are_now(orders: lakeclone.Lake) -> None:
    status = orders.sql("CREATE VIEW eu AS SELECT id, amount * 2 AS doubled FROM orders WHERE region = 'EU'")
    assert status.collect()[0].status == "View EU successfully created."
    assert rows(orders, "SELECT * FROM eu") == [(1, 20), (3, 60)]
    orders.sql("INSERT INTO orders VALUES (4, 'EU', 40)")
    assert rows(orders, "SELECT doubled FROM eu WHERE id > 1") == [(60,), (80,)]
    assert rows(orders, "SELECT e.id, o.region FROM eu AS e JOIN orders o ON e.id = o.id") == [
        (1, "EU"),
        (3, "EU"),
        (4, "EU"),
    ]
    assert orders.sql("SELECT * FROM eu").columns == ["ID", "DOUBLED"]


def test_replace_and_if_not_exists(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW v AS SELECT id FROM orders")
    fails(orders, "CREATE VIEW v AS SELECT amount FROM orders", "SQL compilation error:\nObject 'V' already exists.")
    status = orders.sql("CREATE VIEW IF NOT EXISTS v AS SELECT amount FROM orders").collect()[0].status
    assert status == "V already exists, statement succeeded."
    assert rows(orders, "SELECT * FROM v") == [(1,), (2,), (3,)]
    orders.sql("CREATE OR REPLACE VIEW v AS SELECT amount FROM orders")
    assert rows(orders, "SELECT * FROM v") == [(10,), (20,), (30,)]
    assert [(name, dropped is None) for name, _, _, dropped in view_rows(orders)] == [("V", False), ("V", True)]


def test_drop_view_keeps_its_row(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW v AS SELECT id FROM orders")
    assert orders.sql("DROP VIEW v").collect()[0].status == "V successfully dropped."
    fails(orders, "SELECT * FROM v", "Object 'LAKE.PUBLIC.V' does not exist or not authorized.")
    fails(orders, "DROP VIEW v", "Object 'LAKE.PUBLIC.V' does not exist or not authorized.")
    assert "already dropped" in orders.sql("DROP VIEW IF EXISTS v").collect()[0].status
    assert views(orders) == {}
    [(name, _, _, dropped)] = view_rows(orders)
    assert name == "V" and dropped is not None
    assert rows(orders, "SELECT COUNT(*) FROM orders") == [(3,)]  # the table is untouched


def test_the_definition_is_stored_as_written(orders: lakeclone.Lake, catalog: Catalog) -> None:
    orders.sql(
        "CREATE VIEW big COMMENT = 'as AS' AS\n  select id, \"amount\" AS x -- the big ones\n  from orders where amount > 15"
    )
    entry, query = view_definition(catalog, QualifiedName("LAKE", "PUBLIC", "BIG")) or pytest.fail("no view")
    assert entry.definition == 'select id, "amount" AS x -- the big ones\n  from orders where amount > 15'
    assert entry.columns == ("ID", "X")
    assert query.sql(dialect="snowflake") == 'SELECT ID, "amount" AS X /* the big ones */ FROM ORDERS WHERE AMOUNT > 15'
    assert view_definition(catalog, QualifiedName("LAKE", "PUBLIC", "ORDERS")) is None


# Nested views, column lists ----------------------------------------------------------------


def test_views_of_views(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW eu AS SELECT id, amount FROM orders WHERE region = 'EU'")
    orders.sql("CREATE VIEW eu_big AS SELECT e.id FROM eu e WHERE e.amount > 15")
    orders.sql("CREATE VIEW report AS SELECT b.id, o.amount FROM eu_big b JOIN orders o ON b.id = o.id")
    assert rows(orders, "SELECT * FROM report") == [(3, 30)]
    orders.sql("UPDATE orders SET amount = 100 WHERE id = 1")
    assert rows(orders, "SELECT * FROM report") == [(1, 100), (3, 30)]
    assert rows(orders, "WITH r AS (SELECT * FROM report) SELECT SUM(amount) FROM r") == [(130,)]


def test_a_column_list_renames_the_columns(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW v (order_id, total) AS SELECT id, amount FROM orders")
    assert orders.sql("SELECT * FROM v").columns == ["ORDER_ID", "TOTAL"]
    assert rows(orders, "SELECT order_id FROM v WHERE total = 20") == [(2,)]
    assert rows(orders, "SELECT x.a FROM v AS x(a, b) WHERE x.b = 30") == [(3,)]  # the reference's own names win
    described = [(r.name, r.type, r.kind, r["null?"]) for r in orders.sql("DESCRIBE VIEW v").collect()]
    assert described == [("ORDER_ID", "NUMBER(38,0)", "COLUMN", "Y"), ("TOTAL", "NUMBER(38,0)", "COLUMN", "Y")]


def test_a_column_list_of_the_wrong_length_or_with_a_repeated_name(orders: lakeclone.Lake) -> None:
    fails(
        orders,
        "CREATE VIEW v (a) AS SELECT id, amount FROM orders",
        "View definition for 'LAKE.PUBLIC.V' declared 1 column(s), but view query produces 2 column(s).",
    )
    fails(orders, "CREATE VIEW v (a, A) AS SELECT id, amount FROM orders", "duplicate column name 'A'")
    fails(orders, "CREATE VIEW v AS SELECT id, id FROM orders", "duplicate column name 'ID'")
    assert view_rows(orders) == []


# Names ------------------------------------------------------------------------------------


def test_unqualified_names_resolve_in_the_views_schema(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW eu AS SELECT id, CURRENT_SCHEMA() AS s FROM orders WHERE region = 'EU'")
    orders.sql("CREATE SCHEMA other")  # now the current schema
    orders.sql("CREATE TABLE orders (id INT, region STRING, amount INT)")
    orders.sql("INSERT INTO orders VALUES (99, 'EU', 1)")
    # The view reads PUBLIC's ORDERS; CURRENT_SCHEMA() still answers for the session.
    assert rows(orders, "SELECT * FROM public.eu") == [(1, "OTHER"), (3, "OTHER")]
    orders.sql("CREATE VIEW mine AS SELECT id FROM orders")
    orders.sql("CREATE VIEW public.both AS SELECT id FROM other.mine UNION ALL SELECT id FROM orders")
    assert rows(orders, "SELECT * FROM lake.public.both") == [(1,), (2,), (3,), (99,)]


def test_views_and_tables_share_names(orders: lakeclone.Lake) -> None:
    exists = "SQL compilation error:\nObject '{}' already exists."
    orders.sql("CREATE VIEW v AS SELECT id FROM orders")
    fails(orders, "CREATE VIEW orders AS SELECT 1 AS x", exists.format("ORDERS"))
    fails(orders, "CREATE OR REPLACE VIEW orders AS SELECT 1 AS x", exists.format("ORDERS"))
    fails(orders, "CREATE TABLE v (a INT)", exists.format("V"))
    fails(orders, "CREATE OR REPLACE TABLE v AS SELECT 1 AS a", exists.format("V"))
    fails(orders, "CREATE TABLE v CLONE orders", exists.format("V"))
    fails(orders, "ALTER TABLE orders RENAME TO v", exists.format("V"))
    fails(orders, "ALTER VIEW v RENAME TO orders", exists.format("ORDERS"))
    orders.sql("CREATE TABLE gone (a INT)")
    orders.sql("DROP TABLE gone")
    orders.sql("CREATE VIEW gone AS SELECT 1 AS a")
    fails(orders, "UNDROP TABLE gone", exists.format("GONE"))
    assert [r.name for r in orders.sql("SHOW TABLES").collect()] == ["ORDERS"]
    assert sorted(r.name for r in orders.sql("SHOW VIEWS").collect()) == ["GONE", "V"]
    assert rows(orders, "SELECT * FROM v") == [(1,), (2,), (3,)]


def test_tables_views_and_streams_share_names(orders: lakeclone.Lake) -> None:
    """A query reads a stream by its name as it reads a table or a view, so none may take another's name."""
    exists = "SQL compilation error:\nObject '{}' already exists."
    orders.sql("CREATE VIEW v AS SELECT id FROM orders")
    orders.sql("CREATE STREAM s ON TABLE orders")
    fails(orders, "CREATE STREAM orders ON TABLE orders", exists.format("ORDERS"))
    fails(orders, "CREATE OR REPLACE STREAM v ON TABLE orders", exists.format("V"))
    fails(orders, "CREATE STREAM IF NOT EXISTS v ON TABLE orders", exists.format("V"))
    for statement in (
        "CREATE TABLE s (a INT)",
        "CREATE OR REPLACE TABLE s AS SELECT 1 AS a",
        "CREATE TABLE s CLONE orders",
        "CREATE VIEW s AS SELECT 1 AS a",
        "CREATE OR REPLACE VIEW s AS SELECT 1 AS a",
        "ALTER TABLE orders RENAME TO s",
        "ALTER VIEW v RENAME TO s",
    ):
        fails(orders, statement, exists.format("S"))
    orders.sql("CREATE TABLE gone (a INT)")
    orders.sql("DROP TABLE gone")
    orders.sql("CREATE STREAM gone ON TABLE orders")
    fails(orders, "UNDROP TABLE gone", exists.format("GONE"))
    assert [r.name for r in orders.sql("SHOW TABLES").collect()] == ["ORDERS"]
    assert [r.name for r in orders.sql("SHOW VIEWS").collect()] == ["V"]
    assert sorted(r.name for r in orders.sql("SHOW STREAMS").collect()) == ["GONE", "S"]
    # A dropped stream frees its name.
    orders.sql("DROP STREAM s")
    orders.sql("CREATE VIEW s AS SELECT 1 AS a")
    assert rows(orders, "SELECT * FROM s") == [(1,)]


def test_a_missing_table_fails_at_create_and_after_a_drop(orders: lakeclone.Lake) -> None:
    fails(
        orders,
        "CREATE VIEW v AS SELECT * FROM nope",
        "SQL compilation error:\nObject 'LAKE.PUBLIC.NOPE' does not exist or not authorized.",
    )
    fails(orders, "CREATE VIEW v AS SELECT nope FROM orders", "invalid identifier 'NOPE'")
    assert view_rows(orders) == []
    orders.sql("CREATE VIEW v AS SELECT id FROM orders")
    orders.sql("DROP TABLE orders")
    fails(orders, "SELECT * FROM v", "Object 'LAKE.PUBLIC.ORDERS' does not exist or not authorized.")
    orders.sql("UNDROP TABLE orders")
    assert rows(orders, "SELECT COUNT(*) FROM v") == [(3,)]


def test_a_view_that_refers_to_itself(orders: lakeclone.Lake) -> None:
    fails(orders, "CREATE VIEW v AS SELECT * FROM v", "Object 'LAKE.PUBLIC.V' does not exist")
    orders.sql("CREATE VIEW a AS SELECT id FROM orders")
    orders.sql("CREATE VIEW b AS SELECT id FROM a")
    fails(
        orders,
        "CREATE OR REPLACE VIEW a AS SELECT id FROM a",
        "View definition for 'LAKE.PUBLIC.A' refers to itself: LAKE.PUBLIC.A -> LAKE.PUBLIC.A.",
    )
    fails(
        orders,
        "CREATE OR REPLACE VIEW a AS SELECT id FROM b",
        "refers to itself: LAKE.PUBLIC.A -> LAKE.PUBLIC.B -> LAKE.PUBLIC.A.",
    )
    assert rows(orders, "SELECT * FROM b") == [(1,), (2,), (3,)]  # the failed REPLACEs changed nothing
    # A cycle made by a rename is caught when the view is read.
    orders.sql("CREATE TABLE t (id INT)")
    orders.sql("CREATE VIEW x AS SELECT id FROM t")
    orders.sql("CREATE VIEW z AS SELECT id FROM x")
    orders.sql("DROP TABLE t")
    orders.sql("ALTER VIEW z RENAME TO t")
    fails(orders, "SELECT * FROM x", "refers to itself: LAKE.PUBLIC.X -> LAKE.PUBLIC.T -> LAKE.PUBLIC.X.")


# SHOW, DESCRIBE, ALTER --------------------------------------------------------------------


def test_show_views(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW eu COMMENT = 'Europe' AS SELECT id FROM orders WHERE region = 'EU'")
    orders.sql("CREATE SCHEMA s2")
    orders.sql("CREATE VIEW us AS SELECT id FROM public.orders WHERE region = 'US'")
    shown = views(orders, "SHOW VIEWS IN DATABASE lake")
    assert set(shown) == {"LAKE.PUBLIC.EU", "LAKE.S2.US"}
    eu = shown["LAKE.PUBLIC.EU"]
    assert (eu.kind, eu.comment, eu.text, eu.change_tracking, eu.is_secure) == (
        "VIEW",
        "Europe",
        "SELECT id FROM orders WHERE region = 'EU'",
        "OFF",
        "false",
    )
    assert eu.created_on is not None
    assert set(views(orders, "SHOW VIEWS")) == {"LAKE.PUBLIC.EU", "LAKE.S2.US"}
    assert set(views(orders, "SHOW VIEWS IN SCHEMA lake.public")) == {"LAKE.PUBLIC.EU"}
    assert set(views(orders, "SHOW VIEWS LIKE 'u%'")) == {"LAKE.S2.US"}
    assert orders.sql("SHOW TERSE VIEWS LIKE 'EU'").columns == ["created_on", "name", "kind", "database_name", "schema_name"]


def test_describe_view(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW v AS SELECT id, region, amount / 2 AS half, COUNT(*) OVER () AS n FROM orders")
    described = [(r.name, r.type, r["null?"]) for r in orders.sql("DESCRIBE VIEW v").collect()]
    assert described == [
        ("ID", "NUMBER(38,0)", "Y"),
        ("REGION", "VARCHAR(16777216)", "Y"),
        ("HALF", "FLOAT", "Y"),
        ("N", "NUMBER(38,0)", "N"),
    ]
    fails(orders, "DESCRIBE VIEW nope", "Object 'LAKE.PUBLIC.NOPE' does not exist")
    fails(orders, "DESCRIBE VIEW orders", "Object 'LAKE.PUBLIC.ORDERS' does not exist")


def test_alter_view_set_and_unset(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW v CHANGE_TRACKING = TRUE AS SELECT id FROM orders")
    assert views(orders)["LAKE.PUBLIC.V"].change_tracking == "ON"
    orders.sql("ALTER VIEW v SET CHANGE_TRACKING = FALSE COMMENT = 'ids'")
    shown = views(orders)["LAKE.PUBLIC.V"]
    assert (shown.change_tracking, shown.comment) == ("OFF", "ids")
    orders.sql("ALTER VIEW v SET CHANGE_TRACKING = TRUE")
    orders.sql("ALTER VIEW v UNSET COMMENT")
    shown = views(orders)["LAKE.PUBLIC.V"]
    assert (shown.change_tracking, shown.comment) == ("ON", "")
    fails(orders, "ALTER VIEW v SET DATA_RETENTION_TIME_IN_DAYS = 1", "invalid property 'DATA_RETENTION_TIME_IN_DAYS' for 'VIEW'")
    fails(orders, "ALTER VIEW nope SET COMMENT = 'x'", "Object 'LAKE.PUBLIC.NOPE' does not exist")
    orders.sql("ALTER VIEW IF EXISTS nope SET COMMENT = 'x'")
    fails(orders, "ALTER VIEW orders SET CHANGE_TRACKING = TRUE", "Object 'LAKE.PUBLIC.ORDERS' does not exist")


def test_change_tracking_on_a_view_turns_it_on_for_its_tables(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE TABLE regions (region STRING, name STRING)")
    orders.sql("CREATE VIEW eu AS SELECT id, amount FROM orders WHERE region = 'EU'")
    orders.sql(
        "CREATE VIEW named AS SELECT e.id, r.name FROM eu e JOIN orders o ON e.id = o.id JOIN regions r ON o.region = r.region"
    )
    orders.sql("ALTER VIEW named SET CHANGE_TRACKING = TRUE")
    assert views(orders)["LAKE.PUBLIC.NAMED"].change_tracking == "ON"
    assert views(orders)["LAKE.PUBLIC.EU"].change_tracking == "OFF"  # a view read along keeps its own setting
    tracked = {r.name: r.change_tracking for r in orders.sql("SHOW TABLES").collect()}
    assert tracked == {"ORDERS": "ON", "REGIONS": "ON"}
    # Turning it off on the view leaves its tables tracked: other streams may need them.
    orders.sql("ALTER VIEW named SET CHANGE_TRACKING = FALSE")
    assert views(orders)["LAKE.PUBLIC.NAMED"].change_tracking == "OFF"
    assert {r.name: r.change_tracking for r in orders.sql("SHOW TABLES").collect()} == tracked


def test_alter_view_rename(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE VIEW v COMMENT = 'kept' AS SELECT id FROM orders")
    orders.sql("ALTER VIEW v RENAME TO w")
    fails(orders, "SELECT * FROM v", "Object 'LAKE.PUBLIC.V' does not exist")
    assert rows(orders, "SELECT COUNT(*) FROM w") == [(3,)]
    orders.sql("CREATE SCHEMA s2")
    orders.sql("CREATE TABLE orders (id INT)")  # S2's own ORDERS
    orders.sql("ALTER VIEW public.w RENAME TO s2.w")
    # Its unqualified names now resolve in S2.
    assert rows(orders, "SELECT COUNT(*) FROM s2.w") == [(0,)]
    assert views(orders, "SHOW VIEWS IN DATABASE lake")["LAKE.S2.W"].comment == "kept"
    fails(orders, "ALTER VIEW w RENAME TO nope.w", "Schema 'LAKE.NOPE' does not exist")


def test_unsupported_view_options_are_refused(orders: lakeclone.Lake) -> None:
    fails(orders, "CREATE SECURE VIEW v AS SELECT id FROM orders", "unsupported view option SECURE")
    fails(orders, "CREATE VIEW v LOCATION = '/tmp/x' AS SELECT id FROM orders", "unsupported view option LOCATION")
    fails(orders, "CREATE VIEW v DATA_RETENTION_TIME_IN_DAYS = 1 AS SELECT id FROM orders", "invalid property")
    fails(orders, "CREATE VIEW v (id COMMENT 'x') AS SELECT id FROM orders", "lakeclone takes column names only")
    assert view_rows(orders) == []


# Time travel ------------------------------------------------------------------------------


def test_time_travel_on_a_view_reaches_every_table(orders: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    orders.sql("CREATE TABLE regions (region STRING, name STRING)")
    orders.sql("INSERT INTO regions VALUES ('EU', 'Europe'), ('US', 'United States')")
    orders.sql("CREATE VIEW named AS SELECT o.id, r.name FROM orders o JOIN regions r ON o.region = r.region")
    orders.sql("CREATE VIEW eu AS SELECT id FROM named WHERE name = 'Europe'")
    clock.advance(minutes=10)
    orders.sql("DELETE FROM orders WHERE id = 1")
    changed_by = orders.last_query_id
    orders.sql("UPDATE regions SET name = 'EU' WHERE region = 'EU'")
    clock.advance(minutes=10)
    assert rows(orders, "SELECT * FROM eu") == []
    assert rows(orders, "SELECT * FROM eu AT(OFFSET => -900)") == [(1,), (3,)]
    assert rows(orders, f"SELECT * FROM eu BEFORE(STATEMENT => '{changed_by}')") == [(1,), (3,)]
    assert rows(orders, f"SELECT id FROM named AT(STATEMENT => '{changed_by}') WHERE name = 'Europe'") == [(3,)]
    fails(orders, "SELECT * FROM eu AT(VERSION => 1)", "VERSION is not a point in time for a view")
    fails(orders, "SELECT * FROM eu VERSION AS OF 1", "VERSION is not a point in time for a view")


# Clones -----------------------------------------------------------------------------------


def test_a_schema_clone_carries_its_views(orders: lakeclone.Lake) -> None:
    orders.sql("CREATE SCHEMA shared")
    orders.sql("CREATE TABLE shared.codes (region STRING)")
    orders.sql("INSERT INTO shared.codes VALUES ('EU')")
    orders.sql("USE SCHEMA lake.public")
    orders.sql(
        "CREATE VIEW eu CHANGE_TRACKING = TRUE AS SELECT id FROM orders WHERE region IN (SELECT region FROM lake.shared.codes)"
    )
    orders.sql("CREATE VIEW eu_count AS SELECT COUNT(*) AS n FROM eu")
    orders.sql("CREATE SCHEMA dev CLONE public")
    orders.sql("DELETE FROM dev.orders WHERE id = 1")
    orders.sql("INSERT INTO shared.codes VALUES ('US')")
    # Unqualified names read the clone's tables; the qualified one still reads SHARED.CODES.
    assert rows(orders, "SELECT * FROM lake.dev.eu") == [(2,), (3,)]
    assert rows(orders, "SELECT * FROM lake.dev.eu_count") == [(2,)]
    assert rows(orders, "SELECT * FROM lake.public.eu_count") == [(3,)]
    shown = views(orders, "SHOW VIEWS IN SCHEMA lake.dev")
    assert set(shown) == {"LAKE.DEV.EU", "LAKE.DEV.EU_COUNT"}
    assert shown["LAKE.DEV.EU"].change_tracking == "ON"
    orders.sql("DROP VIEW lake.dev.eu")  # the clone is a view of its own
    assert rows(orders, "SELECT COUNT(*) FROM lake.public.eu") == [(3,)]


def test_a_database_clone_carries_its_views(orders: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    orders.sql("CREATE VIEW v AS SELECT id FROM orders")
    clock.advance(minutes=1)
    before_late = orders.now()
    clock.advance(minutes=1)
    orders.sql("CREATE VIEW late AS SELECT id FROM orders")
    orders.sql(f"CREATE DATABASE snap CLONE lake AT(TIMESTAMP => '{before_late.isoformat()}'::TIMESTAMP_LTZ)")
    assert set(views(orders, "SHOW VIEWS IN DATABASE snap")) == {"SNAP.PUBLIC.V"}
    assert rows(orders, "SELECT COUNT(*) FROM snap.public.v") == [(3,)]


# What the streams feature calls -----------------------------------------------------------


def test_base_tables_follow_nested_views(orders: lakeclone.Lake, catalog: Catalog) -> None:
    orders.sql("CREATE TABLE regions (region STRING)")
    orders.sql("CREATE VIEW a AS SELECT o.id FROM orders o JOIN regions r ON o.region = r.region")
    orders.sql("CREATE VIEW b AS WITH x AS (SELECT id FROM a) SELECT x.id FROM x JOIN orders USING (id)")
    tables = Tables(
        catalog,
        SessionContext("LAKE", "PUBLIC"),
        Delta(orders.spark),
        now=orders.now(),
        warehouse=orders.warehouse,
        storage=Storage(orders.spark),
        location=orders.location,
    )
    view = catalog.views.view("LAKE", "PUBLIC", "B")
    assert view is not None
    assert sorted(t.qualified for t in base_tables(tables, view)) == ["LAKE.PUBLIC.ORDERS", "LAKE.PUBLIC.REGIONS"]
    orders.sql("DROP TABLE regions")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Object 'LAKE.PUBLIC.REGIONS' does not exist")):
        base_tables(tables, view)
