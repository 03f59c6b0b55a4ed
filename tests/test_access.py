"""Access control: users, roles, grants, ownership, and the privilege each statement needs.

Every role here is a real role in the warehouse's SQLite catalog, every
statement runs on real Spark and Delta, and a denied statement is checked to
have changed nothing: the table's rows, its Delta version, the catalog's objects.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from delta_reader import latest_version, local_path, spark_rows
from lake_helpers import location, rows
from warehouse_templates import Build

import lakeclone
from lakeclone.engine import needs, registry
from lakeclone.errors import InsufficientPrivilegesError, LakecloneError, ObjectNotFoundError

_users = itertools.count()

USAGE = ["USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC"]


def connect_as(admin: lakeclone.Lake, *grants: str, role: str | None = None) -> lakeclone.Lake:
    """A session of a new user whose new role holds exactly ``grants`` (``"SELECT ON TABLE t"``)."""
    number = next(_users)
    role = role or f"R{number}"
    user = f"U{number}"
    admin.sql(f"CREATE ROLE IF NOT EXISTS {role}")
    admin.sql(f"CREATE USER {user}")
    admin.sql(f"GRANT ROLE {role} TO USER {user}")
    for grant in grants:
        admin.sql(f"GRANT {grant} TO ROLE {role}")
    return lakeclone.connect(admin.warehouse, spark=admin.spark, clock=admin.clock, user=user, role=role)


# Every catalog table a statement could write; a denied one must leave each as it was.
_CATALOG_TABLES = (
    "databases",
    "schemas",
    "tables",
    "views",
    "streams",
    "sequences",
    "parameters",
    "roles",
    "users",
    "role_grants",
    "grants",
    "future_grants",
    "ownership",
    "stages",
    "file_formats",
    "loaded_files",
)


def state(admin: lakeclone.Lake) -> dict[str, Any]:
    """What a denied statement must leave as it was: the catalog's objects and grants, the tables' Delta versions.

    Read straight from the catalog file and the Delta logs, so that checking costs no Spark job.
    """
    db = sqlite3.connect(admin.warehouse / "catalog.sqlite")
    try:
        snapshot: dict[str, Any] = {
            table: sorted(map(repr, db.execute(f"SELECT * FROM {table}").fetchall())) for table in _CATALOG_TABLES
        }
        locations = db.execute("SELECT name, location FROM tables WHERE dropped_at IS NULL").fetchall()
    finally:
        db.close()
    snapshot["versions"] = {name: latest_version(where) for name, where in locations}
    return snapshot


def _tables_view_and_stream(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (a INT) CHANGE_TRACKING = TRUE")
    lake.sql("INSERT INTO t VALUES (1), (2), (3)")
    lake.sql("CREATE TABLE src (a INT)")
    lake.sql("INSERT INTO src VALUES (3), (4)")
    lake.sql("CREATE VIEW v AS SELECT a FROM t WHERE a > 1")
    lake.sql("CREATE STREAM s ON TABLE t")
    # Beside the template's folder, not in it (copies of the warehouse name no file of the template): the stage still finds it.
    staged = lake.warehouse.parent.parent / "staged_for_the_privilege_matrix"
    staged.mkdir(exist_ok=True)
    (staged / "more.csv").write_text("7\n")
    lake.sql(f"CREATE STAGE stg URL = 'file:{staged}'")


@pytest.fixture
def admin(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """A warehouse with table T (rows 1, 2, 3), table SRC, view V and stream S on T, as the administrator."""
    return copy_of(_tables_view_and_stream)


@dataclass(frozen=True)
class Case:
    """A statement and every grant it needs; ``check`` asserts what it did when allowed."""

    sql: str
    grants: tuple[str, ...]
    check: Callable[[lakeclone.Lake, Any], None] = lambda admin, result: None
    api: Callable[[lakeclone.Lake], Any] | None = None
    """A call of the Python API to run in place of ``sql`` (which then only names the case)."""
    denied_on_container: tuple[str, ...] = ()
    """Grants whose lack is reported as insufficient privileges on the statement's container (a schema clone's tables)."""

    def run(self, session: lakeclone.Lake) -> Any:
        return self.api(session) if self.api is not None else session.sql(self.sql).collect()

    def __str__(self) -> str:
        return self.sql


def _rows_are(expected: list[tuple[Any, ...]]) -> Callable[[lakeclone.Lake, Any], None]:
    def check(admin: lakeclone.Lake, result: Any) -> None:
        assert sorted(map(tuple, result)) == expected

    return check


def _t_is(expected: list[tuple[Any, ...]]) -> Callable[[lakeclone.Lake, Any], None]:
    def check(admin: lakeclone.Lake, result: Any) -> None:
        assert rows(admin, "SELECT * FROM t") == expected
        assert sorted(spark_rows(admin.spark, location(admin, "t"))) == expected

    return check


def _names_are(result: Any, expected: list[str]) -> None:
    assert [r.column_name for r in result] == expected


def _one_file(result: Any) -> None:
    assert [r.name.rsplit("/", 1)[-1] for r in result] == ["more.csv"]


def _exists(show: str, name: str) -> Callable[[lakeclone.Lake, Any], None]:
    def check(admin: lakeclone.Lake, result: Any) -> None:
        assert name in [r.name for r in admin.sql(show).collect()]

    return check


MATRIX = [
    Case("SELECT a FROM t", (*USAGE, "SELECT ON TABLE T"), _rows_are([(1,), (2,), (3,)])),
    Case("SELECT a FROM t AT (VERSION => 0)", (*USAGE, "SELECT ON TABLE T"), _rows_are([])),
    Case("SELECT a FROM t CHANGES (INFORMATION => DEFAULT) AT (VERSION => 1)", (*USAGE, "SELECT ON TABLE T")),
    Case("SELECT a FROM v", (*USAGE, "SELECT ON VIEW V"), _rows_are([(2,), (3,)])),
    # A relation however it is spelled: a table function reading it, a string naming it.
    Case("SELECT a FROM table_changes('t', 1)", (*USAGE, "SELECT ON TABLE T"), _rows_are([(1,), (2,), (3,)])),
    Case(
        "SELECT a FROM TABLE(table_changes('lake.public.t', 1, 1))", (*USAGE, "SELECT ON TABLE T"), _rows_are([(1,), (2,), (3,)])
    ),
    Case("SELECT a FROM IDENTIFIER('t')", (*USAGE, "SELECT ON TABLE T"), _rows_are([(1,), (2,), (3,)])),
    Case("SELECT a FROM TABLE('v')", (*USAGE, "SELECT ON VIEW V"), _rows_are([(2,), (3,)])),
    Case("SELECT a FROM s", (*USAGE, "SELECT ON STREAM S", "SELECT ON TABLE T"), _rows_are([])),
    Case("INSERT INTO t VALUES (9)", (*USAGE, "INSERT ON TABLE T"), _t_is([(1,), (2,), (3,), (9,)])),
    Case(
        "INSERT INTO t SELECT a FROM src",
        (*USAGE, "INSERT ON TABLE T", "SELECT ON TABLE SRC"),
        _t_is([(1,), (2,), (3,), (3,), (4,)]),
    ),
    Case("UPDATE t SET a = 0 WHERE a = 1", (*USAGE, "UPDATE ON TABLE T"), _t_is([(0,), (2,), (3,)])),
    Case("DELETE FROM t WHERE a = 1", (*USAGE, "DELETE ON TABLE T"), _t_is([(2,), (3,)])),
    Case("DELETE FROM t WHERE a = 1", (*USAGE, "MODIFY ON TABLE T"), _t_is([(2,), (3,)])),
    Case(
        "MERGE INTO t USING src ON t.a = src.a WHEN MATCHED THEN UPDATE SET a = 30 "
        "WHEN NOT MATCHED THEN INSERT (a) VALUES (src.a)",
        (*USAGE, "UPDATE ON TABLE T", "INSERT ON TABLE T", "SELECT ON TABLE SRC"),
        _t_is([(1,), (2,), (4,), (30,)]),
    ),
    Case("CREATE TABLE n (a INT)", (*USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC"), _exists("SHOW TABLES", "N")),
    Case(
        "CREATE TABLE n AS SELECT a FROM t",
        (*USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", "SELECT ON TABLE T"),
        _exists("SHOW TABLES", "N"),
    ),
    Case(
        "CREATE TABLE n CLONE t", (*USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", "SELECT ON TABLE T"), _exists("SHOW TABLES", "N")
    ),
    Case("CREATE OR REPLACE TABLE t (b INT)", (*USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", "MODIFY ON TABLE T")),
    Case("DROP TABLE src", (*USAGE, "OWNERSHIP ON TABLE SRC")),
    Case(
        "CREATE VIEW w AS SELECT a FROM t",
        (*USAGE, "CREATE VIEW ON SCHEMA LAKE.PUBLIC", "SELECT ON TABLE T"),
        _exists("SHOW VIEWS", "W"),
    ),
    Case(
        "CREATE STREAM s2 ON TABLE t",
        (*USAGE, "CREATE STREAM ON SCHEMA LAKE.PUBLIC", "SELECT ON TABLE T"),
        _exists("SHOW STREAMS", "S2"),
    ),
    Case(
        "CREATE SCHEMA x", ("USAGE ON DATABASE LAKE", "CREATE SCHEMA ON DATABASE LAKE"), _exists("SHOW SCHEMAS IN ACCOUNT", "X")
    ),
    Case("CREATE DATABASE d", ("CREATE DATABASE ON ACCOUNT",), _exists("SHOW DATABASES", "D")),
    Case("ALTER TABLE src RENAME TO src2", (*USAGE, "OWNERSHIP ON TABLE SRC"), _exists("SHOW TABLES", "SRC2")),
    Case("ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 3", (*USAGE, "OWNERSHIP ON TABLE T")),
    Case("VACUUM t", (*USAGE, "MODIFY ON TABLE T")),
    Case("OPTIMIZE t", (*USAGE, "MODIFY ON TABLE T")),
    Case("RESTORE TABLE t TO VERSION AS OF 0", (*USAGE, "MODIFY ON TABLE T"), _t_is([])),
    Case("DESCRIBE HISTORY t", (*USAGE, "SELECT ON TABLE T")),
    # Loading files: the stage, the table, and, for a stage's URL, the account's leave to reach outside the warehouse.
    Case("COPY INTO t FROM @stg", (*USAGE, "USAGE ON STAGE STG", "INSERT ON TABLE T"), _t_is([(1,), (2,), (3,), (7,)])),
    Case("LIST @stg", (*USAGE, "USAGE ON STAGE STG"), lambda admin, result: _one_file(result)),
    Case("SELECT $1 FROM @stg", (*USAGE, "USAGE ON STAGE STG"), _rows_are([("7",)])),
    Case(
        "INSERT INTO t SELECT $1::INT FROM @stg",
        (*USAGE, "USAGE ON STAGE STG", "INSERT ON TABLE T"),
        _t_is([(1,), (2,), (3,), (7,)]),
    ),
    Case(
        "CREATE STAGE stg2 URL = 'file:///lakeclone-matrix/never-read'",
        (*USAGE, "CREATE STAGE ON SCHEMA LAKE.PUBLIC", "CREATE EXTERNAL TABLE ON ACCOUNT"),
        _exists("SHOW STAGES", "STG2"),
    ),
    Case("DROP STAGE stg", (*USAGE, "OWNERSHIP ON STAGE STG")),
    Case(
        "CREATE FILE FORMAT ff TYPE = CSV",
        (*USAGE, "CREATE FILE FORMAT ON SCHEMA LAKE.PUBLIC"),
        _exists("SHOW FILE FORMATS", "FF"),
    ),
    Case("DESCRIBE DETAIL t", (*USAGE, "SELECT ON TABLE T")),
    Case("USE SCHEMA LAKE.PUBLIC", ("USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC")),
    # Queries: time travel and the change clause on every path.
    Case("SELECT a FROM t BEFORE (VERSION => 1)", (*USAGE, "SELECT ON TABLE T"), _rows_are([])),
    Case("SELECT a FROM t CHANGES (INFORMATION => APPEND_ONLY) AT (VERSION => 1)", (*USAGE, "SELECT ON TABLE T")),
    Case(
        "SELECT s.a FROM s JOIN src ON s.a = src.a",
        (*USAGE, "SELECT ON STREAM S", "SELECT ON TABLE T", "SELECT ON TABLE SRC"),
        _rows_are([]),
    ),
    Case("SHOW PARAMETERS IN TABLE t", (*USAGE, "SELECT ON TABLE T")),
    # Metadata: a table's columns and DDL to a role that sees it.
    Case("SHOW COLUMNS IN TABLE t", (*USAGE, "SELECT ON TABLE T"), lambda admin, result: _names_are(result, ["A"])),
    Case(
        "SELECT GET_DDL('TABLE', 't')",
        (*USAGE, "SELECT ON TABLE T"),
        _rows_are([("create or replace TABLE T (\n\tA BIGINT\n) CHANGE_TRACKING = TRUE;",)]),
    ),
    # DML: each write's own privilege, MODIFY for all of them, and SELECT on what it reads.
    Case(
        "INSERT OVERWRITE INTO t SELECT a FROM src",
        (*USAGE, "INSERT ON TABLE T", "DELETE ON TABLE T", "SELECT ON TABLE SRC"),
        _t_is([(3,), (4,)]),
    ),
    Case(
        "MERGE INTO t USING src ON t.a = src.a WHEN MATCHED THEN DELETE",
        (*USAGE, "DELETE ON TABLE T", "SELECT ON TABLE SRC"),
        _t_is([(1,), (2,)]),
    ),
    Case(
        "MERGE INTO t USING src ON t.a = src.a WHEN MATCHED THEN UPDATE SET a = 30 "
        "WHEN NOT MATCHED THEN INSERT (a) VALUES (src.a)",
        (*USAGE, "MODIFY ON TABLE T", "SELECT ON TABLE SRC"),
        _t_is([(1,), (2,), (4,), (30,)]),
    ),
    Case(
        "UPDATE t SET a = src.a + 10 FROM src WHERE t.a = src.a",
        (*USAGE, "UPDATE ON TABLE T", "SELECT ON TABLE SRC"),
        _t_is([(1,), (2,), (13,)]),
    ),
    Case("DELETE FROM t USING src WHERE t.a = src.a", (*USAGE, "DELETE ON TABLE T", "SELECT ON TABLE SRC"), _t_is([(1,), (2,)])),
    # DDL: creating in a schema, replacing, altering and dropping what the role owns.
    Case("CREATE SEQUENCE q", (*USAGE, "CREATE SEQUENCE ON SCHEMA LAKE.PUBLIC"), _exists("SHOW SEQUENCES", "Q")),
    Case(
        "CREATE OR REPLACE VIEW v AS SELECT a FROM src",
        (*USAGE, "CREATE VIEW ON SCHEMA LAKE.PUBLIC", "OWNERSHIP ON VIEW V", "SELECT ON TABLE SRC"),
    ),
    Case(
        "CREATE TABLE n AS SELECT a FROM v",
        (*USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", "SELECT ON VIEW V"),
        _exists("SHOW TABLES", "N"),
    ),
    Case("ALTER TABLE t SET COMMENT = 'orders'", (*USAGE, "OWNERSHIP ON TABLE T")),
    Case("ALTER TABLE t CLUSTER BY (a)", (*USAGE, "OWNERSHIP ON TABLE T")),
    Case("ALTER VIEW v RENAME TO v2", (*USAGE, "OWNERSHIP ON VIEW V"), _exists("SHOW VIEWS", "V2")),
    Case("ALTER VIEW v SET COMMENT = 'recent'", (*USAGE, "OWNERSHIP ON VIEW V")),
    Case("DROP TABLE src", (*USAGE, "MODIFY ON TABLE SRC")),
    Case("DROP VIEW v", (*USAGE, "OWNERSHIP ON VIEW V")),
    Case("DROP STREAM s", (*USAGE, "OWNERSHIP ON STREAM S")),
    Case("DROP SCHEMA LAKE.PUBLIC", ("USAGE ON DATABASE LAKE", "OWNERSHIP ON SCHEMA LAKE.PUBLIC")),
    # Clones: deep, of a point in time, and of a schema or a database.
    Case(
        "CREATE TABLE n DEEP CLONE t",
        (*USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", "SELECT ON TABLE T"),
        _exists("SHOW TABLES", "N"),
    ),
    Case(
        "CREATE TABLE n CLONE t AT (VERSION => 1)",
        (*USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", "SELECT ON TABLE T"),
        _exists("SHOW TABLES", "N"),
    ),
    # A schema or database clone copies every table in it: the role must be able to read each.
    Case(
        "CREATE SCHEMA x CLONE public",
        (*USAGE, "CREATE SCHEMA ON DATABASE LAKE", "SELECT ON TABLE T", "SELECT ON TABLE SRC"),
        _exists("SHOW SCHEMAS IN ACCOUNT", "X"),
        denied_on_container=("SELECT ON TABLE T", "SELECT ON TABLE SRC"),
    ),
    Case(
        "CREATE DATABASE d CLONE lake",
        (*USAGE, "CREATE DATABASE ON ACCOUNT", "SELECT ON TABLE T", "SELECT ON TABLE SRC"),
        _exists("SHOW DATABASES", "D"),
        denied_on_container=("SELECT ON TABLE T", "SELECT ON TABLE SRC"),
    ),
    # The Python API and the widgets: the privileges the statements they stand for need.
    Case("lake.lineage('t')", (*USAGE, "SELECT ON TABLE T"), api=lambda lake: lake.lineage("t")),
    Case("lake.vacuum_plan('t')", (*USAGE, "MODIFY ON TABLE T"), api=lambda lake: lake.vacuum_plan("t")),
    Case("timeline(lake, 't')", (*USAGE, "SELECT ON TABLE T"), api=lambda lake: _widgets().timeline(lake, "t")),
    Case("lineage_widget(lake, 't')", (*USAGE, "SELECT ON TABLE T"), api=lambda lake: _widgets().lineage_widget(lake, "t")),
    Case("vacuum_explorer(lake, 't')", (*USAGE, "MODIFY ON TABLE T"), api=lambda lake: _widgets().vacuum_explorer(lake, "t")),
    Case(
        "grants(lake, 'public')",
        ("USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC"),
        api=lambda lake: _widgets().grants(lake, "public"),
    ),
]


def _denied_error(grants: tuple[str, ...], missing: str) -> type[LakecloneError]:
    """Which error a role lacking ``missing`` gets: it sees the object if it holds anything else on it.

    A database or schema it may not use does not exist for it, whatever else it holds there.
    """
    if missing.startswith("USAGE ON"):
        return ObjectNotFoundError
    target = missing.split(" ON ", 1)[1]
    if any(grant.split(" ON ", 1)[1] == target for grant in grants if grant != missing) or target == "ACCOUNT":
        return InsufficientPrivilegesError
    return ObjectNotFoundError


@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_privilege_matrix(admin: lakeclone.Lake, case: Case) -> None:
    """For each privilege the statement needs, a role lacking exactly it is denied and nothing changes; all of them succeed."""
    for missing in case.grants:
        held = tuple(grant for grant in case.grants if grant != missing)
        session = connect_as(admin, *held)
        before = state(admin)
        with pytest.raises(LakecloneError) as denied:
            case.run(session)
        expected = InsufficientPrivilegesError if missing in case.denied_on_container else _denied_error(case.grants, missing)
        assert _kind(denied.value) is expected, f"without {missing}: {denied.value}"
        assert state(admin) == before, f"denied without {missing}, yet something changed"
    allowed = connect_as(admin, *case.grants)
    case.check(admin, case.run(allowed))


def _kind(error: LakecloneError) -> type[LakecloneError]:
    """The denial an error reports; a widget's one-line WidgetError carries the statement's message."""
    if isinstance(error, (ObjectNotFoundError, InsufficientPrivilegesError)):
        return type(error)
    if "does not exist or not authorized" in str(error):
        return ObjectNotFoundError
    if "Insufficient privileges" in str(error):
        return InsufficientPrivilegesError
    return type(error)


def _widgets() -> Any:
    import lakeclone.widgets

    return lakeclone.widgets


def test_denied_messages_are_snowflakes(admin: lakeclone.Lake) -> None:
    session = connect_as(admin, *USAGE, "INSERT ON TABLE T")
    with pytest.raises(
        InsufficientPrivilegesError,
        match=(
            r"^SQL access control error:\nInsufficient privileges to operate on table 'LAKE.PUBLIC.T'"
            rf" as user {session.current_user}, role {session.current_role}$"
        ),
    ):
        session.sql("SELECT * FROM t")
    with pytest.raises(ObjectNotFoundError, match=r"Object 'LAKE.PUBLIC.SRC' does not exist or not authorized.$"):
        session.sql("SELECT * FROM src")
    # Unseen and missing objects read alike.
    with pytest.raises(ObjectNotFoundError, match=r"Object 'LAKE.PUBLIC.NOPE' does not exist or not authorized.$"):
        session.sql("SELECT * FROM nope")


def test_denied_statement_does_not_commit_the_open_transaction(admin: lakeclone.Lake) -> None:
    session = connect_as(admin, *USAGE, "INSERT ON TABLE T", "SELECT ON TABLE T")
    session.sql("BEGIN")
    session.sql("INSERT INTO t VALUES (7)")
    with pytest.raises(InsufficientPrivilegesError):
        session.sql("CREATE TABLE n (a INT)")  # DDL would commit the transaction, were it allowed
    session.sql("ROLLBACK")
    assert rows(admin, "SELECT * FROM t") == [(1,), (2,), (3,)]


def test_each_statement_kind_is_registered_with_its_bind() -> None:
    """Every statement kind has a bind, which the engine checks the role against; only these name no object."""
    assert all(callable(statement.bind) for statement in registry.STATEMENTS.values())
    unchecked = {kind.__name__ for kind, statement in registry.STATEMENTS.items() if statement.bind is needs.nothing}
    assert unchecked == {"Transaction", "Commit", "Rollback", "SessionParameters"}


def test_a_statement_acts_on_the_objects_its_role_was_checked_against(
    admin: lakeclone.Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another session replacing a table between a statement's privilege check and its run does not hand it the new table."""
    session = connect_as(admin, *USAGE, "SELECT ON TABLE T", "INSERT ON TABLE T")
    replacements: list[str] = []

    def replace_t(executor: Any, expression: Any) -> bool:
        # Runs after the session's statement was checked, before it runs: the new T has no grant to the session's role.
        if not replacements:
            replacements.append(executor.context.user)
            admin.sql("CREATE OR REPLACE TABLE t (a INT)")
            admin.sql("INSERT INTO t VALUES (99)")
        return False

    monkeypatch.setattr(registry, "BEFORE_STATEMENT", [*registry.BEFORE_STATEMENT, replace_t])
    with pytest.raises(ObjectNotFoundError, match=r"Object 'LAKE.PUBLIC.T' does not exist or not authorized.$"):
        session.sql("SELECT * FROM t")
    assert replacements == [session.current_user]
    replacements.clear()
    with pytest.raises(ObjectNotFoundError, match=r"Object 'LAKE.PUBLIC.T' does not exist or not authorized.$"):
        session.sql("INSERT INTO t VALUES (5)")
    assert rows(admin, "SELECT * FROM t") == [(99,)]
    # The next statement is checked against the table the name holds now.
    admin.sql(f"GRANT SELECT ON TABLE t TO ROLE {session.current_role}")
    assert rows(session, "SELECT * FROM t") == [(99,)]


