"""A tenant with only SQL tries every read path: no protected value reaches it, in a result or in an error.

An administrator keeps a customers table whose NOTE column is masked and
whose rows a row access policy filters through a mapping table, and an HR
table no one else may read. ANALYST holds SELECT on customers and may
create tables, streams and masking policies in its own SANDBOX schema;
NOBODY holds only USAGE on the database. The protected values carry markers
(SECRET, HIDDEN, SALARY) that must appear in nothing either role gets back.
Real Spark, Delta and SQLite throughout.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from lake_helpers import location, rows, session_of
from warehouse_templates import Build

import lakeclone
from lakeclone.errors import LakecloneError
from lakeclone.policies import enforce

pytestmark = pytest.mark.spark

MARKERS = ("SECRET", "HIDDEN", "SALARY")


def _tenancy(admin: lakeclone.Lake) -> None:
    for statement in (
        "CREATE SCHEMA gov",
        "CREATE SCHEMA hr",
        "CREATE SCHEMA sandbox",
        "USE SCHEMA lake.public",
        "CREATE TABLE gov.region_map (role STRING, region STRING)",
        "INSERT INTO gov.region_map VALUES ('ANALYST', 'EU')",
        "CREATE TABLE customers (id INT, note STRING, region STRING, tag STRING) CHANGE_TRACKING = TRUE",
        "INSERT INTO customers VALUES (1, 'SECRET-ann', 'EU', 'ann'), (2, 'HIDDEN-bob', 'US', 'HIDDEN-tag')",
        "UPDATE customers SET note = note || '+'",
        "CREATE MASKING POLICY gov.note_mask AS (val STRING) RETURNS STRING -> "
        "CASE WHEN IS_ROLE_IN_SESSION('ACCOUNTADMIN') THEN val ELSE '***' END",
        "CREATE ROW ACCESS POLICY gov.region_rows AS (region STRING) RETURNS BOOLEAN -> "
        "IS_ROLE_IN_SESSION('ACCOUNTADMIN') OR EXISTS (SELECT 1 FROM region_map m "
        "WHERE m.role = CURRENT_ROLE() AND m.region = region)",
        "ALTER TABLE customers MODIFY COLUMN note SET MASKING POLICY gov.note_mask",
        "ALTER TABLE customers ADD ROW ACCESS POLICY gov.region_rows ON (region)",
        "CREATE TABLE hr.salaries (who STRING, note STRING)",
        "INSERT INTO hr.salaries VALUES ('ceo', 'SALARY-of-the-ceo')",
        "CREATE ROLE analyst",
        "CREATE ROLE nobody",
        "CREATE USER ana",
        "CREATE USER nob",
        "GRANT ROLE analyst TO USER ana",
        "GRANT ROLE nobody TO USER nob",
        "GRANT USAGE ON DATABASE lake TO ROLE analyst",
        "GRANT USAGE ON SCHEMA lake.public TO ROLE analyst",
        "GRANT SELECT ON TABLE customers TO ROLE analyst",
        "GRANT USAGE ON SCHEMA lake.sandbox TO ROLE analyst",
        "GRANT CREATE TABLE ON SCHEMA lake.sandbox TO ROLE analyst",
        "GRANT CREATE STREAM ON SCHEMA lake.sandbox TO ROLE analyst",
        "GRANT CREATE MASKING POLICY ON SCHEMA lake.sandbox TO ROLE analyst",
        "GRANT USAGE ON DATABASE lake TO ROLE nobody",
    ):
        admin.sql(statement)


@pytest.fixture
def admin(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    return copy_of(_tenancy)


def _outcome(lake: lakeclone.Lake, sql: str) -> str:
    """What ``sql`` gives the tenant, as text: its rows, or its error's message."""
    try:
        return repr(lake.sql(sql).collect())
    except LakecloneError as error:
        return f"error: {error}"


