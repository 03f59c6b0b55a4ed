"""Sequences: CREATE/DROP/SHOW SEQUENCE, NEXTVAL and constant column defaults, and how clones remap them."""

from __future__ import annotations

import threading

import pytest
from delta_reader import kernel_rows, sorted_rows

import lakeclone
from lakeclone.catalog.store import Catalog

pytestmark = pytest.mark.spark


def rows(lake: lakeclone.Lake, sql: str) -> list[tuple]:
    return sorted_rows(lake.sql(sql).collect())


def sequences(lake: lakeclone.Lake, sql: str = "SHOW SEQUENCES") -> dict[str, tuple]:
    return {f"{r.database_name}.{r.schema_name}.{r.name}": (r.next_value, r.interval) for r in lake.sql(sql).collect()}


def location(lake: lakeclone.Lake, name: str, scope: str = "") -> str:
    (row,) = lake.sql(f"SHOW TABLES LIKE '{name}'{scope}").collect()
    return row.location


def defaults(lake: lakeclone.Lake, table: str) -> dict[str, str | None]:
    return {r.name: r.default for r in lake.sql(f"DESCRIBE TABLE {table}").collect()}


# CREATE, DROP, SHOW -----------------------------------------------------------------------


def test_create_sequence_defaults_to_start_1_increment_1(lake: lakeclone.Lake) -> None:
    assert lake.sql("CREATE SEQUENCE seq").collect()[0].status == "Sequence SEQ successfully created."
    (shown,) = lake.sql("SHOW SEQUENCES").collect()
    assert (shown.name, shown.database_name, shown.schema_name, shown.next_value, shown.interval) == (
        "SEQ",
        "LAKE",
        "PUBLIC",
        1,
        1,
    )
    assert shown.created_on is not None


