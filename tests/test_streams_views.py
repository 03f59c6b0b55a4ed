"""Streams on views: the net change of a view's rows, from offsets on each table the view reads."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from delta_reader import kernel_rows, spark_rows
from lake_helpers import location, rows
from pyspark.sql import Row
from warehouse_templates import Build

import lakeclone

pytestmark = pytest.mark.spark

METADATA = "METADATA$ACTION, METADATA$ISUPDATE"


def stream(lake: lakeclone.Lake, name: str) -> Row:
    (row,) = lake.sql(f"DESCRIBE STREAM {name}").collect()
    return row


def fails(lake: lakeclone.Lake, sql: str, message: str) -> None:
    with pytest.raises(lakeclone.LakecloneError, match=message):
        lake.sql(sql).collect()


def _orders_customers_and_view(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE orders (id INT, cust INT, amount INT)")
    lake.sql("CREATE TABLE customers (cid INT, name STRING)")
    lake.sql("INSERT INTO orders VALUES (1, 10, 100), (2, 20, 200), (3, 10, 50)")
    lake.sql("INSERT INTO customers VALUES (10, 'ann'), (20, 'bob')")
    lake.sql("CREATE VIEW named AS SELECT o.id, c.name, o.amount FROM orders o JOIN customers c ON o.cust = c.cid")


def _tracked_orders_customers_and_view(lake: lakeclone.Lake) -> None:
    _orders_customers_and_view(lake)
    lake.sql("ALTER TABLE orders SET CHANGE_TRACKING = TRUE; ALTER TABLE customers SET CHANGE_TRACKING = TRUE")


@pytest.fixture
def untracked_shop(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """ORDERS (ID, CUST, AMOUNT) and CUSTOMERS (CID, NAME), three orders by two customers; NAMED joins them."""
    return copy_of(_orders_customers_and_view)


@pytest.fixture
def shop(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """UNTRACKED_SHOP with change tracking on both tables, as the first stream on NAMED leaves them.

    Turning tracking on costs three Delta commits per table, seconds of Spark
    jobs: the template pays for them once, for the tests whose subject is what
    a stream returns rather than when tracking starts.
    """
    return copy_of(_tracked_orders_customers_and_view)


# What a stream on a view returns --------------------------------------------------------------------


def test_projection_and_filter_view(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE VIEW big (order_id, amount) AS SELECT id, amount FROM orders WHERE amount >= 100")
    shop.sql("CREATE STREAM s ON VIEW big")
    frame = shop.sql("SELECT * FROM s")
    assert frame.columns == ["ORDER_ID", "AMOUNT", "METADATA$ACTION", "METADATA$ISUPDATE", "METADATA$ROW_ID"]
    assert frame.collect() == []
    shop.sql("UPDATE orders SET amount = 300 WHERE id = 2")  # stays in the view: an update pair
    shop.sql("UPDATE orders SET amount = 60 WHERE id = 1")  # leaves the view: a delete
    shop.sql("UPDATE orders SET amount = 150 WHERE id = 3")  # enters it: an insert
    shop.sql("UPDATE orders SET cust = 30 WHERE id = 2")  # a column the view does not show: nothing more
    shop.sql("INSERT INTO orders VALUES (4, 10, 5), (5, 10, 500)")
    assert rows(shop, f"SELECT order_id, amount, {METADATA} FROM s") == [
        (1, 100, "DELETE", False),
        (2, 200, "DELETE", True),
        (2, 300, "INSERT", True),
        (3, 150, "INSERT", False),
        (5, 500, "INSERT", False),
    ]
    pair = shop.sql("SELECT METADATA$ROW_ID AS rid FROM s WHERE order_id = 2").collect()
    assert len(pair) == 2 and pair[0].RID == pair[1].RID
    assert len({r.RID for r in shop.sql("SELECT METADATA$ROW_ID AS rid FROM s").collect()}) == 4


def test_inner_join_where_one_side_updates(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE STREAM s ON VIEW named")
    before = {r.ID: r.RID for r in shop.sql("SELECT id, METADATA$ROW_ID AS rid FROM s").collect()}
    assert before == {}
    shop.sql("UPDATE customers SET name = 'Ann' WHERE cid = 10")
    got = shop.sql(f"SELECT id, name, amount, {METADATA}, METADATA$ROW_ID AS rid FROM s").collect()
    assert sorted(tuple(r)[:5] for r in got) == [
        (1, "Ann", 100, "INSERT", True),
        (1, "ann", 100, "DELETE", True),
        (3, "Ann", 50, "INSERT", True),
        (3, "ann", 50, "DELETE", True),
    ]
    ids = {}
    for r in got:
        ids.setdefault(r.ID, set()).add(r.RID)
    assert all(len(pair) == 1 for pair in ids.values()) and ids[1] != ids[3]
    # The id stays the row's across later changes, on either side of the join.
    shop.sql("CREATE TABLE sink (id INT, rid STRING)")
    shop.sql("INSERT INTO sink SELECT id, METADATA$ROW_ID FROM s WHERE METADATA$ACTION = 'INSERT'")
    shop.sql("UPDATE orders SET amount = 101 WHERE id = 1")
    (later,) = shop.sql("SELECT METADATA$ROW_ID AS rid FROM s WHERE METADATA$ACTION = 'INSERT'").collect()
    assert rows(shop, "SELECT rid FROM sink WHERE id = 1") == [(later.RID,)]


def test_a_join_row_appears_when_the_other_side_inserts(shop: lakeclone.Lake) -> None:
    shop.sql("INSERT INTO orders VALUES (4, 30, 400)")  # no customer 30 yet: not in the view
    shop.sql("CREATE STREAM s ON VIEW named")
    shop.sql("INSERT INTO customers VALUES (30, 'cy')")
    assert rows(shop, f"SELECT id, name, amount, {METADATA} FROM s") == [(4, "cy", 400, "INSERT", False)]
    shop.sql("DELETE FROM customers WHERE cid = 20")  # takes order 2 out of the view
    shop.sql("INSERT INTO customers VALUES (20, 'bea')")  # a new row: order 2 joins it again
    assert rows(shop, f"SELECT id, name, {METADATA} FROM s") == [
        (2, "bea", "INSERT", False),
        (2, "bob", "DELETE", False),
        (4, "cy", "INSERT", False),
    ]


def test_union_all_keeps_each_branchs_rows_apart(shop: lakeclone.Lake) -> None:
    shop.sql(
        "CREATE VIEW people AS SELECT id AS n, 'order' AS kind FROM orders "
        "UNION ALL SELECT cid, 'customer' FROM customers UNION ALL SELECT id, 'again' FROM orders WHERE id = 1"
    )
    shop.sql("CREATE STREAM s ON VIEW people")
    shop.sql("UPDATE orders SET id = 11 WHERE id = 1")  # leaves the third branch, changes in the first
    shop.sql("INSERT INTO customers VALUES (30, 'cy')")
    got = shop.sql(f"SELECT n, kind, {METADATA}, METADATA$ROW_ID AS rid FROM s").collect()
    assert sorted(tuple(r)[:4] for r in got) == [
        (1, "again", "DELETE", False),
        (1, "order", "DELETE", True),
        (11, "order", "INSERT", True),
        (30, "customer", "INSERT", False),
    ]
    # One base row, two branches: two view rows, two ids.
    assert len({r.RID for r in got}) == 3


def test_nested_views_subqueries_and_with(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE VIEW big AS SELECT * FROM orders WHERE amount >= 100")
    shop.sql(
        "CREATE VIEW report AS WITH c AS (SELECT cid, UPPER(name) AS who FROM customers) "
        "SELECT b.*, x.who FROM big b JOIN (SELECT * FROM c WHERE cid < 100) AS x ON b.cust = x.cid ORDER BY b.id"
    )
    shop.sql("CREATE STREAM s ON VIEW report")
    assert stream(shop, "s").base_tables == "LAKE.PUBLIC.ORDERS, LAKE.PUBLIC.CUSTOMERS"
    assert shop.sql("SELECT * FROM s").columns[:4] == ["ID", "CUST", "AMOUNT", "WHO"]
    shop.sql("UPDATE customers SET name = 'bobby' WHERE cid = 20")
    shop.sql("INSERT INTO orders VALUES (4, 10, 400), (5, 10, 1)")
    assert rows(shop, f"SELECT id, who, {METADATA} FROM s") == [
        (2, "BOB", "DELETE", True),
        (2, "BOBBY", "INSERT", True),
        (4, "ANN", "INSERT", False),
    ]


def test_show_initial_rows_on_a_view(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE STREAM s ON VIEW named SHOW_INITIAL_ROWS = TRUE")
    shop.sql("INSERT INTO orders VALUES (4, 20, 400)")
    assert rows(shop, f"SELECT id, {METADATA} FROM s") == [(1, "INSERT", False), (2, "INSERT", False), (3, "INSERT", False)]
    shop.sql("CREATE TABLE sink (id INT)")
    shop.sql("INSERT INTO sink SELECT id FROM s")
    assert rows(shop, f"SELECT id, {METADATA} FROM s") == [(4, "INSERT", False)]


def test_append_only_stream_on_a_view(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE VIEW tens AS SELECT o.id, c.name FROM orders o JOIN customers c ON o.cust = c.cid WHERE o.cust = 10")
    shop.sql("CREATE STREAM a ON VIEW tens APPEND_ONLY = TRUE")
    shop.sql("INSERT INTO orders SELECT id, 10, 0 FROM range(100, 110)")
    shop.sql("DELETE FROM orders WHERE id >= 105")  # ignored, as for a table
    shop.sql("UPDATE customers SET name = 'Ann' WHERE cid = 10")  # ignored: no row was inserted
    shop.sql("INSERT INTO orders VALUES (7, 20, 0)")  # inserted, but not in the view
    assert rows(shop, f"SELECT id, name, {METADATA} FROM a") == [(n, "ann", "INSERT", False) for n in range(100, 110)]
    assert stream(shop, "a").mode == "APPEND_ONLY"


# Offsets, consumption, tracking --------------------------------------------------------------------


def test_insert_select_consumes_and_moves_every_offset(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE STREAM s ON VIEW named")
    created = stream(shop, "s").offsets
    shop.sql("INSERT INTO orders VALUES (4, 20, 400)")
    shop.sql("UPDATE customers SET name = 'Bob' WHERE cid = 20")
    for _ in range(2):  # a SELECT moves nothing
        assert len(shop.sql("SELECT * FROM s").collect()) == 3
    assert stream(shop, "s").offsets == created
    shop.sql("CREATE TABLE sink (id INT, name STRING, action STRING)")
    shop.sql("INSERT INTO sink SELECT id, name, METADATA$ACTION FROM s")
    moved = stream(shop, "s").offsets
    orders, customers = (int(part.rsplit("@", 1)[1]) for part in moved.split(", "))
    assert moved.startswith("LAKE.PUBLIC.ORDERS@") and ", LAKE.PUBLIC.CUSTOMERS@" in moved
    assert (orders, customers) == tuple(int(part.rsplit("@", 1)[1]) + 1 for part in created.split(", "))
    assert shop.sql("SELECT * FROM s").collect() == []
    expected = [(2, "Bob", "INSERT"), (2, "bob", "DELETE"), (4, "Bob", "INSERT")]
    assert kernel_rows(location(shop, "sink")) == spark_rows(shop.spark, location(shop, "sink")) == expected


def test_first_stream_turns_tracking_on_for_the_view_and_its_tables(untracked_shop: lakeclone.Lake) -> None:
    def tracking() -> dict[str, str]:
        shown = {r.name: r.change_tracking for r in untracked_shop.sql("SHOW TABLES").collect()}
        shown.update({r.name: r.change_tracking for r in untracked_shop.sql("SHOW VIEWS").collect()})
        return shown

    assert set(tracking().values()) == {"OFF"}
    untracked_shop.sql("CREATE STREAM s ON VIEW named")
    assert tracking() == {"ORDERS": "ON", "CUSTOMERS": "ON", "NAMED": "ON"}
    # As for a table: turned off by hand, the next stream turns it on again.
    untracked_shop.sql("ALTER VIEW named SET CHANGE_TRACKING = FALSE")
    untracked_shop.sql("ALTER TABLE customers SET CHANGE_TRACKING = FALSE")
    assert tracking() == {"ORDERS": "ON", "CUSTOMERS": "OFF", "NAMED": "OFF"}
    untracked_shop.sql("CREATE STREAM s2 ON VIEW named")
    assert tracking() == {"ORDERS": "ON", "CUSTOMERS": "ON", "NAMED": "ON"}
    untracked_shop.sql("INSERT INTO customers VALUES (30, 'cy')")
    untracked_shop.sql("INSERT INTO orders VALUES (4, 30, 1)")
    assert rows(untracked_shop, "SELECT id FROM s2") == [(4,)]
    # S's interval on CUSTOMERS spans the versions tracking was off.
    fails(
        untracked_shop,
        "SELECT * FROM s",
        "Change tracking is not enabled or has been missing for the time range requested on table 'CUSTOMERS'",
    )


def test_stream_on_a_view_at_a_point_in_time(untracked_shop: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    untracked_shop.sql("ALTER VIEW named SET CHANGE_TRACKING = TRUE")
    clock.advance(minutes=1)
    then = untracked_shop.now()
    clock.advance(minutes=1)
    untracked_shop.sql("INSERT INTO orders VALUES (4, 20, 400)")
    untracked_shop.sql(f"CREATE STREAM s ON VIEW named AT(TIMESTAMP => '{then:%Y-%m-%d %H:%M:%S}'::TIMESTAMP)")
    assert rows(untracked_shop, "SELECT id FROM s") == [(4,)]
    untracked_shop.sql("CREATE STREAM like_s ON VIEW named AT(STREAM => 's')")
    assert rows(untracked_shop, "SELECT id FROM like_s") == [(4,)]
    fails(untracked_shop, "CREATE STREAM x ON VIEW named AT(VERSION => 1)", "VERSION is not a point in time for a view")
    fails(untracked_shop, "CREATE STREAM x ON VIEW named AT(OFFSET => -100000)", "not available")


# Staleness, VACUUM, SHOW, clones ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            "CREATE OR REPLACE TABLE customers (cid INT, name STRING)",
            "its base table LAKE.PUBLIC.CUSTOMERS was dropped or replaced",
        ),
        ("DROP TABLE orders", "its base table LAKE.PUBLIC.ORDERS was dropped or replaced"),
        ("DROP VIEW named", "its view LAKE.PUBLIC.NAMED was dropped or replaced"),
        (
            "CREATE OR REPLACE VIEW named AS SELECT id, 'x' AS name, amount FROM orders",
            "its view LAKE.PUBLIC.NAMED was dropped or replaced",
        ),
    ],
    ids=["replace-table", "drop-table", "drop-view", "replace-view"],
)
def test_dropping_or_replacing_the_view_or_a_base_table_makes_the_stream_stale(
    shop: lakeclone.Lake, change: str, reason: str
) -> None:
    shop.sql("CREATE STREAM s ON VIEW named")
    shop.sql(change)
    shown = stream(shop, "s")
    assert (shown.stale, shown.invalid_reason) == ("true", reason)
    fails(shop, "SELECT * FROM s", "is stale")


def test_renaming_the_view_keeps_the_stream(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE STREAM s ON VIEW named")
    shop.sql("ALTER VIEW named RENAME TO renamed")
    shop.sql("INSERT INTO orders VALUES (4, 20, 400)")
    assert (stream(shop, "s").table_name, stream(shop, "s").stale) == ("LAKE.PUBLIC.RENAMED", "false")
    assert rows(shop, "SELECT id FROM s") == [(4,)]


def test_show_and_describe_streams_on_views(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE STREAM s ON VIEW named COMMENT = 'joined'")
    (shown,) = shop.sql("SHOW STREAMS LIKE 'S'").collect()
    assert (shown.table_name, shown.source_type, shown.base_tables, shown.comment, shown.mode, shown.stale) == (
        "LAKE.PUBLIC.NAMED",
        "View",
        "LAKE.PUBLIC.ORDERS, LAKE.PUBLIC.CUSTOMERS",
        "joined",
        "DEFAULT",
        "false",
    )
    assert shown.offset_version is None  # two tables, two offsets
    assert stream(shop, "s") == shown


def test_vacuum_keeps_what_a_view_stream_needs_on_every_table(
    shop: lakeclone.Lake, clock: lakeclone.ManualClock, retention_check_off: None
) -> None:
    shop.sql("CREATE STREAM s ON VIEW named")
    for table in ("orders", "customers"):
        shop.sql(f"ALTER TABLE {table} SET DATA_RETENTION_TIME_IN_DAYS = 0")
    shop.sql("DELETE FROM orders WHERE id = 1")
    shop.sql("UPDATE customers SET name = 'Bob' WHERE cid = 20")
    clock.advance(hours=1)
    for table in ("orders", "customers"):
        plan = shop.sql(f"VACUUM {table} RETAIN 0 HOURS DRY RUN").collect()
        assert "stream LAKE.PUBLIC.S" in {r.reason for r in plan}
        shop.sql(f"VACUUM {table} RETAIN 0 HOURS")
    assert rows(shop, f"SELECT id, name, {METADATA} FROM s") == [
        (1, "ann", "DELETE", False),
        (2, "Bob", "INSERT", True),
        (2, "bob", "DELETE", True),
    ]


def test_schema_clone_carries_a_view_stream(shop: lakeclone.Lake) -> None:
    shop.sql("CREATE STREAM s ON VIEW named")
    shop.sql("INSERT INTO orders VALUES (4, 20, 400)")
    shop.sql("CREATE SCHEMA dev CLONE public")
    cloned = stream(shop, "dev.s")
    assert (cloned.table_name, cloned.base_tables) == ("LAKE.DEV.NAMED", "LAKE.DEV.ORDERS, LAKE.DEV.CUSTOMERS")
    assert shop.sql("SELECT * FROM dev.s").collect() == []
    shop.sql("INSERT INTO dev.customers VALUES (30, 'cy')")
    shop.sql("INSERT INTO dev.orders VALUES (5, 30, 500)")
    assert rows(shop, "SELECT id, name FROM dev.s") == [(5, "cy")]
    assert rows(shop, "SELECT id FROM public.s") == [(4,)]


# What cannot be streamed ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "construct"),
    [
        ("SELECT cust, SUM(amount) AS total FROM orders GROUP BY cust", "GROUP BY"),
        ("SELECT COUNT(*) AS n FROM orders", "the aggregate function COUNT"),
        ("SELECT DISTINCT cust FROM orders", "DISTINCT"),
        ("SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM orders", "window functions"),
        ("SELECT id FROM orders QUALIFY ROW_NUMBER() OVER (PARTITION BY cust ORDER BY id) = 1", "QUALIFY"),
        ("SELECT id FROM orders LIMIT 2", "LIMIT"),
        ("SELECT TOP 2 id FROM orders", "LIMIT (or TOP)"),
        ("SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.cid", "LEFT OUTER JOIN"),
        ("SELECT o.id, c.name FROM orders o FULL OUTER JOIN customers c ON o.cust = c.cid", "FULL OUTER JOIN"),
        ("SELECT id FROM orders UNION SELECT cid FROM customers", "UNION without ALL"),
        ("SELECT id FROM orders INTERSECT SELECT cid FROM customers", "INTERSECT"),
        ("SELECT id FROM orders MINUS SELECT cid FROM customers", "EXCEPT"),
        ("SELECT id FROM orders WHERE cust IN (SELECT cid FROM customers)", "a subquery outside FROM"),
        ("SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.cid = o.cust)", "a subquery outside FROM"),
        ("SELECT id, RANDOM() AS r FROM orders", "the non-deterministic function RANDOM"),
        ("SELECT id, UUID_STRING() AS u FROM orders", "the non-deterministic function UUID_STRING"),
        ("SELECT id, CURRENT_TIMESTAMP() AS t FROM orders", "the non-deterministic function CURRENT_TIMESTAMP"),
        ("SELECT id FROM orders SAMPLE (50)", "SAMPLE"),
        ("SELECT id FROM orders AT(OFFSET => 0)", "time travel"),
        ("SELECT n FROM grouped WHERE n > 1", "LAKE.PUBLIC.GROUPED cannot be streamed: it uses GROUP BY"),
    ],
)
def test_views_a_stream_cannot_follow_are_refused_at_create(
    untracked_shop: lakeclone.Lake, definition: str, construct: str
) -> None:
    untracked_shop.sql("CREATE VIEW grouped AS SELECT cust, COUNT(*) AS n FROM orders GROUP BY cust")
    untracked_shop.sql(f"CREATE VIEW v AS {definition}")
    with pytest.raises(lakeclone.LakecloneError, match="cannot be streamed") as refused:
        untracked_shop.sql("CREATE STREAM s ON VIEW v")
    assert construct in str(refused.value)
    assert untracked_shop.sql("SHOW STREAMS").collect() == []
    assert {r.change_tracking for r in untracked_shop.sql("SHOW TABLES").collect()} == {"OFF"}


def test_misuse_of_streams_on_views(untracked_shop: lakeclone.Lake) -> None:
    fails(untracked_shop, "CREATE STREAM s ON VIEW orders", "Object 'LAKE.PUBLIC.ORDERS' does not exist")
    fails(untracked_shop, "CREATE STREAM s ON TABLE named", "Object 'LAKE.PUBLIC.NAMED' does not exist")
    fails(untracked_shop, "CREATE STREAM s ON VIEW missing", "Object 'LAKE.PUBLIC.MISSING' does not exist")
    fails(
        untracked_shop,
        "SELECT * FROM named CHANGES(INFORMATION => DEFAULT) AT(OFFSET => -1)",
        "CHANGES is supported on tables only",
    )
    assert untracked_shop.sql("SHOW STREAMS").collect() == []