def _assert_nothing_protected(text: str, context: str = "") -> None:
    assert not any(marker in text.upper() for marker in MARKERS), f"{context}\n-> {text}"


def test_table_changes_needs_select_and_reads_through_the_policies(admin: lakeclone.Lake) -> None:
    nobody = session_of(admin, "nob", "nobody")
    for call in ("table_changes('public.customers', 0)", "TABLE(table_changes('lake.public.customers', 1, 2))"):
        with pytest.raises(LakecloneError, match="does not exist or not authorized"):
            nobody.sql(f"SELECT * FROM {call}")
    # A missing table and an unreadable one read alike to a role that may not use their schema.
    missing = _outcome(nobody, "SELECT * FROM table_changes('hr.nope', 0)")
    present = _outcome(nobody, "SELECT * FROM table_changes('hr.salaries', 0)")
    assert missing == present == "error: SQL compilation error:\nSchema 'LAKE.HR' does not exist or not authorized."

    analyst = session_of(admin, "ana", "analyst")
    changes = analyst.sql("SELECT id, note, region, _change_type FROM table_changes('customers', 1) ORDER BY _commit_version")
    assert [tuple(r) for r in changes.collect()] == [
        (1, "***", "EU", "insert"),
        (1, "***", "EU", "update_preimage"),
        (1, "***", "EU", "update_postimage"),
    ]
    assert admin.sql("SELECT COUNT(*) FROM table_changes('customers', 1)").collect()[0][0] == 6


def test_a_clone_s_changes_keep_the_policies_it_inherited(admin: lakeclone.Lake) -> None:
    analyst = session_of(admin, "ana", "analyst")
    analyst.sql("CREATE TABLE sandbox.mine CLONE customers")
    analyst.sql("ALTER TABLE sandbox.mine SET CHANGE_TRACKING = TRUE")
    analyst.sql("UPDATE sandbox.mine SET id = id + 10")
    text = _outcome(analyst, "SELECT * FROM table_changes('sandbox.mine', 1)")
    _assert_nothing_protected(text)
    assert "update_preimage" in text


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT reflect('java.lang.System', 'getProperty', 'user.home')",
        "SELECT java_method('java.lang.System', 'getProperty', 'user.home')",
        "SELECT try_reflect('java.lang.System', 'getProperty', 'user.home')",
        "SELECT REFLECT('java.lang.System', 'getProperty', 'user.home')",
        "SELECT \"reflect\"('java.lang.System', 'getProperty', 'user.home')",
        "SELECT system.builtin.reflect('java.lang.System', 'getProperty', 'user.home')",
        "SELECT builtin.java_method('java.lang.System', 'getProperty', 'user.home')",
        "SELECT IDENTIFIER('reflect')('java.lang.System', 'getProperty', 'user.home')",
        "SELECT id FROM customers WHERE reflect('java.lang.System', 'getProperty', 'user.home') IS NOT NULL",
        "SELECT input_file_name() FROM customers",
        "SELECT version()",
        "SELECT id FROM customers AT (TIMESTAMP => reflect('java.lang.System', 'getProperty', 'x')::TIMESTAMP)",
        "CREATE TABLE sandbox.t (a STRING DEFAULT reflect('java.lang.System', 'getProperty', 'user.home'))",
    ],
)
def test_no_function_reaches_outside_sql(admin: lakeclone.Lake, sql: str) -> None:
    analyst = session_of(admin, "ana", "analyst")
    with pytest.raises(LakecloneError, match=r"Unknown function"):
        analyst.sql(sql).collect()


def test_spark_functions_that_stay_inside_sql_still_run(admin: lakeclone.Lake) -> None:
    analyst = session_of(admin, "ana", "analyst")
    row = analyst.sql(
        "SELECT array_join(transform(array(1, 2), x -> x * 2), ','), bit_count(7), md5('a'), typeof(1), try_divide(1, 0)"
    ).collect()[0]
    assert tuple(row) == ("2,4", 3, "0cc175b9c0f1b6a831c399e269772661", "int", None)
    assert rows(analyst, "SELECT * FROM range(2)") == [(0,), (1,)]


