"""Queries: Spark SQL's full power under Snowflake syntax, multi-statement text, and clean errors."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest
from lake_helpers import rows
from warehouse_templates import Build

import lakeclone
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError, SqlSyntaxError

pytestmark = pytest.mark.spark


def _customers_and_orders(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE customers (id INT, name STRING, city STRING);"
        "INSERT INTO customers VALUES (1, 'ann', 'oslo'), (2, 'bob', 'rome'), (3, 'cy', 'oslo'), (4, 'dee', NULL);"
        "CREATE TABLE orders (id INT, customer INT, amount DOUBLE, day DATE);"
        "INSERT INTO orders VALUES (10, 1, 5.0, '2024-01-01'), (11, 1, 7.5, '2024-01-03'), "
        "(12, 2, 100.0, '2024-01-02'), (13, 3, 1.0, '2024-01-02'), (14, 9, 2.0, '2024-01-05')"
    )


@pytest.fixture
def shop(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    return copy_of(_customers_and_orders)


def ordered(lake: lakeclone.Lake, sql: str) -> list[tuple]:
    return [tuple(r) for r in lake.sql(sql).collect()]


def failure(lake: lakeclone.Lake, sql: str) -> lakeclone.LakecloneError:
    with pytest.raises(lakeclone.LakecloneError) as error:
        lake.sql(sql).collect()
    return error.value


def assert_clean(error: Exception) -> None:
    message = str(error)
    for noise in ("at org.apache", "py4j", "Py4J", "Traceback", "SQLSTATE", "== SQL", "\tat "):
        assert noise not in message, message


# Spark's power ------------------------------------------------------------------------------------


def test_joins_across_tables(shop: lakeclone.Lake) -> None:
    assert rows(shop, "SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer = c.id WHERE o.amount > 2") == [
        ("ann", 5.0),
        ("ann", 7.5),
        ("bob", 100.0),
    ]
    assert rows(
        shop,
        "SELECT c.name, count(o.id) AS n FROM customers c LEFT JOIN orders o ON o.customer = c.id GROUP BY c.name",
    ) == [("ann", 2), ("bob", 1), ("cy", 1), ("dee", 0)]
    assert rows(shop, "SELECT o.id FROM orders o LEFT ANTI JOIN customers c ON o.customer = c.id") == [(14,)]
    assert rows(shop, "SELECT count(*) FROM customers CROSS JOIN orders") == [(20,)]


def test_aggregates(shop: lakeclone.Lake) -> None:
    assert ordered(
        shop,
        "SELECT c.city, count(*) AS n, sum(o.amount) AS total, avg(o.amount) AS mean "
        "FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.city HAVING count(*) > 1 ORDER BY c.city",
    ) == [("oslo", 3, 13.5, 4.5)]
    assert ordered(shop, "SELECT min(day), max(day), count(DISTINCT customer) FROM orders") == [
        (dt.date(2024, 1, 1), dt.date(2024, 1, 5), 4)
    ]


def test_window_functions_and_qualify(shop: lakeclone.Lake) -> None:
    assert ordered(
        shop,
        "SELECT id, customer, sum(amount) OVER (PARTITION BY customer ORDER BY day) AS running, "
        "row_number() OVER (ORDER BY amount DESC) AS rank FROM orders WHERE customer = 1 ORDER BY id",
    ) == [(10, 1, 5.0, 2), (11, 1, 12.5, 1)]
    # Snowflake's QUALIFY: each customer's biggest order.
    assert rows(
        shop,
        "SELECT customer, amount FROM orders QUALIFY row_number() OVER (PARTITION BY customer ORDER BY amount DESC) = 1",
    ) == [(1, 7.5), (2, 100.0), (3, 1.0), (9, 2.0)]


def test_cte_named_like_a_table_shadows_it(shop: lakeclone.Lake) -> None:
    assert rows(shop, "WITH orders AS (SELECT 99 AS id) SELECT id FROM orders") == [(99,)]
    # Other tables still resolve, and a CTE can read the table it shadows under another name.
    assert rows(
        shop,
        "WITH big AS (SELECT * FROM orders WHERE amount > 6), customers AS (SELECT customer FROM big) "
        "SELECT count(*) FROM customers",
    ) == [(2,)]


def test_subqueries(shop: lakeclone.Lake) -> None:
    assert rows(shop, "SELECT name FROM customers WHERE id IN (SELECT customer FROM orders WHERE amount > 6)") == [
        ("ann",),
        ("bob",),
    ]
    assert rows(
        shop,
        "SELECT name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer = c.id AND o.amount < 2)",
    ) == [("cy",)]
    assert rows(shop, "SELECT (SELECT max(amount) FROM orders) AS top, (SELECT count(*) FROM customers) AS n") == [(100.0, 4)]
    assert rows(shop, "SELECT sum(n) FROM (SELECT customer, count(*) AS n FROM orders GROUP BY customer) per") == [(5,)]


def test_not_in_subquery(shop: lakeclone.Lake) -> None:
    assert rows(shop, "SELECT name FROM customers WHERE id NOT IN (SELECT customer FROM orders)") == [("dee",)]


def test_snowflake_functions_are_transpiled(lake: lakeclone.Lake) -> None:
    (row,) = lake.sql(
        "SELECT IFF(1 > 0, 'yes', 'no') AS iff, NVL(NULL, 2) AS nvl, NVL2(NULL, 1, 2) AS nvl2, "
        "DATEADD(day, 30, '2024-01-15'::DATE) AS added, "
        "DATEDIFF(day, '2024-01-01'::DATE, '2024-03-01'::DATE) AS diff, "
        "ZEROIFNULL(NULL) AS zero, DIV0(1, 0) AS div0, TO_DATE('2024-02-03') AS d, "
        "SPLIT_PART('a-b-c', '-', 2) AS part, 'x' || 'y' AS cat"
    ).collect()
    assert row.asDict() == {
        "IFF": "yes",
        "NVL": 2,
        "NVL2": 2,
        "ADDED": dt.date(2024, 2, 14),
        "DIFF": 60,
        "ZERO": 0,
        "DIV0": 0,
        "D": dt.date(2024, 2, 3),
        "PART": "b",
        "CAT": "xy",
    }


def test_dateadd_below_a_day_moves_a_timestamp_by_its_unit(lake: lakeclone.Lake) -> None:
    start = "'2024-01-15 10:00:00'::TIMESTAMP_NTZ"
    (row,) = lake.sql(
        f"SELECT DATEADD(minute, -10, {start}) AS m, DATEADD('hours', 2, {start}) AS h, "
        f"TIMESTAMPADD(second, 30, {start}) AS s, DATEADD(ms, 5, {start}) AS ms, "
        f"DATEDIFF(minute, {start}, DATEADD(hour, 1, {start})) AS diff"
    ).collect()
    assert row.asDict() == {
        "M": dt.datetime(2024, 1, 15, 9, 50),
        "H": dt.datetime(2024, 1, 15, 12, 0),
        "S": dt.datetime(2024, 1, 15, 10, 0, 30),
        "MS": dt.datetime(2024, 1, 15, 10, 0, 0, 5000),
        "DIFF": 60,
    }
    with pytest.raises(lakeclone.LakecloneError, match="DATEADD by NANOSECOND is not supported"):
        lake.sql(f"SELECT DATEADD(nanosecond, 1, {start})")


def test_dateadd_by_days_and_longer_keeps_a_timestamp_s_time_and_a_date_a_date(lake: lakeclone.Lake) -> None:
    start, day = "'2024-01-31 10:30:00'::TIMESTAMP_NTZ", "'2024-01-31'::DATE"
    frame = lake.sql(
        f"SELECT DATEADD(day, 1, {start}) AS d, DATEADD(week, 2, {start}) AS w, DATEADD(month, 1, {start}) AS m, "
        f"DATEADD(quarter, 1, {start}) AS q, DATEADD(year, -1, {start}) AS y, DATEADD('days', n, {start}) AS n, "
        f"DATEADD(month, 1, {day}) AS date_m, DATEADD(day, -31, {day}) AS date_d, DATEADD(day, 1, '2024-01-31') AS text "
        "FROM (SELECT 3 AS n)"
    )
    assert frame.collect()[0].asDict() == {
        "D": dt.datetime(2024, 2, 1, 10, 30),
        "W": dt.datetime(2024, 2, 14, 10, 30),
        "M": dt.datetime(2024, 2, 29, 10, 30),  # the last day of a shorter month, as Snowflake clamps it
        "Q": dt.datetime(2024, 4, 30, 10, 30),
        "Y": dt.datetime(2023, 1, 31, 10, 30),
        "N": dt.datetime(2024, 2, 3, 10, 30),
        "DATE_M": dt.date(2024, 2, 29),
        "DATE_D": dt.date(2023, 12, 31),
        "TEXT": dt.datetime(2024, 2, 1),  # text is read as a timestamp, as Snowflake reads it
    }


def test_a_column_without_a_name_of_its_own_is_named_as_snowflake_names_it(shop: lakeclone.Lake) -> None:
    # After its expression, upper-cased (Spark would say count(1), (id + 1), x); a view's columns too.
    named = shop.sql("SELECT count(*), id + 1, 'x', id, CURRENT_SCHEMA(), c.* FROM customers AS c GROUP BY ALL")
    assert named.columns == ["COUNT(*)", "ID + 1", "'X'", "ID", "CURRENT_SCHEMA()", "ID", "NAME", "CITY"]
    assert shop.sql("SELECT city, max(id) FROM customers GROUP BY city UNION ALL SELECT 'x', 1").columns == ["CITY", "MAX(ID)"]
    assert shop.sql("SELECT count(*) FROM orders ORDER BY count(*)").first()["COUNT(*)"] == 5
    shop.sql("CREATE VIEW totals AS SELECT customer, sum(amount) FROM orders GROUP BY customer")
    assert shop.sql("SELECT * FROM totals").columns == ["CUSTOMER", "SUM(AMOUNT)"]


def test_unquoted_names_resolve_case_insensitively(shop: lakeclone.Lake) -> None:
    assert rows(shop, "select NAME from Customers where ID = 1") == [("ann",)]
    assert rows(shop, "SELECT name FROM lake.public.customers WHERE id = 2") == [("bob",)]
    assert shop.sql('SELECT name AS Lower_Alias, name AS "quoted" FROM customers').columns == ["LOWER_ALIAS", "quoted"]


def test_a_query_reads_the_snapshot_of_its_start(shop: lakeclone.Lake) -> None:
    frame = shop.sql("SELECT count(*) AS n FROM orders")
    shop.sql("INSERT INTO orders VALUES (15, 1, 1.0, '2024-01-09')")
    assert frame.collect()[0].N == 5
    assert shop.sql("SELECT count(*) AS n FROM orders").collect()[0].N == 6


# Several statements --------------------------------------------------------------------------------


def test_multi_statement_text_returns_the_last_result(lake: lakeclone.Lake) -> None:
    frame = lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2);\n SELECT count(*) AS n FROM t;")
    assert frame.columns == ["N"]
    assert frame.collect()[0].N == 2
    assert rows(lake, "SELECT 1 AS a; SELECT 2 AS b") == [(2,)]


def test_a_failing_statement_leaves_earlier_ones_done(lake: lakeclone.Lake) -> None:
    error = failure(lake, "CREATE TABLE t (id INT); INSERT INTO t VALUES (1); SELECT * FROM nope; INSERT INTO t VALUES (2)")
    assert "NOPE" in str(error)
    assert rows(lake, "SELECT * FROM t") == [(1,)]
    error = failure(lake, "INSERT INTO t VALUES (3); INSERT INTO t VALUES ('bad'); INSERT INTO t VALUES (4)")
    assert rows(lake, "SELECT * FROM t") == [(1,), (3,)]


def test_a_syntax_error_anywhere_runs_nothing(lake: lakeclone.Lake) -> None:
    # The whole text is parsed before anything runs.
    error = failure(lake, "CREATE TABLE t (id INT);\nSELEC 1")
    assert str(error) == "SQL compilation error:\nsyntax error line 2 at position 0 unexpected 'SELEC'."
    assert "does not exist" in str(failure(lake, "SELECT * FROM t"))


def test_empty_text_is_an_error(lake: lakeclone.Lake) -> None:
    assert str(failure(lake, " ;\n; ")) == "SQL compilation error:\nEmpty SQL statement."


# Errors --------------------------------------------------------------------------------------------


def test_syntax_error_reports_line_and_position(lake: lakeclone.Lake) -> None:
    error = failure(lake, "SELEC 1")
    assert isinstance(error, SqlSyntaxError)
    assert str(error) == "SQL compilation error:\nsyntax error line 1 at position 0 unexpected 'SELEC'."
    error = failure(lake, "SELECT a\nFROM t\nWHERE a = = 1")
    assert (error.line, error.token) == (3, "=")
    assert str(error).startswith("SQL compilation error:\nsyntax error line 3 at position ")
    assert_clean(error)


def test_unknown_table(lake: lakeclone.Lake) -> None:
    error = failure(lake, "SELECT * FROM nope")
    assert isinstance(error, ObjectNotFoundError)
    assert str(error) == "SQL compilation error:\nObject 'LAKE.PUBLIC.NOPE' does not exist or not authorized."
    error = failure(lake, "SELECT * FROM other.s.nope")
    assert str(error) == "SQL compilation error:\nObject 'OTHER.S.NOPE' does not exist or not authorized."


def test_unknown_column(shop: lakeclone.Lake) -> None:
    error = failure(shop, "SELECT nope FROM customers")
    assert isinstance(error, SqlCompilationError)
    assert str(error) == "SQL compilation error:\ninvalid identifier 'NOPE'"
    error = failure(shop, "SELECT c.nope FROM customers c")
    assert "invalid identifier" in str(error)
    assert_clean(error)


@pytest.mark.parametrize(
    "statement",
    [
        "SELEC 1",
        "SELECT * FROM nope",
        "SELECT nope FROM customers",
        "SELECT name + FROM customers",
        "SELECT count(*) FROM customers GROUP BY nope",
        "SELECT name, count(*) FROM customers",  # not a GROUP BY expression
        "SELECT * FROM customers c JOIN orders o ON c.id = o.customer WHERE id = 1",  # ambiguous
        "INSERT INTO customers VALUES (1)",
        "UPDATE customers SET nope = 1",
        "CREATE TABLE customers (id INT)",
        "SELECT * FROM customers AT(VERSION => 42)",
        "GRANT SELECT ON customers TO ROLE r",
    ],
)
def test_every_failure_is_a_clean_lakeclone_error(shop: lakeclone.Lake, statement: str) -> None:
    error = failure(shop, statement)
    assert_clean(error)
    assert str(error).strip()


@pytest.mark.parametrize("statement", ["SELECT 1 / 0", "SELECT CAST('x' AS INT)"])
def test_runtime_failures_of_queries_are_lakeclone_errors(lake: lakeclone.Lake, statement: str) -> None:
    # The query runs only when its rows are asked for, after lake.sql has returned.
    from lakeclone.errors import ExecutionError

    frame = lake.sql(statement)
    for action in (frame.collect, frame.toPandas, frame.first):
        with pytest.raises(ExecutionError) as error:
            action()
        assert_clean(error.value)


def test_frames_derived_from_a_result_fail_as_cleanly(lake: lakeclone.Lake) -> None:
    from lakeclone.errors import ExecutionError, LakecloneError

    frame = lake.sql("SELECT CAST(x AS INT) AS v FROM VALUES ('1'), ('x') AS t(x)")
    for derived in (frame.limit(10), frame.filter("v > 0"), frame.limit(5).orderBy("v"), frame.select("v").distinct()):
        for action in (derived.collect, derived.count, derived.toPandas):
            with pytest.raises(ExecutionError) as error:
                action()
            assert_clean(error.value)
    # A transformation Spark refuses as it builds it: the same translation.
    with pytest.raises(LakecloneError) as refused:
        frame.select("nope")
    assert_clean(refused.value)
    # And a derived frame that does not fail gives its rows as Spark would.
    assert [tuple(r) for r in lake.sql("SELECT 1 AS v UNION ALL SELECT 2").filter("v > 1").limit(5).collect()] == [(2,)]


def test_runtime_failures_of_statements_are_lakeclone_errors(shop: lakeclone.Lake) -> None:
    from lakeclone.errors import ExecutionError

    error = failure(shop, "INSERT INTO orders SELECT 1 / 0 AS a, 1 AS b, 1.0 AS c, NULL AS d")
    assert isinstance(error, ExecutionError)
    assert "Division by zero" in str(error)
    assert_clean(error)
    error = failure(shop, "CREATE TABLE c AS SELECT CAST('x' AS INT) AS i")
    assert isinstance(error, ExecutionError)
    assert_clean(error)


# SAMPLE --------------------------------------------------------------------------------------------


def _thousand_numbers(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE numbers AS SELECT id FROM range(1000)")


@pytest.fixture
def thousand(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    return copy_of(_thousand_numbers)


def count(lake: lakeclone.Lake, sql: str) -> int:
    return int(lake.sql(sql).collect()[0][0])


def test_sample_by_probability_keeps_about_that_share_of_rows(thousand: lakeclone.Lake) -> None:
    lake = thousand
    # Bernoulli sampling of 1000 rows at 30%: 300 ± 4.5 standard deviations.
    assert 235 < count(lake, "SELECT COUNT(*) FROM numbers SAMPLE (30)") < 365
    assert 235 < count(lake, "SELECT COUNT(*) FROM numbers TABLESAMPLE BERNOULLI (30)") < 365
    assert count(lake, "SELECT COUNT(*) FROM numbers SAMPLE (0)") == 0
    assert count(lake, "SELECT COUNT(*) FROM numbers SAMPLE (100)") == 1000


def test_sample_of_a_number_of_rows_is_exact_and_random(thousand: lakeclone.Lake) -> None:
    lake = thousand
    assert count(lake, "SELECT COUNT(*) FROM numbers SAMPLE (10 ROWS)") == 10
    assert count(lake, "SELECT COUNT(*) FROM numbers SAMPLE (5000 ROWS)") == 1000
    # Spark's own TABLESAMPLE (n ROWS) is a LIMIT, the first rows; Snowflake's draws at random.
    drawn = {tuple(r.ID for r in lake.sql("SELECT n.id FROM numbers AS n SAMPLE (5 ROWS)").collect()) for _ in range(3)}
    assert len(drawn) > 1


def test_sample_with_a_seed_repeats(thousand: lakeclone.Lake) -> None:
    lake = thousand
    first = rows(lake, "SELECT id FROM numbers SAMPLE (10) SEED (7)")
    assert first == rows(lake, "SELECT id FROM numbers SAMPLE BERNOULLI (10) REPEATABLE (7)")
    assert first != rows(lake, "SELECT id FROM numbers SAMPLE (10) SEED (8)")


def test_sample_of_a_past_version_and_of_a_subquery(thousand: lakeclone.Lake) -> None:
    lake = thousand
    lake.sql("DELETE FROM numbers WHERE id >= 10")
    assert count(lake, "SELECT COUNT(*) FROM numbers AT(VERSION => 0) SAMPLE (50 ROWS)") == 50
    assert count(lake, "SELECT COUNT(*) FROM numbers SAMPLE (50 ROWS)") == 10
    assert count(lake, "SELECT COUNT(*) FROM (SELECT * FROM numbers AT(VERSION => 0)) s SAMPLE (20 ROWS)") == 20


def test_sample_probability_out_of_range_is_refused(thousand: lakeclone.Lake) -> None:
    with pytest.raises(SqlCompilationError, match="between 0 and 100"):
        thousand.sql("SELECT * FROM numbers SAMPLE (150)")


def test_text_is_never_substituted_from_settings_or_the_environment(lake: lakeclone.Lake) -> None:
    # Spark's own variable substitution would put the kernel's environment and settings in their place.
    literal = "${env:HOME} ${spark.sql.session.timeZone}"
    assert rows(lake, f"SELECT '{literal}' AS x") == [(literal,)]
    created = lake.sql("CREATE TABLE \"${env:HOME}\" (id INT) COMMENT = '${env:HOME}'").first()[0]
    assert created == "Table ${env:HOME} successfully created."
    shown = lake.sql("SHOW TABLES").collect()
    assert [(r["name"], r["comment"]) for r in shown] == [("${env:HOME}", "${env:HOME}")]


def test_a_values_table_names_its_columns_as_snowflake_does(lake: lakeclone.Lake) -> None:
    frame = lake.sql("SELECT * FROM VALUES (1, 'a'), (2, 'b')")
    assert frame.columns == ["COLUMN1", "COLUMN2"] and [tuple(r) for r in frame.collect()] == [(1, "a"), (2, "b")]
    assert rows(lake, "SELECT $2, column1 FROM VALUES (1, 'a')") == [("a", 1)]
    assert rows(lake, "SELECT v.$2 FROM VALUES (1, 'a') AS v") == [("a",)]
    assert rows(lake, "SELECT x FROM VALUES (1) AS v(x)") == [(1,)]  # a column list of the query's own stands
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t SELECT $1 FROM VALUES (6), (7)")
    assert rows(lake, "SELECT id FROM t ORDER BY id") == [(6,), (7,)]


def test_variant_values_are_made_with_parse_json_and_read_by_path(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE docs (id INT, v VARIANT)")
    lake.sql("""INSERT INTO docs SELECT 1, PARSE_JSON('{"a": {"b": 3}, "tags": ["x", "y"], "odd key": true}')""")
    lake.sql("INSERT INTO docs SELECT 2, TRY_PARSE_JSON('not json')")
    query = 'SELECT id, v:a.b::INT, v:tags[1]::STRING, v:"odd key"::BOOLEAN, v:missing FROM docs'
    assert rows(lake, query) == [(1, 3, "y", True, None), (2, None, None, None, None)]