def test_create_sequence_start_and_increment_in_both_spellings(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE a START WITH 10 INCREMENT BY 5")
    lake.sql("CREATE SEQUENCE b START 3 INCREMENT 2")
    lake.sql("CREATE SEQUENCE c START = 100 INCREMENT = -1")
    assert sequences(lake) == {
        "LAKE.PUBLIC.A": (10, 5),
        "LAKE.PUBLIC.B": (3, 2),
        "LAKE.PUBLIC.C": (100, -1),
    }


def test_show_sequences_like_and_in_schema(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE order_ids")
    lake.sql("CREATE SEQUENCE other")
    lake.sql("CREATE SCHEMA s2")
    lake.sql("CREATE SEQUENCE lake.s2.order_ids2")
    assert set(sequences(lake, "SHOW SEQUENCES LIKE 'ORDER%'")) == {"LAKE.PUBLIC.ORDER_IDS", "LAKE.S2.ORDER_IDS2"}
    assert set(sequences(lake, "SHOW SEQUENCES IN SCHEMA lake.s2")) == {"LAKE.S2.ORDER_IDS2"}
    assert set(sequences(lake, "SHOW SEQUENCES LIKE 'o%' IN SCHEMA lake.public")) == {
        "LAKE.PUBLIC.ORDER_IDS",
        "LAKE.PUBLIC.OTHER",
    }
    assert len(sequences(lake, "SHOW SEQUENCES IN DATABASE lake")) == 3


def test_sequence_names_are_unique_per_schema(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq")
    with pytest.raises(lakeclone.LakecloneError, match="already exists"):
        lake.sql("CREATE SEQUENCE seq")
    status = lake.sql("CREATE SEQUENCE IF NOT EXISTS seq START WITH 50").collect()[0].status
    assert status == "SEQ already exists, statement succeeded."
    assert sequences(lake) == {"LAKE.PUBLIC.SEQ": (1, 1)}
    lake.sql("CREATE OR REPLACE SEQUENCE seq START WITH 50")
    assert sequences(lake) == {"LAKE.PUBLIC.SEQ": (50, 1)}
    lake.sql("CREATE SCHEMA other")
    lake.sql("CREATE SEQUENCE seq")  # same name, another schema
    assert set(sequences(lake, "SHOW SEQUENCES IN DATABASE lake")) == {"LAKE.PUBLIC.SEQ", "LAKE.OTHER.SEQ"}


def test_drop_sequence(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq")
    assert lake.sql("DROP SEQUENCE seq").collect()[0].status == "SEQ successfully dropped."
    assert sequences(lake) == {}
    with pytest.raises(lakeclone.LakecloneError, match="does not exist"):
        lake.sql("DROP SEQUENCE seq")
    assert "already dropped" in lake.sql("DROP SEQUENCE IF EXISTS seq").collect()[0].status
    lake.sql("CREATE SEQUENCE seq START WITH 7")  # the name is free again
    assert sequences(lake) == {"LAKE.PUBLIC.SEQ": (7, 1)}


def test_zero_increment_is_refused(lake: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError, match="must not be zero"):
        lake.sql("CREATE SEQUENCE seq INCREMENT BY 0")
    assert sequences(lake) == {}


# Defaults on INSERT -----------------------------------------------------------------------


def test_insert_fills_nextval_default_with_a_contiguous_block(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq START WITH 100 INCREMENT BY 10")
    lake.sql("CREATE TABLE t (id INT DEFAULT seq.NEXTVAL, v STRING)")
    assert lake.sql("INSERT INTO t (v) VALUES ('a'), ('b'), ('c')").collect()[0][0] == 3
    assert [r[0] for r in rows(lake, "SELECT id FROM t")] == [100, 110, 120]
    lake.sql("INSERT INTO t (v) SELECT v FROM t")
    ids = [r[0] for r in rows(lake, "SELECT id FROM t")]
    assert ids == [100, 110, 120, 130, 140, 150]
    assert sequences(lake) == {"LAKE.PUBLIC.SEQ": (160, 10)}
    assert kernel_rows(location(lake, "T")) == rows(lake, "SELECT * FROM t")


def test_insert_with_explicit_value_or_no_column_list_draws_nothing(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq")
    lake.sql("CREATE TABLE t (id INT DEFAULT seq.NEXTVAL, v STRING)")
    lake.sql("INSERT INTO t (id, v) VALUES (42, 'x')")
    lake.sql("INSERT INTO t VALUES (43, 'y')")
    assert sequences(lake) == {"LAKE.PUBLIC.SEQ": (1, 1)}
    lake.sql("INSERT INTO t (v) VALUES ('z')")
    assert rows(lake, "SELECT * FROM t") == [(1, "z"), (42, "x"), (43, "y")]


def test_negative_increment_counts_down(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE down START WITH 0 INCREMENT BY -2")
    lake.sql("CREATE TABLE t (id INT DEFAULT down.NEXTVAL, v INT)")
    lake.sql("INSERT INTO t (v) VALUES (1), (2), (3)")
    assert sorted(r[0] for r in rows(lake, "SELECT id FROM t")) == [-4, -2, 0]


def test_not_null_column_with_nextval_default(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq")
    lake.sql("CREATE TABLE t (id INT NOT NULL DEFAULT seq.NEXTVAL, v INT)")
    lake.sql("INSERT INTO t (v) VALUES (1), (2)")
    assert rows(lake, "SELECT * FROM t") == [(1, 1), (2, 2)]


def test_constant_defaults(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, n INT DEFAULT 0, s STRING DEFAULT 'x', d DOUBLE DEFAULT 1.5, plain INT)")
    lake.sql("INSERT INTO t (id) VALUES (1)")
    lake.sql("INSERT INTO t (id, s) VALUES (2, 'given')")
    assert rows(lake, "SELECT * FROM t") == [(1, 0, "x", 1.5, None), (2, 0, "given", 1.5, None)]
    assert defaults(lake, "t") == {"ID": None, "N": "0", "S": "'x'", "D": "1.5", "PLAIN": None}


def test_several_defaults_in_one_insert(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE a START WITH 1")
    lake.sql("CREATE SEQUENCE b START WITH 1000 INCREMENT BY 1000")
    lake.sql("CREATE TABLE t (x INT DEFAULT a.NEXTVAL, y INT DEFAULT b.NEXTVAL, z STRING DEFAULT 'z', v INT)")
    lake.sql("INSERT INTO t (v) SELECT 1 UNION ALL SELECT 1")  # repeated source column names
    assert rows(lake, "SELECT * FROM t") == [(1, 1000, "z", 1), (2, 2000, "z", 1)]


def test_describe_shows_the_qualified_sequence(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA ids")
    lake.sql("CREATE SEQUENCE lake.ids.seq")
    lake.sql("USE SCHEMA lake.public")
    lake.sql("CREATE TABLE t (id INT DEFAULT ids.seq.NEXTVAL, v INT)")
    assert defaults(lake, "t")["ID"] == "LAKE.IDS.SEQ.NEXTVAL"


def test_default_on_a_missing_sequence_creates_nothing(lake: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError, match="NOPE' does not exist"):
        lake.sql("CREATE TABLE t (id INT DEFAULT nope.NEXTVAL)")
    assert lake.sql("SHOW TABLES").collect() == []


def test_non_constant_default_is_refused(lake: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError, match="Invalid column default"):
        lake.sql("CREATE TABLE t (a INT, b INT DEFAULT a)")


def test_dropped_or_replaced_sequence_fails_the_insert(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq")
    lake.sql("CREATE TABLE t (id INT DEFAULT seq.NEXTVAL, v INT)")
    lake.sql("CREATE OR REPLACE SEQUENCE seq")  # a new sequence: the default names the old one by id
    with pytest.raises(lakeclone.LakecloneError, match="Sequence used as a default value in table 'T' column 'ID'"):
        lake.sql("INSERT INTO t (v) VALUES (1)")
    assert rows(lake, "SELECT * FROM t") == []
    lake.sql("INSERT INTO t (id, v) VALUES (5, 1)")  # no value drawn, no error


# MERGE -------------------------------------------------------------------------------------


def test_merge_not_matched_insert_fills_defaults(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq START WITH 10")
    lake.sql("CREATE TABLE t (id INT DEFAULT seq.NEXTVAL, k STRING, n INT DEFAULT -1)")
    lake.sql("INSERT INTO t (id, k, n) VALUES (1, 'a', 1)")
    result = lake.sql(
        "MERGE INTO t USING (SELECT 'a' AS k UNION ALL SELECT 'b' UNION ALL SELECT 'c' UNION ALL SELECT 'd') s "
        "ON t.k = s.k "
        "WHEN MATCHED THEN UPDATE SET n = 2 "
        "WHEN NOT MATCHED AND s.k = 'd' THEN INSERT (id, k) VALUES (99, s.k) "
        "WHEN NOT MATCHED THEN INSERT (k) VALUES (s.k)"
    ).collect()[0]
    assert (result[0], result[1]) == (3, 1)
    got = rows(lake, "SELECT * FROM t")
    assert got[0] == (1, "a", 2)
    assert sorted(r[0] for r in got[1:3]) == [10, 11]  # B and C drew a contiguous block
    assert got[3] == (99, "d", -1)  # the explicit id drew nothing
    assert sequences(lake) == {"LAKE.PUBLIC.SEQ": (12, 1)}
    assert kernel_rows(location(lake, "T")) == got


# Concurrency ----------------------------------------------------------------------------


def test_two_sessions_never_get_the_same_value(lake: lakeclone.Lake, spark, clock) -> None:
    lake.sql("CREATE SEQUENCE seq")
    lake.sql("CREATE TABLE t (id INT DEFAULT seq.NEXTVAL, who STRING)")
    other = lakeclone.connect(lake.warehouse, spark=spark, clock=clock)
    for _ in range(3):
        lake.sql("INSERT INTO t (who) VALUES ('a'), ('a')")
        other.sql("INSERT INTO t (who) VALUES ('b'), ('b'), ('b')")
    ids = [r[0] for r in lake.sql("SELECT id FROM t").collect()]
    assert sorted(ids) == list(range(1, 16))


def test_reservation_is_atomic_across_connections(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq START WITH 1 INCREMENT BY 3")
    catalogs = [Catalog(lake.warehouse / "catalog.sqlite") for _ in range(4)]
    sequence_id = catalogs[0].sequences.sequence("LAKE", "PUBLIC", "SEQ").id
    drawn: list[list[int]] = [[] for _ in catalogs]

    def draw(index: int) -> None:
        for size in (1, 2, 5) * 10:
            first, step = catalogs[index].sequences.reserve_sequence_values(sequence_id, size)
            drawn[index].extend(first + i * step for i in range(size))

    threads = [threading.Thread(target=draw, args=(i,)) for i in range(len(catalogs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for catalog in catalogs:
        catalog.close()
    values = [v for d in drawn for v in d]
    assert len(values) == len(set(values)) == 4 * 80
    assert sorted(values) == [1 + 3 * i for i in range(320)]


# Clones -----------------------------------------------------------------------------------


def test_schema_clone_uses_the_cloned_sequence(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA app")
    lake.sql("CREATE SEQUENCE lake.app.seq START WITH 1")
    lake.sql("CREATE TABLE lake.app.t (id INT DEFAULT lake.app.seq.NEXTVAL, v STRING)")
    lake.sql("INSERT INTO lake.app.t (v) VALUES ('a'), ('b')")
    lake.sql("CREATE SCHEMA lake.dev CLONE lake.app")
    # The clone has its own sequence, continuing from the source's next value.
    assert sequences(lake, "SHOW SEQUENCES IN SCHEMA lake.dev") == {"LAKE.DEV.SEQ": (3, 1)}
    assert defaults(lake, "lake.dev.t")["ID"] == "LAKE.DEV.SEQ.NEXTVAL"
    lake.sql("INSERT INTO lake.dev.t (v) VALUES ('c'), ('d')")
    assert sequences(lake, "SHOW SEQUENCES IN DATABASE lake") == {"LAKE.APP.SEQ": (3, 1), "LAKE.DEV.SEQ": (5, 1)}
    lake.sql("INSERT INTO lake.app.t (v) VALUES ('e')")
    # Independent sequences: the source hands out 3 too.
    assert rows(lake, "SELECT * FROM lake.app.t") == [(1, "a"), (2, "b"), (3, "e")]
    assert rows(lake, "SELECT * FROM lake.dev.t") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert kernel_rows(location(lake, "T", " IN SCHEMA lake.dev")) == rows(lake, "SELECT * FROM lake.dev.t")


def test_table_clone_shares_the_source_sequence(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SEQUENCE seq")
    lake.sql("CREATE TABLE t (id INT DEFAULT seq.NEXTVAL, v STRING, n INT DEFAULT 7)")
    lake.sql("INSERT INTO t (v) VALUES ('a')")
    lake.sql("CREATE TABLE c CLONE t")
    assert defaults(lake, "c") == {"ID": "LAKE.PUBLIC.SEQ.NEXTVAL", "V": None, "N": "7"}
    lake.sql("INSERT INTO c (v) VALUES ('b')")
    lake.sql("INSERT INTO t (v) VALUES ('c')")
    lake.sql("INSERT INTO c (v) VALUES ('d')")
    assert rows(lake, "SELECT * FROM t") == [(1, "a", 7), (3, "c", 7)]
    assert rows(lake, "SELECT * FROM c") == [(1, "a", 7), (2, "b", 7), (4, "d", 7)]
    assert sequences(lake) == {"LAKE.PUBLIC.SEQ": (5, 1)}


def test_schema_clone_keeps_a_sequence_outside_the_schema(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA shared")
    lake.sql("CREATE SEQUENCE lake.shared.ids START WITH 500")
    lake.sql("CREATE SCHEMA app")
    lake.sql("CREATE TABLE lake.app.t (id INT DEFAULT lake.shared.ids.NEXTVAL, v INT)")
    lake.sql("CREATE SCHEMA lake.dev CLONE lake.app")
    assert sequences(lake, "SHOW SEQUENCES IN SCHEMA lake.dev") == {}
    assert defaults(lake, "lake.dev.t")["ID"] == "LAKE.SHARED.IDS.NEXTVAL"
    lake.sql("INSERT INTO lake.dev.t (v) VALUES (1)")
    lake.sql("INSERT INTO lake.app.t (v) VALUES (2)")
    assert rows(lake, "SELECT * FROM lake.dev.t") == [(500, 1)]
    assert rows(lake, "SELECT * FROM lake.app.t") == [(501, 2)]


def test_database_clone_remaps_sequences_across_its_schemas(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE DATABASE prod")
    lake.sql("CREATE SCHEMA prod.ids")
    lake.sql("CREATE SEQUENCE prod.ids.seq START WITH 10")
    lake.sql("CREATE TABLE prod.public.t (id INT DEFAULT prod.ids.seq.NEXTVAL, v INT)")
    lake.sql("CREATE DATABASE dev CLONE prod")
    assert defaults(lake, "dev.public.t")["ID"] == "DEV.IDS.SEQ.NEXTVAL"
    assert sequences(lake, "SHOW SEQUENCES IN DATABASE dev") == {"DEV.IDS.SEQ": (10, 1)}
    lake.sql("INSERT INTO dev.public.t (v) VALUES (1), (2)")
    assert sequences(lake, "SHOW SEQUENCES IN DATABASE prod") == {"PROD.IDS.SEQ": (10, 1)}
    assert sequences(lake, "SHOW SEQUENCES IN DATABASE dev") == {"DEV.IDS.SEQ": (12, 1)}


def test_dropping_the_source_sequence_leaves_the_cloned_one_working(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA app")
    lake.sql("CREATE SEQUENCE lake.app.seq")
    lake.sql("CREATE TABLE lake.app.t (id INT DEFAULT lake.app.seq.NEXTVAL, v INT)")
    lake.sql("CREATE SCHEMA lake.dev CLONE lake.app")
    lake.sql("DROP SEQUENCE lake.app.seq")
    lake.sql("INSERT INTO lake.dev.t (v) VALUES (1)")
    assert rows(lake, "SELECT * FROM lake.dev.t") == [(1, 1)]
    with pytest.raises(lakeclone.LakecloneError, match="was not found"):
        lake.sql("INSERT INTO lake.app.t (v) VALUES (1)")


# AUTOINCREMENT ----------------------------------------------------------------------------


def test_autoincrement_numbers_the_rows_a_statement_leaves_it_to(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE t (id NUMBER AUTOINCREMENT, down INT IDENTITY(100, -10), v STRING, "
        "b BIGINT AUTOINCREMENT START 5 INCREMENT 2 ORDER)"
    )
    assert defaults(lake, "t") == {
        "ID": "IDENTITY START 1 INCREMENT 1 ORDER",
        "DOWN": "IDENTITY START 100 INCREMENT -10 ORDER",
        "V": None,
        "B": "IDENTITY START 5 INCREMENT 2 ORDER",
    }
    lake.sql("INSERT INTO t (v) VALUES ('a'), ('b')")
    lake.sql("INSERT INTO t (id, v) VALUES (42, 'given')")  # a value given is kept, and draws nothing
    lake.sql(
        "MERGE INTO t USING (SELECT 'a' AS v UNION ALL SELECT 'c') s ON t.v = s.v WHEN NOT MATCHED THEN INSERT (v) VALUES (s.v)"
    )
    got = rows(lake, "SELECT id, down, v, b FROM t")
    assert got == [(1, 100, "a", 5), (2, 90, "b", 7), (3, 70, "c", 11), (42, 80, "given", 9)]
    assert kernel_rows(location(lake, "T")) == got
    # No sequence of its own shows: the numbering is the column's.
    assert sequences(lake) == {}
    identity = (
        "SELECT column_name, column_default, is_identity, identity_start, identity_increment FROM information_schema.columns"
    )
    assert rows(lake, f"{identity} WHERE table_name = 'T' AND column_name IN ('DOWN', 'V')") == [
        ("DOWN", None, "YES", "100", "-10"),
        ("V", None, "NO", None, None),
    ]
    shown = {r.column_name: (r.default, r.autoincrement) for r in lake.sql("SHOW COLUMNS IN TABLE t").collect()}
    assert shown["ID"] == (None, "IDENTITY START 1 INCREMENT 1 ORDER")
    assert shown["V"] == (None, "")
    ddl = lake.sql("SELECT GET_DDL('TABLE', 't')").collect()[0][0]
    assert "ID NUMBER(38,0) AUTOINCREMENT START 1 INCREMENT 1 ORDER" in ddl
    assert "DOWN BIGINT AUTOINCREMENT START 100 INCREMENT -10 ORDER" in ddl
    # The DDL makes the same table again.
    lake.sql(ddl.replace("TABLE T (", "TABLE T2 (", 1))
    assert defaults(lake, "t2") == defaults(lake, "t")


def test_a_clone_numbers_on_from_its_source_and_no_value_comes_twice(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT AUTOINCREMENT, v STRING)")
    lake.sql("INSERT INTO t (v) VALUES ('a'), ('b')")
    lake.sql("CREATE TABLE c CLONE t")
    lake.sql("INSERT INTO t (v) VALUES ('t')")
    lake.sql("INSERT INTO c (v) VALUES ('c')")
    assert rows(lake, "SELECT * FROM t") == [(1, "a"), (2, "b"), (3, "t")]
    assert rows(lake, "SELECT * FROM c") == [(1, "a"), (2, "b"), (3, "c")]
    lake.sql("CREATE TABLE later CLONE t")
    lake.sql("INSERT INTO later (v) VALUES ('l')")
    assert rows(lake, "SELECT * FROM later WHERE v = 'l'") == [(4, "l")]


def test_autoincrement_is_refused_where_it_cannot_number(lake: lakeclone.Lake) -> None:
    refused = {
        "CREATE TABLE t (id STRING AUTOINCREMENT)": "must be a number without a fraction",
        "CREATE TABLE t (id INT AUTOINCREMENT START 1 INCREMENT 0)": "cannot have an increment of 0",
        "CREATE TABLE t (id INT DEFAULT 1 AUTOINCREMENT)": "may have a DEFAULT or be AUTOINCREMENT, not both",
        "CREATE TABLE t (id BIGINT GENERATED ALWAYS AS IDENTITY)": "GENERATED ALWAYS AS IDENTITY is not supported",
    }
    for statement, message in refused.items():
        with pytest.raises(lakeclone.LakecloneError, match=message):
            lake.sql(statement)
    assert lake.sql("SHOW TABLES").collect() == []
    lake.sql("CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY (START WITH 10 INCREMENT BY 5), v STRING)")
    lake.sql("INSERT INTO t (v) VALUES ('a'), ('b')")
    assert rows(lake, "SELECT * FROM t") == [(10, "a"), (15, "b")]
