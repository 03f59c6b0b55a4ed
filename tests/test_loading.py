"""Loading files with SQL: stages, LIST, COPY INTO with ON_ERROR and load metadata, Databricks' spelling, privileges."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_reader import kernel_rows
from lake_helpers import location, rows, session_of

import lakeclone
from lakeclone.catalog.stages import LoadedFile
from lakeclone.catalog.store import Catalog
from lakeclone.engine import registry

pytestmark = pytest.mark.spark

SALES = "CREATE TABLE sales (id INT, region VARCHAR(5), amount DECIMAL(10, 2), sold DATE)"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder outside the warehouse with two good CSV files and one bad one below ``bad/``."""
    folder = tmp_path / "files"
    (folder / "bad").mkdir(parents=True)
    (folder / "2024-01.csv").write_text("id,region,amount,sold\n1,north,10.50,2024-01-02\n2,south,\\N,2024-01-03\n")
    (folder / "2024-02.csv").write_text("id,region,amount,sold\n3,east,7,2024-02-01\n")
    (folder / "bad" / "broken.csv").write_text("id,region,amount,sold\n4,west,1.00,2024-03-01\n5,west,ten,2024-03-02\n6,west\n")
    return folder


def uri(path: Path) -> str:
    return f"file:{path}"


def copy_rows(lake: lakeclone.Lake, sql: str) -> dict[str, tuple]:
    """COPY's result rows by file name: (status, rows_parsed, rows_loaded, errors_seen, first_error, line, character, column)."""
    return {
        r.file.rsplit("/", 1)[-1]: (
            r.status,
            r.rows_parsed,
            r.rows_loaded,
            r.errors_seen,
            r.first_error,
            r.first_error_line,
            r.first_error_character,
            r.first_error_column_name,
        )
        for r in lake.sql(sql).collect()
    }


def staged(lake: lakeclone.Lake, files: Path) -> None:
    lake.sql(f"{SALES}; CREATE STAGE st URL = '{uri(files)}' FILE_FORMAT = (TYPE = CSV SKIP_HEADER = 1)")


# Stages ---------------------------------------------------------------------------------


def test_a_stage_is_created_shown_described_listed_and_dropped(lake: lakeclone.Lake, files: Path) -> None:
    created = lake.sql(f"CREATE STAGE st URL = '{uri(files)}/' FILE_FORMAT = (TYPE = CSV SKIP_HEADER = 1) COMMENT = 'raw'")
    assert created.collect()[0].status == "Stage area ST successfully created."
    (shown,) = lake.sql("SHOW STAGES").collect()
    assert (shown.name, shown.database_name, shown.schema_name, shown.url, shown.owner, shown.comment, shown.type) == (
        "ST",
        "LAKE",
        "PUBLIC",
        uri(files),
        "ACCOUNTADMIN",
        "raw",
        "EXTERNAL",
    )
    described = {r.property: (r.property_value, r.property_default) for r in lake.sql("DESCRIBE STAGE st").collect()}
    assert described["URL"] == (uri(files), "")
    assert described["TYPE"] == ("CSV", "CSV")
    assert described["SKIP_HEADER"] == ("1", "0")
    assert described["NULL_IF"] == ('["\\\\N"]', '["\\\\N"]')  # a list, as Snowflake shows it
    listed = lake.sql("LIST @st").collect()
    assert [(r.name, r.size) for r in listed] == [
        (uri(files / name), (files / name).stat().st_size) for name in ("2024-01.csv", "2024-02.csv", "bad/broken.csv")
    ]
    assert all(len(r.md5) == 32 and r.last_modified.endswith(" GMT") for r in listed)
    assert [r.name for r in lake.sql("LIST @st/bad").collect()] == [uri(files / "bad" / "broken.csv")]
    assert [r.name for r in lake.sql("LIST @st PATTERN = '.*-02[.]csv'").collect()] == [uri(files / "2024-02.csv")]
    assert lake.sql("DROP STAGE st").collect()[0].status == "ST successfully dropped."
    assert lake.sql("SHOW STAGES").collect() == []
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Stage 'LAKE.PUBLIC.ST' does not exist or not authorized.")):
        lake.sql("LIST @st")


