"""Tests of the lsql dialect: parsing, canonical generation and error reporting."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from lakeclone import errors
from lakeclone.dialect import Lsql, ParsedStatement, parse
from lakeclone.dialect.expressions import (
    AlterClustering,
    AlterRecluster,
    DescribeDetail,
    DescribeHistory,
    LsqlClone,
    Optimize,
    SetParameters,
    ShowParameters,
    UnsetParameters,
    Vacuum,
)

FIXTURES = Path(__file__).parent / "fixtures" / "lsql"


def _roundtrip_cases() -> list[tuple[str, str]]:
    """(statement, canonical form) pairs from roundtrip.sql."""
    cases: list[tuple[str, str]] = []
    for line in (FIXTURES / "roundtrip.sql").read_text().splitlines():
        if not line.strip() or line.startswith("--"):
            continue
        if line.startswith("=> "):
            statement, _ = cases.pop()
            cases.append((statement, line[3:]))
        else:
            cases.append((line, line))
    return cases


def _error_cases() -> list[tuple[str, str, str]]:
    """(text, error class name, detail message) triples from errors.sql."""
    text = (FIXTURES / "errors.sql").read_text()
    case = re.compile(r"^-- (\w+Error): (.*)\n((?:(?!-- ).*\n?)*)", re.MULTILINE)
    return [(m.group(3).strip(), m.group(1), m.group(2)) for m in case.finditer(text)]


def _one(text: str) -> exp.Expression:
    [statement] = parse(text)
    return statement.expression


def _table(name: str, db: str | None = None, catalog: str | None = None) -> exp.Table:
    return exp.table_(name, db=db, catalog=catalog)


# Round trips


@pytest.mark.parametrize(("statement", "canonical"), _roundtrip_cases())
def test_roundtrip(statement: str, canonical: str) -> None:
    generated = sqlglot.parse_one(statement, read=Lsql).sql(dialect=Lsql)
    assert generated == canonical
    assert _one(generated) == _one(statement)


def test_roundtrip_fixture_is_not_empty() -> None:
    assert len(_roundtrip_cases()) > 50


# Errors


@pytest.mark.parametrize(("text", "error", "detail"), _error_cases())
def test_error(text: str, error: str, detail: str) -> None:
    with pytest.raises(getattr(errors, error)) as caught:
        parse(text)
    assert str(caught.value) == f"SQL compilation error:\n{detail}"


def test_syntax_error_attributes() -> None:
    with pytest.raises(errors.SqlSyntaxError) as caught:
        parse("CREATE TABL t (a INT)")
    assert (caught.value.line, caught.value.position, caught.value.token) == (1, 7, "TABL")
    assert str(caught.value) == ("SQL compilation error:\nsyntax error line 1 at position 7 unexpected 'TABL'.")


def test_error_in_later_statement_counts_lines_from_start_of_text() -> None:
    with pytest.raises(errors.SqlSyntaxError) as caught:
        parse("SELECT 1;\n\nSELECT * FROM t WHERE")
    assert (caught.value.line, caught.value.position, caught.value.token) == (3, 21, "<EOF>")


def test_unsupported_statement_keeps_its_text() -> None:
    with pytest.raises(errors.UnsupportedStatementError) as caught:
        parse("SELECT 1; CALL p(1);")
    assert caught.value.detail == "Unsupported statement: CALL p(1)"


@pytest.mark.parametrize("text", ["", ";", "@@", "SELECT (((", "SELECT $$", "'", "SELECT 1 +", ")", "INTERVAL 'x'"])
def test_only_lakeclone_errors_escape(text: str) -> None:
    # Parsing may succeed (an empty script) or fail; any other exception fails the test.
    with contextlib.suppress(errors.LakecloneError):
        parse(text)


def test_no_command_fallback_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sqlglot"), pytest.raises(errors.UnsupportedStatementError):
        parse("ALTER WAREHOUSE w SUSPEND")
    assert caplog.records == []


# Splitting


def test_split_respects_strings_and_comments() -> None:
    text = "-- lead\nSELECT 'a;b' /* ; */ ;;\n  ; -- second\nSELECT 2 ;\n-- trailing"
    statements = parse(text)
    assert [s.sql for s in statements] == ["-- lead\nSELECT 'a;b' /* ; */", "-- second\nSELECT 2"]
    assert statements[0].expression.selects[0] == exp.Literal.string("a;b")


def test_empty_text_has_no_statements() -> None:
    assert parse("  ;\n; -- just a comment\n") == []


def test_parsed_statement_is_frozen() -> None:
    statement = parse("SELECT 1")[0]
    assert isinstance(statement, ParsedStatement)
    with pytest.raises(dataclasses.FrozenInstanceError):
        statement.sql = "SELECT 2"  # type: ignore[misc]


# Normalization


def test_unquoted_identifiers_are_upper_cased_quoted_kept() -> None:
    select = _one('SELECT a, "b" FROM s.t AS x')
    assert [c.this for c in select.selects] == [
        exp.to_identifier("A"),
        exp.to_identifier("b", quoted=True),
    ]
    table = select.args["from_"].this
    assert (table.name, table.db, table.alias) == ("T", "S", "X")


def test_parameter_names_and_time_travel_kinds_are_not_identifiers() -> None:
    statement = _one("ALTER TABLE t SET data_retention_time_in_days = 1 comment = 'Mixed Case'")
    assert [p.this for p in statement.expressions] == [
        exp.var("DATA_RETENTION_TIME_IN_DAYS"),
        exp.var("COMMENT"),
    ]
    assert statement.expressions[1].args["value"] == exp.Literal.string("Mixed Case")
    when = _one("SELECT * FROM t at(offset => -60)").find(exp.HistoricalData)
    assert (when.this, when.args["kind"]) == ("AT", "OFFSET")


# Shapes of statements the engine reads


def test_historical_data_is_the_tables_when() -> None:
    table = _one("SELECT * FROM t BEFORE(STATEMENT => 'q1') AS x").args["from_"].this
    assert table.args["when"] == exp.HistoricalData(this="BEFORE", kind="STATEMENT", expression=exp.Literal.string("q1"))
    assert table.alias == "X"


def test_delta_version_is_the_tables_version() -> None:
    table = _one("SELECT * FROM t VERSION AS OF 3").args["from_"].this
    version = table.args["version"]
    assert (version.this, version.args["kind"]) == ("VERSION", "AS OF")
    assert version.expression == exp.Literal.number(3)
    table = _one("SELECT * FROM t TIMESTAMP AS OF '2024-01-01'").args["from_"].this
    assert table.args["version"].this == "TIMESTAMP"


def test_snowflake_clone_is_zero_copy_lsql_clone() -> None:
    create = _one("CREATE OR REPLACE TABLE t CLONE s AT(OFFSET => -60)")
    assert isinstance(create, exp.Create)
    assert (create.kind, create.args["replace"], create.this) == ("TABLE", True, _table("T"))
    clone = create.args["clone"]
    assert type(clone) is LsqlClone
    assert not clone.args.get("shallow") and not clone.args.get("deep")
    assert clone.this.name == "S"
    assert clone.this.args["when"].args["kind"] == "OFFSET"


def test_transient_clone_is_lsql_clone_too() -> None:
    create = _one("CREATE TRANSIENT TABLE t CLONE s")
    assert type(create.args["clone"]) is LsqlClone
    assert create.find(exp.TransientProperty)


@pytest.mark.parametrize(("depth", "shallow", "deep"), [("SHALLOW", True, False), ("DEEP", False, True)])
def test_delta_clone(depth: str, shallow: bool, deep: bool) -> None:
    create = _one(f"CREATE TABLE IF NOT EXISTS t {depth} CLONE d.s VERSION AS OF 2")
    assert (create.kind, create.args["exists"], create.this) == ("TABLE", True, _table("T"))
    clone = create.args["clone"]
    assert type(clone) is LsqlClone
    assert (bool(clone.args.get("shallow")), bool(clone.args.get("deep"))) == (shallow, deep)
    assert (clone.this.name, clone.this.db) == ("S", "D")
    assert clone.this.args["version"].expression == exp.Literal.number(2)


@pytest.mark.parametrize("kind", ["SCHEMA", "DATABASE"])
def test_container_clone(kind: str) -> None:
    create = _one(f"CREATE {kind} x CLONE y BEFORE(TIMESTAMP => '2024-01-01'::TIMESTAMP)")
    assert create.kind == kind
    assert type(create.args["clone"]) is LsqlClone
    assert create.args["clone"].this.args["when"].this == "BEFORE"


def test_create_table_cluster_by_keeps_snowflakes_shape() -> None:
    create = _one("CREATE TABLE t (a INT, b INT) CLUSTER BY (a, b)")
    cluster = create.find(exp.ClusterProperty)
    assert [c.name for c in cluster.expressions] == ["A", "B"]


def test_sequence_and_constraints_parse() -> None:
    sequence = _one("CREATE SEQUENCE IF NOT EXISTS seq START WITH 10 INCREMENT BY 5")
    properties = sequence.find(exp.SequenceProperties)
    assert (properties.args["start"], properties.args["increment"]) == (
        exp.Literal.number(10),
        exp.Literal.number(5),
    )
    table = _one("CREATE TABLE t (id INT DEFAULT seq.NEXTVAL PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES u(id))")
    default = table.find(exp.DefaultColumnConstraint)
    assert default.this == exp.column("NEXTVAL", table="SEQ")
    assert table.find(exp.PrimaryKeyColumnConstraint)
    assert table.find(exp.ForeignKey).find(exp.Reference)


def test_describe_history() -> None:
    assert _one("DESCRIBE HISTORY d.t LIMIT 5") == DescribeHistory(this=_table("T", db="D"), limit=exp.Literal.number(5))
    assert _one("DESC HISTORY t") == DescribeHistory(this=_table("T"))


def test_describe_detail() -> None:
    assert _one("DESCRIBE DETAIL t") == DescribeDetail(this=_table("T"))


def test_describe_table_stays_snowflakes() -> None:
    describe = _one("DESCRIBE TABLE t")
    assert isinstance(describe, exp.Describe)
    assert describe.this == _table("T")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SHOW PARAMETERS", ShowParameters()),
        ("SHOW PARAMETERS LIKE 'DATA%'", ShowParameters(like=exp.Literal.string("DATA%"))),
        (
            "SHOW PARAMETERS LIKE '%' IN TABLE s.t",
            ShowParameters(this=_table("T", db="S"), kind="TABLE", like=exp.Literal.string("%")),
        ),
        ("SHOW PARAMETERS IN SCHEMA d.s", ShowParameters(this=_table("S", db="D"), kind="SCHEMA")),
        ("SHOW PARAMETERS IN SCHEMA s", ShowParameters(this=_table("S"), kind="SCHEMA")),
        ("SHOW PARAMETERS IN DATABASE d", ShowParameters(this=_table("D"), kind="DATABASE")),
    ],
)
def test_show_parameters(text: str, expected: ShowParameters) -> None:
    assert _one(text) == expected


@pytest.mark.parametrize(
    ("kind", "name", "table"),
    [
        ("TABLE", "s.t", _table("T", db="S")),
        ("SCHEMA", "d.s", _table("S", db="D")),
        ("DATABASE", "d", _table("D")),
    ],
)
def test_set_and_unset_parameters(kind: str, name: str, table: exp.Table) -> None:
    assert _one(f"ALTER {kind} IF EXISTS {name} SET DATA_RETENTION_TIME_IN_DAYS = 7 CHANGE_TRACKING = FALSE") == SetParameters(
        this=table,
        kind=kind,
        exists=True,
        expressions=[
            exp.Property(this=exp.var("DATA_RETENTION_TIME_IN_DAYS"), value=exp.Literal.number(7)),
            exp.Property(this=exp.var("CHANGE_TRACKING"), value=exp.false()),
        ],
    )
    unset = _one(f"ALTER {kind} {name} UNSET DATA_RETENTION_TIME_IN_DAYS, COMMENT")
    assert unset == UnsetParameters(
        this=table,
        kind=kind,
        expressions=[exp.var("DATA_RETENTION_TIME_IN_DAYS"), exp.var("COMMENT")],
    )


@pytest.mark.parametrize("kind", ["TABLE", "SCHEMA", "DATABASE"])
def test_rename_is_sqlglots_alter(kind: str) -> None:
    alter = _one(f"ALTER {kind} x RENAME TO y")
    assert isinstance(alter, exp.Alter)
    assert (alter.kind, alter.this.name) == (kind, "X")
    [action] = alter.actions
    assert isinstance(action, exp.AlterRename)
    assert action.this.name == "Y"


def test_other_alter_table_actions_stay_sqlglots() -> None:
    assert isinstance(_one("ALTER TABLE t ADD COLUMN c INT"), exp.Alter)


def test_unset_comment_of_a_column_sets_it_to_none() -> None:
    for statement in ("ALTER TABLE t ALTER COLUMN c UNSET COMMENT", "ALTER TABLE t MODIFY c UNSET COMMENT"):
        [action] = _one(statement).args["actions"]
        assert action == exp.AlterColumn(this=exp.to_identifier("C"), comment=exp.Literal.string(""))
    # Any other change of a column is sqlglot's, a column named UNSET among them.
    [action] = _one("ALTER TABLE t ALTER COLUMN unset DROP NOT NULL").args["actions"]
    assert (action.name, action.args["allow_null"]) == ("UNSET", True)


def test_several_column_changes_in_one_alter() -> None:
    """Snowflake's list, ``[COLUMN] c …`` after a comma (or parenthesized), and the list with ALTER repeated."""
    expected = [
        exp.AlterColumn(this=exp.to_identifier("A"), drop=True, allow_null=True),
        exp.AlterColumn(this=exp.to_identifier("B"), comment=exp.Literal.string("")),
    ]
    for statement in (
        "ALTER TABLE t ALTER COLUMN a DROP NOT NULL, COLUMN b UNSET COMMENT",
        "ALTER TABLE t MODIFY a DROP NOT NULL, b UNSET COMMENT",
        "ALTER TABLE t MODIFY (a DROP NOT NULL, COLUMN b UNSET COMMENT)",
        "ALTER TABLE t ALTER COLUMN a DROP NOT NULL, ALTER COLUMN b UNSET COMMENT",
    ):
        assert _one(statement).args["actions"] == expected, statement
    # Another kind of action after column changes is not one statement lsql runs.
    with pytest.raises(errors.SqlSyntaxError, match="unexpected 'ADD'"):
        _one("ALTER TABLE t ALTER COLUMN a DROP NOT NULL, ADD COLUMN x INT")


