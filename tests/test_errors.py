"""What a user sees when a statement fails: one short LakecloneError, in Snowflake's words, never a Java trace."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from jvm_settings import worker_env
from lake_helpers import rows
from sqlglot import exp
from warehouse_templates import Build

import lakeclone
from lakeclone.engine import registry
from lakeclone.engine.work import UnitOfWork
from lakeclone.errors import (
    ExecutionError,
    InternalError,
    SqlCompilationError,
    SqlSyntaxError,
    StatementPosition,
)
from lakeclone.spark_errors import conflict, jvm_failure

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution

pytestmark = pytest.mark.spark


def failure(lake: lakeclone.Lake, sql: str) -> lakeclone.LakecloneError:
    with pytest.raises(lakeclone.LakecloneError) as caught:
        lake.sql(sql).collect()
    return caught.value


def _ann_and_bob(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE people (id INT, name STRING); INSERT INTO people VALUES (1, 'ann'), (2, 'bob')")


@pytest.fixture
def people(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    return copy_of(_ann_and_bob)


def test_every_error_lakeclone_raises_is_defined_and_exported_in_errors() -> None:
    """One module holds the errors a caller may catch, each in its ``__all__``; no feature defines one of its own."""
    import importlib
    import inspect
    import pkgutil

    import lakeclone.errors

    raised = set()
    for module in pkgutil.walk_packages(lakeclone.__path__, "lakeclone."):
        for value in vars(importlib.import_module(module.name)).values():
            if inspect.isclass(value) and issubclass(value, lakeclone.LakecloneError):
                raised.add(value)
    assert {error.__module__ for error in raised} == {"lakeclone.errors"}
    defined = {
        value for value in vars(lakeclone.errors).values() if inspect.isclass(value) and value.__module__ == "lakeclone.errors"
    }
    assert {error.__name__ for error in defined} == set(lakeclone.errors.__all__)
    assert raised == {error for error in defined if issubclass(error, lakeclone.LakecloneError)}
    assert {"LockTimeoutError", "ChannelInvalidError", "StaleStreamError", "WidgetError"} <= set(lakeclone.errors.__all__)


# Short tracebacks -----------------------------------------------------------------------------------


def test_a_syntax_error_does_not_chain_sqlglots_error(lake: lakeclone.Lake) -> None:
    error = failure(lake, "SELEC 1")
    assert isinstance(error, SqlSyntaxError)
    assert error.__cause__ is None
    assert error.__suppress_context__
    shown = "".join(traceback.format_exception(error))
    assert "sqlglot" not in shown
    assert "ParseError" not in shown
    assert "\x1b[" not in shown


def test_an_unterminated_string_does_not_chain_sqlglots_error(lake: lakeclone.Lake) -> None:
    error = failure(lake, "SELECT 'open")
    assert isinstance(error, SqlSyntaxError)
    assert "TokenError" not in "".join(traceback.format_exception(error))


def test_spark_failures_do_not_chain_the_java_error(people: lakeclone.Lake) -> None:
    for sql in ("SELECT nope FROM people", "SELECT CAST(name AS INT) FROM people"):
        error = failure(people, sql)
        shown = "".join(traceback.format_exception(error))
        assert error.__cause__ is None
        # Only lakeclone's own frames: no chained Spark or Java exception.
        for noise in ("py4j.protocol", "pyspark.errors.exceptions", "org.apache", "During handling", "direct cause"):
            assert noise not in shown, shown


def _frames(error: BaseException) -> list[str]:
    """``file:function`` of each frame of the error's traceback, as the caller sees it."""
    return [f"{frame.filename.rsplit('/', 1)[-1]}:{frame.name}" for frame in traceback.extract_tb(error.__traceback__)]


def test_the_public_api_raises_with_the_caller_s_frames_and_keeps_its_own_aside(people: lakeclone.Lake) -> None:
    with pytest.raises(SqlSyntaxError) as at_sql:
        people.sql("SELEC 1")
    with pytest.raises(ExecutionError) as at_collect:
        people.sql("SELECT CAST(name AS INT) FROM people").collect()
    with pytest.raises(ExecutionError) as at_derived:
        people.sql("SELECT CAST(name AS INT) AS n FROM people").where("n > 0").limit(1).toPandas()
    with pytest.raises(lakeclone.LakecloneError) as at_lineage:
        people.lineage("nope")
    for caught, api in ((at_sql, "sql"), (at_collect, "collect"), (at_derived, "toPandas"), (at_lineage, "lineage")):
        # This test's frame, then the public method's: no executor, contextlib or Spark translation.
        frames = _frames(caught.value)
        assert len(frames) == 2 and frames[0].startswith("test_errors.py:") and frames[1] == "errors.py:call", (api, frames)
        kept = traceback.extract_tb(caught.value.internal_traceback)
        assert len(kept) > 3 and any("/lakeclone/" in frame.filename for frame in kept), api
    # The executor's frames are among those kept aside.
    assert "executor.py" in "".join(traceback.format_tb(at_sql.value.internal_traceback))