def test_a_stage_must_name_a_folder_outside_the_warehouse_and_its_tables(lake: lakeclone.Lake, tmp_path: Path) -> None:
    with pytest.raises(lakeclone.LakecloneError, match=r"overlaps the warehouse .*: a stage must live outside it"):
        lake.sql(f"CREATE STAGE inside URL = '{uri(lake.warehouse)}/tables'")
    lake.sql(f"CREATE EXTERNAL TABLE ext (id INT) LOCATION = '{uri(tmp_path / 'outside' / 'ext')}'")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("overlaps the folder of table LAKE.PUBLIC.EXT")):
        lake.sql(f"CREATE STAGE raw URL = '{uri(tmp_path / 'outside')}'")
    with pytest.raises(lakeclone.LakecloneError, match="lakeclone's stages are external"):
        lake.sql("CREATE STAGE nowhere")
    with pytest.raises(lakeclone.LakecloneError, match=r"User and table stages \(@~, @%t\) are not supported"):
        lake.sql("LIST @~")
    with pytest.raises(lakeclone.LakecloneError, match="File format option COLOR is not supported by lakeclone"):
        lake.sql(f"CREATE STAGE s URL = '{uri(tmp_path / 'x')}' FILE_FORMAT = (COLOR = RED)")


# COPY INTO ------------------------------------------------------------------------------