def test_python_api_needs_privileges(admin: lakeclone.Lake) -> None:
    nothing = connect_as(admin, *USAGE)
    with pytest.raises(ObjectNotFoundError):
        nothing.lineage("t")
    with pytest.raises(ObjectNotFoundError):
        nothing.vacuum_plan("t")
    reader = connect_as(admin, *USAGE, "SELECT ON TABLE T")
    assert reader.lineage("t").nodes
    with pytest.raises(InsufficientPrivilegesError):
        reader.vacuum_plan("t")
    writer = connect_as(admin, *USAGE, "MODIFY ON TABLE T")
    assert writer.vacuum_plan("t") is not None


# Identity


def test_the_administrator_is_the_default(lake: lakeclone.Lake) -> None:
    assert lake.sql("SELECT CURRENT_ROLE() AS r, CURRENT_USER() AS u").collect()[0] == ("ACCOUNTADMIN", "ADMIN")
    assert {r.name for r in lake.sql("SHOW ROLES").collect()} == {"ACCOUNTADMIN", "SYSADMIN", "PUBLIC"}
    assert [r.name for r in lake.sql("SHOW USERS").collect()] == ["ADMIN"]


def test_users_and_roles(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE ROLE analyst")
    lake.sql("CREATE ROLE engineer")
    lake.sql("CREATE USER ana")
    lake.sql("GRANT ROLE analyst TO USER ana")
    assert {r.name for r in lake.sql("SHOW ROLES LIKE '%ST'").collect()} == {"ANALYST"}
    ana = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="ana")
    assert ana.sql("SELECT CURRENT_ROLE(), CURRENT_USER()").collect()[0] == ("PUBLIC", "ANA")
    ana.sql("USE ROLE analyst")
    assert ana.sql("SELECT CURRENT_ROLE()").collect()[0][0] == "ANALYST"
    with pytest.raises(ObjectNotFoundError, match=r"Role 'ENGINEER' does not exist or not authorized\."):
        ana.sql("USE ROLE engineer")
    with pytest.raises(InsufficientPrivilegesError):
        ana.sql("CREATE ROLE mine")
    # Through the hierarchy: ENGINEER granted to ANALYST is a role ANA may use.
    lake.sql("GRANT ROLE engineer TO ROLE analyst")
    ana.sql("USE ROLE engineer")
    lake.sql("REVOKE ROLE engineer FROM ROLE analyst")
    with pytest.raises(ObjectNotFoundError):
        ana.sql("USE ROLE engineer")
    with pytest.raises(ObjectNotFoundError, match="User 'NOBODY'"):
        lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="nobody")
    with pytest.raises(ObjectNotFoundError, match="Role 'ENGINEER'"):
        lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock, user="ana", role="engineer")
    lake.sql("DROP USER ana")
    lake.sql("DROP ROLE engineer")
    assert [r.name for r in lake.sql("SHOW USERS").collect()] == ["ADMIN"]
    assert "ENGINEER" not in {r.name for r in lake.sql("SHOW ROLES").collect()}
    with pytest.raises(ObjectNotFoundError):
        lake.sql("DROP ROLE engineer")
    lake.sql("DROP ROLE IF EXISTS engineer")