def test_recluster() -> None:
    assert _one("ALTER TABLE t SUSPEND RECLUSTER") == AlterRecluster(this=_table("T"), suspend=True)
    assert _one("ALTER TABLE IF EXISTS t RESUME RECLUSTER") == AlterRecluster(this=_table("T"), exists=True, suspend=False)


def test_clustering() -> None:
    assert _one("ALTER TABLE t CLUSTER BY (a, b)") == AlterClustering(
        this=_table("T"), expressions=[exp.column("A"), exp.column("B")]
    )
    dropped = _one("ALTER TABLE t DROP CLUSTERING KEY")
    assert dropped == AlterClustering(this=_table("T"))
    assert dropped.expressions == []


def test_vacuum() -> None:
    assert _one("VACUUM t") == Vacuum(this=_table("T"))
    assert _one("VACUUM s.t RETAIN 168 HOURS DRY RUN") == Vacuum(
        this=_table("T", db="S"), retain=exp.Literal.number(168), dry_run=True
    )


def test_optimize() -> None:
    assert _one("OPTIMIZE t") == Optimize(this=_table("T"))


def test_maintenance_words_remain_usable_as_names() -> None:
    select = _one("SELECT vacuum, optimize FROM history")
    assert [c.name for c in select.selects] == ["VACUUM", "OPTIMIZE"]