@pytest.mark.parametrize(
    "reference",
    ["IDENTIFIER('hr.salaries')", "TABLE('hr.salaries')", "TABLE(hr.salaries)", "IDENTIFIER('lake.hr.salaries') AS s"],
)
def test_a_table_named_by_a_string_is_checked_like_its_name(admin: lakeclone.Lake, reference: str) -> None:
    analyst = session_of(admin, "ana", "analyst")
    text = _outcome(analyst, f"SELECT * FROM {reference}")
    assert text == "error: SQL compilation error:\nSchema 'LAKE.HR' does not exist or not authorized."
    assert rows(admin, f"SELECT who FROM {reference}") == [("ceo",)]
    assert rows(analyst, "SELECT id, note FROM IDENTIFIER('customers')") == [(1, "***")]


def test_a_time_travel_timestamp_reads_no_relation(admin: lakeclone.Lake) -> None:
    analyst = session_of(admin, "ana", "analyst")
    folder = location(admin, "hr.salaries")
    refusals = {
        f'(SELECT CAST(MAX(note) AS TIMESTAMP) FROM delta."{folder}")': "TIMESTAMP must be a constant expression",
        "(SELECT CAST(MAX(note) AS TIMESTAMP) FROM hr.salaries)": "Schema 'LAKE.HR' does not exist or not authorized",
    }
    for point, refusal in refusals.items():
        text = _outcome(analyst, f"SELECT id FROM customers AT (TIMESTAMP => {point})")
        assert text.startswith(f"error: SQL compilation error:\n{refusal}")
        _assert_nothing_protected(text)


def test_a_policy_body_reads_only_what_its_owner_may_read(admin: lakeclone.Lake) -> None:
    analyst = session_of(admin, "ana", "analyst")
    peek = "(SELECT MAX(note) FROM hr.salaries)"
    # At CREATE: the creating role, which will own it, must be able to read what the body reads.
    with pytest.raises(LakecloneError, match=r"Failure during expansion of masking policy 'LAKE\.SANDBOX\.PEEK'"):
        analyst.sql(f"CREATE MASKING POLICY sandbox.peek AS (val STRING) RETURNS STRING -> {peek}")
    # At ALTER … SET BODY: the same.
    analyst.sql("CREATE MASKING POLICY sandbox.peek AS (val STRING) RETURNS STRING -> val")
    with pytest.raises(LakecloneError, match=r"Failure during expansion of masking policy 'LAKE\.SANDBOX\.PEEK'"):
        analyst.sql(f"ALTER MASKING POLICY sandbox.peek SET BODY -> {peek}")
    # At every use: a body its owner could read once reads nothing once the owner may no longer.
    admin.sql("GRANT USAGE ON SCHEMA lake.hr TO ROLE analyst")
    admin.sql("GRANT SELECT ON TABLE hr.salaries TO ROLE analyst")
    analyst.sql(f"ALTER MASKING POLICY sandbox.peek SET BODY -> {peek}")
    analyst.sql("CREATE TABLE sandbox.mine (x STRING)")
    analyst.sql("INSERT INTO sandbox.mine VALUES ('x')")
    analyst.sql("ALTER TABLE sandbox.mine MODIFY COLUMN x SET MASKING POLICY sandbox.peek")
    assert rows(analyst, "SELECT x FROM sandbox.mine") == [("SALARY-of-the-ceo",)]
    admin.sql("REVOKE SELECT ON TABLE hr.salaries FROM ROLE analyst")
    text = _outcome(analyst, "SELECT x FROM sandbox.mine")
    assert "Failure during expansion of masking policy 'LAKE.SANDBOX.PEEK'" in text
    _assert_nothing_protected(text)
    # The administrator's own policies read the mapping table with the administrator's rights, as before.
    assert rows(analyst, "SELECT id, note FROM customers") == [(1, "***")]


