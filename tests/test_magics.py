"""The IPython layer: parsing, interpolation, the cell's DataFrame, error display, real cells."""

from __future__ import annotations

import datetime as dt
import sys
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import ExecutionResult, InteractiveShell
from traitlets.config import Config

import lakeclone
from lakeclone.errors import LakecloneError, ObjectNotFoundError
from lakeclone.magics import LsqlCellError, LsqlMagics, LsqlResult
from lakeclone.magics.command import LsqlCommand, interpolate, sql_literal

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from pyspark.sql import SparkSession


class TestingShell(InteractiveShell):
    """An IPython shell whose ``run_cell`` raises the cell's error instead of printing it."""

    __test__ = False  # not a test class, despite the name

    def run_cell(self, *args, **kwargs) -> ExecutionResult:
        result = super().run_cell(*args, **kwargs)
        result.raise_error()
        return result

    def run_cell_quietly_failing(self, code: str) -> ExecutionResult:
        """Run a cell as a notebook would: errors are displayed, not raised."""
        return super().run_cell(code)


@pytest.fixture
def ip() -> Iterator[TestingShell]:
    config = Config()
    config.HistoryAccessor.enabled = False  # no history database in ~/.ipython
    shell = TestingShell(config=config)
    shell.run_cell("%load_ext lakeclone")
    yield shell
    shell.clear_instance()


def parse(line: str, cell: str | None = None, **namespace: object) -> LsqlCommand:
    return LsqlCommand.parse(line, cell, magic=LsqlMagics.lsql, namespace=namespace)


# --- parsing the magic line and cell (no Spark) ---


def test_cell_options_are_parsed_and_sql_is_the_cell() -> None:
    command = parse("-o result --lake other", "SELECT 1;\nSELECT 2")
    assert command == LsqlCommand(sql="SELECT 1;\nSELECT 2", out="result", lake="other", statements=2)


@pytest.mark.parametrize(
    ("cell", "statements"),
    [
        ("SELECT 1", 1),
        ("SELECT 1;", 1),
        (";; SELECT 1 ;\n;", 1),
        ("SELECT ';'; SELECT 2 -- ;\n; /* ; */ SELECT 3", 3),
        ('SELECT $$;$$, "a;b"', 1),
        ("SELECT 1 --c\r; DROP TABLE t", 2),
    ],
)
def test_a_cell_counts_its_statements_as_the_dialect_splits_them(cell: str, statements: int) -> None:
    from lakeclone.dialect import parse as parse_script

    assert parse("", cell).statements == statements == len(parse_script(cell))


def test_line_magic_takes_options_then_sql() -> None:
    command = parse("--out=n  --lake  other SELECT COUNT(*) FROM t", None)
    assert command == LsqlCommand(sql="SELECT COUNT(*) FROM t", out="n", lake="other")


def test_each_is_a_flag_the_line_form_takes_before_its_sql() -> None:
    assert parse("--each", "SELECT 1; SELECT 2").each and not parse("", "SELECT 1").each
    command = parse("-o x --each SELECT ';' -- and;\n; SELECT 2", None)
    assert (command.out, command.each, command.sql, command.statements) == ("x", True, "SELECT ';' -- and;\n; SELECT 2", 2)
    assert command.statement_texts() == ["SELECT ';'", "SELECT 2"]  # a comment between statements is left out


def test_line_magic_without_options_is_all_sql() -> None:
    assert parse("SELECT '-o x'", None) == LsqlCommand(sql="SELECT '-o x'", out=None, lake=None)


def test_unknown_option_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unrecognized arguments: --verbose"):
        parse("--verbose yes", "SELECT 1")


def test_out_must_be_a_python_name() -> None:
    with pytest.raises(LakecloneError, match="'2x' is not a Python variable name"):
        parse("-o 2x", "SELECT 1")


def test_no_sql_is_an_error() -> None:
    with pytest.raises(LakecloneError, match="no SQL to run"):
        parse("-o x", None)


