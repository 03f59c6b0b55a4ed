"""CREATE TABLE in its forms, external tables, DESCRIBE, and what lakeclone writes being genuine Delta."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from pathlib import Path

import pytest
from delta_reader import kernel_read, kernel_rows, live_adds, live_files, local_path, table_configuration
from lake_helpers import catalog_entry, location, rows, session_of

import lakeclone

pytestmark = pytest.mark.spark

ALL_TYPES = "CREATE TABLE t (id INT NOT NULL, s STRING, d DOUBLE, b BOOLEAN, day DATE, ts TIMESTAMP, n DECIMAL(10, 2))"
ALL_TYPES_ROWS = (
    "INSERT INTO t VALUES "
    "(1, 'one', 1.5, TRUE, '2024-01-02', '2024-01-02 03:04:05', 12.34), "
    "(2, NULL, NULL, NULL, NULL, NULL, NULL), "
    "(3, 'three', -0.25, FALSE, '1999-12-31', '1999-12-31 23:59:59.123456', -0.01)"
)


# CREATE TABLE ----------------------------------------------------------------------------------


def test_create_table_with_every_column_type(lake: lakeclone.Lake) -> None:
    status = lake.sql(ALL_TYPES).collect()
    assert status[0].status == "Table T successfully created."
    described = [(r.name, r.type, r["null?"]) for r in lake.sql("DESCRIBE TABLE t").collect()]
    # Snowflake's integers are NUMBER(38, 0): lakeclone stores every integer type as a 64-bit integer.
    assert described == [
        ("ID", "NUMBER(38,0)", "N"),
        ("S", "VARCHAR(16777216)", "Y"),
        ("D", "FLOAT", "Y"),
        ("B", "BOOLEAN", "Y"),
        ("DAY", "DATE", "Y"),
        ("TS", "TIMESTAMP_LTZ(9)", "Y"),
        ("N", "NUMBER(10,2)", "Y"),
    ]
    lake.sql(ALL_TYPES_ROWS)
    assert rows(lake, "SELECT * FROM t") == [
        (1, "one", 1.5, True, dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), Decimal("12.34")),
        (2, None, None, None, None, None, None),
        (3, "three", -0.25, False, dt.date(1999, 12, 31), dt.datetime(1999, 12, 31, 23, 59, 59, 123456), Decimal("-0.01")),
    ]


def test_describe_table_shows_column_comments(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT COMMENT 'the key', s STRING)")
    comments = {r.name: r.comment for r in lake.sql("DESCRIBE TABLE t").collect()}
    assert comments == {"ID": "the key", "S": None}


def test_quoted_identifiers_keep_their_case(lake: lakeclone.Lake) -> None:
    lake.sql('CREATE TABLE "MixedCase" ("lower" INT, UPPERED INT)')
    lake.sql('INSERT INTO "MixedCase" VALUES (1, 2)')
    frame = lake.sql('SELECT * FROM "MixedCase"')
    assert frame.columns == ["lower", "UPPERED"]
    assert [tuple(r) for r in frame.collect()] == [(1, 2)]
    with pytest.raises(lakeclone.LakecloneError, match=r"Object 'LAKE\.PUBLIC\.MIXEDCASE' does not exist"):
        lake.sql("SELECT * FROM MixedCase")


def test_create_table_with_parameters(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT) COMMENT = 'orders' DATA_RETENTION_TIME_IN_DAYS = 3 CHANGE_TRACKING = TRUE")
    settings = {r.key: (r.value, r.level) for r in lake.sql("SHOW PARAMETERS IN TABLE t").collect()}
    assert settings["DATA_RETENTION_TIME_IN_DAYS"] == ("3", "TABLE")
    assert settings["COMMENT"] == ("orders", "TABLE")
    assert settings["CHANGE_TRACKING"] == ("true", "TABLE")
    (shown,) = lake.sql("SHOW TABLES").collect()
    assert (shown.comment, shown.retention_time, shown.change_tracking) == ("orders", 3, "ON")
    assert lake.sql("DESCRIBE DETAIL t").collect()[0].description == "orders"


def test_create_table_with_an_invalid_parameter_creates_nothing(lake: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError, match="invalid value \\[99999\\] for parameter 'DATA_RETENTION_TIME_IN_DAYS'"):
        lake.sql("CREATE TABLE t (id INT) DATA_RETENTION_TIME_IN_DAYS = 99999")
    with pytest.raises(lakeclone.LakecloneError, match="invalid property 'NO_SUCH_THING'"):
        lake.sql("CREATE TABLE t (id INT) NO_SUCH_THING = 1")
    assert lake.sql("SHOW TABLES").collect() == []
    assert not (lake.warehouse / "tables").exists() or os.listdir(lake.warehouse / "tables") == []


def test_create_existing_table_fails_unless_if_not_exists(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    with pytest.raises(lakeclone.LakecloneError) as error:
        lake.sql("CREATE TABLE t (other STRING)")
    assert str(error.value) == "SQL compilation error:\nObject 'T' already exists."
    status = lake.sql("CREATE TABLE IF NOT EXISTS t (other STRING)").collect()
    assert status[0].status == "T already exists, statement succeeded."
    assert lake.sql("SELECT * FROM t").columns == ["ID"]
    assert rows(lake, "SELECT * FROM t") == [(1,)]


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("CREATE TABLE t", "CREATE TABLE needs a column list"),
        ("CREATE TABLE t (a INT, A STRING)", "duplicate column name"),
        ("CREATE TABLE t (a INT) LOCATION = '/tmp/x'", "LOCATION is only allowed with CREATE EXTERNAL TABLE."),
        ("CREATE EXTERNAL TABLE t (a INT)", "An external table needs a LOCATION."),
        ("CREATE TABLE LAKE.NOPE.t (a INT)", "Schema 'LAKE.NOPE' does not exist or not authorized."),
        ("CREATE TABLE NOPE.PUBLIC.t (a INT)", "Database 'NOPE' does not exist or not authorized."),
    ],
)
def test_invalid_create_table_is_rejected_and_leaves_nothing(lake: lakeclone.Lake, statement: str, message: str) -> None:
    with pytest.raises(lakeclone.LakecloneError, match=message.replace(".", "\\.").replace("(", "\\(")):
        lake.sql(statement)
    tables = lake.warehouse / "tables"
    assert not tables.exists() or os.listdir(tables) == []
    assert catalog_entry(lake, "T") is None


# CTAS ---------------------------------------------------------------------------------------------


def test_create_table_as_select(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE src (id INT, s STRING); INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    status = lake.sql("CREATE TABLE c AS SELECT id * 10 AS k, UPPER(s) AS u FROM src WHERE id > 1").collect()
    assert status[0].status == "Table C successfully created."
    assert [(r.name, r.type) for r in lake.sql("DESCRIBE TABLE c").collect()] == [
        ("K", "NUMBER(38,0)"),
        ("U", "VARCHAR(16777216)"),
    ]
    assert rows(lake, "SELECT * FROM c") == [(20, "B"), (30, "C")]
    (commit,) = lake.sql("DESCRIBE HISTORY c").collect()
    assert commit.version == 0
    assert commit.operation == "CREATE TABLE AS SELECT"
    assert commit.operationMetrics["numOutputRows"] == "2"
    assert commit.operationMetrics["numFiles"] == str(len(live_files(location(lake, "C"))))  # Delta's CTAS metric


def test_failed_create_table_as_select_leaves_nothing(lake: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError):
        lake.sql("CREATE TABLE c AS SELECT CAST('not a number' AS INT) AS k")
    assert catalog_entry(lake, "C") is None
    tables = lake.warehouse / "tables"
    assert not tables.exists() or os.listdir(tables) == []


# CREATE OR REPLACE -----------------------------------------------------------------------------


def test_create_or_replace_makes_a_new_table(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    old = catalog_entry(lake, "T")
    lake.sql("CREATE OR REPLACE TABLE t (id INT, s STRING)")
    new = catalog_entry(lake, "T")
    assert new.id != old.id
    assert new.location != old.location
    assert lake.sql("SELECT * FROM t").columns == ["ID", "S"]
    assert rows(lake, "SELECT * FROM t") == []
    (commit,) = lake.sql("DESCRIBE HISTORY t").collect()
    assert commit.operation == "CREATE TABLE"  # a new table, in a folder of its own: version 0 of a new log
    # The replaced table is dropped, not deleted: its files stay for UNDROP.
    assert (local_path(old.location) / "_delta_log").is_dir()


def test_replaced_table_comes_back_with_undrop_once_its_name_is_free(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (v STRING); INSERT INTO t VALUES ('old')")
    old_id = catalog_entry(lake, "T").id
    lake.sql("CREATE OR REPLACE TABLE t (v STRING); INSERT INTO t VALUES ('new')")
    new_id = catalog_entry(lake, "T").id
    with pytest.raises(lakeclone.LakecloneError, match=r"Object 'T' already exists\."):
        lake.sql("UNDROP TABLE t")
    # Renaming the new table frees the name: UNDROP brings back the replaced one.
    lake.sql("ALTER TABLE t RENAME TO t_new")
    lake.sql("UNDROP TABLE t")
    assert catalog_entry(lake, "T").id == old_id
    assert rows(lake, "SELECT * FROM t") == [("old",)]
    assert rows(lake, "SELECT * FROM t_new") == [("new",)]
    assert catalog_entry(lake, "T_NEW").id == new_id


def test_undrop_after_replace_and_drop_restores_the_most_recently_dropped(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (v STRING); INSERT INTO t VALUES ('old')")
    old_id = catalog_entry(lake, "T").id
    lake.sql("CREATE OR REPLACE TABLE t (v STRING); INSERT INTO t VALUES ('new')")
    new_id = catalog_entry(lake, "T").id
    lake.sql("DROP TABLE t")
    lake.sql("UNDROP TABLE t")
    assert catalog_entry(lake, "T").id == new_id
    assert rows(lake, "SELECT * FROM t") == [("new",)]
    lake.sql("ALTER TABLE t RENAME TO t_new")
    lake.sql("UNDROP TABLE t")
    assert catalog_entry(lake, "T").id == old_id


def test_failed_create_or_replace_keeps_the_old_table(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    old = catalog_entry(lake, "T")
    with pytest.raises(lakeclone.LakecloneError):
        lake.sql("CREATE OR REPLACE TABLE t AS SELECT CAST('x' AS INT) AS id")
    assert catalog_entry(lake, "T").id == old.id
    assert rows(lake, "SELECT * FROM t") == [(1,)]
    assert sorted(os.listdir(lake.warehouse / "tables")) == [old.id]


# External tables --------------------------------------------------------------------------------


@pytest.fixture
def scratch_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in tmp_path, so that a relative path the engine makes cannot land in the repository."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_external_table_lives_at_its_location(lake: lakeclone.Lake, scratch_cwd: Path) -> None:
    folder = scratch_cwd / "ext" / "orders"
    lake.sql(f"CREATE EXTERNAL TABLE e (id INT) LOCATION = '{folder}'")
    lake.sql("INSERT INTO e VALUES (1), (2)")
    assert (folder / "_delta_log" / "00000000000000000001.json").is_file()
    (shown,) = lake.sql("SHOW TABLES").collect()
    assert (shown.is_external, shown.location) == ("Y", f"file:{folder}")
    detail = lake.sql("DESCRIBE DETAIL e").collect()[0]
    assert (detail.kind, local_path(detail.location)) == ("EXTERNAL", folder)
    assert kernel_rows(str(folder)) == [(1,), (2,)]
    # Nothing was made anywhere else (the quoted path once became a folder named ' in the cwd).
    assert sorted(os.listdir(scratch_cwd)) == ["ext", "warehouse"]


def test_external_table_adopts_an_existing_delta_table(lake: lakeclone.Lake, scratch_cwd: Path) -> None:
    folder = scratch_cwd / "foreign"
    # Another writer's table: plain delta-spark, no row tracking or deletion vectors.
    lake.spark.createDataFrame([(1, "a"), (2, "b")], "ID BIGINT, S STRING").write.format("delta").save(str(folder))
    lake.sql(f"CREATE EXTERNAL TABLE e LOCATION = '{folder}'")
    assert rows(lake, "SELECT * FROM e") == [(1, "a"), (2, "b")]
    lake.sql("INSERT INTO e VALUES (3, 'c')")
    lake.sql("UPDATE e SET s = 'B' WHERE id = 2")
    expected = [(1, "a"), (2, "B"), (3, "c")]
    assert rows(lake, "SELECT * FROM e") == expected
    assert kernel_rows(str(folder)) == expected


def test_external_table_with_columns_at_a_delta_location_is_refused(lake: lakeclone.Lake, scratch_cwd: Path) -> None:
    folder = scratch_cwd / "ext"
    lake.spark.createDataFrame([(1,)], "ID INT").write.format("delta").save(str(folder))
    with pytest.raises(lakeclone.LakecloneError, match="already holds a Delta table"):
        lake.sql(f"CREATE EXTERNAL TABLE e2 (other STRING) LOCATION = '{folder}'")
    assert lake.sql("SHOW TABLES").collect() == []
    assert kernel_rows(str(folder)) == [(1,)]


def test_drop_external_table_keeps_its_files(lake: lakeclone.Lake, scratch_cwd: Path) -> None:
    folder = scratch_cwd / "ext"
    lake.sql(f"CREATE EXTERNAL TABLE e (id INT) LOCATION = '{folder}'")
    lake.sql("INSERT INTO e VALUES (7)")
    files = live_files(str(folder))
    assert files
    lake.sql("DROP TABLE e")
    with pytest.raises(lakeclone.LakecloneError, match="does not exist"):
        lake.sql("SELECT * FROM e")
    assert all(os.path.exists(f) for f in files)
    assert kernel_rows(str(folder)) == [(7,)]
    # The folder stays e's while e can be UNDROPped: two tables never share a folder.
    with pytest.raises(lakeclone.LakecloneError, match=r"overlaps the folder of table LAKE\.PUBLIC\.E"):
        lake.sql(f"CREATE EXTERNAL TABLE again LOCATION = '{folder}'")
    lake.sql("UNDROP TABLE e")
    assert rows(lake, "SELECT * FROM e") == [(7,)]


def test_drop_managed_table_keeps_files_until_purge(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2)")
    entry = catalog_entry(lake, "T")
    files = live_files(entry.location)
    assert files
    status = lake.sql("DROP TABLE t").collect()
    assert status[0].status == "T successfully dropped."
    assert catalog_entry(lake, "T") is None
    assert all(os.path.exists(f) for f in files)
    assert (local_path(entry.location) / "_delta_log").is_dir()
    lake.sql("UNDROP TABLE t")
    assert rows(lake, "SELECT * FROM t") == [(1,), (2,)]


# DESCRIBE DETAIL and genuine Delta -------------------------------------------------------------


def test_describe_detail(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    created_before = clock.peek()
    lake.sql("CREATE TABLE t (id INT, s STRING)")
    lake.sql("INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (2, 'b')")
    detail = lake.sql("DESCRIBE DETAIL t").collect()[0]
    where = location(lake, "T")
    adds = live_adds(where)
    configuration = table_configuration(where)
    assert detail.format == "delta"
    assert detail.name == "LAKE.PUBLIC.T"
    assert detail.kind == "MANAGED"
    assert local_path(detail.location).resolve() == Path(where).resolve()
    assert Path(where).parent == lake.warehouse / "tables"
    assert detail.numFiles == len(adds) >= 2
    assert detail.sizeInBytes == sum(a["size"] for a in adds.values()) > 0
    assert detail.properties == configuration
    # Delta keeps what lakeclone promises: every version. Row ids only once change
    # tracking starts, deletion vectors only when asked for (each costs small commits).
    assert "delta.enableDeletionVectors" not in configuration and "deletionVectors" not in detail.tableFeatures
    assert "delta.enableRowTracking" not in configuration and "rowTracking" not in detail.tableFeatures
    assert configuration["delta.enableExpiredLogCleanup"] == "false"
    assert detail.partitionColumns == []
    assert detail.minReaderVersion >= 1 and detail.minWriterVersion >= 2
    assert detail.createdAt.replace(tzinfo=dt.timezone.utc) >= created_before
    assert detail.lastModified > detail.createdAt


def test_every_table_is_genuine_delta_read_by_the_kernel(lake: lakeclone.Lake) -> None:
    lake.sql(ALL_TYPES)
    lake.sql(ALL_TYPES_ROWS)
    lake.sql("UPDATE t SET s = 'uno' WHERE id = 1; DELETE FROM t WHERE id = 2")
    lake.sql("CREATE TABLE c AS SELECT id, s, ts FROM t")
    for name in ("T", "C"):
        expected = rows(lake, f"SELECT * FROM {name}")
        assert expected
        assert kernel_rows(location(lake, name)) == expected


def test_row_ids_come_from_deltas_row_tracking_and_stay_hidden(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT) CHANGE_TRACKING = TRUE; INSERT INTO t VALUES (1), (2)")
    assert lake.sql("SELECT * FROM t").columns == ["ID"]
    where = location(lake, "T")
    assert kernel_read(where).column_names == ["ID"]
    # Delta's own row ids, readable by any engine that knows row tracking.
    ids = {r.ID: r.row_id for r in lake.spark.read.format("delta").load(where).select("ID", "_metadata.row_id").collect()}
    assert sorted(ids) == [1, 2] and len(set(ids.values())) == 2
    assert all("baseRowId" in a for a in live_adds(where).values())
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier"):
        lake.sql("SELECT row_id FROM t").collect()

    # An UPDATE rewrites the row: Delta then stores its id in the new data file, in the
    # column the table's metadata names, and that column stays out of every reader's view.
    lake.sql("UPDATE t SET id = 20 WHERE id = 2")
    stored = table_configuration(where)["delta.rowTracking.materializedRowIdColumnName"]
    rewritten = [path for path, add in live_adds(where).items() if "deletionVector" not in add]
    assert any(stored in lake.spark.read.parquet(path).columns for path in rewritten)
    after = {r.ID: r.row_id for r in lake.spark.read.format("delta").load(where).select("ID", "_metadata.row_id").collect()}
    assert after == {1: ids[1], 20: ids[2]}
    assert lake.sql("SELECT * FROM t").columns == ["ID"]
    assert kernel_read(where).column_names == ["ID"]
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier"):
        lake.sql(f'SELECT "{stored}" FROM t').collect()


# ALTER TABLE's columns ----------------------------------------------------------------------------


def describe(lake: lakeclone.Lake, table: str) -> dict[str, tuple]:
    return {r.name: (r.type, r["null?"], r.default, r.comment) for r in lake.sql(f"DESCRIBE TABLE {table}").collect()}


def test_added_columns_are_null_in_the_rows_there_were_and_time_travel_keeps_the_old_columns(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, v VARCHAR(5)) CHANGE_TRACKING = TRUE; INSERT INTO t VALUES (1, 'a')")
    lake.sql("CREATE STREAM s ON TABLE t")
    before = len(lake.sql("DESCRIBE HISTORY t").collect())
    lake.sql("ALTER TABLE t ADD COLUMN note VARCHAR(3) COMMENT 'why', tags ARRAY, props OBJECT")
    history = lake.sql("DESCRIBE HISTORY t").collect()
    assert len(history) == before + 1 and history[0].operation == "UPDATE SCHEMA"
    lake.sql("INSERT INTO t SELECT 2, 'b', 'new', ARRAY_CONSTRUCT('x'), OBJECT_CONSTRUCT('k', 1)")
    got = rows(lake, "SELECT id, v, note, tags[0]::STRING, props:k::INT FROM t")
    assert got == [(1, "a", None, None, None), (2, "b", "new", "x", 1)]
    assert [r[:3] for r in kernel_rows(location(lake, "T"))] == [(1, "a", None), (2, "b", "new")]
    columns = describe(lake, "t")
    assert columns["NOTE"] == ("VARCHAR(3)", "Y", None, "why")
    assert (columns["TAGS"][0], columns["PROPS"][0]) == ("ARRAY", "OBJECT")
    # The columns a version had; a stream made before the change reads the new column.
    assert lake.sql("SELECT * FROM t AT(VERSION => 1)").columns == ["ID", "V"]
    assert rows(lake, "SELECT id, note, METADATA$ACTION FROM s") == [(2, "new", "INSERT")]
    # A new column is checked as the others are.
    with pytest.raises(lakeclone.LakecloneError, match=r"too long|length"):
        lake.sql("INSERT INTO t (id, note) VALUES (3, 'toolong')")
    # IF NOT EXISTS changes nothing when the column is there; without it, that is an error.
    lake.sql("ALTER TABLE t ADD COLUMN IF NOT EXISTS note INT")
    assert len(lake.sql("DESCRIBE HISTORY t").collect()) == before + 2
    with pytest.raises(lakeclone.LakecloneError, match="ambiguous column name 'NOTE'"):
        lake.sql("ALTER TABLE t ADD COLUMN note INT")


def test_a_columns_comment_not_null_and_default_change(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, v STRING, n INT DEFAULT 7); INSERT INTO t (id) VALUES (1)")
    lake.sql("ALTER TABLE t ALTER COLUMN v COMMENT 'the value'")
    assert describe(lake, "t")["V"] == ("VARCHAR(16777216)", "Y", None, "the value")
    lake.sql("ALTER TABLE t MODIFY COLUMN v COMMENT ''")
    assert describe(lake, "t")["V"][3] is None
    lake.sql("ALTER TABLE t ALTER v COMMENT 'again'; ALTER TABLE t ALTER COLUMN v UNSET COMMENT")
    assert describe(lake, "t")["V"][3] is None
    versions = len(lake.sql("DESCRIBE HISTORY t").collect())
    with pytest.raises(lakeclone.LakecloneError, match="NULL result in a non-nullable column 'V'"):
        lake.sql("ALTER TABLE t ALTER COLUMN v SET NOT NULL")
    assert len(lake.sql("DESCRIBE HISTORY t").collect()) == versions
    lake.sql("UPDATE t SET v = 'x'")
    lake.sql("ALTER TABLE t ALTER COLUMN v SET NOT NULL")
    assert describe(lake, "t")["V"][1] == "N"
    with pytest.raises(lakeclone.LakecloneError, match="NULL"):
        lake.sql("INSERT INTO t (id) VALUES (2)")
    lake.sql("ALTER TABLE t ALTER COLUMN v DROP NOT NULL; ALTER TABLE t ALTER COLUMN n DROP DEFAULT")
    lake.sql("INSERT INTO t (id) VALUES (2)")
    assert rows(lake, "SELECT * FROM t") == [(1, "x", 7), (2, None, None)]
    assert describe(lake, "t")["N"][2] is None


def test_several_columns_change_in_one_statement_and_one_commit(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, v STRING, n INT DEFAULT 7); INSERT INTO t VALUES (1, 'a', 2)")
    versions = len(lake.sql("DESCRIBE HISTORY t").collect())
    lake.sql("ALTER TABLE t MODIFY COLUMN v COMMENT 'the value', COLUMN id SET NOT NULL, n DROP DEFAULT")
    described = describe(lake, "t")
    assert (described["V"][3], described["ID"][1], described["N"][2]) == ("the value", "N", None)
    assert len(lake.sql("DESCRIBE HISTORY t").collect()) == versions + 1
    # A change lakeclone refuses refuses the whole list.
    with pytest.raises(lakeclone.LakecloneError, match="SET DATA TYPE BIGINT is not supported"):
        lake.sql("ALTER TABLE t ALTER (v UNSET COMMENT, id SET DATA TYPE BIGINT)")
    assert describe(lake, "t")["V"][3] == "the value"
    assert len(lake.sql("DESCRIBE HISTORY t").collect()) == versions + 1


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("ALTER TABLE t ADD COLUMN c INT DEFAULT 1", "ADD COLUMN … DEFAULT is not supported"),
        ("ALTER TABLE t ADD COLUMN c INT AUTOINCREMENT", "ADD COLUMN … AUTOINCREMENT is not supported"),
        ("ALTER TABLE t ADD COLUMN c INT NOT NULL", "Non-nullable column 'C' cannot be added"),
        ("ALTER TABLE t ADD COLUMN c INT, id INT", "ambiguous column name 'ID'"),
        ("ALTER TABLE t DROP COLUMN id", "DROP COLUMN is not supported"),
        ("ALTER TABLE t RENAME COLUMN id TO key", "RENAME COLUMN is not supported"),
        ("ALTER TABLE t ALTER COLUMN id SET DATA TYPE BIGINT", "error:\nALTER COLUMN ID SET DATA TYPE BIGINT is not supported"),
        ("ALTER TABLE t ALTER COLUMN missing COMMENT 'x'", "invalid identifier 'MISSING'"),
    ],
)
def test_column_changes_lakeclone_refuses_change_nothing(lake: lakeclone.Lake, statement: str, message: str) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    with pytest.raises(lakeclone.LakecloneError, match=message):
        lake.sql(statement)
    assert lake.sql("SELECT * FROM t").columns == ["ID"]
    assert len(lake.sql("DESCRIBE HISTORY t").collect()) == 2


def test_changing_a_tables_columns_needs_its_ownership(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); CREATE ROLE writer; CREATE USER wes; GRANT ROLE writer TO USER wes")
    lake.sql("GRANT USAGE ON DATABASE lake TO ROLE writer; GRANT USAGE ON SCHEMA public TO ROLE writer")
    lake.sql("GRANT SELECT, INSERT, UPDATE ON TABLE t TO ROLE writer")
    wes = session_of(lake, "wes", "writer")
    with pytest.raises(lakeclone.LakecloneError, match=r"Insufficient privileges to operate on table 'LAKE\.PUBLIC\.T'"):
        wes.sql("ALTER TABLE t ADD COLUMN c INT")
    lake.sql("GRANT OWNERSHIP ON TABLE t TO ROLE writer")
    wes.sql("ALTER TABLE t ADD COLUMN c INT")
    assert wes.sql("SELECT * FROM t").columns == ["ID", "C"]


def test_swap_with_exchanges_two_tables_names_and_what_holds_a_table_follows_it(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE SCHEMA stage; USE SCHEMA public; CREATE TABLE prod (v STRING); INSERT INTO prod VALUES ('old')")
    lake.sql("CREATE TABLE stage.next (v STRING); INSERT INTO stage.next VALUES ('new')")
    lake.sql("CREATE VIEW current_rows AS SELECT * FROM prod; CREATE STREAM s ON TABLE prod")
    lake.sql("ALTER TABLE prod SWAP WITH stage.next")
    assert rows(lake, "SELECT * FROM prod") == [("new",)]
    assert rows(lake, "SELECT * FROM stage.next") == [("old",)]
    # A view names a table: it reads the one called PROD now. A stream holds a table: it follows the old one.
    assert rows(lake, "SELECT * FROM current_rows") == [("new",)]
    lake.sql("INSERT INTO stage.next VALUES ('later')")
    assert rows(lake, "SELECT v FROM s") == [("later",)]
    assert lake.sql("SHOW STREAMS").first().table_name == "LAKE.STAGE.NEXT"
    with pytest.raises(lakeclone.LakecloneError, match="cannot be swapped with itself"):
        lake.sql("ALTER TABLE prod SWAP WITH lake.public.prod")
    with pytest.raises(lakeclone.LakecloneError, match=r"'LAKE\.PUBLIC\.MISSING' does not exist"):
        lake.sql("ALTER TABLE prod SWAP WITH missing")
    # Swapping needs the ownership of both tables.
    lake.sql("CREATE ROLE deployer; CREATE USER dee; GRANT ROLE deployer TO USER dee")
    lake.sql("GRANT USAGE ON DATABASE lake TO ROLE deployer; GRANT USAGE ON SCHEMA public TO ROLE deployer")
    lake.sql("GRANT USAGE ON SCHEMA stage TO ROLE deployer; GRANT OWNERSHIP ON TABLE prod TO ROLE deployer")
    lake.sql("GRANT SELECT ON TABLE stage.next TO ROLE deployer")
    dee = session_of(lake, "dee", "deployer")
    with pytest.raises(lakeclone.LakecloneError, match=r"Insufficient privileges to operate on table 'LAKE\.STAGE\.NEXT'"):
        dee.sql("ALTER TABLE prod SWAP WITH stage.next")
    assert rows(lake, "SELECT * FROM prod") == [("new",)]