def test_a_clone_s_owner_cannot_take_off_the_policies_it_inherited(admin: lakeclone.Lake) -> None:
    analyst = session_of(admin, "ana", "analyst")
    analyst.sql("CREATE TABLE sandbox.mine CLONE customers")
    analyst.sql("CREATE MASKING POLICY sandbox.open AS (val STRING) RETURNS STRING -> val")
    for statement in (
        "ALTER TABLE sandbox.mine MODIFY COLUMN note UNSET MASKING POLICY",
        "ALTER TABLE sandbox.mine MODIFY COLUMN note SET MASKING POLICY sandbox.open FORCE",
        "ALTER TABLE sandbox.mine DROP ROW ACCESS POLICY gov.region_rows",
    ):
        text = _outcome(analyst, statement)
        assert text.startswith("error: SQL compilation error:"), statement
    _assert_nothing_protected(_outcome(analyst, "SELECT * FROM sandbox.mine"))
    # APPLY on the policy is what lets a role take it off, as Snowflake has it.
    admin.sql("GRANT USAGE ON SCHEMA lake.gov TO ROLE analyst")
    admin.sql("GRANT APPLY ON MASKING POLICY gov.note_mask TO ROLE analyst")
    analyst.sql("ALTER TABLE sandbox.mine MODIFY COLUMN note UNSET MASKING POLICY")
    assert rows(analyst, "SELECT id, note FROM sandbox.mine") == [(1, "SECRET-ann+")]