# Which statement of several failed ------------------------------------------------------------------


def test_the_failing_statement_of_several_is_named(people: lakeclone.Lake) -> None:
    error = failure(people, "SELECT 1;\nSELECT nope\n  FROM people;\nSELECT 2")
    assert error.statement == StatementPosition(2, 3, "SELECT nope\n  FROM people")
    assert str(error) == ("SQL compilation error:\ninvalid identifier 'NOPE'\n(in statement 2 of 3: SELECT nope FROM people)")


def test_a_failure_while_running_the_second_statement_is_named_and_stops_the_rest(people: lakeclone.Lake) -> None:
    error = failure(
        people,
        "INSERT INTO people VALUES (3, 'cy'); INSERT INTO people VALUES ('four', 'dee'); INSERT INTO people VALUES (5, 'eve')",
    )
    assert isinstance(error, ExecutionError)
    assert str(error).splitlines() == [
        "Numeric value 'four' is not recognized",
        "(in statement 2 of 3: INSERT INTO people VALUES ('four', 'dee'))",
    ]
    assert rows(people, "SELECT id FROM people") == [(1,), (2,), (3,)]


def test_a_failure_while_reading_the_last_statements_rows_is_named(people: lakeclone.Lake) -> None:
    # Spark runs the SELECT only when its rows are asked for, after lake.sql has returned.
    frame = people.sql("INSERT INTO people VALUES (3, 'cy'); SELECT CAST(name AS INT) FROM people WHERE id = 3")
    with pytest.raises(ExecutionError) as caught:
        frame.toPandas()
    assert str(caught.value).splitlines() == [
        "Numeric value 'cy' is not recognized",
        "(in statement 2 of 2: SELECT CAST(name AS INT) FROM people WHERE id = 3)",
    ]


def test_a_single_statement_has_no_position(people: lakeclone.Lake) -> None:
    error = failure(people, "SELECT nope FROM people;")
    assert error.statement is None
    assert str(error) == "SQL compilation error:\ninvalid identifier 'NOPE'"


def test_a_long_statement_is_cut_in_the_position() -> None:
    position = StatementPosition(1, 2, "SELECT " + ", ".join(f"column_{i}" for i in range(40)) + " FROM t")
    text = str(position)
    assert text.startswith("(in statement 1 of 2: SELECT column_0, column_1")
    assert text.endswith("…)")
    assert len(text) < 110


# Snowflake's words -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "kind", "message"),
    [
        ("SELECT unknown_fn(1)", SqlCompilationError, "SQL compilation error:\nUnknown function UNKNOWN_FN"),
        ("SELECT CAST(name AS INT) FROM people WHERE id = 1", ExecutionError, "Numeric value 'ann' is not recognized"),
        ("SELECT 'x'::NUMBER(10, 2)", ExecutionError, "Numeric value 'x' is not recognized"),
        ("SELECT '2024-13-45'::DATE", ExecutionError, "Date '2024-13-45' is not recognized"),
        ("SELECT 'noon'::TIMESTAMP", ExecutionError, "Timestamp 'noon' is not recognized"),
        ("SELECT 'maybe'::BOOLEAN", ExecutionError, "Boolean value 'maybe' is not recognized"),
        ("SELECT id / 0 FROM people", ExecutionError, "Division by zero"),
        (
            "SELECT id FROM people p JOIN people q ON p.id = q.id",
            SqlCompilationError,
            "SQL compilation error:\nambiguous column name 'ID'",
        ),
    ],
)
def test_failures_are_worded_as_snowflake_words_them(
    people: lakeclone.Lake, sql: str, kind: type[Exception], message: str
) -> None:
    error = failure(people, sql)
    assert type(error) is kind
    assert str(error) == message


def test_a_conflict_drops_deltas_advice() -> None:
    message = (
        "[DELTA_CONCURRENT_APPEND.WITHOUT_HINT] ConcurrentAppendException: Files were added to the root of the "
        "table by a concurrent update. Please try the operation again.\nConflicting commit: {...}\n"
        "Refer to https://docs.delta.io/latest/concurrency-control.html for more details."
    )
    error = conflict(message)
    assert str(error) == (
        "Transaction conflict: Files were added to the root of the table by a concurrent update. Please try the operation again."
    )


# Input found by fuzzing: one line, a LakecloneError, nothing changed ----------------------------------------