def test_role_hierarchy_carries_privileges(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE ROLE reader")
    for grant in (*USAGE, "SELECT ON TABLE T"):
        admin.sql(f"GRANT {grant} TO ROLE reader")
    session = connect_as(admin, role="ANALYST")
    with pytest.raises(ObjectNotFoundError):
        session.sql("SELECT * FROM t").collect()
    admin.sql("GRANT ROLE reader TO ROLE analyst")
    assert rows(session, "SELECT * FROM t") == [(1,), (2,), (3,)]
    admin.sql("REVOKE ROLE reader FROM ROLE analyst")
    with pytest.raises(ObjectNotFoundError):
        session.sql("SELECT * FROM t").collect()


def test_public_is_every_roles(admin: lakeclone.Lake) -> None:
    session = connect_as(admin)
    with pytest.raises(ObjectNotFoundError):
        session.sql("SELECT * FROM t")
    for grant in (*USAGE, "SELECT ON TABLE T"):
        admin.sql(f"GRANT {grant} TO ROLE PUBLIC")
    assert rows(session, "SELECT * FROM t") == [(1,), (2,), (3,)]


# Grants


def test_grant_option_and_revoke(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE ROLE other")
    plain = connect_as(admin, *USAGE, "SELECT ON TABLE T")
    with pytest.raises(InsufficientPrivilegesError):
        plain.sql("GRANT SELECT ON TABLE t TO ROLE other")
    granting = connect_as(admin, *USAGE, "SELECT ON TABLE T")
    admin.sql(f"GRANT SELECT ON TABLE t TO ROLE {granting.sql('SELECT CURRENT_ROLE()').collect()[0][0]} WITH GRANT OPTION")
    granting.sql("GRANT SELECT ON TABLE t TO ROLE other")
    with pytest.raises(InsufficientPrivilegesError):
        granting.sql("GRANT INSERT ON TABLE t TO ROLE other")
    shown = {(r.privilege, r.grantee_name, r.grant_option) for r in admin.sql("SHOW GRANTS ON TABLE t").collect()}
    assert ("SELECT", "OTHER", "false") in shown and ("OWNERSHIP", "ACCOUNTADMIN", "true") in shown
    admin.sql("REVOKE SELECT ON TABLE t FROM ROLE other")
    assert "OTHER" not in {r.grantee_name for r in admin.sql("SHOW GRANTS ON TABLE t").collect()}


def test_unity_catalog_spellings(admin: lakeclone.Lake) -> None:
    session = connect_as(admin, "USE CATALOG ON CATALOG LAKE", "USE SCHEMA ON SCHEMA LAKE.PUBLIC", "ALL PRIVILEGES ON TABLE T")
    session.sql("INSERT INTO t VALUES (4)")
    assert rows(session, "SELECT * FROM t") == [(1,), (2,), (3,), (4,)]


def test_unknown_privilege_is_refused(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE ROLE r")
    with pytest.raises(LakecloneError, match="Invalid privilege CREATE TABLE for table"):
        admin.sql("GRANT CREATE TABLE ON TABLE t TO ROLE r")
    with pytest.raises(ObjectNotFoundError, match="Role 'NOPE'"):
        admin.sql("GRANT SELECT ON TABLE t TO ROLE nope")
    # Owning the account would make a role an administrator.
    with pytest.raises(LakecloneError, match="Invalid privilege OWNERSHIP for account"):
        admin.sql("GRANT OWNERSHIP ON ACCOUNT TO ROLE r")
    assert ("OWNERSHIP", "ACCOUNTADMIN") in {(g.privilege, g.grantee_name) for g in admin.sql("SHOW GRANTS ON ACCOUNT").collect()}


def test_all_tables_and_future_tables_in_schema(admin: lakeclone.Lake) -> None:
    session = connect_as(admin, *USAGE, role="ANALYST")
    admin.sql("GRANT SELECT ON ALL TABLES IN SCHEMA LAKE.PUBLIC TO ROLE analyst")
    admin.sql("GRANT SELECT ON FUTURE TABLES IN SCHEMA LAKE.PUBLIC TO ROLE analyst")
    assert rows(session, "SELECT * FROM src") == [(3,), (4,)]
    admin.sql("CREATE TABLE later (a INT)")
    assert rows(session, "SELECT * FROM later") == []
    future = admin.sql("SHOW FUTURE GRANTS IN SCHEMA LAKE.PUBLIC").collect()
    assert [(r.privilege, r.grant_on, r.grantee_name) for r in future] == [("SELECT", "TABLE", "ANALYST")]
    admin.sql("REVOKE SELECT ON FUTURE TABLES IN SCHEMA LAKE.PUBLIC FROM ROLE analyst")
    admin.sql("CREATE TABLE latest (a INT)")
    with pytest.raises(ObjectNotFoundError):
        session.sql("SELECT * FROM latest")


def test_ownership_transfer(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE ROLE reader")
    admin.sql("GRANT SELECT ON TABLE src TO ROLE reader")
    admin.sql("CREATE ROLE keeper")
    admin.sql("GRANT OWNERSHIP ON TABLE src TO ROLE keeper COPY CURRENT GRANTS")
    shown = {(r.privilege, r.grantee_name) for r in admin.sql("SHOW GRANTS ON TABLE src").collect()}
    assert shown == {("OWNERSHIP", "KEEPER"), ("SELECT", "READER")}
    admin.sql("GRANT OWNERSHIP ON TABLE src TO ROLE reader")
    shown = {(r.privilege, r.grantee_name) for r in admin.sql("SHOW GRANTS ON TABLE src").collect()}
    assert shown == {("OWNERSHIP", "READER")}


def test_show_grants_to_role_and_user(admin: lakeclone.Lake) -> None:
    session = connect_as(admin, *USAGE, "SELECT ON TABLE T", role="ANALYST")
    del session
    to_role = {(r.privilege, r.granted_on, r.name) for r in admin.sql("SHOW GRANTS TO ROLE analyst").collect()}
    assert to_role == {("USAGE", "DATABASE", "LAKE"), ("USAGE", "SCHEMA", "LAKE.PUBLIC"), ("SELECT", "TABLE", "LAKE.PUBLIC.T")}
    users = [r.grantee_name for r in admin.sql("SHOW GRANTS TO USER ADMIN").collect()]
    assert users == ["ADMIN"]


def test_creator_role_owns_what_it_creates(admin: lakeclone.Lake) -> None:
    session = connect_as(admin, *USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", role="BUILDER")
    session.sql("CREATE TABLE mine (a INT)")
    session.sql("INSERT INTO mine VALUES (1)")
    assert rows(session, "SELECT * FROM mine") == [(1,)]
    owners = [r.grantee_name for r in admin.sql("SHOW GRANTS ON TABLE mine").collect() if r.privilege == "OWNERSHIP"]
    assert owners == ["BUILDER"]
    session.sql("GRANT SELECT ON TABLE mine TO ROLE PUBLIC")
    session.sql("DROP TABLE mine")


QUERY_HISTORY_COLUMNS = (
    "session_id",
    "user_name",
    "role_name",
    "database_name",
    "schema_name",
    "query_type",
    "error_code",
    "error_message",
)


def test_migration_gives_existing_objects_to_accountadmin(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE old (a INT)")
    path = lake.warehouse / "catalog.sqlite"
    db = sqlite3.connect(path)
    with db:
        # The catalog as it was before access control's migration (the sixth) and those after it (channels,
        # policies, pending folders, query tags, stages, query history, vacuums, session leases; the channels'
        # pending rows go with the channels table).
        db.execute("DROP INDEX queries_started")
        for column in QUERY_HISTORY_COLUMNS:
            db.execute(f"ALTER TABLE queries DROP COLUMN {column}")
        db.execute("ALTER TABLE queries DROP COLUMN query_tag")
        for table in (
            "session_leases",
            "vacuums",
            "loaded_files",
            "file_formats",
            "stages",
            "pending_folders",
            "tag_policies",
            "tag_references",
            "policy_references",
            "policies",
            "channels",
            "ownership",
            "future_grants",
            "grants",
            "role_grants",
            "roles",
            "users",
        ):
            db.execute(f"DROP TABLE {table}")
        db.execute("PRAGMA user_version = 5")
    db.close()
    again = lakeclone.connect(lake.warehouse, spark=lake.spark, clock=lake.clock)
    owners = {(r.privilege, r.grantee_name) for r in again.sql("SHOW GRANTS ON TABLE old").collect()}
    assert owners == {("OWNERSHIP", "ACCOUNTADMIN")}
    check = sqlite3.connect(path)
    kinds = {row[0] for row in check.execute("SELECT object_kind FROM ownership WHERE role = 'ACCOUNTADMIN'")}
    check.close()
    assert {"DATABASE", "SCHEMA", "TABLE"} <= kinds


# Clones (the seeds' rules)


def test_clone_is_owned_by_its_creator_and_controlled_independently(admin: lakeclone.Lake) -> None:
    session = connect_as(admin, *USAGE, "SELECT ON TABLE T", "CREATE TABLE ON SCHEMA LAKE.PUBLIC", role="DEV")
    session.sql("CREATE TABLE dev_t CLONE t")
    owners = [r.grantee_name for r in admin.sql("SHOW GRANTS ON TABLE dev_t").collect() if r.privilege == "OWNERSHIP"]
    assert owners == ["DEV"]
    # Querying and writing the clone needs privileges on the clone only.
    admin.sql("REVOKE SELECT ON TABLE t FROM ROLE dev")
    session.sql("INSERT INTO dev_t VALUES (10)")
    assert rows(session, "SELECT * FROM dev_t") == [(1,), (2,), (3,), (10,)]
    with pytest.raises(ObjectNotFoundError):
        session.sql("SELECT * FROM t")
    other = connect_as(admin, *USAGE, "SELECT ON TABLE DEV_T", "INSERT ON TABLE DEV_T")
    other.sql("INSERT INTO dev_t VALUES (11)")
    assert rows(other, "SELECT * FROM dev_t") == [(1,), (2,), (3,), (10,), (11,)]
    with pytest.raises(ObjectNotFoundError):
        other.sql("INSERT INTO t VALUES (11)")
    assert rows(admin, "SELECT * FROM t") == [(1,), (2,), (3,)]


def test_external_clone_needs_create_external_table(admin: lakeclone.Lake, tmp_path: Any) -> None:
    admin.sql(f"CREATE EXTERNAL TABLE ext (a INT) LOCATION = '{tmp_path / 'ext'}'")
    admin.sql("INSERT INTO ext VALUES (1), (2), (3)")
    folder = (tmp_path / "outside").as_uri()
    needs = (*USAGE, "SELECT ON TABLE EXT", "CREATE TABLE ON SCHEMA LAKE.PUBLIC")
    session = connect_as(admin, *needs)
    sql = f"CREATE EXTERNAL TABLE e LOCATION = '{folder}' CLONE ext"
    with pytest.raises(InsufficientPrivilegesError, match="account"):
        session.sql(sql)
    assert "E" not in [r.name for r in admin.sql("SHOW TABLES").collect()]  # nothing created, no folder written
    assert not local_path(folder).exists() or not any(local_path(folder).iterdir())
    allowed = connect_as(admin, *needs, "CREATE EXTERNAL TABLE ON ACCOUNT")
    allowed.sql(sql)
    assert rows(allowed, "SELECT * FROM e") == [(1,), (2,), (3,)]


def _grants(lake: lakeclone.Lake, name: str) -> set[tuple[str, str]]:
    return {(r.privilege, r.grantee_name) for r in lake.sql(f"SHOW GRANTS ON TABLE {name}").collect()}


def test_copy_grants_copies_every_grant_but_ownership(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE ROLE reader")
    admin.sql("CREATE ROLE writer")
    admin.sql("GRANT SELECT ON TABLE t TO ROLE reader")
    admin.sql("GRANT INSERT, UPDATE ON TABLE t TO ROLE writer")
    admin.sql("GRANT OWNERSHIP ON TABLE t TO ROLE writer COPY CURRENT GRANTS")
    admin.sql("CREATE TABLE with_grants CLONE t COPY GRANTS")
    admin.sql("CREATE TABLE without_grants CLONE t")
    assert _grants(admin, "with_grants") == {
        ("OWNERSHIP", "ACCOUNTADMIN"),
        ("SELECT", "READER"),
        ("INSERT", "WRITER"),
        ("UPDATE", "WRITER"),
    }
    assert _grants(admin, "without_grants") == {("OWNERSHIP", "ACCOUNTADMIN")}


def test_schema_clone_children_carry_grants_but_the_container_does_not(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE SCHEMA prod")
    admin.sql("CREATE TABLE prod.orders (a INT)")
    admin.sql("INSERT INTO prod.orders VALUES (1)")
    admin.sql("CREATE ROLE analyst")
    admin.sql("GRANT USAGE ON SCHEMA LAKE.PROD TO ROLE analyst")
    admin.sql("GRANT SELECT ON TABLE prod.orders TO ROLE analyst")
    admin.sql("CREATE SCHEMA dev CLONE prod")
    assert _grants(admin, "dev.orders") == {("OWNERSHIP", "ACCOUNTADMIN"), ("SELECT", "ANALYST")}
    schema_grants = {(r.privilege, r.grantee_name) for r in admin.sql("SHOW GRANTS ON SCHEMA LAKE.DEV").collect()}
    assert schema_grants == {("OWNERSHIP", "ACCOUNTADMIN")}
    session = connect_as(admin, "USAGE ON DATABASE LAKE", role="ANALYST")
    assert rows(session, "SELECT * FROM prod.orders") == [(1,)]
    with pytest.raises(ObjectNotFoundError, match=r"Schema 'LAKE\.DEV'"):
        session.sql("SELECT * FROM dev.orders")


def test_database_clone_children_carry_grants(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE DATABASE prod")
    admin.sql("CREATE TABLE prod.public.orders (a INT)")
    admin.sql("CREATE ROLE analyst")
    admin.sql("GRANT USAGE ON DATABASE prod TO ROLE analyst")
    admin.sql("GRANT SELECT ON TABLE prod.public.orders TO ROLE analyst")
    admin.sql("CREATE DATABASE dev CLONE prod")
    assert _grants(admin, "dev.public.orders") == {("OWNERSHIP", "ACCOUNTADMIN"), ("SELECT", "ANALYST")}
    database_grants = {(r.privilege, r.grantee_name) for r in admin.sql("SHOW GRANTS ON DATABASE dev").collect()}
    assert database_grants == {("OWNERSHIP", "ACCOUNTADMIN")}


def test_copy_grants_outside_a_clone_is_refused(admin: lakeclone.Lake) -> None:
    before = state(admin)
    with pytest.raises(LakecloneError, match="COPY GRANTS is supported by lakeclone on CREATE TABLE … CLONE only"):
        admin.sql("CREATE OR REPLACE TABLE t (a INT) COPY GRANTS")
    assert state(admin) == before


# SHOW and DESCRIBE


def test_show_lists_only_what_the_role_sees(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE SCHEMA hidden")
    admin.sql("CREATE TABLE hidden.secret (a INT)")
    admin.sql("USE SCHEMA lake.public")
    session = connect_as(admin, *USAGE, "SELECT ON TABLE T", "SELECT ON VIEW V")
    assert [r.name for r in session.sql("SHOW TABLES IN ACCOUNT").collect()] == ["T"]
    assert [r.name for r in session.sql("SHOW VIEWS").collect()] == ["V"]
    assert session.sql("SHOW STREAMS").collect() == []
    assert [r.name for r in session.sql("SHOW SCHEMAS IN ACCOUNT").collect()] == ["PUBLIC"]
    assert [r.name for r in session.sql("SHOW DATABASES").collect()] == ["LAKE"]
    assert {r.name for r in admin.sql("SHOW TABLES IN ACCOUNT").collect()} == {"T", "SRC", "SECRET"}
    # A table seen through a schema the role may not use is not listed.
    admin.sql("REVOKE USAGE ON SCHEMA LAKE.PUBLIC FROM ROLE " + session.sql("SELECT CURRENT_ROLE()").collect()[0][0])
    assert session.sql("SHOW TABLES IN ACCOUNT").collect() == []


def test_describe_needs_a_privilege_on_the_object(admin: lakeclone.Lake) -> None:
    nothing = connect_as(admin, *USAGE)
    for statement in ("DESCRIBE TABLE t", "DESCRIBE VIEW v", "DESCRIBE STREAM s", "SHOW PARAMETERS IN TABLE t"):
        with pytest.raises(ObjectNotFoundError):
            nothing.sql(statement).collect()
    inserter = connect_as(admin, *USAGE, "INSERT ON TABLE T")
    assert [r.name for r in inserter.sql("DESCRIBE TABLE t").collect()] == ["A"]
    with pytest.raises(InsufficientPrivilegesError):
        inserter.sql("DESCRIBE HISTORY t").collect()


def test_create_if_not_exists_of_an_existing_object_takes_no_ownership(admin: lakeclone.Lake) -> None:
    session = connect_as(
        admin, *USAGE, "SELECT ON TABLE T", "CREATE TABLE ON SCHEMA LAKE.PUBLIC", "CREATE SCHEMA ON DATABASE LAKE"
    )
    session.sql("CREATE TABLE IF NOT EXISTS t (a INT)")
    session.sql("CREATE SCHEMA IF NOT EXISTS public")
    assert ("OWNERSHIP", "ACCOUNTADMIN") in _grants(admin, "t")
    schema = {(r.privilege, r.grantee_name) for r in admin.sql("SHOW GRANTS ON SCHEMA LAKE.PUBLIC").collect()}
    assert ("OWNERSHIP", "ACCOUNTADMIN") in schema


# Views run with their owner's rights


def _role_of(session: lakeclone.Lake) -> str:
    return str(session.sql("SELECT CURRENT_ROLE()").collect()[0][0])


def test_a_view_reads_with_its_owners_rights_nested_views_too(admin: lakeclone.Lake) -> None:
    author = connect_as(admin, *USAGE, "SELECT ON TABLE T", "CREATE VIEW ON SCHEMA LAKE.PUBLIC", role="AUTHOR")
    author.sql("CREATE VIEW big AS SELECT a FROM t WHERE a > 1")
    author.sql("GRANT SELECT ON VIEW big TO ROLE PUBLIC")
    nester = connect_as(admin, *USAGE, "CREATE VIEW ON SCHEMA LAKE.PUBLIC", role="NESTER")
    nester.sql("CREATE VIEW biggest AS SELECT a FROM big WHERE a > 2")
    # Querying a view needs SELECT on it only, however deep the views under it.
    reader = connect_as(admin, *USAGE, "SELECT ON VIEW BIGGEST")
    assert rows(reader, "SELECT * FROM biggest") == [(3,)]
    with pytest.raises(ObjectNotFoundError):
        reader.sql("SELECT * FROM t")
    # Once the inner view's owner loses SELECT on the table, every query through it fails, Snowflake's way.
    admin.sql("REVOKE SELECT ON TABLE t FROM ROLE author")
    expansion = r"Failure during expansion of view 'LAKE.PUBLIC.BIG': SQL compilation error:\nObject 'LAKE.PUBLIC.T'"
    with pytest.raises(LakecloneError, match=expansion):
        reader.sql("SELECT * FROM biggest")
    with pytest.raises(LakecloneError, match=expansion):
        author.sql("SELECT * FROM big")
    admin.sql("GRANT SELECT ON TABLE t TO ROLE author")
    assert rows(reader, "SELECT * FROM biggest") == [(3,)]
    # The outer view's owner losing SELECT on the inner view breaks the outer view alone.
    admin.sql("REVOKE SELECT ON VIEW big FROM ROLE PUBLIC")
    with pytest.raises(LakecloneError, match=r"Failure during expansion of view 'LAKE.PUBLIC.BIGGEST'"):
        reader.sql("SELECT * FROM biggest")
    assert rows(author, "SELECT * FROM big") == [(2,), (3,)]


def test_a_stream_on_a_view_reads_with_the_views_owners_rights(admin: lakeclone.Lake) -> None:
    author = connect_as(admin, *USAGE, "SELECT ON TABLE T", "CREATE VIEW ON SCHEMA LAKE.PUBLIC", role="AUTHOR")
    author.sql("CREATE VIEW seen AS SELECT a FROM t")
    admin.sql("ALTER VIEW seen SET CHANGE_TRACKING = TRUE")
    admin.sql("CREATE STREAM on_seen ON VIEW seen")
    reader = connect_as(admin, *USAGE, "SELECT ON STREAM ON_SEEN", "SELECT ON VIEW SEEN")
    assert rows(reader, "SELECT a FROM on_seen") == []
    admin.sql("REVOKE SELECT ON TABLE t FROM ROLE author")
    with pytest.raises(LakecloneError, match=r"Failure during expansion of view 'LAKE\.PUBLIC\.SEEN'"):
        reader.sql("SELECT a FROM on_seen")


# Sequences


def test_drawing_from_a_sequence_needs_usage_on_it(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE SEQUENCE ids")
    admin.sql("CREATE TABLE keyed (id INT DEFAULT ids.NEXTVAL, v INT)")
    writer = connect_as(admin, *USAGE, "INSERT ON TABLE KEYED", "SELECT ON TABLE KEYED", "SELECT ON TABLE SRC", role="WRITER")
    before = state(admin)
    with pytest.raises(ObjectNotFoundError, match=r"'LAKE\.PUBLIC\.IDS'"):
        writer.sql("INSERT INTO keyed (v) VALUES (1)")
    merge = "MERGE INTO keyed USING src ON keyed.v = src.a WHEN NOT MATCHED THEN INSERT (v) VALUES (src.a)"
    with pytest.raises(ObjectNotFoundError, match=r"'LAKE\.PUBLIC\.IDS'"):
        writer.sql(merge)
    assert state(admin) == before
    # Giving every column draws nothing from the sequence.
    writer.sql("INSERT INTO keyed (id, v) VALUES (100, 0)")
    admin.sql("GRANT USAGE ON SEQUENCE ids TO ROLE writer")
    writer.sql("INSERT INTO keyed (v) VALUES (1)")
    writer.sql(merge)
    drawn = rows(writer, "SELECT id, v FROM keyed")
    # The INSERT drew 1; the MERGE's two rows drew 2 and 3, in whichever order Spark read them.
    assert (drawn[0], drawn[-1]) == ((1, 1), (100, 0))
    assert sorted(id_ for id_, _ in drawn[1:3]) == [2, 3] and sorted(v for _, v in drawn[1:3]) == [3, 4]
    # So does naming the sequence in a column's default.
    builder = connect_as(admin, *USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC", role="BUILDER")
    with pytest.raises(ObjectNotFoundError, match=r"'LAKE\.PUBLIC\.IDS'"):
        builder.sql("CREATE TABLE other (id INT DEFAULT ids.NEXTVAL)")
    admin.sql("GRANT USAGE ON SEQUENCE ids TO ROLE builder")
    builder.sql("CREATE TABLE other (id INT DEFAULT ids.NEXTVAL)")


# UNDROP


def test_the_owner_of_a_dropped_schema_or_database_may_undrop_it(admin: lakeclone.Lake) -> None:
    owner = connect_as(admin, "USAGE ON DATABASE LAKE", "CREATE SCHEMA ON DATABASE LAKE", role="BUILDER")
    owner.sql("CREATE SCHEMA work")
    owner.sql("DROP SCHEMA work")
    stranger = connect_as(admin, "USAGE ON DATABASE LAKE", "CREATE SCHEMA ON DATABASE LAKE")
    before = state(admin)
    with pytest.raises(ObjectNotFoundError, match=r"'LAKE\.WORK'"):
        stranger.sql("UNDROP SCHEMA work")
    assert state(admin) == before
    # Ownership of the schema is not enough: Snowflake also needs CREATE SCHEMA on the database.
    admin.sql("REVOKE CREATE SCHEMA ON DATABASE LAKE FROM ROLE builder")
    with pytest.raises(InsufficientPrivilegesError, match="database 'LAKE'"):
        owner.sql("UNDROP SCHEMA work")
    admin.sql("GRANT CREATE SCHEMA ON DATABASE LAKE TO ROLE builder")
    owner.sql("UNDROP SCHEMA work")
    assert "WORK" in [r.name for r in owner.sql("SHOW SCHEMAS IN DATABASE LAKE").collect()]

    maker = connect_as(admin, "CREATE DATABASE ON ACCOUNT", role="MAKER")
    maker.sql("CREATE DATABASE scratch")
    maker.sql("DROP DATABASE scratch")
    other = connect_as(admin, "CREATE DATABASE ON ACCOUNT")
    with pytest.raises(ObjectNotFoundError, match="'SCRATCH'"):
        other.sql("UNDROP DATABASE scratch")
    maker.sql("UNDROP DATABASE scratch")
    assert "SCRATCH" in [r.name for r in maker.sql("SHOW DATABASES").collect()]


def test_undrop_table_needs_ownership_of_the_dropped_table(admin: lakeclone.Lake) -> None:
    admin.sql("DROP TABLE src")
    creator = connect_as(admin, *USAGE, "CREATE TABLE ON SCHEMA LAKE.PUBLIC")
    with pytest.raises(ObjectNotFoundError, match=r"'LAKE\.PUBLIC\.SRC'"):
        creator.sql("UNDROP TABLE src")
    admin.sql(f"GRANT OWNERSHIP ON TABLE t TO ROLE {_role_of(creator)}")  # owning another table is no help
    with pytest.raises(ObjectNotFoundError):
        creator.sql("UNDROP TABLE src")
    admin.sql("UNDROP TABLE src")
    assert rows(admin, "SELECT * FROM src") == [(3,), (4,)]


# The Python API and SHOW CHANNELS


def test_lineage_hides_tables_the_role_may_not_see(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE TABLE dev CLONE t")
    admin.sql("CREATE TABLE dev2 CLONE dev")
    session = connect_as(admin, *USAGE, "SELECT ON TABLE DEV2")
    graph = session.lineage("dev2")
    names = sorted(node.name for node in graph.nodes.values())
    assert names == ["<not authorized>", "<not authorized>", "LAKE.PUBLIC.DEV2"]
    hidden = [node for node in graph.nodes.values() if not node.authorized]
    assert all(node.version is None and node.files_owned == node.bytes_owned == 0 for node in hidden)
    assert len(graph.edges) == 2  # the shape stays: T -> DEV -> DEV2
    admin.sql(f"GRANT SELECT ON TABLE t TO ROLE {_role_of(session)}")
    names = sorted(node.name for node in session.lineage("dev2").nodes.values())
    assert names == ["<not authorized>", "LAKE.PUBLIC.DEV2", "LAKE.PUBLIC.T"]
    assert {node.name for node in admin.lineage("dev2").nodes.values()} == {
        "LAKE.PUBLIC.T",
        "LAKE.PUBLIC.DEV",
        "LAKE.PUBLIC.DEV2",
    }


def test_lineage_widget_hides_tables_the_role_may_not_see(admin: lakeclone.Lake) -> None:
    from lakeclone.widgets import lineage_widget

    admin.sql("CREATE TABLE dev CLONE t")
    session = connect_as(admin, *USAGE, "SELECT ON TABLE DEV")
    widget = lineage_widget(session, "dev")
    shown = widget.shown()
    text = " ".join(" ".join(row) for row in shown.rows)
    assert "LAKE.PUBLIC.T" not in text and "<not authorized>" in text
    assert [name for _label, name in widget.root_picker.options] == ["LAKE.PUBLIC.DEV"]
    assert widget.static()


def test_show_channels_lists_channels_on_tables_the_role_sees(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE TABLE feed (a INT)")
    with admin.streaming_client("ingest") as client:
        for table in ("t", "feed"):
            channel, _status = client.open_channel(f"on_{table}", table=table)
            channel.append_row({"a": 1}, offset_token="1")
    assert {r.name for r in admin.sql("SHOW CHANNELS IN SCHEMA LAKE.PUBLIC").collect()} == {"on_t", "on_feed"}
    session = connect_as(admin, *USAGE, "INSERT ON TABLE FEED")
    assert [r.name for r in session.sql("SHOW CHANNELS IN SCHEMA LAKE.PUBLIC").collect()] == ["on_feed"]
    assert [r.name for r in session.sql("SHOW CHANNELS").collect()] == ["on_feed"]
    with pytest.raises(ObjectNotFoundError, match=r"'LAKE\.PUBLIC\.T'"):
        session.sql("SHOW CHANNELS IN TABLE t")
