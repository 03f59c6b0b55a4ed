"""INSERT, UPDATE, DELETE and MERGE: results, one Delta commit each, copy-on-write, row ids, atomicity."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal

import pytest
from delta_reader import commit_actions, deltars_rows, kernel_rows, latest_version, live_adds, protocol, spark_rows
from lake_helpers import location, parameters, rows
from warehouse_templates import Build

import lakeclone

pytestmark = pytest.mark.spark


def result(lake: lakeclone.Lake, sql: str) -> dict[str, int]:
    return lake.sql(sql).collect()[0].asDict()


def version(lake: lakeclone.Lake, name: str) -> int:
    return latest_version(location(lake, name))


def ids_by_file(lake: lakeclone.Lake, name: str, key: str = "ID") -> dict[str, set]:
    """Each live data file and the key values of its live rows, read by delta-spark itself."""
    found: dict[str, set] = {}
    frame = lake.spark.read.format("delta").load(location(lake, name))
    for row in frame.select(key, "_metadata.file_path").collect():
        found.setdefault(row.file_path.removeprefix("file:"), set()).add(row[key])
    return found


def row_ids(lake: lakeclone.Lake, name: str, key: str = "ID") -> dict:
    """key value -> Delta's row id (row tracking), read by delta-spark itself."""
    frame = lake.spark.read.format("delta").load(location(lake, name))
    found: dict = {}
    for row in frame.select(key, "_metadata.row_id").collect():
        assert row[key] not in found, f"key {row[key]} appears twice"
        found[row[key]] = row.row_id
    return found


def history(lake: lakeclone.Lake, name: str) -> list:
    return list(reversed(lake.sql(f"DESCRIBE HISTORY {name}").collect()))


def unchanged_after(lake: lakeclone.Lake, name: str, statement: str, match: str) -> None:
    """Run a statement that must fail, and check the table is exactly as it was."""
    before_version = version(lake, name)
    before_rows = rows(lake, f"SELECT * FROM {name}")
    with pytest.raises(lakeclone.LakecloneError, match=match):
        lake.sql(statement)
    assert version(lake, name) == before_version
    assert rows(lake, f"SELECT * FROM {name}") == before_rows