@pytest.mark.parametrize(
    ("sql", "kind", "message"),
    [
        ("DELETE FRO", SqlSyntaxError, "SQL compilation error:\nsyntax error line 1 at position 7 unexpected 'FRO'."),
        ("DELETE people", SqlSyntaxError, "SQL compilation error:\nsyntax error line 1 at position 7 unexpected 'people'."),
        (
            "CREATE TABLE c (a INT) CLONE people",
            SqlCompilationError,
            "SQL compilation error:\nA clone has its source's columns: CLONE takes no column list.",
        ),
        ("SELECT '\ud800'", SqlCompilationError, "SQL compilation error:\nInvalid UTF8 detected in string '\\ud800'"),
        ("INSERT INTO people", SqlCompilationError, "SQL compilation error:\nINSERT needs VALUES or a query."),
        (
            "SELECT " + "(" * 3000 + "1" + ")" * 3000,
            SqlCompilationError,
            "SQL compilation error:\nThe statement is too deeply nested to parse; split its expressions into smaller ones.",
        ),
        (
            "SELECT * FROM people WHERE " + " AND ".join(f"id <> {i}" for i in range(5000)),
            SqlCompilationError,
            "SQL compilation error:\nThe statement has 4999 ANDs and ORs, more than the 1000 lakeclone plans; "
            "write long lists of alternatives as IN (...) or a join with a table of values.",
        ),
        (
            "SELECT * FROM people WHERE " + " OR ".join(f"id = {i}" for i in range(20000)),
            SqlCompilationError,
            "SQL compilation error:\nThe statement has 19999 ANDs and ORs, more than the 1000 lakeclone plans; "
            "write long lists of alternatives as IN (...) or a join with a table of values.",
        ),
    ],
    ids=[
        "delete-fro",
        "delete-without-from",
        "clone-with-columns",
        "lone-surrogate",
        "insert-nothing",
        "nested",
        "5000-ands",
        "20000-ors",
    ],
)
def test_malformed_statements_fail_in_one_line(people: lakeclone.Lake, sql: str, kind: type[Exception], message: str) -> None:
    error = failure(people, sql)
    assert type(error) is kind
    assert str(error) == message
    assert error.__cause__ is None
    assert rows(people, "SELECT * FROM people") == [(1, "ann"), (2, "bob")]
    assert [r.name for r in people.sql("SHOW TABLES").collect()] == ["PEOPLE"]