# --- interpolation (no Spark) ---


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("O'Brien", "'O''Brien'"),
        ("back\\slash", "'back\\\\slash'"),
        ("", "''"),
        (42, "42"),
        (-7, "-7"),
        (1.5, "1.5"),
        (1e-20, "1e-20"),
        (True, "TRUE"),
        (False, "FALSE"),
        (None, "NULL"),
        (dt.date(2024, 2, 29), "DATE '2024-02-29'"),
        (dt.datetime(2024, 1, 1, 12, 30), "TIMESTAMP '2024-01-01 12:30:00'"),
        (
            dt.datetime(2024, 1, 1, 12, 30, 0, 250, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "TIMESTAMP '2024-01-01 10:30:00.000250+00:00'",
        ),
        (pd.Timestamp("2024-01-01 00:00", tz="UTC"), "TIMESTAMP '2024-01-01 00:00:00+00:00'"),
    ],
)
def test_sql_literal(value: object, literal: str) -> None:
    assert sql_literal(value) == literal


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}, b"bytes", object(), dt.time(12)])
def test_sql_literal_refuses_other_types(value: object) -> None:
    with pytest.raises(LakecloneError, match=r"Cannot substitute :v: a \w+ is not a SQL literal"):
        sql_literal(value, name="v")


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_sql_literal_refuses_non_finite_floats(value: float) -> None:
    with pytest.raises(LakecloneError, match="has no SQL literal"):
        sql_literal(value, name="v")


def test_interpolate_substitutes_parameters() -> None:
    sql = "SELECT * FROM t WHERE name = :name AND n IN (:n,:n) AND (x=:flag)"
    assert interpolate(sql, {"name": "O'Brien", "n": 3, "flag": None}) == (
        "SELECT * FROM t WHERE name = 'O''Brien' AND n IN (3,3) AND (x=NULL)"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT x::INT, '2024-01-01'::DATE, (x)::STRING FROM t",
        'SELECT v:name, v:name.first, v:"quoted", "col":field, arr[0]:f, f(v):g FROM t',
        "SELECT * FROM t AT(TIMESTAMP => '2024-01-01'::TIMESTAMP)",
        "SELECT ':name', 'it''s :name', 'a\\' :name' FROM t",
        'SELECT "weird :name" FROM t',
        "SELECT $$ :name $$ FROM t",
        "SELECT 1 -- :name\nFROM t // :name\n/* :name\n :name */",
        "SELECT {'k':name} FROM t",
        "SELECT :1, ':{{name}}', '{{name}}' FROM t",
    ],
)
def test_interpolate_leaves_casts_paths_strings_and_comments_alone(sql: str) -> None:
    assert interpolate(sql, {}) == sql


@pytest.mark.parametrize("comment", ["--", "//"])
@pytest.mark.parametrize("newline", ["\r", "\n", "\r\n"])
def test_a_line_comment_ends_where_the_dialect_ends_it(comment: str, newline: str) -> None:
    """What the magic takes for a comment, the dialect does too: the code after a bare \r is code for both."""
    from lakeclone.dialect import parse

    text = f"SELECT 1 {comment}c{newline}; SELECT :v"
    interpolated = interpolate(text, {"v": "x"})
    assert interpolated == f"SELECT 1 {comment}c{newline}; SELECT 'x'"
    assert [s.expression.sql(dialect="snowflake") for s in parse(interpolated)] == ["SELECT 1 /* c */", "SELECT 'x'"]


def test_interpolate_unknown_variable_is_an_error() -> None:
    with pytest.raises(LakecloneError, match="Cannot substitute :missing: no Python variable 'missing'"):
        interpolate("SELECT :missing", {})


def test_interpolate_identifiers() -> None:
    namespace = {"table": "db.public.orders", "col": "amount_$"}
    assert interpolate("SELECT {{ col }} FROM {{table}}", namespace) == ("SELECT amount_$ FROM db.public.orders")


@pytest.mark.parametrize("value", ["orders; DROP TABLE x", "a b", "a..b", "1abc", "", 3])
def test_interpolate_refuses_non_identifiers(value: object) -> None:
    with pytest.raises(LakecloneError, match=r"Cannot substitute \{\{t\}\}: .* is not a SQL identifier"):
        interpolate("SELECT * FROM {{t}}", {"t": value})