@pytest.mark.parametrize("visible", ["as literals", "inlined"])
@pytest.mark.parametrize(
    "predicate",
    ["CASE WHEN tag LIKE 'HIDDEN%' THEN raise_error(tag) ELSE TRUE END", "CAST(tag AS INT) = 1", "tag = 1", "id = 4 AND tag > 0"],
)
def test_errors_tell_nothing_of_the_rows_a_row_policy_hides(
    admin: lakeclone.Lake, predicate: str, visible: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row policy is applied before the user's predicate sees a row, on every path that reads the table.

    A policy reading a mapping table becomes the values it lets through, as
    literals, unless more than VISIBLE_TUPLES_LIMIT pass: then it is inlined
    as a subquery, which Spark makes a semi-join it would push predicates below.
    """
    if visible == "inlined":
        monkeypatch.setattr(enforce, "VISIBLE_TUPLES_LIMIT", 0)
        monkeypatch.setattr(enforce, "_VISIBLE", {})
    analyst = session_of(admin, "ana", "analyst")
    analyst.sql("CREATE STREAM sandbox.s ON TABLE customers")
    admin.sql("INSERT INTO customers VALUES (3, 'SECRET-cy', 'EU', 'cy'), (4, 'HIDDEN-dan', 'US', 'HIDDEN-tag-dan')")
    for relation in (
        "customers",
        "customers AT (VERSION => 1)",
        "sandbox.s",
        "customers CHANGES (INFORMATION => DEFAULT) AT (VERSION => 1)",
        "table_changes('customers', 1)",
    ):
        text = _outcome(analyst, f"SELECT id FROM {relation} WHERE {predicate}")
        _assert_nothing_protected(text, relation)
    assert rows(analyst, "SELECT id, note FROM customers WHERE id > 0") == [(1, "***"), (3, "***")]


def test_a_view_s_computed_column_is_not_computed_for_the_rows_its_row_policy_hides(admin: lakeclone.Lake) -> None:
    """A lookup on a table goes ahead of its row policy; on a view it may not: the view's column may be a cast."""
    admin.sql("CREATE TABLE codes (id INT, code STRING, region STRING)")
    admin.sql("INSERT INTO codes VALUES (1, '7', 'EU'), (2, 'HIDDEN-code', 'US')")
    admin.sql("CREATE VIEW coded AS SELECT id, CAST(code AS INT) AS n, region FROM codes")
    admin.sql("ALTER VIEW coded ADD ROW ACCESS POLICY gov.region_rows ON (region)")
    admin.sql("GRANT SELECT ON VIEW coded TO ROLE analyst")
    analyst = session_of(admin, "ana", "analyst")
    for predicate in ("n = 7", "n IN (7, 8)", "n > 0"):
        text = _outcome(analyst, f"SELECT id FROM coded WHERE {predicate}")
        assert text == "[Row(ID=1)]", predicate
        _assert_nothing_protected(text, predicate)


def test_a_policy_s_uses_are_listed_only_to_roles_that_may_apply_it(admin: lakeclone.Lake) -> None:
    query = (
        "SELECT ref_schema_name, ref_entity_name, ref_column_name "
        "FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES(POLICY_NAME => '{}'))"
    )
    admin.sql("ALTER TABLE hr.salaries MODIFY COLUMN note SET MASKING POLICY gov.note_mask")
    analyst = session_of(admin, "ana", "analyst")
    # A policy in a schema the role may not use, or one it holds nothing on, reads like a missing one.
    for name in ("note_mask", "nope"):
        text = _outcome(analyst, query.format(f"gov.{name}"))
        assert text == "error: SQL compilation error:\nSchema 'LAKE.GOV' does not exist or not authorized."
    admin.sql("GRANT USAGE ON SCHEMA lake.gov TO ROLE analyst")
    for name in ("note_mask", "nope"):
        text = _outcome(analyst, query.format(f"gov.{name}"))
        assert text == f"error: SQL compilation error:\nPolicy 'LAKE.GOV.{name.upper()}' does not exist or not authorized."
    # APPLY on the policy lists its uses, on the objects the role holds a privilege on.
    admin.sql("GRANT APPLY ON MASKING POLICY gov.note_mask TO ROLE analyst")
    assert rows(analyst, query.format("gov.note_mask")) == [("PUBLIC", "CUSTOMERS", "NOTE")]
    assert sorted(rows(admin, query.format("gov.note_mask"))) == [("HR", "SALARIES", "NOTE"), ("PUBLIC", "CUSTOMERS", "NOTE")]
    # So does APPLY MASKING POLICY on the account, which lets a role set any masking policy.
    admin.sql("GRANT USAGE ON SCHEMA lake.gov TO ROLE nobody")
    nobody = session_of(admin, "nob", "nobody")
    assert _outcome(nobody, query.format("gov.note_mask")).startswith(
        "error: SQL compilation error:\nPolicy 'LAKE.GOV.NOTE_MASK'"
    )
    admin.sql("GRANT APPLY MASKING POLICY ON ACCOUNT TO ROLE nobody")
    assert rows(nobody, query.format("gov.note_mask")) == []  # the policy is listable, its tables are not nobody's to know


def test_a_table_is_read_by_its_name_never_by_its_folder(admin: lakeclone.Lake) -> None:
    analyst = session_of(admin, "ana", "analyst")
    folder = location(admin, "hr.salaries")
    for reference in (f"IDENTIFIER('delta.`{folder}`')", f"TABLE('delta.`{folder}`')", f'delta."{folder}"'):
        text = _outcome(analyst, f"SELECT * FROM {reference}")
        assert text.startswith("error: SQL compilation error:"), reference
        _assert_nothing_protected(text)


def test_a_schema_clone_copies_no_table_the_role_cannot_read(admin: lakeclone.Lake) -> None:
    admin.sql("GRANT USAGE ON SCHEMA lake.hr TO ROLE analyst")
    admin.sql("GRANT CREATE SCHEMA ON DATABASE lake TO ROLE analyst")
    analyst = session_of(admin, "ana", "analyst")
    text = _outcome(analyst, "CREATE SCHEMA stolen CLONE hr")
    # The whole clone is refused, naming the schema, not the table the role may not know of.
    assert (
        text
        == "error: SQL access control error:\nInsufficient privileges to operate on schema 'LAKE.HR' as user ANA, role ANALYST"
    )
    assert "STOLEN" not in [r.name for r in admin.sql("SHOW SCHEMAS").collect()]
    admin.sql("GRANT SELECT ON TABLE hr.salaries TO ROLE analyst")
    analyst.sql("CREATE SCHEMA copied CLONE hr")
    assert rows(analyst, "SELECT who FROM copied.salaries") == [("ceo",)]


def test_history_shows_a_protected_table_s_predicates_to_its_owner_only(admin: lakeclone.Lake) -> None:
    admin.sql("DELETE FROM customers WHERE note = 'SECRET-ann+'")
    analyst = session_of(admin, "ana", "analyst")
    _assert_nothing_protected(_outcome(analyst, "DESCRIBE HISTORY customers"))
    (latest,) = analyst.sql("DESCRIBE HISTORY customers LIMIT 1").collect()
    assert latest.operation == "DELETE" and latest.operationParameters is None
    (owned,) = admin.sql("DESCRIBE HISTORY customers LIMIT 1").collect()
    assert "SECRET-ann+" in owned.operationParameters["predicate"]


def test_renaming_into_another_schema_needs_create_table_there(admin: lakeclone.Lake) -> None:
    analyst = session_of(admin, "ana", "analyst")
    analyst.sql("CREATE TABLE sandbox.mine (x INT)")
    assert _outcome(analyst, "ALTER TABLE sandbox.mine RENAME TO hr.mine") == (
        "error: SQL compilation error:\nSchema 'LAKE.HR' does not exist or not authorized."
    )
    admin.sql("GRANT USAGE ON SCHEMA lake.hr TO ROLE analyst")
    assert _outcome(analyst, "ALTER TABLE sandbox.mine RENAME TO hr.mine") == (
        "error: SQL access control error:\nInsufficient privileges to operate on schema 'LAKE.HR' as user ANA, role ANALYST"
    )
    admin.sql("GRANT CREATE TABLE ON SCHEMA lake.hr TO ROLE analyst")
    analyst.sql("ALTER TABLE sandbox.mine RENAME TO hr.mine")
    assert "MINE" in [r.name for r in admin.sql("SHOW TABLES IN SCHEMA lake.hr").collect()]


def test_who_may_list_users_roles_and_their_grants(admin: lakeclone.Lake) -> None:
    nobody = session_of(admin, "nob", "nobody")
    assert [r.name for r in nobody.sql("SHOW USERS").collect()] == ["NOB"]
    assert {r.name for r in nobody.sql("SHOW ROLES").collect()} == {"NOBODY", "PUBLIC"}
    assert [r.name for r in nobody.sql("SHOW GRANTS TO USER nob").collect()] == ["NOBODY"]
    assert {r.privilege for r in nobody.sql("SHOW GRANTS TO ROLE nobody").collect()} == {"USAGE"}
    for statement, refusal in (
        ("SHOW GRANTS TO ROLE analyst", "Role 'ANALYST' does not exist or not authorized."),
        ("SHOW GRANTS TO USER ana", "User 'ANA' does not exist or not authorized."),
    ):
        assert _outcome(nobody, statement) == f"error: SQL compilation error:\n{refusal}"
    assert {"ANA", "NOB", "ADMIN"} <= {r.name for r in admin.sql("SHOW USERS").collect()}


def test_a_result_is_checked_when_sql_returns_it(admin: lakeclone.Lake) -> None:
    """As the README says: a REVOKE applies to the statements after it, not to a frame already returned."""
    analyst = session_of(admin, "ana", "analyst")
    frame = analyst.sql("SELECT id, note FROM customers")
    admin.sql("REVOKE SELECT ON TABLE customers FROM ROLE analyst")
    assert [tuple(r) for r in frame.collect()] == [(1, "***")]
    with pytest.raises(LakecloneError, match="does not exist or not authorized"):
        analyst.sql("SELECT id, note FROM customers")


SWEEP = (
    "SELECT * FROM customers",
    "SELECT * FROM lake.public.customers AT (VERSION => 1)",
    "SELECT * FROM customers BEFORE (VERSION => 2)",
    "SELECT * FROM customers CHANGES (INFORMATION => DEFAULT) AT (VERSION => 1)",
    "SELECT * FROM table_changes('customers', 1)",
    "SELECT * FROM TABLE(table_changes('customers', 1, 2))",
    "SELECT * FROM IDENTIFIER('customers')",
    "SELECT * FROM TABLE('customers')",
    "SELECT c.* FROM customers c JOIN customers d ON c.id = d.id",
    "SELECT * FROM (SELECT note, tag FROM customers) WHERE tag LIKE 'H%' OR note LIKE 'S%'",
    "WITH x AS (SELECT * FROM customers) SELECT * FROM x",
    "SELECT note FROM customers UNION ALL SELECT tag FROM customers",
    "SELECT * FROM customers WHERE id IN (SELECT id FROM customers WHERE note LIKE 'SECRET%')",
    "SELECT COUNT(*), MAX(note), MIN(tag) FROM customers",
    "SELECT * FROM hr.salaries",
    "SELECT * FROM lake.hr.salaries AT (VERSION => 1)",
    "SELECT * FROM table_changes('hr.salaries', 1)",
    "SELECT * FROM IDENTIFIER('hr.salaries')",
    "SELECT * FROM TABLE('lake.hr.salaries')",
    "SELECT * FROM gov.region_map",
    "DESCRIBE HISTORY customers",
    "DESCRIBE HISTORY hr.salaries",
    "DESCRIBE DETAIL customers",
    "DESCRIBE TABLE customers",
    "SHOW TABLES",
    "SELECT * FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES(REF_ENTITY_NAME => 'customers', REF_ENTITY_DOMAIN => 'table'))",
    "CREATE TABLE sandbox.ctas AS SELECT * FROM customers",
    "CREATE TABLE sandbox.clone CLONE customers",
    "CREATE TABLE sandbox.deep DEEP CLONE customers AT (VERSION => 1)",
    "CREATE STREAM sandbox.s ON TABLE customers SHOW_INITIAL_ROWS = TRUE",
    "SELECT * FROM sandbox.s",
    "SELECT * FROM sandbox.ctas",
    "SELECT * FROM sandbox.clone",
    "SELECT * FROM sandbox.deep",
    "SELECT * FROM sandbox.clone AT (VERSION => 0)",
    "CREATE TABLE sandbox.copy (id INT, note STRING, region STRING, tag STRING)",
    "INSERT INTO sandbox.copy SELECT * FROM customers",
    "MERGE INTO sandbox.copy t USING customers c ON t.id = c.id WHEN NOT MATCHED THEN INSERT VALUES (c.id, c.note, c.region, c.tag)",
    "SELECT * FROM sandbox.copy",
    "SELECT * FROM customers WHERE CAST(note AS INT) = 1 OR CAST(tag AS INT) = 1",
    "SELECT id FROM customers WHERE CASE WHEN tag LIKE 'HIDDEN%' THEN raise_error(tag) ELSE TRUE END",
    "SELECT reflect('java.lang.System', 'getenv', 'HOME')",
)


@pytest.mark.parametrize("role", ["analyst", "nobody"])
def test_a_sql_only_tenant_finds_no_protected_value_on_any_path(admin: lakeclone.Lake, role: str) -> None:
    tenant = session_of(admin, "ana" if role == "analyst" else "nob", role)
    for statement in SWEEP:
        _assert_nothing_protected(_outcome(tenant, statement), statement)
    # The sweep read: the analyst saw its own row, masked.
    if role == "analyst":
        assert rows(tenant, "SELECT id, note FROM sandbox.copy") == [(1, "***")]
