"""Informational PRIMARY KEY / UNIQUE / FOREIGN KEY constraints: DESCRIBE, SHOW ... KEYS, and clones."""

from __future__ import annotations

import pytest
from delta_reader import kernel_rows, sorted_rows

import lakeclone

pytestmark = pytest.mark.spark


def keys(lake: lakeclone.Lake, table: str) -> dict[str, tuple[str, str]]:
    """DESCRIBE TABLE's (primary key, unique key) flags by column."""
    return {r.name: (r["primary key"], r["unique key"]) for r in lake.sql(f"DESCRIBE TABLE {table}").collect()}


def primary_keys(lake: lakeclone.Lake, sql: str) -> list[tuple]:
    return sorted(
        (r.database_name, r.schema_name, r.table_name, r.column_name, r.key_sequence, r.constraint_name)
        for r in lake.sql(sql).collect()
    )


def names(lake: lakeclone.Lake, sql: str) -> list[str]:
    return [r.name for r in lake.sql(sql).collect()]


def imported(lake: lakeclone.Lake, table: str) -> list[tuple]:
    return sorted(
        (
            f"{r.fk_database_name}.{r.fk_schema_name}.{r.fk_table_name}.{r.fk_column_name}",
            f"{r.pk_database_name}.{r.pk_schema_name}.{r.pk_table_name}.{r.pk_column_name}",
            r.key_sequence,
        )
        for r in lake.sql(f"SHOW IMPORTED KEYS IN TABLE {table}").collect()
    )


def customers_and_orders(lake: lakeclone.Lake, schema: str = "lake.public") -> None:
    lake.sql(f"CREATE TABLE {schema}.customers (id INT PRIMARY KEY, email STRING UNIQUE, name STRING)")
    lake.sql(
        f"CREATE TABLE {schema}.orders (id INT, customer_id INT, "
        f"CONSTRAINT orders_pk PRIMARY KEY (id), "
        f"CONSTRAINT orders_customer FOREIGN KEY (customer_id) REFERENCES {schema}.customers (id))"
    )


# DESCRIBE and SHOW ----------------------------------------------------------------------


def test_describe_flags_primary_and_unique_columns(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT PRIMARY KEY, b STRING UNIQUE, c INT, d INT, UNIQUE (c, d))")
    assert keys(lake, "t") == {"A": ("Y", "N"), "B": ("N", "Y"), "C": ("N", "Y"), "D": ("N", "Y")}


def test_composite_primary_key_in_show_primary_keys(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b INT, c INT, CONSTRAINT t_pk PRIMARY KEY (b, a))")
    assert keys(lake, "t") == {"A": ("Y", "N"), "B": ("Y", "N"), "C": ("N", "N")}
    assert primary_keys(lake, "SHOW PRIMARY KEYS IN TABLE t") == [
        ("LAKE", "PUBLIC", "T", "A", 2, "T_PK"),
        ("LAKE", "PUBLIC", "T", "B", 1, "T_PK"),
    ]
    (row, _) = lake.sql("SHOW PRIMARY KEYS IN t").collect()
    assert row.created_on is not None


def test_unnamed_constraints_get_system_names(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT PRIMARY KEY)")
    ((*_, name),) = primary_keys(lake, "SHOW PRIMARY KEYS IN TABLE t")
    assert name.startswith("SYS_CONSTRAINT_")