def _people(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE people (id INT NOT NULL, name STRING, age INT)")
    lake.sql("INSERT INTO people VALUES (1, 'ann', 30), (2, 'bob', 40), (3, 'cy', 50)")


@pytest.fixture
def people(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    return copy_of(_people)


# INSERT --------------------------------------------------------------------------------------------


def test_insert_values_reports_the_rows_inserted(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, s STRING)")
    assert result(lake, "INSERT INTO t VALUES (1, 'a'), (2, NULL)") == {"number of rows inserted": 2}
    assert rows(lake, "SELECT * FROM t") == [(1, "a"), (2, None)]


def test_insert_select_from_other_tables(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("CREATE TABLE elders (id INT, name STRING)")
    assert result(lake, "INSERT INTO elders SELECT id, UPPER(name) FROM people WHERE age >= 40") == {"number of rows inserted": 2}
    # A table may read itself while it is written: the source is the version before the insert.
    assert result(lake, "INSERT INTO elders SELECT id + 10, name FROM elders") == {"number of rows inserted": 2}
    assert rows(lake, "SELECT * FROM elders") == [(2, "BOB"), (3, "CY"), (12, "BOB"), (13, "CY")]


def test_insert_select_takes_columns_by_position(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b INT)")
    lake.sql("INSERT INTO t SELECT 1, 1")
    lake.sql("INSERT INTO t SELECT 2 AS x, 3 AS x")
    assert rows(lake, "SELECT * FROM t") == [(1, 1), (2, 3)]


def test_insert_with_a_column_list_fills_the_rest_with_null(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT, b STRING, c DOUBLE)")
    lake.sql("INSERT INTO t (c, a) VALUES (1.5, 1)")
    assert rows(lake, "SELECT * FROM t") == [(1, None, 1.5)]
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier 'NOPE'"):
        lake.sql("INSERT INTO t (a, nope) VALUES (1, 2)")
    with pytest.raises(lakeclone.LakecloneError, match="Insert value list does not match column list expecting 3 but got 2"):
        lake.sql("INSERT INTO t VALUES (1, 'x')")


def test_insert_overwrite_replaces_every_row(people: lakeclone.Lake) -> None:
    lake = people
    files_before = len(live_adds(location(lake, "PEOPLE")))
    assert result(lake, "INSERT OVERWRITE INTO people VALUES (9, 'zed', 1)") == {"number of rows inserted": 1}
    assert rows(lake, "SELECT * FROM people") == [(9, "zed", 1)]
    last = history(lake, "people")[-1]
    assert (last.operation, last.operationParameters["mode"]) == ("WRITE", "Overwrite")
    removed = [a for a in commit_actions(location(lake, "PEOPLE"), last.version) if "remove" in a]
    assert len(removed) == files_before
    # The overwritten rows are still there to time travel to.
    assert rows(lake, f"SELECT id FROM people AT(VERSION => {last.version - 1})") == [(1,), (2,), (3,)]


def test_insert_casts_values_to_column_types(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (i INT, d DOUBLE, s STRING, day DATE, ts TIMESTAMP, n DECIMAL(6, 2), b BOOLEAN)")
    lake.sql("INSERT INTO t VALUES ('42', 1, 7, '2024-02-29', '2024-02-29 12:00:00', '3.14159', 'true')")
    assert rows(lake, "SELECT * FROM t") == [
        (42, 1.0, "7", dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 12), Decimal("3.14"), True)
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO t VALUES ('forty-two', '2024-01-01')",
        "INSERT INTO t VALUES (1, 'not a date')",
        "INSERT INTO t SELECT 1, '2024-01-01' UNION ALL SELECT 'x', '2024-01-01'",
    ],
)
def test_bad_cast_fails_and_changes_nothing(lake: lakeclone.Lake, statement: str) -> None:
    lake.sql("CREATE TABLE t (i INT, day DATE); INSERT INTO t VALUES (1, '2024-01-01')")
    unchanged_after(lake, "T", statement, "(Numeric value|Date) .* is not recognized")


def test_not_null_violation_in_insert_changes_nothing(people: lakeclone.Lake) -> None:
    message = "NULL result in a non-nullable column 'ID'"
    unchanged_after(people, "PEOPLE", "INSERT INTO people VALUES (4, 'dee', 1), (NULL, 'eve', 2)", message)
    unchanged_after(people, "PEOPLE", "INSERT INTO people (name) VALUES ('no id')", message)


def test_not_null_columns_are_checked_row_by_row_whatever_their_names(lake: lakeclone.Lake) -> None:
    lake.sql("""CREATE TABLE q ("it's" INT NOT NULL, "back\\slash" STRING NOT NULL, v STRING)""")
    unchanged_after(lake, "Q", "INSERT INTO q VALUES (NULL, 'a', 'b')", "NULL result in a non-nullable column 'it's'")
    unchanged_after(lake, "Q", """INSERT INTO q ("it's") VALUES (1)""", "non-nullable column 'back\\\\slash'")
    # No row, no NULL: naming only some columns is not an error in itself.
    assert result(lake, "INSERT INTO q (v) SELECT 'none' WHERE FALSE") == {"number of rows inserted": 0}
    assert rows(lake, "SELECT * FROM q") == []


def test_struct_columns_take_inserts_and_updates_whatever_their_field_names(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s AS SELECT named_struct('aB', 1, 'c`d', 'x') AS st, array(named_struct('k', 1.5)) AS arr")
    lake.sql("INSERT INTO s SELECT * FROM s")
    lake.sql("UPDATE s SET st = named_struct('aB', 5, 'c`d', 'y')")
    assert {(r.ST["aB"], r.ST["c`d"], r.ARR[0]["k"]) for r in lake.sql("SELECT * FROM s").collect()} == {(5, "y", Decimal("1.5"))}
    assert len(spark_rows(lake.spark, location(lake, "S"))) == 2


def test_not_null_violation_in_update_changes_nothing(people: lakeclone.Lake) -> None:
    unchanged_after(people, "PEOPLE", "UPDATE people SET id = NULL WHERE id = 2", "NULL result in a non-nullable column 'ID'")


# UPDATE / DELETE -----------------------------------------------------------------------------------


def test_a_target_column_is_named_as_a_query_names_it(lake: lakeclone.Lake) -> None:
    lake.sql('CREATE TABLE t ("lower" INT, upper_case INT); INSERT INTO t VALUES (1, 2)')
    lake.sql('UPDATE t SET "lower" = 10, Upper_Case = 20')  # quoted exactly as created; unquoted in any case
    lake.sql('INSERT INTO t ("lower", UPPER_CASE) VALUES (3, 4)')
    assert rows(lake, 'SELECT "lower", upper_case FROM t ORDER BY 1') == [(3, 4), (10, 20)]
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier 'LOWER'"):
        lake.sql('UPDATE t SET "LOWER" = 0')
    assert rows(lake, 'SELECT "lower" FROM t ORDER BY 1') == [(3,), (10,)]


def test_update_with_where(people: lakeclone.Lake) -> None:
    lake = people
    assert result(lake, "UPDATE people SET age = age + 1, name = UPPER(name) WHERE age >= 40") == {
        "number of rows updated": 2,
        "number of multi-joined rows updated": 0,
    }
    assert rows(lake, "SELECT * FROM people") == [(1, "ann", 30), (2, "BOB", 41), (3, "CY", 51)]
    # Assignments see the row before the update, not each other's results.
    lake.sql("UPDATE people SET age = id, id = age WHERE id = 1")
    assert rows(lake, "SELECT id, age FROM people WHERE name = 'ann'") == [(30, 1)]


def test_update_without_where_and_with_no_match(people: lakeclone.Lake) -> None:
    lake = people
    assert result(lake, "UPDATE people SET age = 0 WHERE name = 'nobody'")["number of rows updated"] == 0
    assert result(lake, "UPDATE people SET age = 0")["number of rows updated"] == 3
    assert rows(lake, "SELECT DISTINCT age FROM people") == [(0,)]
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier"):
        lake.sql("UPDATE people SET nope = 1")


def test_update_where_null_condition_updates_nothing(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("INSERT INTO people VALUES (4, NULL, NULL)")
    assert result(lake, "UPDATE people SET name = 'x' WHERE age > 35 AND name <> 'bob'")["number of rows updated"] == 1
    assert rows(lake, "SELECT id, name FROM people WHERE name = 'x'") == [(3, "x")]


def test_delete_with_where_and_everything(people: lakeclone.Lake) -> None:
    lake = people
    assert result(lake, "DELETE FROM people WHERE age > 35") == {"number of rows deleted": 2}
    assert rows(lake, "SELECT id FROM people") == [(1,)]
    assert result(lake, "DELETE FROM people WHERE id = 99") == {"number of rows deleted": 0}
    assert result(lake, "DELETE FROM people") == {"number of rows deleted": 1}
    assert rows(lake, "SELECT * FROM people") == []
    assert live_adds(location(lake, "PEOPLE")) == {}


def test_update_from_another_table(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("CREATE TABLE renames (id INT, name STRING); INSERT INTO renames VALUES (1, 'ANN'), (3, 'CY'), (9, 'NOBODY')")
    assert result(lake, "UPDATE people p SET name = r.name FROM renames r WHERE p.id = r.id AND r.id < 3") == {
        "number of rows updated": 1,
        "number of multi-joined rows updated": 0,
    }
    assert rows(lake, "SELECT id, name FROM people") == [(1, "ANN"), (2, "bob"), (3, "cy")]
    # A subquery source; the table's own name qualifies its columns.
    lake.sql("UPDATE people SET age = s.age FROM (SELECT 2 AS id, 99 AS age) s WHERE people.id = s.id")
    assert rows(lake, "SELECT id, age FROM people") == [(1, 30), (2, 99), (3, 50)]
    (commit,) = [c for c in history(lake, "PEOPLE") if c.version == version(lake, "PEOPLE")]
    assert commit.operation == "MERGE"


def test_update_from_with_two_matches_for_a_row_fails_and_changes_nothing(people: lakeclone.Lake) -> None:
    # Which source row would win is undefined: Snowflake's ERROR_ON_NONDETERMINISTIC_UPDATE behaviour.
    unchanged_after(
        people,
        "PEOPLE",
        "UPDATE people SET age = s.age FROM (SELECT 1 AS id, 1 AS age UNION ALL SELECT 1, 2) s WHERE people.id = s.id",
        "Duplicate row detected during DML action",
    )
    unchanged_after(
        people,
        "PEOPLE",
        "UPDATE people SET age = 1 FROM people a, people b WHERE people.id = a.id",
        "join several in a subquery",
    )


def test_delete_using_another_table(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("CREATE TABLE leavers (id INT); INSERT INTO leavers VALUES (1), (3), (3), (7)")
    # A row matched twice is deleted once.
    assert result(lake, "DELETE FROM people p USING leavers l WHERE p.id = l.id") == {"number of rows deleted": 2}
    assert rows(lake, "SELECT id FROM people") == [(2,)]
    assert kernel_rows(location(lake, "PEOPLE")) == [(2, "bob", 40)]


def test_dml_target_cannot_time_travel(people: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError, match="Time travel is not allowed on the target"):
        people.sql("DELETE FROM people AT(VERSION => 0) WHERE id = 1")


# MERGE --------------------------------------------------------------------------------------------

MERGE_SOURCE = (
    "(SELECT * FROM VALUES (1, 'ANN', 31, FALSE), (2, 'BOB', 41, TRUE), (3, 'CY', 99, FALSE), "
    "(4, 'DEE', 20, FALSE), (5, 'EVE', 10, FALSE) AS v(id, name, age, gone))"
)


def test_merge_matched_update_delete_and_not_matched_insert(people: lakeclone.Lake) -> None:
    lake = people
    counts = result(
        lake,
        f"MERGE INTO people p USING {MERGE_SOURCE} s ON p.id = s.id "
        "WHEN MATCHED AND s.gone THEN DELETE "
        "WHEN MATCHED AND s.age < 90 THEN UPDATE SET p.age = s.age, p.name = s.name "
        "WHEN NOT MATCHED AND s.age >= 15 THEN INSERT (id, name, age) VALUES (s.id, s.name, s.age)",
    )
    assert counts == {"number of rows inserted": 1, "number of rows updated": 1, "number of rows deleted": 1}
    # 1 updated; 2 deleted; 3 matched no clause (age 99) and is kept; 4 inserted; 5 fails the insert condition.
    assert rows(lake, "SELECT * FROM people") == [(1, "ANN", 31), (3, "cy", 50), (4, "DEE", 20)]
    last = history(lake, "people")[-1]
    assert last.operation == "MERGE"
    metrics = last.operationMetrics
    assert (metrics["numTargetRowsInserted"], metrics["numTargetRowsUpdated"], metrics["numTargetRowsDeleted"]) == (
        "1",
        "1",
        "1",
    )


def test_merge_clauses_apply_in_order(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql(
        "MERGE INTO people p USING (SELECT id FROM people) s ON p.id = s.id "
        "WHEN MATCHED AND p.id = 1 THEN UPDATE SET name = 'first' "
        "WHEN MATCHED AND p.id <= 2 THEN UPDATE SET name = 'second' "
        "WHEN MATCHED THEN DELETE"
    )
    assert rows(lake, "SELECT id, name FROM people") == [(1, "first"), (2, "second")]


def test_merge_not_matched_clauses_apply_in_order(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, tag STRING)")
    lake.sql(
        "MERGE INTO t USING (SELECT * FROM VALUES (1), (2), (3) AS v(id)) s ON t.id = s.id "
        "WHEN NOT MATCHED AND s.id = 1 THEN INSERT VALUES (s.id, 'one') "
        "WHEN NOT MATCHED AND s.id <= 2 THEN INSERT (id) VALUES (s.id) "
        "WHEN NOT MATCHED THEN INSERT (tag, id) VALUES ('other', s.id * 10)"
    )
    assert rows(lake, "SELECT * FROM t") == [(1, "one"), (2, None), (30, "other")]


def test_merge_with_a_table_source(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("CREATE TABLE changes (id INT, age INT); INSERT INTO changes VALUES (1, 1), (7, 7)")
    assert result(
        lake,
        "MERGE INTO people USING changes ON people.id = changes.id "
        "WHEN MATCHED THEN UPDATE SET age = changes.age "
        "WHEN NOT MATCHED THEN INSERT (id, age) VALUES (changes.id, changes.age)",
    ) == {"number of rows inserted": 1, "number of rows updated": 1, "number of rows deleted": 0}
    assert rows(lake, "SELECT id, age FROM people") == [(1, 1), (2, 40), (3, 50), (7, 7)]


def test_merge_with_two_source_rows_for_one_target_row_fails(people: lakeclone.Lake) -> None:
    unchanged_after(
        people,
        "PEOPLE",
        "MERGE INTO people p USING (SELECT 1 AS id UNION ALL SELECT 1 UNION ALL SELECT 8) s ON p.id = s.id "
        "WHEN MATCHED THEN UPDATE SET age = 0 WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)",
        "Duplicate row detected during DML action",
    )


def test_merge_takes_a_second_source_row_that_meets_no_matched_clause(people: lakeclone.Lake) -> None:
    # Snowflake's rule: only source rows that would change the target row count; Delta alone refuses this one.
    source = "SELECT 1 AS id, 'new' AS op, 31 AS age UNION ALL SELECT 1, 'old', 30 UNION ALL SELECT 8, 'new', 8"
    assert result(
        people,
        f"MERGE INTO people p USING ({source}) s ON p.id = s.id "
        "WHEN MATCHED AND s.op = 'new' THEN UPDATE SET age = s.age "
        "WHEN NOT MATCHED AND s.op = 'new' THEN INSERT (id, age) VALUES (s.id, s.age)",
    ) == {"number of rows inserted": 1, "number of rows updated": 1, "number of rows deleted": 0}
    assert rows(people, "SELECT id, age FROM people") == [(1, 31), (2, 40), (3, 50), (8, 8)]


def test_merge_with_two_source_rows_acting_on_one_target_row_fails_under_snowflakes_rule_too(people: lakeclone.Lake) -> None:
    unchanged_after(
        people,
        "PEOPLE",
        "MERGE INTO people p USING (SELECT 1 AS id, 5 AS age UNION ALL SELECT 1, 6 UNION ALL SELECT 2, 0) s ON p.id = s.id "
        "WHEN MATCHED AND s.age > 0 THEN UPDATE SET age = s.age WHEN MATCHED AND s.age = 0 THEN DELETE",
        "Duplicate row detected during DML action",
    )


def test_not_null_violation_in_merge_changes_nothing(people: lakeclone.Lake) -> None:
    unchanged_after(
        people,
        "PEOPLE",
        "MERGE INTO people p USING (SELECT 1 AS id, NULL AS n UNION ALL SELECT 9, NULL) s ON p.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = 'ok' WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.n, 'x')",
        "NULL result in a non-nullable column 'ID'",
    )


def test_bad_cast_mid_update_changes_nothing(people: lakeclone.Lake) -> None:
    # Only one row's value fails to cast; the statement as a whole fails.
    unchanged_after(
        people,
        "PEOPLE",
        "UPDATE people SET age = CAST(CASE WHEN id = 3 THEN 'x' ELSE '1' END AS INT)",
        "Numeric value .x. is not recognized",
    )


# One commit per statement; copy-on-write ------------------------------------------------------------


def test_each_statement_is_exactly_one_commit(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("UPDATE people SET age = 31 WHERE id = 1")
    lake.sql("DELETE FROM people WHERE id = 2")
    lake.sql(
        "MERGE INTO people p USING (SELECT 3 AS id UNION ALL SELECT 4) s ON p.id = s.id "
        "WHEN MATCHED THEN UPDATE SET age = 0 WHEN NOT MATCHED THEN INSERT (id, age) VALUES (s.id, 4)"
    )
    commits = history(lake, "people")
    assert [(c.version, c.operation) for c in commits] == [
        (0, "CREATE TABLE"),
        (1, "WRITE"),
        (2, "UPDATE"),
        (3, "DELETE"),
        (4, "MERGE"),
    ]
    write, update, delete, merge = (c.operationMetrics for c in commits[1:])
    # Delta's own metrics, with Delta's names.
    assert write["numOutputRows"] == "3" and int(write["numFiles"]) >= 1
    assert update["numUpdatedRows"] == "1"
    assert delete["numDeletedRows"] == "1"
    assert (merge["numTargetRowsUpdated"], merge["numTargetRowsInserted"]) == ("1", "1")
    # The predicate as the user wrote it, not Delta's analysed form.
    assert commits[2].operationParameters["predicate"] == "ID = 1"
    assert commits[3].operationParameters["predicate"] == "ID = 2"
    assert rows(lake, "SELECT id, age FROM people") == [(1, 31), (3, 0), (4, 4)]
    # Each commit's metrics agree with what the Delta log holds.
    adds = [a for a in commit_actions(location(lake, "PEOPLE"), 1) if "add" in a]
    assert len(adds) == int(write["numFiles"])
    assert sum(json.loads(a["add"]["stats"])["numRecords"] for a in adds) == 3


def make_three_files(lake: lakeclone.Lake, options: str = "") -> lakeclone.Lake:
    """A table whose rows 1, 2 and 3 live in three different files, each holding other rows too."""
    lake.sql(f"CREATE TABLE t (id INT, v STRING){options}")
    for i in (1, 2, 3):
        values = ", ".join(f"({i * 100 + k}, 'w{i}')" for k in range(1, 10))
        lake.sql(f"INSERT INTO t VALUES ({i}, 'v{i}'), {values}")
    layout = ids_by_file(lake, "T")
    holding = {i: [p for p, ids in layout.items() if i in ids] for i in (1, 2, 3)}
    assert all(len(paths) == 1 for paths in holding.values())
    assert len({paths[0] for paths in holding.values()}) == 3
    return lake


@pytest.fixture
def three_files(lake: lakeclone.Lake) -> lakeclone.Lake:
    """``make_three_files`` as lakeclone creates a table: without deletion vectors."""
    return make_three_files(lake)


@pytest.fixture
def three_files_with_vectors(lake: lakeclone.Lake) -> lakeclone.Lake:
    """``make_three_files`` on a table created with ``ENABLE_DELETION_VECTORS = TRUE``."""
    return make_three_files(lake, " ENABLE_DELETION_VECTORS = TRUE")


@pytest.mark.parametrize(
    ("statement", "metric"),
    [
        ("UPDATE t SET v = 'changed' WHERE id = 2", "numDeletionVectorsAdded"),
        ("DELETE FROM t WHERE id = 2", "numDeletionVectorsAdded"),
        (
            "MERGE INTO t USING (SELECT 2 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'merged'",
            "numTargetDeletionVectorsAdded",
        ),
    ],
)
def test_dml_marks_affected_rows_with_a_deletion_vector(
    three_files_with_vectors: lakeclone.Lake, statement: str, metric: str
) -> None:
    lake = three_files_with_vectors
    folder = location(lake, "T")
    before = live_adds(folder)
    target, neighbours = next((p, ids - {2}) for p, ids in ids_by_file(lake, "T").items() if 2 in ids)
    assert neighbours
    lake.sql(statement)
    assert version(lake, "T") == latest_version(folder) and len(history(lake, "t")) == 5
    after = live_adds(folder)
    last = history(lake, "t")[-1]
    assert last.operationMetrics[metric] == "1"
    # No file is rewritten: the one holding row 2 gains a deletion vector, the others are untouched.
    assert set(before) <= set(after)
    assert after[target].get("deletionVector") and not before[target].get("deletionVector")
    assert all(after[p] == before[p] for p in before if p != target)
    # The rest of that file is still there.
    assert neighbours <= {i for ids in ids_by_file(lake, "T").values() for i in ids}
    assert kernel_rows(folder) == spark_rows(lake.spark, folder) == rows(lake, "SELECT * FROM t")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE t SET v = 'changed' WHERE id = 2",
        "DELETE FROM t WHERE id = 2",
        "MERGE INTO t USING (SELECT 2 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'merged'",
    ],
)
def test_dml_without_deletion_vectors_rewrites_only_the_file_it_changes(three_files: lakeclone.Lake, statement: str) -> None:
    lake = three_files
    folder = location(lake, "T")
    assert "deletionVectors" not in (protocol(folder).get("readerFeatures") or [])
    before = live_adds(folder)
    target = next(p for p, ids in ids_by_file(lake, "T").items() if 2 in ids)
    lake.sql(statement)
    after = live_adds(folder)
    # The file holding row 2 is replaced by a rewritten one; the other two are untouched.
    assert target not in after and len(set(after) - set(before)) == 1
    assert all(after[p] == before[p] for p in before if p != target)
    assert not any(add.get("deletionVector") for add in after.values())
    # Readers without deletion vectors (delta-rs, behind polars' and pandas' Delta access) read the table.
    expected = rows(lake, "SELECT * FROM t")
    assert deltars_rows(folder) == kernel_rows(folder) == spark_rows(lake.spark, folder) == expected


def test_deletion_vectors_are_turned_on_and_off_per_table(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t SELECT id FROM range(0, 20, 1, 1)")
    folder = location(lake, "T")
    lake.sql("ALTER TABLE t SET ENABLE_DELETION_VECTORS = TRUE")
    turned_on = latest_version(folder)
    assert turned_on == 2 and "deletionVectors" in protocol(folder)["readerFeatures"]
    lake.sql("ALTER TABLE t SET ENABLE_DELETION_VECTORS = TRUE")  # already on: no commit
    assert latest_version(folder) == turned_on
    assert parameters(lake, "t")["ENABLE_DELETION_VECTORS"] == ("true", "TABLE")
    lake.sql("DELETE FROM t WHERE id = 1")
    assert all(add.get("deletionVector") for add in live_adds(folder).values())

    # Off again: the next DELETE rewrites the file, and the table keeps the feature for the vectors in its history.
    lake.sql("ALTER TABLE t UNSET ENABLE_DELETION_VECTORS")
    assert parameters(lake, "t")["ENABLE_DELETION_VECTORS"] == ("false", "")
    lake.sql("DELETE FROM t WHERE id = 2")
    assert not any(add.get("deletionVector") for add in live_adds(folder).values())
    assert rows(lake, "SELECT * FROM t") == [(0,), *((i,) for i in range(3, 20))] == kernel_rows(folder)
    assert rows(lake, "SELECT * FROM t AT(VERSION => 3)") == [(0,), *((i,) for i in range(2, 20))]


def test_dml_that_matches_nothing_changes_no_file(three_files: lakeclone.Lake) -> None:
    lake = three_files
    folder = location(lake, "T")
    before = live_adds(folder)
    lake.sql("UPDATE t SET v = 'x' WHERE id = 999; DELETE FROM t WHERE id = 999")
    assert live_adds(folder) == before


# Row ids ------------------------------------------------------------------------------------------------


def test_row_ids_are_unique_and_survive_update_and_merge(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("ALTER TABLE people SET CHANGE_TRACKING = TRUE")  # row ids come with change tracking
    original = row_ids(lake, "PEOPLE")
    assert set(original) == {1, 2, 3}
    assert len(set(original.values())) == 3 and None not in original.values()
    lake.sql("UPDATE people SET age = 0 WHERE id IN (1, 2)")
    assert row_ids(lake, "PEOPLE") == original
    lake.sql(
        "MERGE INTO people p USING (SELECT 2 AS id UNION ALL SELECT 5) s ON p.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = 'merged' WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)"
    )
    lake.sql("INSERT INTO people VALUES (6, 'new', 1)")
    after = row_ids(lake, "PEOPLE")
    assert {k: after[k] for k in (1, 2, 3)} == original
    assert len(set(after.values())) == 5
    assert after[5] not in original.values() and after[6] not in original.values()
    lake.sql("DELETE FROM people WHERE id = 1")
    assert row_ids(lake, "PEOPLE") == {k: v for k, v in after.items() if k != 1}


def test_dml_tables_stay_genuine_delta(people: lakeclone.Lake) -> None:
    lake = people
    lake.sql("UPDATE people SET age = 0 WHERE id = 1; DELETE FROM people WHERE id = 2")
    lake.sql(
        "MERGE INTO people p USING (SELECT 3 AS id UNION ALL SELECT 4) s ON p.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = 'm' WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, 'n')"
    )
    assert (
        kernel_rows(location(lake, "PEOPLE"))
        == rows(lake, "SELECT * FROM people")
        == [
            (1, "ann", 0),
            (3, "m", 50),
            (4, "n", None),
        ]
    )