def test_interpolate_unknown_identifier_variable_is_an_error() -> None:
    with pytest.raises(LakecloneError, match=r"Cannot substitute \{\{t\}\}: no Python variable 't'"):
        interpolate("SELECT * FROM {{t}}", {})


# --- the result DataFrame (no Spark) ---


def result_of(rows: int, *, truncated: bool = False, display_limit: int = 3) -> LsqlResult:
    return LsqlResult(
        pd.DataFrame({"N": range(rows)}),
        elapsed=0.4213,
        truncated=truncated,
        max_rows=rows,
        display_limit=display_limit,
        query_id="q1",
    )


def test_small_result_shows_everything() -> None:
    result = result_of(1)
    assert result.footer() == "1 row · 0.42 s"
    assert result._repr_html_().count("<tr") == 2  # header + 1 row
    assert repr(result).endswith("\n1 row · 0.42 s")


def test_a_result_shows_its_columns_without_pandas_row_numbers() -> None:
    result = LsqlResult(
        pd.DataFrame({"NAME": ["ann", "bob"]}), elapsed=0.1, truncated=False, max_rows=10, display_limit=10, query_id="q"
    )
    assert repr(result).splitlines()[:3] == ["NAME", " ann", " bob"]
    html = result._repr_html_()
    assert "<th>NAME</th>" in html and "<th>0</th>" not in html and "<th></th>" not in html


def test_display_limit_caps_rows_shown() -> None:
    result = result_of(1234, display_limit=20)
    assert result.footer() == "1,234 rows · 0.42 s · showing first 20 of 1,234 rows"
    html = result._repr_html_()
    assert html.count("<tr") == 21  # header + 20 rows
    assert "1,234 rows · 0.42 s · showing first 20 of 1,234 rows" in html


def test_a_result_of_several_statements_says_how_many_ran() -> None:
    result = LsqlResult(
        pd.DataFrame({"N": range(2)}), elapsed=0.4213, truncated=False, max_rows=10, display_limit=5, query_id="q", statements=3
    )
    assert result.footer() == "3 statements ran; the last one's 2 rows · 0.42 s"
    assert "3 statements ran" in result._repr_html_() and repr(result).endswith(
        "\n3 statements ran; the last one's 2 rows · 0.42 s"
    )


def test_truncated_result_says_so() -> None:
    result = result_of(10_000, truncated=True, display_limit=20)
    assert result.footer() == (
        "more than 10,000 rows · 0.42 s · showing first 20 · fetched first 10,000 rows; use lake.sql(...) for all"
    )
    assert "fetched first 10,000 rows; use lake.sql(...) for all" in result._repr_html_()


def test_result_is_a_dataframe_and_derived_frames_are_plain() -> None:
    result = result_of(5)
    assert isinstance(result, pd.DataFrame)
    assert result.query_id == "q1"
    assert type(result[result["N"] > 2]) is pd.DataFrame
    assert type(result.head(2)) is pd.DataFrame


# --- the shell, before any SQL runs (no Spark) ---


def test_unknown_variable_fails_the_cell_with_just_the_message(ip: TestingShell, capsys: pytest.CaptureFixture[str]) -> None:
    outcome = ip.run_cell_quietly_failing("%%lsql\nSELECT :nope")
    assert not outcome.success
    assert isinstance(outcome.error_in_exec, LsqlCellError)
    out = capsys.readouterr().out
    assert out.strip() == "Cannot substitute :nope: no Python variable 'nope' is defined."


def test_lake_option_must_name_a_lake(ip: TestingShell) -> None:
    ip.user_ns["not_a_lake"] = 3
    with pytest.raises(LsqlCellError, match="'not_a_lake' is a int, not a lakeclone Lake"):
        ip.run_cell("%%lsql --lake not_a_lake\nSELECT 1")
    with pytest.raises(LsqlCellError, match="no Python variable 'nowhere'"):
        ip.run_cell("%lsql --lake nowhere SELECT 1")


def test_config_sets_limits(ip: TestingShell) -> None:
    ip.run_cell("%config LsqlMagics.display_limit = 20")
    ip.run_cell("%config LsqlMagics.max_rows = 500")
    magics = ip.magics_manager.registry["LsqlMagics"]
    assert (magics.display_limit, magics.max_rows) == (20, 500)


