"""INFORMATION_SCHEMA: Snowflake's views of a database (TABLES, COLUMNS, VIEWS, SCHEMATA, TABLE_PRIVILEGES), filtered by the role."""

from __future__ import annotations

import re

import pytest
from lake_helpers import rows, session_of

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


def test_tables_columns_views_and_schemata_describe_a_database(lake: lakeclone.Lake) -> None:
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
