"""Metadata a Snowflake user reaches for: INFORMATION_SCHEMA's views and QUERY_HISTORY, SHOW COLUMNS, GET_DDL, EXPLAIN."""

from __future__ import annotations

import json
import re

import pytest
from lake_helpers import location, rows, session_of

import lakeclone

pytestmark = pytest.mark.spark


def _shop(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE orders (id INT NOT NULL, customer VARCHAR(20), amount DECIMAL(10, 2), placed TIMESTAMP_NTZ, doc VARIANT) "
        "COMMENT = 'of record';"
        "INSERT INTO orders (id, customer, amount) VALUES (1, 'ann', 10.5), (2, 'bob', 7);"
        "CREATE VIEW big AS SELECT id, amount FROM orders WHERE amount > 8;"
        "CREATE TABLE secrets (note STRING);"
        "CREATE SCHEMA staging COMMENT = 'raw'; USE SCHEMA lake.public"
    )


def test_tables_columns_views_and_schemata_describe_a_database(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    _shop(lake)
    tables = "SELECT table_schema, table_name, table_type, table_owner, row_count, retention_time, comment FROM information_schema.tables"
    assert rows(lake, tables) == [
        ("PUBLIC", "BIG", "VIEW", "ACCOUNTADMIN", None, None, None),
        ("PUBLIC", "ORDERS", "BASE TABLE", "ACCOUNTADMIN", 2, 7, "of record"),
        ("PUBLIC", "SECRETS", "BASE TABLE", "ACCOUNTADMIN", 0, 7, None),
    ]
    columns = lake.sql(
        "SELECT column_name, ordinal_position, is_nullable, data_type, character_maximum_length, numeric_precision, "
        "numeric_scale FROM lake.information_schema.columns WHERE table_name = 'ORDERS' ORDER BY ordinal_position"
    ).collect()
    assert [tuple(r) for r in columns] == [
        ("ID", 1, "NO", "NUMBER", None, 38, 0),
        ("CUSTOMER", 2, "YES", "TEXT", 20, None, None),
        ("AMOUNT", 3, "YES", "NUMBER", None, 10, 2),
        ("PLACED", 4, "YES", "TIMESTAMP_NTZ", None, None, None),
        ("DOC", 5, "YES", "VARIANT", None, None, None),
    ]
    view_columns = "SELECT column_name, data_type, numeric_scale FROM information_schema.columns WHERE table_name = 'BIG'"
    assert rows(lake, view_columns) == [("AMOUNT", "NUMBER", 2), ("ID", "NUMBER", 0)]
    ((definition,),) = lake.sql("SELECT view_definition FROM information_schema.views WHERE table_name = 'BIG'").collect()
    assert "amount > 8" in definition
    schemata = "SELECT schema_name, comment FROM information_schema.schemata WHERE schema_name != 'INFORMATION_SCHEMA'"
    assert rows(lake, schemata) == [("PUBLIC", None), ("STAGING", "raw")]
    # It is a relation like any: joined, filtered, counted.
    joined = (
        "SELECT t.table_name, COUNT(*) AS n FROM information_schema.tables t "
        "JOIN information_schema.columns c ON c.table_name = t.table_name WHERE t.table_type = 'BASE TABLE' GROUP BY 1"
    )
    assert rows(lake, joined) == [("ORDERS", 5), ("SECRETS", 1)]
    # LAST_ALTERED: a table's latest commit, by the Lake's clock.
    clock.advance(hours=2)
    lake.sql("INSERT INTO secrets VALUES ('x')")
    altered = "SELECT table_name, DATEDIFF('minute', created, last_altered) FROM information_schema.tables"
    assert rows(lake, altered) == [("BIG", 0), ("ORDERS", 0), ("SECRETS", 120)]
    # Each database has its own, and none other may be made.
    lake.sql("CREATE DATABASE other")
    assert rows(lake, "SELECT table_name FROM other.information_schema.tables") == []
    with pytest.raises(lakeclone.LakecloneError, match="'INFORMATION_SCHEMA' already exists"):
        lake.sql("CREATE SCHEMA lake.information_schema")
    with pytest.raises(
        lakeclone.LakecloneError, match=re.escape("'LAKE.INFORMATION_SCHEMA.NOPE' does not exist or not authorized")
    ):
        lake.sql("SELECT * FROM lake.information_schema.nope")


def test_information_schema_lists_only_what_the_role_sees(lake: lakeclone.Lake) -> None:
    _shop(lake)
    lake.sql(
        "CREATE ROLE analyst; CREATE USER ann; GRANT ROLE analyst TO USER ann; CREATE ROLE nobody; CREATE USER nob;"
        "GRANT ROLE nobody TO USER nob; GRANT USAGE ON DATABASE lake TO ROLE analyst;"
        "GRANT USAGE ON SCHEMA lake.public TO ROLE analyst; GRANT SELECT ON TABLE lake.public.orders TO ROLE analyst; USE SCHEMA lake.public"
    )
    ann = session_of(lake, "ann", "analyst")
    assert rows(ann, "SELECT table_name FROM information_schema.tables") == [("ORDERS",)]
    assert {r[0] for r in ann.sql("SELECT DISTINCT table_name FROM information_schema.columns").collect()} == {"ORDERS"}
    assert rows(ann, "SELECT * FROM information_schema.views") == []
    assert rows(ann, "SELECT schema_name FROM information_schema.schemata") == [("INFORMATION_SCHEMA",), ("PUBLIC",)]
    privileges = "SELECT grantor, grantee, table_name, privilege_type, is_grantable FROM information_schema.table_privileges"
    assert rows(ann, privileges) == [
        ("ACCOUNTADMIN", "ACCOUNTADMIN", "ORDERS", "OWNERSHIP", "YES"),
        ("ACCOUNTADMIN", "ANALYST", "ORDERS", "SELECT", "NO"),
    ]
    nob = session_of(lake, "nob", "nobody")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Database 'LAKE' does not exist or not authorized")):
        nob.sql("SELECT * FROM information_schema.tables")


def in_order(lake: lakeclone.Lake, sql: str) -> list[tuple[object, ...]]:
    return [tuple(row) for row in lake.sql(sql).collect()]


HISTORY = (
    "SELECT query_text, query_type, execution_status, error_code, user_name, role_name, database_name, schema_name "
    "FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY({})) ORDER BY start_time DESC"
)


def test_query_history_shows_each_statement_who_ran_it_and_how_it_ended(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock
) -> None:
    lake.sql("CREATE TABLE qh (a INT)")
    lake.sql("INSERT INTO qh VALUES (1)")
    with pytest.raises(lakeclone.LakecloneError, match="syntax error"):
        lake.sql("SELEC 1")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist"):
        lake.sql("SELECT * FROM missing_qh")
    clock.advance(seconds=2)
    admin = ("ADMIN", "ACCOUNTADMIN", "LAKE", "PUBLIC")
    assert in_order(lake, HISTORY.format("RESULT_LIMIT => 5")) == [
        (HISTORY.format("RESULT_LIMIT => 5"), "SELECT", "RUNNING", None, *admin),
        ("SELECT * FROM missing_qh", "SELECT", "FAILED_WITH_ERROR", "002003", *admin),
        ("SELEC 1", "UNKNOWN", "FAILED_WITH_ERROR", "001003", *admin),
        ("INSERT INTO qh VALUES (1)", "INSERT", "SUCCESS", None, *admin),
        ("CREATE TABLE qh (a INT)", "CREATE_TABLE", "SUCCESS", None, *admin),
    ]
    message = "SELECT error_message FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY()) WHERE query_text = 'SELEC 1'"
    assert rows(lake, message) == [("SQL compilation error:\nsyntax error line 1 at position 0 unexpected 'SELEC'.",)]
    # The range is on end times, by the Lake's clock: an hour from now on, the statements above are out of it.
    clock.advance(hours=1)
    recent = "END_TIME_RANGE_START => DATEADD('minutes', -10, CURRENT_TIMESTAMP()), RESULT_LIMIT => 10"
    assert [r[0] for r in in_order(lake, HISTORY.format(recent))] == [HISTORY.format(recent)]


def test_query_history_names_each_kind_of_statement_as_snowflake_does(lake: lakeclone.Lake) -> None:
    kinds = {
        "CREATE TABLE kinds (a INT)": "CREATE_TABLE",
        "CREATE TABLE kinds_copy AS SELECT * FROM kinds": "CREATE_TABLE_AS_SELECT",
        "ALTER TABLE kinds_copy RENAME TO kinds_renamed": "ALTER_TABLE",
        "CREATE ROLE kinds_role": "CREATE",
        "GRANT SELECT ON TABLE kinds TO ROLE kinds_role": "GRANT",
        "REVOKE SELECT ON TABLE kinds FROM ROLE kinds_role": "REVOKE",
        "EXPLAIN SELECT * FROM kinds": "EXPLAIN",
        "ALTER SESSION SET QUERY_TAG = 'kinds'": "ALTER_SESSION",
        "BEGIN": "BEGIN_TRANSACTION",
        "COMMIT": "COMMIT",
    }
    for statement in kinds:
        lake.sql(statement)
    history = "SELECT query_text, query_type FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY(RESULT_LIMIT => 100))"
    recorded = dict(rows(lake, history))
    assert {statement: recorded[statement] for statement in kinds} == kinds


def test_query_history_shows_a_user_their_own_statements(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE ROLE analyst; CREATE USER ann; GRANT ROLE analyst TO USER ann; CREATE TABLE mine (a INT)")
    ann = session_of(lake, "ann", "analyst")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist or not authorized"):
        ann.sql("SELECT * FROM mine")
    own = "SELECT DISTINCT user_name FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY())"
    assert rows(ann, own) == [("ANN",)]
    assert {r[0] for r in rows(lake, own)} == {"ADMIN", "ANN"}
    by_user = "SELECT query_text, execution_status FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY_BY_USER(USER_NAME => 'ANN'))"
    assert ("SELECT * FROM mine", "FAILED_WITH_ERROR") in rows(lake, by_user)
    with pytest.raises(lakeclone.LakecloneError, match="Insufficient privileges to operate on user 'ADMIN'"):
        ann.sql("SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY_BY_USER(USER_NAME => 'ADMIN'))")
    # Through a view, another user's statements are still the administrator's: the view's reader is checked.
    lake.sql(
        "CREATE VIEW admin_history AS SELECT query_text FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY_BY_USER(USER_NAME => 'ADMIN'))"
    )
    lake.sql("GRANT USAGE ON DATABASE lake TO ROLE analyst; GRANT USAGE ON SCHEMA lake.public TO ROLE analyst")
    lake.sql("GRANT SELECT ON VIEW admin_history TO ROLE analyst")
    assert rows(lake, "SELECT COUNT(*) > 0 FROM admin_history") == [(True,)]
    with pytest.raises(lakeclone.LakecloneError, match="Insufficient privileges to operate on user 'ADMIN'"):
        ann.sql("SELECT * FROM admin_history")
    # A session's statements: this session's by default.
    by_session = "SELECT DISTINCT session_id, user_name FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY_BY_SESSION())"
    ((session_id, user),) = rows(ann, by_session)
    assert user == "ANN" and session_id != rows(lake, by_session)[0][0]
    with pytest.raises(lakeclone.LakecloneError, match="RESULT_LIMIT"):
        lake.sql("SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY(RESULT_LIMIT => 0))")


def test_show_columns_lists_columns_with_snowflake_type_documents(lake: lakeclone.Lake) -> None:
    _shop(lake)
    shown = lake.sql("SHOW COLUMNS IN TABLE orders").collect()
    assert [(r.column_name, r["null?"], r.kind, r.database_name) for r in shown] == [
        ("ID", "false", "COLUMN", "LAKE"),
        ("CUSTOMER", "true", "COLUMN", "LAKE"),
        ("AMOUNT", "true", "COLUMN", "LAKE"),
        ("PLACED", "true", "COLUMN", "LAKE"),
        ("DOC", "true", "COLUMN", "LAKE"),
    ]
    assert json.loads(shown[0].data_type) == {"type": "FIXED", "precision": 38, "scale": 0, "nullable": False}
    assert json.loads(shown[1].data_type) == {"type": "TEXT", "length": 20, "byteLength": 80, "fixed": False, "nullable": True}
    assert json.loads(shown[3].data_type) == {"type": "TIMESTAMP_NTZ", "precision": 0, "scale": 9, "nullable": True}
    # A schema's: tables' and views' columns, filtered by LIKE on the column's name.
    shown = lake.sql("SHOW COLUMNS LIKE 'am%' IN SCHEMA public").collect()
    assert [(r.table_name, r.column_name) for r in shown] == [("BIG", "AMOUNT"), ("ORDERS", "AMOUNT")]
    assert [r.column_name for r in lake.sql("SHOW COLUMNS IN VIEW big").collect()] == ["ID", "AMOUNT"]
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("'LAKE.PUBLIC.NOPE' does not exist")):
        lake.sql("SHOW COLUMNS IN TABLE nope")


def test_get_ddl_makes_the_same_table_again(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE SEQUENCE seq;"
        "CREATE TABLE parts (id INT NOT NULL DEFAULT seq.NEXTVAL, name VARCHAR(40) COMMENT 'what it''s called', "
        "price NUMBER(10, 2) DEFAULT 0, weight FLOAT, ratio REAL, made TIMESTAMP_NTZ, seen TIMESTAMP_LTZ, ok BOOLEAN, "
        'day DATE, raw BINARY, doc VARIANT, "MixedCase" STRING, PRIMARY KEY (id), CONSTRAINT uq UNIQUE (name)) '
        "CLUSTER BY (day) DATA_RETENTION_TIME_IN_DAYS = 3 CHANGE_TRACKING = TRUE COMMENT = 'the parts';"
        "CREATE TABLE orders (part_id INT, FOREIGN KEY (part_id) REFERENCES parts (id))"
    )
    ((ddl,),) = lake.sql("SELECT GET_DDL('TABLE', 'parts')").collect()
    assert ddl == (
        "create or replace TABLE PARTS (\n"
        "\tID BIGINT NOT NULL DEFAULT LAKE.PUBLIC.SEQ.NEXTVAL,\n"
        "\tNAME VARCHAR(40) COMMENT 'what it\\'s called',\n"
        "\tPRICE NUMBER(10,2) DEFAULT 0,\n"
        "\tWEIGHT FLOAT,\n"
        "\tRATIO REAL,\n"
        "\tMADE TIMESTAMP_NTZ,\n"
        "\tSEEN TIMESTAMP_LTZ,\n"
        "\tOK BOOLEAN,\n"
        "\tDAY DATE,\n"
        "\tRAW BINARY,\n"
        "\tDOC VARIANT,\n"
        '\t"MixedCase" VARCHAR,\n'
        "\tprimary key (ID),\n"
        "\tconstraint UQ unique (NAME)\n"
        ") cluster by (DAY) DATA_RETENTION_TIME_IN_DAYS = 3 CHANGE_TRACKING = TRUE COMMENT = 'the parts';"
    )
    before = [
        (r.col_name, r.data_type, r.comment) for r in lake.spark.sql(f"DESCRIBE delta.`{location(lake, 'parts')}`").collect()
    ]
    described = rows(lake, "DESCRIBE TABLE parts")
    lake.sql("ALTER TABLE parts RENAME TO parts_old")
    lake.sql(ddl)
    after = [
        (r.col_name, r.data_type, r.comment) for r in lake.spark.sql(f"DESCRIBE delta.`{location(lake, 'parts')}`").collect()
    ]
    assert after == before
    assert rows(lake, "DESCRIBE TABLE parts") == described
    assert rows(lake, "SELECT GET_DDL('TABLE', 'parts')") == [(ddl,)]
    ((foreign,),) = lake.sql("SELECT GET_DDL('TABLE', 'orders', TRUE)").collect()
    assert foreign == (
        "create or replace TABLE LAKE.PUBLIC.ORDERS (\n\tPART_ID BIGINT,\n"
        "\tforeign key (PART_ID) references LAKE.PUBLIC.PARTS_OLD (ID)\n);"
    )


def test_get_ddl_of_views_schemas_and_databases_and_show_create_table(lake: lakeclone.Lake) -> None:
    _shop(lake)
    ((view,),) = lake.sql("SELECT GET_DDL('VIEW', 'big')").collect()
    assert view == "create or replace view BIG (ID, AMOUNT) as SELECT id, amount FROM orders WHERE amount > 8;"
    ((schema,),) = lake.sql("SELECT GET_DDL('SCHEMA', 'staging')").collect()
    assert schema == "create or replace schema STAGING COMMENT = 'raw';"
    ((database,),) = lake.sql("SELECT GET_DDL('DATABASE', 'lake')").collect()
    statements = database.split("\n\n")
    assert statements[0] == "create or replace database LAKE;"
    assert "create or replace schema PUBLIC;" in statements and view in statements and schema in statements
    assert sum(s.startswith("create or replace TABLE") for s in statements) == 2
    ((created,),) = lake.sql("SHOW CREATE TABLE secrets").collect()
    assert created == "create or replace TABLE LAKE.PUBLIC.SECRETS (\n\tNOTE VARCHAR\n);"
    for bad, message in [
        ("SELECT GET_DDL('TABLE', 'big')", "'LAKE.PUBLIC.BIG' does not exist"),
        ("SELECT GET_DDL('FUNCTION', 'f')", "Invalid object type 'FUNCTION'"),
        ("SELECT GET_DDL('TABLE')", "GET_DDL takes an object's kind and name"),
    ]:
        with pytest.raises(lakeclone.LakecloneError, match=re.escape(message)):
            lake.sql(bad)
    # The DDL of a database runs as it reads: the whole database made again, elsewhere.
    lake.sql("CREATE DATABASE copy")
    lake.sql(database.replace("database LAKE;", "database COPY;"))
    assert rows(lake, "SELECT table_name, table_type FROM copy.information_schema.tables") == [
        ("BIG", "VIEW"),
        ("ORDERS", "BASE TABLE"),
        ("SECRETS", "BASE TABLE"),
    ]


def test_show_columns_and_get_ddl_show_only_what_the_role_sees(lake: lakeclone.Lake) -> None:
    _shop(lake)
    lake.sql(
        "CREATE ROLE analyst; CREATE USER ann; GRANT ROLE analyst TO USER ann; GRANT USAGE ON DATABASE lake TO ROLE analyst;"
        "GRANT USAGE ON SCHEMA lake.public TO ROLE analyst; GRANT SELECT ON TABLE lake.public.orders TO ROLE analyst"
    )
    ann = session_of(lake, "ann", "analyst")
    assert {r.table_name for r in ann.sql("SHOW COLUMNS IN SCHEMA lake.public").collect()} == {"ORDERS"}
    with pytest.raises(lakeclone.LakecloneError, match="does not exist or not authorized"):
        ann.sql("SHOW COLUMNS IN TABLE lake.public.secrets")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist or not authorized"):
        ann.sql("SELECT GET_DDL('TABLE', 'lake.public.secrets')")
    ((schema,),) = ann.sql("SELECT GET_DDL('SCHEMA', 'lake.public')").collect()
    assert "TABLE ORDERS" in schema and "TABLE SECRETS" not in schema and "view BIG" not in schema


def test_explain_shows_sparks_plan_of_the_query_as_bound(lake: lakeclone.Lake) -> None:
    _shop(lake)
    explained = lake.sql("EXPLAIN SELECT customer FROM orders WHERE id = 1")
    assert explained.columns == ["content"]
    ((plan,),) = explained.collect()
    assert "Physical Plan" in plan and "Filter" in plan and "CUSTOMER" in plan
    ((extended,),) = lake.sql("EXPLAIN EXTENDED SELECT * FROM big").collect()
    assert "Parsed Logical Plan" in extended and "AMOUNT" in extended
    assert lake.sql("EXPLAIN FORMATTED SELECT 1").columns == ["plan"]
    with pytest.raises(lakeclone.LakecloneError, match="EXPLAIN USING TABULAR is not supported"):
        lake.sql("EXPLAIN USING TABULAR SELECT 1")
    with pytest.raises(lakeclone.LakecloneError, match="lakeclone explains queries"):
        lake.sql("EXPLAIN INSERT INTO orders (id) VALUES (3)")
    assert rows(lake, "SELECT COUNT(*) FROM orders") == [(2,)]
    # A policy's body shows in the plan: a query reading through one is explained to ACCOUNTADMIN only.
    lake.sql(
        "CREATE MASKING POLICY hide AS (val STRING) RETURNS STRING -> "
        "CASE WHEN val LIKE 'a%' THEN val ELSE 'masked-by-rule-7' END;"
        "ALTER TABLE orders MODIFY COLUMN customer SET MASKING POLICY hide;"
        "CREATE ROLE analyst; CREATE USER ann; GRANT ROLE analyst TO USER ann; GRANT USAGE ON DATABASE lake TO ROLE analyst;"
        "GRANT USAGE ON SCHEMA lake.public TO ROLE analyst; GRANT SELECT ON TABLE lake.public.orders TO ROLE analyst"
    )
    ((plan,),) = lake.sql("EXPLAIN SELECT customer FROM orders").collect()
    assert "masked-by-rule-7" in plan
    ann = session_of(lake, "ann", "analyst")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("reads LAKE.PUBLIC.ORDERS through policies")):
        ann.sql("EXPLAIN SELECT customer FROM orders")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist or not authorized"):
        ann.sql("EXPLAIN SELECT * FROM secrets")
    assert "Physical Plan" in ann.sql("EXPLAIN SELECT 1").collect()[0][0]
    # A statement lakeclone does not run is refused alike, whoever asks.
    with pytest.raises(lakeclone.LakecloneError, match="lakeclone explains queries"):
        ann.sql("EXPLAIN TRUNCATE TABLE orders")