def test_cell_error_renders_as_its_message() -> None:
    error = LsqlCellError(str(ObjectNotFoundError("DB.PUBLIC.T", kind="Table")))
    assert error._render_traceback_() == [
        "SQL compilation error:",
        "Table 'DB.PUBLIC.T' does not exist or not authorized.",
    ]


# --- real cells on a real Lake ---


@pytest.mark.spark
def test_cells_keep_to_their_lake_and_say_who_ran_them_until_lsql_use_switches(ip: TestingShell, lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE t (id INT); CREATE ROLE analyst; CREATE USER bob; GRANT ROLE analyst TO USER bob;"
        "GRANT USAGE ON DATABASE lake TO ROLE analyst; GRANT USAGE ON SCHEMA lake.public TO ROLE analyst;"
        "GRANT SELECT ON TABLE t TO ROLE analyst"
    )
    first = ip.run_cell("%lsql SELECT CURRENT_USER() AS u").result
    assert (first.iloc[0, 0], first.ran_as) == ("ADMIN", "user ADMIN, role ACCOUNTADMIN")
    assert first.footer().endswith(" · as user ADMIN, role ACCOUNTADMIN")
    # A Lake made later, for another user, does not change who plain cells run as.
    ip.user_ns["bob"] = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="bob", role="analyst")
    assert lakeclone.lake.latest() is ip.user_ns["bob"]
    again = ip.run_cell("%lsql SELECT CURRENT_USER() AS u").result
    assert (again.iloc[0, 0], again.ran_as) == ("ADMIN", "user ADMIN, role ACCOUNTADMIN")
    once = ip.run_cell("%lsql --lake bob SELECT CURRENT_USER() AS u").result
    assert (once.iloc[0, 0], once.ran_as) == ("BOB", "user BOB, role ANALYST")
    ip.run_cell("%lsql_use bob")
    switched = ip.run_cell("%lsql SELECT CURRENT_ROLE() AS r").result
    assert (switched.iloc[0, 0], switched.ran_as) == ("ANALYST", "user BOB, role ANALYST")
    # A privilege error names who was denied.
    denied = ip.run_cell_quietly_failing("%%lsql\nINSERT INTO t VALUES (1)")
    assert isinstance(denied.error_in_exec, LsqlCellError)
    assert str(denied.error_in_exec).endswith(
        "Insufficient privileges to operate on table 'LAKE.PUBLIC.T' as user BOB, role ANALYST"
    )
    with pytest.raises(LsqlCellError, match="%lsql_use nobody: no Python variable 'nobody' is defined"):
        ip.run_cell("%lsql_use nobody")