def test_copy_loads_each_file_once_until_it_changes_or_is_forced(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    loaded = copy_rows(lake, "COPY INTO sales FROM @st PATTERN = '[^/]*[.]csv'")
    assert loaded == {
        "2024-01.csv": ("LOADED", 2, 2, 0, None, None, None, None),
        "2024-02.csv": ("LOADED", 1, 1, 0, None, None, None, None),
    }
    expected = [
        (1, "north", Decimal("10.50"), dt.date(2024, 1, 2)),
        (2, "south", None, dt.date(2024, 1, 3)),
        (3, "east", Decimal("7.00"), dt.date(2024, 2, 1)),
    ]
    assert rows(lake, "SELECT * FROM sales") == expected
    assert kernel_rows(location(lake, "SALES")) == expected
    (commit, *_) = lake.sql("DESCRIBE HISTORY sales").collect()
    assert (commit.operation, commit.operationMetrics["numOutputRows"]) == ("WRITE", "3")  # one commit for both files

    again = lake.sql("COPY INTO sales FROM @st PATTERN = '[^/]*[.]csv'").collect()
    assert [r.status for r in again] == ["Copy executed with 0 files processed."]

    # A file whose content changed is a new file; FORCE loads one the history holds.
    (files / "2024-02.csv").write_text("id,region,amount,sold\n3,east,8,2024-02-01\n")
    assert copy_rows(lake, "COPY INTO sales FROM @st PATTERN = '[^/]*[.]csv'") == {
        "2024-02.csv": ("LOADED", 1, 1, 0, None, None, None, None)
    }
    assert copy_rows(lake, "COPY INTO sales FROM @st FILES = ('2024-01.csv') FORCE = TRUE")["2024-01.csv"][0] == "LOADED"
    assert lake.sql("SELECT COUNT(*) AS n FROM sales").collect()[0][0] == 6


def test_on_error_aborts_the_statement_or_skips_the_file_or_the_row(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    with pytest.raises(lakeclone.LakecloneError) as failed:
        lake.sql("COPY INTO sales FROM @st")
    assert str(failed.value).splitlines()[:3] == [
        "Numeric value 'ten' is not recognized",
        f"  File '{uri(files / 'bad' / 'broken.csv')}', line 3, character 8",
        '  Row 2, column "SALES"["AMOUNT":3]',
    ]
    assert lake.sql("SELECT COUNT(*) AS n FROM sales").collect()[0][0] == 0
    assert len(lake.sql("DESCRIBE HISTORY sales").collect()) == 1  # no commit

    skipped = copy_rows(lake, "COPY INTO sales FROM @st ON_ERROR = SKIP_FILE")
    assert skipped["broken.csv"][:4] == ("LOAD_FAILED", 3, 0, 2)
    assert skipped["2024-01.csv"][0] == skipped["2024-02.csv"][0] == "LOADED"

    # A file that failed is not in the history: CONTINUE loads its good rows.
    continued = copy_rows(lake, "COPY INTO sales FROM @st ON_ERROR = CONTINUE")
    assert continued == {
        "broken.csv": ("PARTIALLY_LOADED", 3, 1, 2, "Numeric value 'ten' is not recognized", 3, 8, '"SALES"["AMOUNT":3]')
    }
    assert rows(lake, "SELECT id FROM sales") == [(1,), (2,), (3,), (4,)]


def test_every_value_is_checked_against_its_column(lake: lakeclone.Lake, tmp_path: Path) -> None:
    folder = tmp_path / "checks"
    folder.mkdir()
    (folder / "values.csv").write_text(
        "1|toolong|1.00|2024-01-01\n"  # VARCHAR(5)
        "2|ok|1.00|someday\n"  # no date
        "NULL|ok|1.00|2024-01-01\n"  # NULL_IF
        "4|ok|1.00\n"  # a field short
        "5||2.00|2024-01-01\n"  # an empty field is NULL
    )
    lake.sql(SALES)
    found = copy_rows(
        lake,
        f"COPY INTO sales FROM '{uri(folder)}' FILE_FORMAT = (TYPE = CSV FIELD_DELIMITER = '|' NULL_IF = ('NULL')) "
        "ON_ERROR = CONTINUE",
    )
    assert found["values.csv"][:7] == (
        "PARTIALLY_LOADED",
        5,
        2,
        3,
        "User character length limit (5) exceeded by string 'toolong'",
        1,
        3,
    )
    assert rows(lake, "SELECT id, region FROM sales") == [(None, "ok"), (5, None)]
    lake.sql("CREATE TABLE strict (id INT NOT NULL)")
    (folder / "values.csv").write_text("1\n\n")
    (folder / "more.csv").write_text("2,3\n")
    with pytest.raises(
        lakeclone.LakecloneError, match=r"Number of columns in file \(2\) does not match that of the corresponding table \(1\)"
    ):
        lake.sql(f"COPY INTO strict FROM '{uri(folder)}' FILES = ('more.csv')")
    with pytest.raises(lakeclone.LakecloneError, match=r"Remote file '.*/missing\.csv' was not found"):
        lake.sql(f"COPY INTO strict FROM '{uri(folder)}' FILES = ('missing.csv')")


def test_a_column_list_loads_those_columns_and_the_others_get_their_defaults(lake: lakeclone.Lake, tmp_path: Path) -> None:
    folder = tmp_path / "listed"
    folder.mkdir()
    (folder / "a.csv").write_text("north,1\nsouth,2\n")
    lake.sql("CREATE SEQUENCE ids")
    lake.sql(
        "CREATE TABLE listed (id INT DEFAULT ids.NEXTVAL, region STRING, n INT, note STRING DEFAULT 'loaded', extra INT, "
        "k INT AUTOINCREMENT START 10 INCREMENT 10)"
    )
    loaded = copy_rows(lake, f"COPY INTO listed (region, n) FROM '{uri(folder)}'")
    assert loaded == {"a.csv": ("LOADED", 2, 2, 0, None, None, None, None)}
    assert rows(lake, "SELECT * FROM listed") == [(1, "north", 1, "loaded", None, 10), (2, "south", 2, "loaded", None, 20)]
    with pytest.raises(lakeclone.LakecloneError, match="invalid identifier 'NOPE'"):
        lake.sql(f"COPY INTO listed (region, nope) FROM '{uri(folder)}' FORCE = TRUE")


def test_a_transformation_picks_reorders_casts_and_computes_the_values_loaded(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    lake.sql("CREATE TABLE regions (region STRING, id INT, amount_cents INT, source STRING, line BIGINT)")
    loaded = copy_rows(
        lake,
        "COPY INTO regions FROM (SELECT UPPER(f.$2), f.$1::INT, f.$3::NUMBER(10, 2) * 100, METADATA$FILENAME, "
        "METADATA$FILE_ROW_NUMBER FROM @st f) PATTERN = '2024-.*'",
    )
    assert loaded == {
        "2024-01.csv": ("LOADED", 2, 2, 0, None, None, None, None),
        "2024-02.csv": ("LOADED", 1, 1, 0, None, None, None, None),
    }
    expected = [("NORTH", 1, 1050, "2024-01.csv", 1), ("SOUTH", 2, None, "2024-01.csv", 2), ("EAST", 3, 700, "2024-02.csv", 1)]
    assert rows(lake, "SELECT * FROM regions") == sorted(expected)
    assert kernel_rows(location(lake, "REGIONS")) == sorted(expected)
    # The load history holds the files as any COPY's: loaded once.
    assert lake.sql("COPY INTO regions FROM (SELECT $2, $1, NULL, NULL, NULL FROM @st) PATTERN = '2024-.*'").collect()[0][0] == (
        "Copy executed with 0 files processed."
    )


def test_a_failed_cast_in_a_transformation_follows_on_error(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    lake.sql("CREATE TABLE amounts (id INT, amount DECIMAL(10, 2))")
    transformed = "COPY INTO amounts (amount, id) FROM (SELECT $3::DECIMAL(10, 2), $1 FROM @st/bad)"
    with pytest.raises(lakeclone.LakecloneError) as failed:
        lake.sql(transformed)
    assert str(failed.value).splitlines()[:3] == [
        "Numeric value 'ten' is not recognized",
        f"  File '{uri(files / 'bad' / 'broken.csv')}', line 3, character 1",
        '  Row 2, column "AMOUNTS"["AMOUNT":1]',
    ]
    assert len(lake.sql("DESCRIBE HISTORY amounts").collect()) == 1  # no commit
    continued = copy_rows(lake, transformed + " ON_ERROR = CONTINUE")
    assert continued == {
        "broken.csv": ("PARTIALLY_LOADED", 3, 2, 1, "Numeric value 'ten' is not recognized", 3, 1, '"AMOUNTS"["AMOUNT":1]')
    }
    assert rows(lake, "SELECT * FROM amounts ORDER BY id") == [(4, Decimal("1.00")), (6, None)]


def test_a_transformation_reads_json_fields_into_typed_columns(lake: lakeclone.Lake, tmp_path: Path) -> None:
    folder = tmp_path / "events"
    folder.mkdir()
    (folder / "e.json").write_text(
        '{"user": {"name": "ann"}, "at": "2024-05-01", "tags": ["a", "b"], "n": "7"}\n\nnot json\n{"user": {"name": "bob"}, "n": "x"}\n'
    )
    lake.sql("CREATE TABLE events (name STRING, at DATE, tags VARIANT, n INT)")
    lake.sql(f"CREATE STAGE ev URL = '{uri(folder)}' FILE_FORMAT = (TYPE = JSON)")
    loaded = copy_rows(
        lake, "COPY INTO events FROM (SELECT $1:user.name, $1:at::DATE, $1:tags, $1:n FROM @ev) ON_ERROR = CONTINUE"
    )
    assert loaded == {"e.json": ("PARTIALLY_LOADED", 3, 1, 2, "Error parsing JSON: not json", 3, 1, None)}
    assert rows(lake, "SELECT name, at, tags[1]::STRING, n FROM events") == [("ann", dt.date(2024, 5, 1), "b", 7)]


def test_a_transformation_is_one_simple_select_of_a_stages_files(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    lake.sql("CREATE TABLE one (id INT)")
    refused = {
        "SELECT $1 FROM @st WHERE $1 > 1": "WHERE is not supported in a COPY transformation",
        "SELECT $1 FROM @st ORDER BY 1": "ORDER BY is not supported",
        "SELECT DISTINCT $1 FROM @st": "DISTINCT is not supported",
        "SELECT COUNT(*) FROM @st": "no subquery, aggregate or window",
        "SELECT (SELECT MAX(id) FROM sales) FROM @st": "no subquery, aggregate or window",
        "SELECT $1 FROM sales": "it reads the files of one stage",
        "SELECT * FROM @st": "name each value loaded",
        "SELECT $1, $2 FROM @st": "Insert value list does not match column list expecting 1 but got 2",
        # Its functions are SQL's, as any statement's: none reaches outside it.
        "SELECT reflect('java.lang.System', 'getenv', 'HOME') FROM @st": "Unknown function REFLECT",
    }
    for query, message in refused.items():
        with pytest.raises(lakeclone.LakecloneError, match=re.escape(message)):
            lake.sql(f"COPY INTO one FROM ({query})")
    # None of them claimed a file.
    assert set(copy_rows(lake, "COPY INTO one FROM (SELECT $1 FROM @st) PATTERN = '2024-.*'")) == {"2024-01.csv", "2024-02.csv"}
    assert rows(lake, "SELECT * FROM one ORDER BY id") == [(1,), (2,), (3,)]


def test_json_and_parquet_load_by_column_name_whatever_its_case(lake: lakeclone.Lake, tmp_path: Path) -> None:
    folder = tmp_path / "json"
    folder.mkdir()
    (folder / "a.json").write_text('{"ID": 1, "Region": "north", "amount": 2.5}\n\n{"id": 2, "extra": [1]}\nnot json\n')
    pq.write_table(pa.table({"Id": [3], "REGION": ["south"], "sold": [dt.date(2024, 5, 1)]}), folder / "b.parquet")
    lake.sql(SALES)
    loaded = copy_rows(
        lake, f"COPY INTO sales FROM '{uri(folder)}' PATTERN = '.*json' FILE_FORMAT = (TYPE = JSON) ON_ERROR = CONTINUE"
    )
    assert loaded == {"a.json": ("PARTIALLY_LOADED", 3, 2, 1, "Error parsing JSON: not json", 4, 1, None)}
    parquet = copy_rows(lake, f"COPY INTO sales FROM '{uri(folder)}' FILES = ('b.parquet') FILE_FORMAT = (TYPE = PARQUET)")
    assert parquet == {"b.parquet": ("LOADED", 1, 1, 0, None, None, None, None)}
    expected = [
        (1, "north", Decimal("2.50"), None),
        (2, None, None, None),
        (3, "south", None, dt.date(2024, 5, 1)),
    ]
    assert rows(lake, "SELECT * FROM sales") == expected
    assert kernel_rows(location(lake, "SALES")) == expected


def test_databricks_copy_into_with_fileformat_and_a_glob_pattern(lake: lakeclone.Lake, files: Path) -> None:
    lake.sql(SALES)
    statement = (
        f"COPY INTO sales FROM '{uri(files)}' FILEFORMAT = CSV PATTERN = '*.csv' "
        "FORMAT_OPTIONS ('header' = 'true', 'nullValue' = '\\\\N') COPY_OPTIONS ('force' = 'true')"
    )
    assert set(copy_rows(lake, statement)) == {"2024-01.csv", "2024-02.csv"}
    assert set(copy_rows(lake, statement)) == {"2024-01.csv", "2024-02.csv"}  # forced: loaded again
    assert lake.sql("SELECT COUNT(*) AS n FROM sales").collect()[0][0] == 6
    with pytest.raises(lakeclone.LakecloneError, match="FORMAT_OPTIONS 'inferschema' is not supported"):
        lake.sql(f"COPY INTO sales FROM '{uri(files)}' FILEFORMAT = CSV FORMAT_OPTIONS ('inferSchema' = 'true')")


def test_the_load_history_lasts_64_days_by_the_lakes_clock(
    lake: lakeclone.Lake, files: Path, clock: lakeclone.ManualClock
) -> None:
    staged(lake, files)
    copy = "COPY INTO sales FROM @st FILES = ('2024-02.csv')"
    assert set(copy_rows(lake, copy)) == {"2024-02.csv"}
    clock.advance(days=63)
    assert lake.sql(copy).collect()[0].status == "Copy executed with 0 files processed."
    clock.advance(days=2)
    assert set(copy_rows(lake, copy)) == {"2024-02.csv"}
    # A clone has no load history of its own (Snowflake's rule): the file loads into it.
    lake.sql("CREATE TABLE sales_dev CLONE sales")
    assert set(copy_rows(lake, copy.replace("sales", "sales_dev"))) == {"2024-02.csv"}


def test_streams_see_a_load_as_inserts_and_a_transaction_keeps_or_forgets_it(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    lake.sql("CREATE STREAM changes ON TABLE sales")
    copy = "COPY INTO sales FROM @st FILES = ('2024-01.csv')"
    lake.sql(f"BEGIN; {copy}; ROLLBACK")
    assert lake.sql("SELECT COUNT(*) AS n FROM sales").collect()[0][0] == 0
    lake.sql(f"BEGIN; {copy}")
    assert lake.sql(copy).collect()[0].status == "Copy executed with 0 files processed."  # its own load, pending
    lake.sql("COMMIT")
    assert lake.sql(copy).collect()[0].status == "Copy executed with 0 files processed."
    assert rows(lake, "SELECT id, METADATA$ACTION, METADATA$ISUPDATE FROM changes") == [
        (1, "INSERT", False),
        (2, "INSERT", False),
    ]


def test_a_statement_that_fails_after_its_commit_keeps_the_files_loaded(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)

    def fail(execution: object, table: object) -> None:
        raise RuntimeError("after the commit")

    registry.AFTER_DML.insert(0, fail)
    try:
        with pytest.raises(lakeclone.LakecloneError):
            lake.sql("COPY INTO sales FROM @st FILES = ('2024-02.csv')")
    finally:
        registry.AFTER_DML.remove(fail)
    assert lake.sql("SELECT COUNT(*) AS n FROM sales").collect()[0][0] == 1  # Delta's commit stands
    assert lake.sql("COPY INTO sales FROM @st FILES = ('2024-02.csv')").collect()[0].status == (
        "Copy executed with 0 files processed."
    )


def test_copy_needs_insert_on_the_table_and_usage_on_the_stage(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    lake.sql(
        "CREATE ROLE loader; CREATE USER ann; GRANT ROLE loader TO USER ann;"
        "GRANT USAGE ON DATABASE lake TO ROLE loader; GRANT USAGE ON SCHEMA lake.public TO ROLE loader;"
        "GRANT INSERT ON TABLE sales TO ROLE loader"
    )
    ann = session_of(lake, "ann", "loader")
    copy = "COPY INTO sales FROM @st FILES = ('2024-02.csv')"
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Stage 'LAKE.PUBLIC.ST' does not exist or not authorized")):
        ann.sql(copy)
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Insufficient privileges to operate on account 'ACCOUNT'")):
        ann.sql(f"COPY INTO sales FROM '{uri(files)}'")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Insufficient privileges to operate on schema 'LAKE.PUBLIC'")):
        ann.sql(f"CREATE STAGE mine URL = '{uri(files)}'")
    lake.sql("GRANT USAGE ON STAGE st TO ROLE loader; CREATE FILE FORMAT plain TYPE = CSV SKIP_HEADER = 1")
    named = copy + " FILE_FORMAT = (FORMAT_NAME = plain)"
    with pytest.raises(
        lakeclone.LakecloneError, match=re.escape("File format 'LAKE.PUBLIC.PLAIN' does not exist or not authorized")
    ):
        ann.sql(named)
    lake.sql("GRANT USAGE ON FILE FORMAT plain TO ROLE loader")
    assert set(copy_rows(ann, named)) == {"2024-02.csv"}
    assert set(copy_rows(ann, copy + " FORCE = TRUE")) == {"2024-02.csv"}
    assert [r.name for r in ann.sql("SHOW STAGES").collect()] == ["ST"]
    # A transformation reads the stage's files: the same USAGE.
    lake.sql("REVOKE USAGE ON STAGE st FROM ROLE loader")
    transformed = "COPY INTO sales FROM (SELECT $1, $2, $3, $4 FROM @st) FILES = ('2024-02.csv') FORCE = TRUE"
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Stage 'LAKE.PUBLIC.ST' does not exist or not authorized")):
        ann.sql(transformed)
    lake.sql("GRANT USAGE ON STAGE st TO ROLE loader")
    assert set(copy_rows(ann, transformed)) == {"2024-02.csv"}
    lake.sql("REVOKE INSERT ON TABLE sales FROM ROLE loader; GRANT SELECT ON TABLE sales TO ROLE loader")
    with pytest.raises(
        lakeclone.LakecloneError, match=re.escape("Insufficient privileges to operate on table 'LAKE.PUBLIC.SALES'")
    ):
        ann.sql(copy + " FORCE = TRUE")


def test_a_load_of_more_files_than_it_observes_counts_them_from_cached_rows(
    lake: lakeclone.Lake, files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakeclone.loading import read

    monkeypatch.setattr(read, "OBSERVED_FILES", 1)  # three files: counted from the cached rows, then written
    staged(lake, files)
    loaded = copy_rows(lake, "COPY INTO sales FROM @st ON_ERROR = CONTINUE")
    assert {name: row[:4] for name, row in loaded.items()} == {
        "2024-01.csv": ("LOADED", 2, 2, 0),
        "2024-02.csv": ("LOADED", 1, 1, 0),
        "broken.csv": ("PARTIALLY_LOADED", 3, 1, 2),
    }
    assert rows(lake, "SELECT id FROM sales") == [(1,), (2,), (3,), (4,)]


def test_a_named_file_format_serves_copies_and_stages_as_it_is_when_they_run(lake: lakeclone.Lake, files: Path) -> None:
    lake.sql(SALES)
    created = lake.sql("CREATE FILE FORMAT with_header TYPE = CSV SKIP_HEADER = 1 COMMENT = 'ours'").collect()
    assert created[0].status == "File format WITH_HEADER successfully created."
    (shown,) = lake.sql("SHOW FILE FORMATS").collect()
    assert (shown.name, shown.type, shown.owner, shown.comment) == ("WITH_HEADER", "CSV", "ACCOUNTADMIN", "ours")
    assert {r.property: r.property_value for r in lake.sql("DESCRIBE FILE FORMAT with_header").collect()}["SKIP_HEADER"] == "1"
    copy = f"COPY INTO sales FROM '{uri(files)}' FILES = ('2024-02.csv') FILE_FORMAT = (FORMAT_NAME = 'with_header')"
    assert copy_rows(lake, copy)["2024-02.csv"][:3] == ("LOADED", 1, 1)

    lake.sql(f"CREATE STAGE st URL = '{uri(files)}' FILE_FORMAT = (FORMAT_NAME = with_header)")
    described = {r.property: r.property_value for r in lake.sql("DESCRIBE STAGE st").collect()}
    assert described["FORMAT_NAME"] == "LAKE.PUBLIC.WITH_HEADER"
    lake.sql("CREATE OR REPLACE FILE FORMAT with_header TYPE = CSV")
    with pytest.raises(lakeclone.LakecloneError, match="Numeric value 'id' is not recognized"):  # the header is a row now
        lake.sql("COPY INTO sales FROM @st FILES = ('2024-01.csv')")
    lake.sql("DROP FILE FORMAT with_header")
    missing = re.escape("File format 'LAKE.PUBLIC.WITH_HEADER' does not exist or not authorized.")
    with pytest.raises(lakeclone.LakecloneError, match=missing):
        lake.sql("COPY INTO sales FROM @st FILES = ('2024-01.csv')")
    with pytest.raises(lakeclone.LakecloneError, match="FILE_FORMAT takes FORMAT_NAME or the options of a file format, not both"):
        lake.sql(f"COPY INTO sales FROM '{uri(files)}' FILE_FORMAT = (FORMAT_NAME = 'with_header' TYPE = CSV)")


def test_a_dead_sessions_claim_on_a_file_goes_unless_its_commit_landed(lake: lakeclone.Lake, files: Path) -> None:
    # What a COPY killed between its claim and its commit leaves: a pending record of a session that is gone
    # (no lock file: dead), whose query id no commit of the table carries. (test_durability kills one after its commit.)
    staged(lake, files)
    uri_02 = uri(files / "2024-02.csv")
    (listed,) = [r for r in lake.sql("LIST @st").collect() if r.name == uri_02]
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        table = catalog.objects.table("LAKE", "PUBLIC", "SALES")
        assert table is not None
        with catalog.transaction():
            catalog.stages.record_loads(
                [LoadedFile(table.id, uri_02, listed.md5, 0, lake.now(), "a-query-that-died", "a-dead-session", pending=True)]
            )
    finally:
        catalog.close()
    assert set(copy_rows(lake, "COPY INTO sales FROM @st FILES = ('2024-02.csv')")) == {"2024-02.csv"}
    assert lake.sql("COPY INTO sales FROM @st FILES = ('2024-02.csv')").collect()[0].status == (
        "Copy executed with 0 files processed."
    )


# Queries over files ---------------------------------------------------------------------


def test_a_query_reads_staged_csv_fields_by_position_with_their_metadata(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    query = "SELECT METADATA$FILENAME AS file, METADATA$FILE_ROW_NUMBER AS line, t.$1, $3, $5 FROM @st (PATTERN => '[^/]*') t"
    assert rows(lake, query) == [
        ("2024-01.csv", 1, "1", "10.50", None),
        ("2024-01.csv", 2, "2", None, None),  # \N is NULL (the stage's NULL_IF); no line has a fifth field
        ("2024-02.csv", 1, "3", "7", None),
    ]
    assert lake.sql("SELECT COUNT(*) FROM @st").collect()[0][0] == 6
    (listed,) = lake.sql("LIST @st/bad").collect()
    (found,) = lake.sql(
        "SELECT DISTINCT METADATA$FILENAME AS name, METADATA$FILE_CONTENT_KEY AS key, "
        "METADATA$FILE_LAST_MODIFIED AS modified FROM @st/bad"
    ).collect()
    modified = dt.datetime.fromtimestamp(int((files / "bad" / "broken.csv").stat().st_mtime * 1000) / 1000, dt.timezone.utc)
    assert (found["NAME"], found["KEY"], found["MODIFIED"]) == ("bad/broken.csv", listed.md5, modified.replace(tzinfo=None))
    # Transformed as they are loaded: Snowflake's INSERT … SELECT from a stage.
    lake.sql("INSERT INTO sales SELECT $1::INT, $2, $3::DECIMAL(10, 2), $4::DATE FROM @st (PATTERN => '2024-0[12][.]csv')")
    expected = [
        (1, "north", Decimal("10.50"), dt.date(2024, 1, 2)),
        (2, "south", None, dt.date(2024, 1, 3)),
        (3, "east", Decimal("7.00"), dt.date(2024, 2, 1)),
    ]
    assert rows(lake, "SELECT * FROM sales") == expected
    assert kernel_rows(location(lake, "SALES")) == expected
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("name the fields of a CSV file: SELECT $1, $2")):
        lake.sql("SELECT * FROM @st")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Stage 'LAKE.PUBLIC.NONE' does not exist or not authorized")):
        lake.sql("SELECT $1 FROM @none")


def test_json_and_parquet_records_are_one_variant_read_by_field(lake: lakeclone.Lake, tmp_path: Path) -> None:
    folder = tmp_path / "raw"
    folder.mkdir()
    (folder / "a.json").write_text('{"id": 1, "region": "north"}\n\n{"id": 2, "tags": [1, 2]}\n')
    pq.write_table(pa.table({"id": [3], "region": ["south"]}), folder / "b.parquet")
    lake.sql(f"CREATE STAGE raw URL = '{uri(folder)}'; CREATE FILE FORMAT js TYPE = JSON; CREATE FILE FORMAT pq TYPE = PARQUET")
    query = "SELECT $1:id::INT AS id, $1:region::STRING AS region, $1:tags[1]::INT AS tag FROM @raw (FILE_FORMAT => 'js', PATTERN => '.*json')"
    assert rows(lake, query) == [(1, "north", None), (2, None, 2)]
    parquet = lake.sql("SELECT * FROM @raw/b.parquet (FILE_FORMAT => 'lake.public.pq')")
    assert parquet.columns == ["$1"]
    assert rows(lake, "SELECT $1:id::INT, $1:region::STRING FROM @raw/b.parquet (FILE_FORMAT => 'lake.public.pq')") == [
        (3, "south")
    ]
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("A JSON file has one column, $1")):
        lake.sql("SELECT $2 FROM @raw (FILE_FORMAT => 'js')")
    (folder / "c.json").write_text('{"id": 4}\nnot json\n')
    with pytest.raises(lakeclone.LakecloneError, match="Error parsing JSON: not json"):
        lake.sql("SELECT $1 FROM @raw (FILE_FORMAT => 'js', PATTERN => '.*json')").collect()


def test_a_query_over_files_needs_usage_on_the_stage_and_no_view_reads_files(lake: lakeclone.Lake, files: Path) -> None:
    staged(lake, files)
    lake.sql(
        "CREATE ROLE analyst; CREATE USER ann; GRANT ROLE analyst TO USER ann;"
        "GRANT USAGE ON DATABASE lake TO ROLE analyst; GRANT USAGE ON SCHEMA lake.public TO ROLE analyst;"
        "CREATE FILE FORMAT plain TYPE = CSV SKIP_HEADER = 1"
    )
    ann = session_of(lake, "ann", "analyst")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Stage 'LAKE.PUBLIC.ST' does not exist or not authorized")):
        ann.sql("SELECT $1 FROM @st")
    lake.sql("GRANT USAGE ON STAGE st TO ROLE analyst")
    assert ann.sql("SELECT COUNT(*) FROM @st").collect()[0][0] == 6
    with pytest.raises(
        lakeclone.LakecloneError, match=re.escape("File format 'LAKE.PUBLIC.PLAIN' does not exist or not authorized")
    ):
        ann.sql("SELECT $1 FROM @st (FILE_FORMAT => 'plain')")
    with pytest.raises(lakeclone.LakecloneError, match=re.escape("Insufficient privileges to operate on account 'ACCOUNT'")):
        ann.sql(f"SELECT * FROM read_files('{uri(files)}', format => 'csv')")
    # A view or a policy is read with its owner's rights at each use; a file has none to check.
    for query in ("SELECT $1 FROM @st", f"SELECT * FROM read_files('{uri(files)}', format => 'csv')"):
        with pytest.raises(lakeclone.LakecloneError, match=re.escape("LAKE.PUBLIC.V cannot read files")):
            lake.sql(f"CREATE VIEW v AS {query}")
        with pytest.raises(lakeclone.LakecloneError, match=re.escape("LAKE.PUBLIC.P cannot read files")):
            lake.sql(f"CREATE ROW ACCESS POLICY p AS (r STRING) RETURNS BOOLEAN -> r IN ({query.replace('*', '$1')})")


def test_read_files_reads_the_files_at_a_uri_as_databricks_does(lake: lakeclone.Lake, files: Path) -> None:
    one = f"read_files('{uri(files)}/2024-01.csv', format => 'csv', header => true, nullValue => '\\\\N')"
    assert rows(lake, f"SELECT id, region, amount, sold FROM {one}") == [
        (1, "north", 10.5, dt.date(2024, 1, 2)),  # types inferred, as Databricks does
        (2, "south", None, dt.date(2024, 1, 3)),
    ]
    # The format from the files' names; pathGlobFilter keeps the top folder's two files.
    both = lake.sql(f"SELECT COUNT(*) FROM read_files('{uri(files)}', pathGlobFilter => '2024-*.csv', header => true)")
    assert both.collect()[0][0] == 3
    typed = f"read_files('{uri(files)}/2024-02.csv', header => true, schema => 'id STRING, region STRING, amount STRING, sold STRING')"
    assert rows(lake, f"SELECT * FROM {typed}") == [("3", "east", "7", "2024-02-01")]
    refused = {
        f"read_files('{uri(lake.warehouse)}/tables', format => 'parquet')": "overlaps the warehouse",
        f"read_files('{uri(files)}/*.csv')": "without patterns",
        f"read_files('{uri(files)}', format => 'csv', color => 'red')": "read_files option 'color' is not supported",
        f"read_files('{uri(files)}/none', format => 'csv')": "read_files found no files",
        f"read_files('{uri(files)}', format => 'avro')": "read_files reads format => 'csv', 'json' or 'parquet'",
    }
    for call, message in refused.items():
        with pytest.raises(lakeclone.LakecloneError, match=re.escape(message)):
            lake.sql(f"SELECT * FROM {call}")