def test_an_unforeseen_python_error_is_an_internal_lakeclone_error(
    people: lakeclone.Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in a statement's handler reaches the user as one line, and the statement's compensations run."""
    insert = registry.STATEMENTS[exp.Insert]

    def buggy(execution: Execution) -> DataFrame:
        insert.run(execution)  # the INSERT commits...
        return None.rows  # type: ignore[attr-defined]  # ...then lakeclone trips over its own feet

    undone: list[str] = []
    monkeypatch.setitem(registry.STATEMENTS, exp.Insert, registry.Statement(insert.bind, buggy, insert.query_type))
    monkeypatch.setattr(UnitOfWork, "rollback", lambda self: undone.append("rolled back"))
    error = failure(people, "INSERT INTO people VALUES (3, 'cy')")
    assert type(error) is InternalError
    assert str(error) == (
        "Internal error in lakeclone (AttributeError: 'NoneType' object has no attribute 'rows'); please report it."
    )
    assert isinstance(error.original, AttributeError)
    assert error.__cause__ is None
    assert undone == ["rolled back"]


@pytest.mark.parametrize(
    ("java", "words"),
    [
        ("java.lang.StackOverflowError", "too deeply nested for Spark to run"),
        ("java.lang.OutOfMemoryError: Java heap space", "Spark ran out of memory"),
    ],
)
def test_jvm_failures_are_said_in_plain_words(java: str, words: str) -> None:
    error = jvm_failure(["org.apache.spark.SparkException: Job aborted", java])
    assert error is not None and words in str(error)
    assert "java." not in str(error)
    assert jvm_failure(["org.apache.spark.SparkException: Job aborted"]) is None


# Clauses lakeclone parses but does not run are refused --------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT id FROM people START WITH id = 1 CONNECT BY PRIOR id = id", "CONNECT BY"),
        (
            "SELECT * FROM people MATCH_RECOGNIZE (ORDER BY id MEASURES 1 AS x PATTERN (a) DEFINE a AS true)",
            "MATCH_RECOGNIZE",
        ),
        ("SELECT * FROM people p ASOF JOIN people q MATCH_CONDITION(p.id >= q.id)", "ASOF JOIN"),
        ("SELECT * FROM people, LATERAL FLATTEN(input => ARRAY_CONSTRUCT(1, 2)) f", "FLATTEN"),
        ("SELECT * FROM TABLE(GENERATOR(ROWCOUNT => 3))", "GENERATOR"),
        ("SELECT * FROM people SAMPLE (BUCKET 1 OUT OF 2)", "BUCKET"),
        ("SHOW SCHEMAS HISTORY", "HISTORY"),
        ("SHOW TABLES FROM 'PEOPLE'", "LIMIT"),
        ("DROP TABLE people PURGE", "PURGE"),
        ("CREATE TRANSIENT SCHEMA scratch", "TRANSIENT schemas"),
        ("CREATE TABLE c (id INT) COPY GRANTS", "COPY GRANTS"),  # on a clone it works (access control)
    ],
)
def test_parsed_but_unsupported_clauses_are_refused(people: lakeclone.Lake, sql: str, named: str) -> None:
    error = failure(people, sql)
    assert isinstance(error, SqlCompilationError)
    assert named in str(error)
    assert rows(people, "SELECT * FROM people") == [(1, "ann"), (2, "bob")]


_JVM_DIES = textwrap.dedent(
    """
    import os, signal, sys, time
    import lakeclone
    from lakeclone.errors import ExecutionError

    lake = lakeclone.connect(sys.argv[1])
    lake.sql("CREATE TABLE t (a INT)")
    lake.sql("INSERT INTO t VALUES (1)")
    java = lake.spark.sparkContext._gateway.proc
    os.kill(java.pid, signal.SIGKILL)
    java.wait()
    for statement in ("SELECT a FROM t", "INSERT INTO t VALUES (2)"):
        try:
            lake.sql(statement).collect()
        except ExecutionError as error:
            print("refused:", str(error).splitlines()[0])
    lake = lakeclone.connect(sys.argv[1])
    print("rows:", [tuple(r) for r in lake.sql("SELECT a FROM t").collect()])
    """
)


def test_after_the_jvm_dies_statements_say_so_and_connect_starts_anew(tmp_path: Path) -> None:
    """A JVM killed (as out of memory kills it): a plain message, and connect() in the same process starts a new one."""
    script = tmp_path / "dies.py"
    script.write_text(_JVM_DIES)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "warehouse")],
        env=worker_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    *refusals, rows_after = done.stdout.splitlines()
    assert len(refusals) == 2, done.stdout + done.stderr[-3000:]
    for refusal in refusals:
        assert refusal.startswith("refused: Spark has stopped: its JVM is gone (it ran out of memory, or was killed)")
        assert "lakeclone.connect() again" in refusal
    assert rows_after == "rows: [(1,)]"


def test_a_privilege_error_names_who_was_denied_once_whatever_the_object_is_called() -> None:
    from lakeclone.errors import InsufficientPrivilegesError

    # A quoted name may hold the very words the message adds.
    error = InsufficientPrivilegesError("TABLE", "sales as user ana")
    error.ran_as("BOB", "ANALYST")
    error.ran_as("BOB", "ANALYST")  # raised through a nested call: named once
    assert str(error).endswith("Insufficient privileges to operate on table 'sales as user ana' as user BOB, role ANALYST")


def test_a_table_whose_files_were_deleted_outside_lakeclone_says_so_in_one_line(lake: lakeclone.Lake) -> None:
    import shutil

    from lake_helpers import location

    lake.sql("CREATE TABLE t (id INT) CHANGE_TRACKING = TRUE; INSERT INTO t VALUES (1); CREATE STREAM s ON TABLE t")
    lake.sql("INSERT INTO t VALUES (2); CREATE TABLE other (id INT)")
    folder = location(lake, "t")
    shutil.rmtree(folder)  # as a user cleaning up by hand would
    gone = f"Table LAKE.PUBLIC.T has no files: its Delta log is gone from file:{folder} (deleted outside lakeclone)."
    for statement in (
        "SELECT * FROM t",
        "SELECT * FROM s",
        "SELECT * FROM t AT(VERSION => 1)",
        "SELECT * FROM t CHANGES(INFORMATION => DEFAULT) AT(VERSION => 1)",
        "DESCRIBE TABLE t",
        "INSERT INTO t VALUES (3)",
        "CREATE TABLE c CLONE t",
    ):
        error = failure(lake, statement)
        assert type(error).__name__ == "TableFilesMissingError" and str(error).startswith(gone), (statement, str(error))
        assert "\n" not in str(error)
    # The rest of the warehouse works, a new session lists the table as empty, and DROP removes it.
    again = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock)
    assert {(r.name, r.rows) for r in again.sql("SHOW TABLES").collect()} == {("T", 0), ("OTHER", 0)}
    lake.sql("DROP TABLE t")
    assert [r.name for r in lake.sql("SHOW TABLES").collect()] == ["OTHER"]