@pytest.mark.spark
def test_a_failing_lake_sql_in_a_python_cell_shows_its_message_alone(
    ip: TestingShell, lake: lakeclone.Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.user_ns["lake"] = lake
    outcome = ip.run_cell_quietly_failing('lake.sql("SELEC 1")')
    assert not outcome.success
    shown = capsys.readouterr().out.strip().splitlines()
    assert shown[0] == "SqlSyntaxError: SQL compilation error:" and "Traceback" not in "".join(shown), shown
    assert len(shown) <= 3
    # %debug has what it needs: the error and where it was raised.
    assert sys.last_value is outcome.error_in_exec and sys.last_traceback is not None


@pytest.mark.spark
def test_cell_runs_statements_and_returns_the_last_result(ip: TestingShell, lake: lakeclone.Lake) -> None:
    result = ip.run_cell(
        "%%lsql\n"
        "CREATE TABLE people (id INT, name STRING);\n"
        "INSERT INTO people VALUES (1, 'Ada'), (2, 'Grace');\n"
        "SELECT * FROM people ORDER BY id"
    ).result
    assert isinstance(result, LsqlResult)
    assert result.values.tolist() == [[1, "Ada"], [2, "Grace"]]
    assert result.query_id == lake.last_query_id
    assert result.elapsed > 0
    assert result.statements == 3
    assert result.footer().startswith("3 statements ran; the last one's 2 rows · ")
    # A -- comment ends at a bare \r for the magic as for the dialect: the DROP after it runs, and is counted.
    ip.run_cell("%%lsql\nSELECT 1 --c\r; DROP TABLE people")
    assert "PEOPLE" not in [row.name for row in lake.sql("SHOW TABLES").collect()]


@pytest.mark.spark
def test_out_stores_the_result(ip: TestingShell, lake: lakeclone.Lake) -> None:
    ip.run_cell("%%lsql -o answer\nSELECT 42 AS n")
    assert isinstance(ip.user_ns["answer"], LsqlResult)
    assert ip.user_ns["answer"].iloc[0, 0] == 42


@pytest.mark.spark
def test_line_magic(ip: TestingShell, lake: lakeclone.Lake) -> None:
    ip.run_cell("x = %lsql SELECT 1 + 1 AS two")
    assert ip.user_ns["x"].iloc[0, 0] == 2
    ip.run_cell("%lsql -o y SELECT 3 AS three")
    assert ip.user_ns["y"].iloc[0, 0] == 3


@pytest.mark.spark
def test_interpolated_values_round_trip(ip: TestingShell, lake: lakeclone.Lake) -> None:
    ip.user_ns.update(
        name="O'Brien",
        n=7,
        nothing=None,
        when=dt.datetime(2024, 3, 1, 8, 30, tzinfo=dt.timezone.utc),
    )
    ip.run_cell(
        "%%lsql\n"
        "CREATE TABLE t (name STRING, n INT, gone STRING, at TIMESTAMP_NTZ);\n"
        "INSERT INTO t VALUES (:name, :n, :nothing, :when)"
    )
    row = ip.run_cell("%lsql SELECT * FROM t").result.iloc[0]
    assert row.iloc[0] == "O'Brien"
    assert row.iloc[1] == 7
    assert row.iloc[2] is None
    assert pd.Timestamp(row.iloc[3]) == pd.Timestamp("2024-03-01 08:30")


@pytest.mark.spark
def test_casts_are_untouched(ip: TestingShell, lake: lakeclone.Lake) -> None:
    assert ip.run_cell("%lsql SELECT '42'::INT AS n").result.iloc[0, 0] == 42


@pytest.mark.spark
def test_engine_error_fails_the_cell_with_just_the_message(
    ip: TestingShell, lake: lakeclone.Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = ip.run_cell_quietly_failing("%%lsql\nSELECT * FROM no_such_table")
    assert not outcome.success
    error = outcome.error_in_exec
    assert isinstance(error, LsqlCellError)
    assert isinstance(error.__cause__, ObjectNotFoundError)
    out = capsys.readouterr().out
    assert out.startswith("SQL compilation error:\n")
    assert "does not exist or not authorized." in out
    assert "Traceback" not in out
    assert error._render_traceback_() == out.strip().splitlines()


@pytest.mark.spark
def test_error_while_fetching_rows_is_a_cell_error(ip: TestingShell, lake: lakeclone.Lake) -> None:
    # Spark runs a SELECT only when the magic fetches its rows.
    with pytest.raises(LsqlCellError, match="Numeric value 'x' is not recognized"):
        ip.run_cell("%lsql SELECT CAST('x' AS INT)")


@pytest.mark.spark
def test_each_shows_every_statement_s_result_in_order(
    ip: TestingShell, lake: lakeclone.Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = "%%lsql --each\nCREATE TABLE t (n INT);\nINSERT INTO t VALUES (1), (2);\nSELECT n FROM t ORDER BY n"
    result = ip.run_cell(cell).result
    shown = capsys.readouterr().out  # what the cell displayed before its value
    assert shown.index("Table T successfully created.") < shown.index("statement 1 of 3 · 1 row · ")
    assert shown.index("statement 1 of 3") < shown.index("number of rows inserted") < shown.index("statement 2 of 3 · 1 row · ")
    assert isinstance(result, LsqlResult) and result.values.tolist() == [[1], [2]]
    assert result.footer().startswith("statement 3 of 3 · 2 rows · ")
    # A failure names its statement as a cell without --each does; the statements before it stay done.
    with pytest.raises(LsqlCellError) as caught:
        ip.run_cell("%%lsql --each\nINSERT INTO t VALUES (3);\nSELECT nope FROM t;\nINSERT INTO t VALUES (4)")
    assert str(caught.value).splitlines()[-1] == "(in statement 2 of 3: SELECT nope FROM t)"
    assert sorted(ip.run_cell("%lsql --each SELECT n FROM t").result["N"]) == [1, 2, 3]


@pytest.mark.spark
def test_a_cell_of_several_statements_says_which_failed(ip: TestingShell, lake: lakeclone.Lake) -> None:
    ip.run_cell("%%lsql\nCREATE TABLE t (v STRING);\nINSERT INTO t VALUES ('x')")
    with pytest.raises(LsqlCellError) as caught:
        ip.run_cell("%%lsql\nINSERT INTO t VALUES ('y');\nSELECT nope FROM t;\nINSERT INTO t VALUES ('z')")
    assert str(caught.value).splitlines()[-1] == "(in statement 2 of 3: SELECT nope FROM t)"
    # The last statement's rows are fetched by the magic, after the statement ran.
    with pytest.raises(LsqlCellError) as caught:
        ip.run_cell("%%lsql\nSELECT 1;\nSELECT CAST(v AS INT) FROM t WHERE v = 'x'")
    assert str(caught.value).splitlines() == [
        "Numeric value 'x' is not recognized",
        "(in statement 2 of 2: SELECT CAST(v AS INT) FROM t WHERE v = 'x')",
    ]
    assert sorted(ip.run_cell("%lsql SELECT v FROM t").result["V"]) == ["x", "y"]


@pytest.mark.spark
def test_display_limit_and_fetch_cap(ip: TestingShell, lake: lakeclone.Lake) -> None:
    ip.run_cell("%config LsqlMagics.display_limit = 3")
    ip.run_cell("%config LsqlMagics.max_rows = 5")
    values = ", ".join(f"({i})" for i in range(10))
    ip.run_cell(f"%%lsql\nCREATE TABLE ten (i INT);\nINSERT INTO ten VALUES {values}")
    result = ip.run_cell("%lsql SELECT * FROM ten ORDER BY i").result
    assert result.iloc[:, 0].tolist() == [0, 1, 2, 3, 4]
    assert result.truncated
    html = result._repr_html_()
    assert html.count("<tr") == 4  # header + 3 rows
    assert "more than 5 rows" in html
    assert "fetched first 5 rows; use lake.sql(...) for all" in html


@pytest.mark.spark
def test_lake_option_picks_the_lake(
    ip: TestingShell,
    lake: lakeclone.Lake,
    spark: SparkSession,
    clock: lakeclone.ManualClock,
    tmp_path: Path,
) -> None:
    ip.user_ns["first"] = lake
    other = lakeclone.connect(tmp_path / "other", spark=spark, clock=clock)
    assert lakeclone.lake.latest() is other
    ip.run_cell("%%lsql --lake first\nCREATE TABLE only_in_first (i INT)")
    ip.run_cell("%lsql --lake first SELECT * FROM only_in_first")
    with pytest.raises(LsqlCellError, match="does not exist or not authorized"):
        ip.run_cell("%lsql SELECT * FROM only_in_first")


@pytest.mark.spark
def test_an_interpolated_value_never_becomes_sql_text(ip: TestingShell, lake: lakeclone.Lake) -> None:
    hostile = "x'); DROP TABLE t; --"
    ip.user_ns.update(hostile=hostile, quoted="' OR 1 = 1 --", table="t; DROP TABLE t")
    ip.run_cell("%%lsql\nCREATE TABLE t (s STRING);\nINSERT INTO t VALUES (:hostile)")
    assert [r[0] for r in lake.sql("SELECT s FROM t").collect()] == [hostile]
    # A value compared in a WHERE clause matches itself only, not every row.
    assert ip.run_cell("%lsql SELECT COUNT(*) AS n FROM t WHERE s = :quoted").result.iloc[0, 0] == 0
    # An identifier that is not one is refused before anything runs.
    outcome = ip.run_cell_quietly_failing("%lsql SELECT * FROM {{table}}")
    assert not outcome.success
    assert [r.name for r in lake.sql("SHOW TABLES").collect()] == ["T"]


# --- completion in lsql cells, through IPython's own completer ---


def _completions(ip: TestingShell, text: str, cursor: int | None = None) -> list[str]:
    from IPython.core.completer import provisionalcompleter

    with provisionalcompleter():
        return [c.text for c in ip.Completer.completions(text, len(text) if cursor is None else cursor)]


def test_lsql_cells_complete_keywords_names_and_columns(ip: TestingShell, lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE DATABASE shop; CREATE SCHEMA shop.sales; CREATE TABLE shop.sales.orders (id INT, customer STRING);"
        "CREATE TABLE shop.sales.secret (x INT); CREATE VIEW shop.sales.big AS SELECT id FROM shop.sales.orders;"
        "CREATE STREAM shop.sales.changes ON TABLE shop.sales.orders; USE SCHEMA shop.sales"
    )
    ip.run_cell("%%lsql\nSELECT 1")  # the cells' Lake, which completion reads
    assert _completions(ip, "%%lsql\nSELECT * FROM OR") == ["ORDERS", "OR", "ORDER"]
    assert _completions(ip, "%%lsql\nselect * from or") == ["orders", "or", "order"]
    assert _completions(ip, "%%lsql\nSEL") == ["SELECT"]
    # After a qualifier: what it holds (tables, then views, then streams), and nothing else.
    assert _completions(ip, "%%lsql\nSELECT * FROM shop.sales.") == ["ORDERS", "SECRET", "BIG", "CHANGES"]
    assert _completions(ip, "%%lsql\nSELECT * FROM shop.") == ["PUBLIC", "SALES"]
    # Columns: of the relations the cell names, and after an alias, wherever the cursor is.
    text = "%%lsql\nSELECT o.CU FROM orders o"
    assert _completions(ip, text, cursor=text.index(" FROM")) == ["CUSTOMER"]
    text = "%%lsql\nSELECT cus FROM shop.sales.orders WHERE id = 1"
    assert _completions(ip, text, cursor=text.index(" FROM")) == ["customer"]
    assert _completions(ip, "%lsql SELECT * FROM sec") == ["secret"]
    # Elsewhere IPython completes Python as ever.
    ip.user_ns["lakeside_value"] = 1
    assert _completions(ip, "lakeside_v") == ["lakeside_value"]


def test_completion_offers_only_what_the_cells_role_sees(ip: TestingShell, lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE orders (id INT); CREATE TABLE secret (x INT); CREATE ROLE analyst; CREATE USER ann;"
        "GRANT ROLE analyst TO USER ann; GRANT USAGE ON DATABASE lake TO ROLE analyst;"
        "GRANT USAGE ON SCHEMA lake.public TO ROLE analyst; GRANT SELECT ON TABLE lake.public.orders TO ROLE analyst"
    )
    ip.user_ns["ann"] = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="ann", role="analyst")
    ip.user_ns["admin"] = lake
    ip.run_cell("%lsql_use admin")
    assert _completions(ip, "%%lsql\nSELECT * FROM lake.public.") == ["ORDERS", "SECRET"]
    assert _completions(ip, "%%lsql --lake ann\nSELECT * FROM lake.public.") == ["ORDERS"]
    assert _completions(ip, "%%lsql --lake ann\nSELECT x FROM lake.public.secret s WHERE s.") == []
    ip.run_cell("%lsql_use ann")
    assert _completions(ip, "%%lsql\nSELECT * FROM lake.public.") == ["ORDERS"]


def test_completing_a_views_columns_leaves_no_frame_bound(ip: TestingShell, lake: lakeclone.Lake) -> None:
    lake.sql("CREATE VIEW meta AS SELECT table_name FROM information_schema.tables")
    ip.run_cell("%%lsql\nSELECT 1")
    text = "%%lsql\nSELECT m.TA FROM meta m"
    assert _completions(ip, text, cursor=text.index(" FROM")) == ["TABLE_NAME"]
    assert [t.name for t in lake.spark.catalog.listTables() if t.name.startswith("lc_bound_")] == []