def test_show_primary_keys_in_schema(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    lake.sql("CREATE TABLE plain (x INT)")
    shown = primary_keys(lake, "SHOW PRIMARY KEYS IN SCHEMA lake.public")
    assert [(t, c) for _, _, t, c, _, _ in shown] == [("CUSTOMERS", "ID"), ("ORDERS", "ID")]


def test_show_imported_keys(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    (row,) = lake.sql("SHOW IMPORTED KEYS IN TABLE orders").collect()
    assert (row.pk_database_name, row.pk_schema_name, row.pk_table_name, row.pk_column_name) == (
        "LAKE",
        "PUBLIC",
        "CUSTOMERS",
        "ID",
    )
    assert (row.fk_database_name, row.fk_schema_name, row.fk_table_name, row.fk_column_name) == (
        "LAKE",
        "PUBLIC",
        "ORDERS",
        "CUSTOMER_ID",
    )
    assert (row.key_sequence, row.fk_name) == (1, "ORDERS_CUSTOMER")
    (pk,) = primary_keys(lake, "SHOW PRIMARY KEYS IN TABLE customers")
    assert row.pk_name == pk[-1]
    assert lake.sql("SHOW IMPORTED KEYS IN TABLE customers").collect() == []


def test_column_level_reference_and_default_referenced_columns(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE p (a INT, b INT, PRIMARY KEY (a, b))")
    lake.sql("CREATE TABLE c2 (x INT, y INT, FOREIGN KEY (x, y) REFERENCES p)")  # p's primary key
    assert imported(lake, "c2") == [
        ("LAKE.PUBLIC.C2.X", "LAKE.PUBLIC.P.A", 1),
        ("LAKE.PUBLIC.C2.Y", "LAKE.PUBLIC.P.B", 2),
    ]
    lake.sql("CREATE TABLE u (k STRING UNIQUE)")
    lake.sql("CREATE TABLE c3 (k STRING REFERENCES u (k))")
    assert imported(lake, "c3") == [("LAKE.PUBLIC.C3.K", "LAKE.PUBLIC.U.K", 1)]


def test_self_referencing_foreign_key(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE emp (id INT PRIMARY KEY, manager INT REFERENCES emp (id))")
    assert imported(lake, "emp") == [("LAKE.PUBLIC.EMP.MANAGER", "LAKE.PUBLIC.EMP.ID", 1)]


def test_constraints_are_not_enforced(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    lake.sql("INSERT INTO customers VALUES (1, 'a@x', 'a'), (1, 'a@x', 'again')")
    lake.sql("INSERT INTO orders VALUES (10, 999)")  # no such customer
    assert sorted_rows(lake.sql("SELECT id FROM customers").collect()) == [(1,), (1,)]
    (row,) = lake.sql("SHOW TABLES LIKE 'ORDERS'").collect()
    assert kernel_rows(row.location) == [(10, 999)]


# Errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t (a INT, PRIMARY KEY (b))", "invalid identifier 'B'"),
        ("CREATE TABLE t (a INT PRIMARY KEY, b INT, PRIMARY KEY (b))", "more than one primary key"),
        ("CREATE TABLE t (a INT REFERENCES nope (id))", "NOPE' does not exist"),
        ("CREATE TABLE t (a INT REFERENCES p (nope))", "invalid identifier 'NOPE'"),
        ("CREATE TABLE t (a INT REFERENCES p (v))", "Cannot find a primary or unique key"),
        ("CREATE TABLE t (a INT REFERENCES np)", "has no primary key"),
        ("CREATE TABLE t (a INT, b INT, FOREIGN KEY (a, b) REFERENCES p (id))", "does not match"),
        ("CREATE TABLE t (a INT, CONSTRAINT k UNIQUE (a), CONSTRAINT k PRIMARY KEY (a))", "defined more than once"),
    ],
)
def test_invalid_constraints_create_nothing(lake: lakeclone.Lake, sql: str, message: str) -> None:
    lake.sql("CREATE TABLE p (id INT PRIMARY KEY, v INT)")
    lake.sql("CREATE TABLE np (id INT)")
    with pytest.raises(lakeclone.LakecloneError, match=message):
        lake.sql(sql)
    assert {r.name for r in lake.sql("SHOW TABLES").collect()} == {"P", "NP"}


# Identity ------------------------------------------------------------------------------


def test_foreign_key_follows_a_renamed_table(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    lake.sql("ALTER TABLE customers RENAME TO clients")
    assert imported(lake, "orders") == [("LAKE.PUBLIC.ORDERS.CUSTOMER_ID", "LAKE.PUBLIC.CLIENTS.ID", 1)]


def test_foreign_key_to_a_dropped_table_is_hidden_until_undrop(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    lake.sql("DROP TABLE customers")
    assert imported(lake, "orders") == []
    lake.sql("UNDROP TABLE customers")
    assert imported(lake, "orders") == [("LAKE.PUBLIC.ORDERS.CUSTOMER_ID", "LAKE.PUBLIC.CUSTOMERS.ID", 1)]
    lake.sql("CREATE OR REPLACE TABLE customers (id INT PRIMARY KEY)")  # a new table, not the referenced one
    assert imported(lake, "orders") == []


def test_drop_restrict_refuses_while_a_foreign_key_references_the_table(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    with pytest.raises(lakeclone.LakecloneError, match=r"foreign key 'ORDERS_CUSTOMER' of table 'LAKE\.PUBLIC\.ORDERS'"):
        lake.sql("DROP TABLE customers RESTRICT")
    assert names(lake, "SHOW TABLES") == ["CUSTOMERS", "ORDERS"]
    # The referencing table itself may go; then nothing holds the referenced one.
    lake.sql("DROP TABLE orders RESTRICT")
    lake.sql("DROP TABLE customers RESTRICT")
    assert names(lake, "SHOW TABLES") == []


def test_drop_cascade_drops_a_referenced_table(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    lake.sql("DROP TABLE customers CASCADE")
    assert names(lake, "SHOW TABLES") == ["ORDERS"]


def test_drop_schema_restrict_looks_at_references_from_outside_it(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA inside; CREATE SCHEMA outside")
    customers_and_orders(lake, "lake.inside")
    lake.sql("CREATE TABLE lake.outside.invoices (id INT, customer_id INT REFERENCES lake.inside.customers (id))")
    with pytest.raises(lakeclone.LakecloneError, match="Cannot drop table 'CUSTOMERS' with RESTRICT"):
        lake.sql("DROP SCHEMA lake.inside RESTRICT")
    lake.sql("DROP TABLE lake.outside.invoices")
    # References between the schema's own tables do not hold it.
    lake.sql("DROP SCHEMA lake.inside RESTRICT")
    assert "INSIDE" not in names(lake, "SHOW SCHEMAS")


# Clones --------------------------------------------------------------------------------


def test_table_clone_copies_constraints_and_references_the_original(lake: lakeclone.Lake) -> None:
    customers_and_orders(lake)
    lake.sql("CREATE TABLE orders_dev CLONE orders")
    assert keys(lake, "orders_dev") == keys(lake, "orders")
    assert primary_keys(lake, "SHOW PRIMARY KEYS IN TABLE orders_dev") == [("LAKE", "PUBLIC", "ORDERS_DEV", "ID", 1, "ORDERS_PK")]
    assert imported(lake, "orders_dev") == [("LAKE.PUBLIC.ORDERS_DEV.CUSTOMER_ID", "LAKE.PUBLIC.CUSTOMERS.ID", 1)]


def test_table_clone_of_a_self_referencing_table_references_itself(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE emp (id INT PRIMARY KEY, manager INT REFERENCES emp (id))")
    lake.sql("CREATE TABLE emp2 CLONE emp")
    assert imported(lake, "emp2") == [("LAKE.PUBLIC.EMP2.MANAGER", "LAKE.PUBLIC.EMP2.ID", 1)]


def test_database_clone_points_foreign_keys_at_the_cloned_tables(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE DATABASE prod")
    lake.sql("CREATE SCHEMA prod.ref")
    lake.sql("CREATE TABLE prod.ref.customers (id INT PRIMARY KEY)")
    lake.sql("CREATE TABLE prod.public.orders (id INT, c INT REFERENCES prod.ref.customers (id))")
    lake.sql("CREATE DATABASE dev CLONE prod")
    assert imported(lake, "dev.public.orders") == [("DEV.PUBLIC.ORDERS.C", "DEV.REF.CUSTOMERS.ID", 1)]
    assert imported(lake, "prod.public.orders") == [("PROD.PUBLIC.ORDERS.C", "PROD.REF.CUSTOMERS.ID", 1)]
    assert primary_keys(lake, "SHOW PRIMARY KEYS IN DATABASE dev")[0][:5] == ("DEV", "REF", "CUSTOMERS", "ID", 1)


def test_schema_clone_keeps_foreign_keys_to_tables_outside_it(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA ref")
    lake.sql("CREATE TABLE lake.ref.customers (id INT PRIMARY KEY)")
    lake.sql("CREATE SCHEMA app")
    lake.sql("CREATE TABLE lake.app.products (id INT PRIMARY KEY)")
    lake.sql("CREATE TABLE lake.app.orders (c INT REFERENCES lake.ref.customers (id), p INT REFERENCES lake.app.products (id))")
    lake.sql("CREATE SCHEMA lake.dev CLONE lake.app")
    assert imported(lake, "lake.dev.orders") == [
        ("LAKE.DEV.ORDERS.C", "LAKE.REF.CUSTOMERS.ID", 1),
        ("LAKE.DEV.ORDERS.P", "LAKE.DEV.PRODUCTS.ID", 1),
    ]
