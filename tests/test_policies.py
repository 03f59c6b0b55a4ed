"""Masking policies, row access policies and tags: statements, enforcement everywhere data is read, clones, errors.

Every policy here lives in the warehouse's real SQLite catalog, every query
runs on real Spark against real Delta tables, and the policies are checked in
the Spark plan the binder produced, not in a Python loop over rows.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from delta_reader import latest_version, spark_rows
from lake_helpers import location
from warehouse_templates import Build

import lakeclone
from lakeclone.errors import InsufficientPrivilegesError, LakecloneError, ObjectNotFoundError, SqlCompilationError

_users = itertools.count()

MASK_EMAIL = (
    "CREATE MASKING POLICY mask_email AS (val STRING) RETURNS STRING -> "
    "CASE WHEN CURRENT_ROLE() IN ('ACCOUNTADMIN', 'HR') THEN val ELSE '***MASKED***' END"
)
# Region mapping: each role sees the rows of the regions the mapping table gives it; ACCOUNTADMIN sees all.
BY_REGION = (
    "CREATE ROW ACCESS POLICY by_region AS (region STRING) RETURNS BOOLEAN -> "
    "CURRENT_ROLE() = 'ACCOUNTADMIN' OR EXISTS (SELECT 1 FROM region_map m WHERE m.role = CURRENT_ROLE() AND m.region = region)"
)


def connect_as(admin: lakeclone.Lake, role: str, *grants: str) -> lakeclone.Lake:
    """A session of a new user with the role ``role`` (created if needed), which gets ``grants``."""
    user = f"U{next(_users)}"
    admin.sql(f"CREATE ROLE IF NOT EXISTS {role}")
    admin.sql(f"CREATE USER {user}")
    admin.sql(f"GRANT ROLE {role} TO USER {user}")
    for grant in grants:
        admin.sql(f"GRANT {grant} TO ROLE {role}")
    return lakeclone.connect(admin.warehouse, spark=admin.spark, clock=admin.clock, user=user, role=role)


def reader(admin: lakeclone.Lake, role: str, *tables: str) -> lakeclone.Lake:
    grants = ["USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC", *(f"SELECT ON TABLE {t}" for t in tables)]
    return connect_as(admin, role, *grants)


def rows(lake: lakeclone.Lake, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in lake.sql(sql).collect())


def _people_with_policies(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE people (id INT, name STRING, email STRING, region STRING) CHANGE_TRACKING = TRUE")
    lake.sql(
        "INSERT INTO people VALUES (1, 'ann', 'ann@x.com', 'EU'), (2, 'bob', 'bob@x.com', 'US'), (3, 'cid', 'cid@x.com', 'EU')"
    )
    lake.sql("CREATE TABLE region_map (role STRING, region STRING)")
    lake.sql("INSERT INTO region_map VALUES ('ANALYST_EU', 'EU'), ('HR', 'EU'), ('HR', 'US')")
    lake.sql(MASK_EMAIL)
    lake.sql(BY_REGION)


@pytest.fixture
def admin(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """People (id, name, email, region) with a masking policy on email and a row access policy on region."""
    return copy_of(_people_with_policies)


def protect(lake: lakeclone.Lake, table: str = "people") -> None:
    lake.sql(f"ALTER TABLE {table} MODIFY COLUMN email SET MASKING POLICY mask_email")
    lake.sql(f"ALTER TABLE {table} ADD ROW ACCESS POLICY by_region ON (region)")


# Masking and row access by role


def test_masking_by_role(admin: lakeclone.Lake) -> None:
    admin.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY mask_email")
    analyst = reader(admin, "ANALYST_EU", "people")
    hr = reader(admin, "HR", "people")
    assert rows(analyst, "SELECT id, email FROM people") == [(1, "***MASKED***"), (2, "***MASKED***"), (3, "***MASKED***")]
    assert rows(hr, "SELECT id, email FROM people") == [(1, "ann@x.com"), (2, "bob@x.com"), (3, "cid@x.com")]
    assert rows(admin, "SELECT email FROM people WHERE id = 1") == [("ann@x.com",)]
    # A filter on the masked column sees the masked value, never the raw one.
    assert rows(analyst, "SELECT id FROM people WHERE email = 'ann@x.com'") == []
    # The files still hold the raw data: the policy is applied by lakeclone, not written into the table.
    assert sorted(r[2] for r in spark_rows(admin.spark, location(admin, "people"))) == ["ann@x.com", "bob@x.com", "cid@x.com"]


def test_policy_is_compiled_into_the_spark_plan(admin: lakeclone.Lake) -> None:
    protect(admin)
    analyst = reader(admin, "ANALYST_EU", "people")
    frame = analyst.sql("SELECT email FROM people")
    plan = frame._jdf.queryExecution().optimizedPlan().toString()  # type: ignore[attr-defined]
    assert "***MASKED***" in plan
    # The row policy's mapping-table subquery, evaluated for this session, is a filter of the regions it lets through.
    assert "EU" in plan and "Filter" in plan


def _filter_of(frame: Any) -> str:
    """The condition of the Filter in a frame's physical plan, its conjuncts in the order Spark evaluates them.

    Without the null checks Spark infers, which it evaluates first and which cannot fail.
    """
    plan = str(frame._jdf.queryExecution().executedPlan().toString())
    [line] = [line for line in plan.splitlines() if "Filter " in line and "FileScan" not in line]
    return re.sub(r"isnotnull\([^)]*\)", "", line)


def test_a_lookup_is_evaluated_before_the_row_policy(admin: lakeclone.Lake) -> None:
    """Spark evaluates a filter's conditions in order: a point lookup goes first, then the policy's, on its rows alone."""
    protect(admin)
    analyst = reader(admin, "ANALYST_EU", "people")
    for query in ("SELECT * FROM people WHERE id = 3", "SELECT p.name FROM people p WHERE p.id IN (3, 4) AND 1 = 1"):
        condition = _filter_of(analyst.sql(query))
        assert condition.index("ID#") < condition.index("REGION#"), condition
        # Applied inside to the values the statement reads, the lookup is not applied a second time after the policy:
        # one Filter in the plan Spark analyses (its optimizer would merge two, but after spending time on them).
        analyzed = str(analyst.sql(query)._jdf.queryExecution().analyzed().toString())
        assert len([line for line in analyzed.splitlines() if "Filter " in line and "ID#" in line]) == 1, analyzed
    assert rows(analyst, "SELECT name FROM people WHERE id = 3") == [("cid",)]
    assert rows(analyst, "SELECT name FROM people WHERE id = 2") == []  # a row the policy hides stays hidden
    assert rows(analyst, "SELECT name FROM people WHERE region = 'US'") == []
    # A masked column's predicate stays behind the mask: it sees the masked value.
    assert rows(analyst, "SELECT id FROM people WHERE email = 'cid@x.com'") == []
    assert rows(analyst, "SELECT id FROM people WHERE email = '***MASKED***' AND id > 1") == [(3,)]
    # A predicate that makes Spark cast the column (to a number, to a decimal with a fraction) could fail on a
    # row the policy hides, and name its value: it stays behind the policy.
    for predicate, column in (("name = 1", "NAME#"), ("id > 0.5", "ID#")):
        condition = _filter_of(analyst.sql(f"SELECT * FROM people WHERE {predicate}"))
        assert condition.index("REGION#") < condition.index(column), condition


def test_row_policy_follows_changes_to_its_mapping_table(admin: lakeclone.Lake) -> None:
    protect(admin)
    analyst = reader(admin, "ANALYST_EU", "people")
    assert rows(analyst, "SELECT id FROM people") == [(1,), (3,)]
    admin.sql("INSERT INTO region_map VALUES ('ANALYST_EU', 'US')")
    assert rows(analyst, "SELECT id FROM people") == [(1,), (2,), (3,)]
    admin.sql("DELETE FROM region_map WHERE role = 'ANALYST_EU'")
    assert rows(analyst, "SELECT id FROM people") == []
    admin.sql("INSERT INTO people VALUES (4, 'dan', 'dan@x.com', NULL)")
    admin.sql("INSERT INTO region_map VALUES ('ANALYST_EU', 'EU')")
    assert rows(analyst, "SELECT id FROM people") == [(1,), (3,)]


def test_table_without_policies_binds_as_before(admin: lakeclone.Lake) -> None:
    frame = admin.sql("SELECT * FROM region_map")
    plan = frame._jdf.queryExecution().analyzed().toString()  # type: ignore[attr-defined]
    assert "LC_PROTECTED" not in plan


def test_row_access_by_mapping_table(admin: lakeclone.Lake) -> None:
    protect(admin)
    analyst = reader(admin, "ANALYST_EU", "people")
    other = reader(admin, "NOBODY", "people")
    hr = reader(admin, "HR", "people")
    assert rows(analyst, "SELECT id, name, email FROM people") == [(1, "ann", "***MASKED***"), (3, "cid", "***MASKED***")]
    assert rows(other, "SELECT COUNT(*) FROM people") == [(0,)]
    assert rows(hr, "SELECT id, email FROM people") == [(1, "ann@x.com"), (2, "bob@x.com"), (3, "cid@x.com")]
    assert rows(admin, "SELECT COUNT(*) FROM people") == [(3,)]
    # The mapping table is read with the policy owner's rights: the analyst has no SELECT on it.
    with pytest.raises(ObjectNotFoundError):
        analyst.sql("SELECT * FROM region_map")


def test_is_role_in_session_follows_the_role_hierarchy(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE MASKING POLICY mask_name AS (val STRING) RETURNS STRING -> IFF(IS_ROLE_IN_SESSION('PII_READER'), val, 'x')")
    admin.sql("ALTER TABLE people MODIFY COLUMN name SET MASKING POLICY mask_name")
    admin.sql("CREATE ROLE pii_reader")
    senior = reader(admin, "SENIOR", "people")
    junior = reader(admin, "JUNIOR", "people")
    admin.sql("GRANT ROLE pii_reader TO ROLE senior")
    assert rows(senior, "SELECT name FROM people WHERE id = 1") == [("ann",)]
    assert rows(junior, "SELECT name FROM people WHERE id = 1") == [("x",)]
    # The administrator is subject to policies like anyone.
    assert rows(admin, "SELECT name FROM people WHERE id = 1") == [("x",)]


def test_current_user_in_a_policy(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE MASKING POLICY own_name AS (val STRING) RETURNS STRING -> IFF(CURRENT_USER() = 'ADMIN', val, NULL)")
    admin.sql("ALTER TABLE people MODIFY COLUMN name SET MASKING POLICY own_name")
    assert rows(admin, "SELECT name FROM people WHERE id = 2") == [("bob",)]
    assert rows(reader(admin, "R_USER", "people"), "SELECT name FROM people WHERE id = 2") == [(None,)]


def test_conditional_masking_with_using(admin: lakeclone.Lake) -> None:
    admin.sql(
        "CREATE MASKING POLICY email_unless_us AS (val STRING, region STRING) RETURNS STRING -> "
        "CASE WHEN region = 'US' THEN val ELSE '***' END"
    )
    admin.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY email_unless_us USING (email, region)")
    assert rows(admin, "SELECT id, email FROM people") == [(1, "***"), (2, "bob@x.com"), (3, "***")]


def test_masking_keeps_the_column_type(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE MASKING POLICY zero AS (val INT) RETURNS INT -> IFF(CURRENT_ROLE() = 'HR', val, 0)")
    admin.sql("ALTER TABLE people MODIFY COLUMN id SET MASKING POLICY zero")
    frame = admin.sql("SELECT id FROM people")
    assert frame.schema.fields[0].dataType.simpleString() == "int"
    assert rows(admin, "SELECT id FROM people") == [(0,), (0,), (0,)]


# Tags and tag-based masking


def test_tag_based_masking(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE TAG pii ALLOWED_VALUES 'email', 'name'")
    admin.sql("ALTER TAG pii SET MASKING POLICY mask_email")
    admin.sql("ALTER TABLE people MODIFY COLUMN name SET TAG pii = 'name'")
    assert rows(admin, "SELECT name FROM people WHERE id = 1") == [("ann",)]  # ACCOUNTADMIN sees it
    analyst = reader(admin, "ANALYST_EU", "people")
    assert rows(analyst, "SELECT name, email FROM people WHERE id = 1") == [("***MASKED***", "ann@x.com")]
    # A column's own policy wins over its tag's.
    admin.sql("CREATE MASKING POLICY dashes AS (val STRING) RETURNS STRING -> '--'")
    admin.sql("ALTER TABLE people MODIFY COLUMN name SET MASKING POLICY dashes")
    assert rows(analyst, "SELECT name FROM people WHERE id = 1") == [("--",)]
    with pytest.raises(SqlCompilationError, match="allowed values"):
        admin.sql("ALTER TABLE people MODIFY COLUMN email SET TAG pii = 'phone'")


def test_tag_on_table_masks_columns_of_its_policy_type(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE TAG confidential")
    admin.sql("ALTER TAG confidential SET MASKING POLICY mask_email")
    admin.sql("ALTER TABLE people SET TAG confidential = 'high'")
    analyst = reader(admin, "ANALYST_EU", "people")
    assert rows(analyst, "SELECT id, name, region FROM people WHERE id = 1") == [(1, "***MASKED***", "***MASKED***")]


def test_tag_value_in_policy_body(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE TAG level")
    admin.sql(
        "CREATE MASKING POLICY by_level AS (val STRING) RETURNS STRING -> "
        "IFF(SYSTEM$GET_TAG_ON_CURRENT_COLUMN('level') = 'open', val, '#')"
    )
    admin.sql("ALTER TAG level SET MASKING POLICY by_level")
    admin.sql("ALTER TABLE people MODIFY COLUMN name SET TAG level = 'open'")
    admin.sql("ALTER TABLE people MODIFY COLUMN email SET TAG level = 'closed'")
    assert rows(admin, "SELECT name, email FROM people WHERE id = 1") == [("ann", "#")]


def test_a_tag_has_one_masking_policy_per_type(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE TAG pii")
    admin.sql("ALTER TAG pii SET MASKING POLICY mask_email")
    admin.sql("CREATE MASKING POLICY other AS (val STRING) RETURNS STRING -> val")
    with pytest.raises(SqlCompilationError, match="only one masking policy per data type"):
        admin.sql("ALTER TAG pii SET MASKING POLICY other")


# Where policies apply


def test_joins_and_subqueries(admin: lakeclone.Lake) -> None:
    protect(admin)
    analyst = reader(admin, "ANALYST_EU", "people")
    assert rows(analyst, "SELECT a.id, b.email FROM people a JOIN people b ON a.id = b.id") == [
        (1, "***MASKED***"),
        (3, "***MASKED***"),
    ]
    assert rows(analyst, "SELECT COUNT(*) FROM (SELECT * FROM people) p") == [(2,)]
    assert rows(analyst, "WITH p AS (SELECT email FROM people) SELECT COUNT(DISTINCT email) FROM p") == [(1,)]


def test_views_over_a_protected_table(admin: lakeclone.Lake) -> None:
    protect(admin)
    admin.sql("CREATE VIEW contacts AS SELECT id, email FROM people")
    analyst = connect_as(admin, "ANALYST_EU", "USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC", "SELECT ON VIEW contacts")
    assert rows(analyst, "SELECT * FROM contacts") == [(1, "***MASKED***"), (3, "***MASKED***")]


def test_masking_policy_on_a_view_column(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE VIEW names AS SELECT id, name FROM people")
    admin.sql("ALTER VIEW names MODIFY COLUMN name SET MASKING POLICY mask_email")
    assert rows(admin, "SELECT name FROM names WHERE id = 1") == [("ann",)]
    analyst = connect_as(admin, "ANALYST_EU", "USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC", "SELECT ON VIEW names")
    assert rows(analyst, "SELECT name FROM names WHERE id = 1") == [("***MASKED***",)]


def test_time_travel(admin: lakeclone.Lake) -> None:
    version = latest_version(location(admin, "people"))
    admin.sql("UPDATE people SET email = 'new@x.com' WHERE id = 1")
    protect(admin)
    analyst = reader(admin, "ANALYST_EU", "people")
    assert rows(analyst, f"SELECT id, email FROM people VERSION AS OF {version}") == [(1, "***MASKED***"), (3, "***MASKED***")]
    assert rows(analyst, f"SELECT id FROM people AT(VERSION => {version})") == [(1,), (3,)]


def test_streams_and_changes(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE STREAM people_changes ON TABLE people")
    version = latest_version(location(admin, "people"))
    admin.sql("INSERT INTO people VALUES (4, 'dan', 'dan@x.com', 'US'), (5, 'eve', 'eve@x.com', 'EU')")
    protect(admin)
    analyst = connect_as(
        admin,
        "ANALYST_EU",
        "USAGE ON DATABASE LAKE",
        "USAGE ON SCHEMA LAKE.PUBLIC",
        "SELECT ON TABLE people",
        "SELECT ON STREAM people_changes",
    )
    assert rows(analyst, 'SELECT id, email, "METADATA$ACTION", "METADATA$ISUPDATE" FROM people_changes') == [
        (5, "***MASKED***", "INSERT", False)
    ]
    [row] = analyst.sql("SELECT METADATA$ROW_ID FROM people_changes").collect()
    assert row[0] is not None
    changes = rows(analyst, f"SELECT id, email FROM people CHANGES(INFORMATION => DEFAULT) AT(VERSION => {version})")
    assert changes == [(5, "***MASKED***")]


def test_a_stream_on_a_view_of_a_protected_table_is_refused_not_read_raw(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE VIEW eu_people AS SELECT id, email, region FROM people WHERE region = 'EU'")
    admin.sql("CREATE STREAM eu_changes ON VIEW eu_people")
    admin.sql("INSERT INTO people VALUES (4, 'dan', 'dan@x.com', 'EU')")
    assert rows(admin, "SELECT id, email FROM eu_changes") == [(4, "dan@x.com")]  # no policy yet: read as it is
    admin.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY mask_email")
    analyst = connect_as(
        admin,
        "ANALYST_EU",
        "USAGE ON DATABASE LAKE",
        "USAGE ON SCHEMA LAKE.PUBLIC",
        "SELECT ON VIEW eu_people",
        "SELECT ON STREAM eu_changes",
    )
    with pytest.raises(SqlCompilationError, match=r"whose table LAKE\.PUBLIC\.PEOPLE has masking or row access policies"):
        analyst.sql("SELECT id, email FROM eu_changes").collect()
    with pytest.raises(SqlCompilationError, match="does not apply a view's table policies to a stream on the view"):
        admin.sql("CREATE TABLE sink AS SELECT * FROM eu_changes")  # the administrator too: policies bind everyone
    assert admin.sql("SHOW TABLES LIKE 'SINK'").collect() == []
    assert rows(analyst, "SELECT id, email FROM eu_people") == [  # the view itself applies them
        (1, "***MASKED***"),
        (3, "***MASKED***"),
        (4, "***MASKED***"),
    ]


def test_insert_select_ctas_and_merge_read_through_policies(admin: lakeclone.Lake) -> None:
    protect(admin)
    writer = connect_as(
        admin,
        "ANALYST_EU",
        "USAGE ON DATABASE LAKE",
        "USAGE ON SCHEMA LAKE.PUBLIC",
        "SELECT ON TABLE people",
        "CREATE TABLE ON SCHEMA LAKE.PUBLIC",
    )
    writer.sql("CREATE TABLE copy AS SELECT id, email FROM people")
    assert rows(admin, "SELECT * FROM copy") == [(1, "***MASKED***"), (3, "***MASKED***")]
    writer.sql("INSERT INTO copy SELECT id + 10, email FROM people")
    assert rows(admin, "SELECT COUNT(*) FROM copy WHERE email = '***MASKED***'") == [(4,)]
    writer.sql(
        "MERGE INTO copy c USING people p ON c.id = p.id WHEN MATCHED THEN UPDATE SET email = p.email || '!' "
        "WHEN NOT MATCHED THEN INSERT VALUES (p.id, p.email)"
    )
    assert rows(admin, "SELECT id, email FROM copy WHERE id < 10") == [(1, "***MASKED***!"), (3, "***MASKED***!")]


def test_update_and_delete_targets_are_not_masked(admin: lakeclone.Lake) -> None:
    admin.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY mask_email")
    writer = connect_as(
        admin, "ANALYST_EU", "USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC", "SELECT, UPDATE ON TABLE people"
    )
    writer.sql("UPDATE people SET name = 'ANN' WHERE email LIKE 'ann%'")
    assert rows(admin, "SELECT name FROM people WHERE id = 1") == [("ANN",)]


def test_update_and_delete_touch_only_the_rows_the_row_policy_shows(admin: lakeclone.Lake) -> None:
    protect(admin)  # the row policy reads the mapping table: a subquery Delta's UPDATE and DELETE cannot run
    writer = connect_as(
        admin, "ANALYST_EU", "USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC", "SELECT, UPDATE, DELETE ON TABLE people"
    )
    assert rows(writer, "UPDATE people SET name = UPPER(name)") == [(2, 0)]
    assert rows(admin, "SELECT id, name FROM people") == [(1, "ANN"), (2, "bob"), (3, "CID")]
    assert rows(writer, "DELETE FROM people WHERE id > 0") == [(2,)]
    assert rows(admin, "SELECT id FROM people") == [(2,)]
    # A role the mapping gives no region touches nothing.
    nobody = connect_as(admin, "NOBODY", "USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC", "DELETE ON TABLE people")
    assert rows(nobody, "DELETE FROM people") == [(0,)]
    assert rows(admin, "SELECT id FROM people") == [(2,)]


def test_a_merge_matches_only_the_target_rows_the_row_policy_shows(admin: lakeclone.Lake) -> None:
    protect(admin)
    writer = connect_as(
        admin,
        "ANALYST_EU",
        "USAGE ON DATABASE LAKE",
        "USAGE ON SCHEMA LAKE.PUBLIC",
        "SELECT, INSERT, UPDATE, DELETE ON TABLE people",
    )
    source = "(SELECT 1 AS id, 'x' AS name UNION ALL SELECT 2, 'y' UNION ALL SELECT 3, 'z')"
    merged = writer.sql(
        f"MERGE INTO people p USING {source} s ON p.id = s.id "
        "WHEN MATCHED AND s.id = 3 THEN DELETE WHEN MATCHED THEN UPDATE SET name = s.name"
    ).collect()
    assert [tuple(r) for r in merged] == [(0, 1, 1)]  # bob (US) is hidden from ANALYST_EU: not matched, untouched
    assert rows(admin, "SELECT id, name FROM people") == [(1, "x"), (2, "bob")]


def test_row_policy_without_subquery_narrows_dml_inline(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE ROW ACCESS POLICY eu_only AS (r STRING) RETURNS BOOLEAN -> r = 'EU' OR IS_ROLE_IN_SESSION('HR')")
    admin.sql("ALTER TABLE people ADD ROW ACCESS POLICY eu_only ON (region)")
    assert rows(admin, "DELETE FROM people") == [(2,)]
    assert rows(admin, "SELECT id, region FROM people") == []
    admin.sql("ALTER TABLE people DROP ROW ACCESS POLICY eu_only")
    assert rows(admin, "SELECT id, region FROM people") == [(2, "US")]


def test_lsql_magic_results_are_masked(admin: lakeclone.Lake) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    protect(admin)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = InteractiveShell(config=config)
    try:
        shell.run_cell("%load_ext lakeclone")
        shell.user_ns["analyst"] = reader(admin, "ANALYST_EU", "people")
        result = shell.run_cell("%%lsql --lake analyst\nSELECT id, email FROM people ORDER BY id")
        result.raise_error()
        frame = result.result
        assert [tuple(r) for r in frame.itertuples(index=False)] == [(1, "***MASKED***"), (3, "***MASKED***")]
    finally:
        shell.clear_instance()


# Clones


def test_table_clone_keeps_policy_and_tag_references(admin: lakeclone.Lake) -> None:
    protect(admin)
    admin.sql("CREATE TAG owner_team")
    admin.sql("ALTER TABLE people SET TAG owner_team = 'crm'")
    admin.sql("CREATE TABLE people_dev CLONE people")
    analyst = reader(admin, "ANALYST_EU", "people_dev")
    assert rows(analyst, "SELECT id, email FROM people_dev") == [(1, "***MASKED***"), (3, "***MASKED***")]
    listed = admin.sql(
        "SELECT POLICY_NAME, POLICY_KIND, REF_COLUMN_NAME FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        "REF_ENTITY_NAME => 'people_dev', REF_ENTITY_DOMAIN => 'table'))"
    ).collect()
    assert sorted(tuple(r) for r in listed) == [
        ("BY_REGION", "ROW_ACCESS_POLICY", None),
        ("MASK_EMAIL", "MASKING_POLICY", "EMAIL"),
    ]
    tags = admin.sql("SELECT TAG_NAME, TAG_VALUE FROM TABLE(INFORMATION_SCHEMA.TAG_REFERENCES('people_dev', 'table'))")
    assert [tuple(r) for r in tags.collect()] == [("OWNER_TEAM", "crm")]


def test_schema_clone_remaps_its_own_policies_and_keeps_others(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE SCHEMA governance")
    admin.sql("CREATE SCHEMA prod")
    admin.sql("CREATE MASKING POLICY governance.shared_mask AS (val STRING) RETURNS STRING -> 'shared'")
    admin.sql("CREATE MASKING POLICY prod.local_mask AS (val STRING) RETURNS STRING -> 'local'")
    admin.sql("CREATE TABLE prod.t (a STRING, b STRING)")
    admin.sql("INSERT INTO prod.t VALUES ('x', 'y')")
    admin.sql("ALTER TABLE prod.t MODIFY COLUMN a SET MASKING POLICY governance.shared_mask")
    admin.sql("ALTER TABLE prod.t MODIFY COLUMN b SET MASKING POLICY prod.local_mask")
    admin.sql("CREATE SCHEMA dev CLONE prod")
    assert [r.name for r in admin.sql("SHOW MASKING POLICIES IN SCHEMA dev").collect()] == ["LOCAL_MASK"]
    listed = admin.sql(
        "SELECT REF_COLUMN_NAME, POLICY_SCHEMA, POLICY_NAME FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        "REF_ENTITY_NAME => 'dev.t', REF_ENTITY_DOMAIN => 'table'))"
    ).collect()
    assert sorted(tuple(r) for r in listed) == [("A", "GOVERNANCE", "SHARED_MASK"), ("B", "DEV", "LOCAL_MASK")]
    # The clone's copy is its own: changing it leaves production's policy as it was.
    admin.sql("ALTER MASKING POLICY dev.local_mask SET BODY -> 'dev only'")
    assert rows(admin, "SELECT a, b FROM dev.t") == [("shared", "dev only")]
    assert rows(admin, "SELECT a, b FROM prod.t") == [("shared", "local")]


def test_schema_clone_tag_based_masking_both_cases(admin: lakeclone.Lake) -> None:
    # Case 1: tag and policy in another schema: the cloned table keeps pointing at them.
    admin.sql("CREATE SCHEMA governance")
    admin.sql("CREATE TAG governance.pii")
    admin.sql("CREATE MASKING POLICY governance.pii_mask AS (val STRING) RETURNS STRING -> 'gov'")
    admin.sql("ALTER TAG governance.pii SET MASKING POLICY governance.pii_mask")
    # Case 2: tag, policy and table all in the cloned schema: the clone uses its own copies.
    admin.sql("CREATE SCHEMA prod")
    admin.sql("CREATE TAG prod.pii")
    admin.sql("CREATE MASKING POLICY prod.pii_mask AS (val STRING) RETURNS STRING -> 'prod'")
    admin.sql("ALTER TAG prod.pii SET MASKING POLICY prod.pii_mask")
    admin.sql("CREATE TABLE prod.t (a STRING, b STRING)")
    admin.sql("INSERT INTO prod.t VALUES ('x', 'y')")
    admin.sql("ALTER TABLE prod.t MODIFY COLUMN a SET TAG governance.pii = 'yes'")
    admin.sql("ALTER TABLE prod.t MODIFY COLUMN b SET TAG prod.pii = 'yes'")
    admin.sql("CREATE SCHEMA dev CLONE prod")
    admin.sql("ALTER MASKING POLICY dev.pii_mask SET BODY -> 'dev'")
    assert rows(admin, "SELECT a, b FROM dev.t") == [("gov", "dev")]
    assert rows(admin, "SELECT a, b FROM prod.t") == [("gov", "prod")]
    tags = admin.sql("SELECT TAG_SCHEMA, COLUMN_NAME FROM TABLE(INFORMATION_SCHEMA.TAG_REFERENCES('dev.t', 'table'))")
    assert sorted(tuple(r) for r in tags.collect()) == [("DEV", "B"), ("GOVERNANCE", "A")]


def test_database_clone_copies_policies(admin: lakeclone.Lake) -> None:
    protect(admin)
    admin.sql("CREATE DATABASE lake_dev CLONE lake")
    listed = admin.sql(
        "SELECT POLICY_DB, POLICY_NAME FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        "REF_ENTITY_NAME => 'lake_dev.public.people', REF_ENTITY_DOMAIN => 'table'))"
    ).collect()
    assert sorted(tuple(r) for r in listed) == [("LAKE_DEV", "BY_REGION"), ("LAKE_DEV", "MASK_EMAIL")]
    analyst = connect_as(
        admin,
        "ANALYST_EU",
        "USAGE ON DATABASE LAKE_DEV",
        "USAGE ON SCHEMA LAKE_DEV.PUBLIC",
        "SELECT ON TABLE LAKE_DEV.PUBLIC.PEOPLE",
    )
    # The cloned row policy reads the cloned mapping table.
    assert rows(analyst, "SELECT id, email FROM lake_dev.public.people") == [(1, "***MASKED***"), (3, "***MASKED***")]


# Statements, SHOW, DESCRIBE, references


def test_show_and_describe(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE TAG pii ALLOWED_VALUES 'a', 'b' COMMENT = 'personal'")
    masking = admin.sql("SHOW MASKING POLICIES").collect()
    assert [(r.name, r.kind, r.owner) for r in masking] == [("MASK_EMAIL", "MASKING_POLICY", "ACCOUNTADMIN")]
    assert [r.name for r in admin.sql("SHOW ROW ACCESS POLICIES LIKE 'by%'").collect()] == ["BY_REGION"]
    assert [r.name for r in admin.sql("SHOW ROW ACCESS POLICIES LIKE 'x%'").collect()] == []
    [tag] = admin.sql("SHOW TAGS").collect()
    assert (tag.name, tag.comment, tag.allowed_values) == ("PII", "personal", '["a","b"]')
    [described] = admin.sql("DESCRIBE MASKING POLICY mask_email").collect()
    assert described.signature == "(VAL VARCHAR)"
    assert described.return_type == "VARCHAR"
    assert "***MASKED***" in described.body
    [row_policy] = admin.sql("DESCRIBE ROW ACCESS POLICY by_region").collect()
    assert row_policy.return_type == "BOOLEAN"


def test_policy_references_by_policy_name(admin: lakeclone.Lake) -> None:
    protect(admin)
    listed = admin.sql(
        "SELECT REF_ENTITY_NAME, REF_COLUMN_NAME, POLICY_STATUS FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        "POLICY_NAME => 'mask_email'))"
    ).collect()
    assert [tuple(r) for r in listed] == [("PEOPLE", "EMAIL", "ACTIVE")]


def test_an_object_s_policy_references_include_the_masks_its_tags_carry(admin: lakeclone.Lake) -> None:
    protect(admin)
    admin.sql("CREATE TAG pii")
    admin.sql("CREATE MASKING POLICY mask_name AS (val STRING) RETURNS STRING -> 'n'")
    admin.sql("ALTER TAG pii SET MASKING POLICY mask_name")
    admin.sql("ALTER TABLE people MODIFY COLUMN name SET TAG pii = 'x'")
    listed = admin.sql(
        "SELECT REF_COLUMN_NAME, POLICY_NAME, POLICY_KIND, TAG_NAME FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        "REF_ENTITY_NAME => 'people', REF_ENTITY_DOMAIN => 'table'))"
    ).collect()
    assert sorted((tuple(r) for r in listed), key=str) == sorted(
        [
            ("EMAIL", "MASK_EMAIL", "MASKING_POLICY", None),
            ("NAME", "MASK_NAME", "MASKING_POLICY", "PII"),
            (None, "BY_REGION", "ROW_ACCESS_POLICY", None),
        ],
        key=str,
    )


def test_unset_and_drop(admin: lakeclone.Lake) -> None:
    protect(admin)
    with pytest.raises(SqlCompilationError, match="associated with one or more entities"):
        admin.sql("DROP MASKING POLICY mask_email")
    with pytest.raises(SqlCompilationError, match="associated with one or more entities"):
        admin.sql("CREATE OR REPLACE ROW ACCESS POLICY by_region AS (r STRING) RETURNS BOOLEAN -> TRUE")
    admin.sql("ALTER TABLE people MODIFY COLUMN email UNSET MASKING POLICY")
    admin.sql("ALTER TABLE people DROP ROW ACCESS POLICY by_region")
    analyst = reader(admin, "ANALYST_EU", "people")
    assert rows(analyst, "SELECT COUNT(*) FROM people WHERE email LIKE '%@x.com'") == [(3,)]
    admin.sql("DROP MASKING POLICY mask_email")
    admin.sql("DROP ROW ACCESS POLICY by_region")
    assert admin.sql("SHOW MASKING POLICIES").collect() == []
    admin.sql("DROP MASKING POLICY IF EXISTS mask_email")


# Errors


def test_snowflakes_errors(admin: lakeclone.Lake) -> None:
    admin.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY mask_email")
    admin.sql("CREATE MASKING POLICY other AS (val STRING) RETURNS STRING -> val")
    with pytest.raises(SqlCompilationError, match="A column cannot be attached to multiple masking policies"):
        admin.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY other")
    admin.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY other FORCE")  # FORCE replaces it
    with pytest.raises(SqlCompilationError, match="Policy type mismatch"):
        admin.sql("ALTER TABLE people MODIFY COLUMN id SET MASKING POLICY mask_email")
    admin.sql("ALTER TABLE people ADD ROW ACCESS POLICY by_region ON (region)")
    admin.sql("CREATE ROW ACCESS POLICY everyone AS (r STRING) RETURNS BOOLEAN -> TRUE")
    with pytest.raises(SqlCompilationError, match="Only one row access policy can be attached"):
        admin.sql("ALTER TABLE people ADD ROW ACCESS POLICY everyone ON (region)")
    with pytest.raises(SqlCompilationError, match="already exists"):
        admin.sql(MASK_EMAIL)
    with pytest.raises(SqlCompilationError, match="must return BOOLEAN"):
        admin.sql("CREATE ROW ACCESS POLICY bad AS (r STRING) RETURNS STRING -> r")
    with pytest.raises(SqlCompilationError, match="return type"):
        admin.sql("CREATE MASKING POLICY bad AS (val INT) RETURNS STRING -> 'x'")
    with pytest.raises(ObjectNotFoundError, match=r"Masking policy 'LAKE\.PUBLIC\.NOPE' does not exist"):
        admin.sql("ALTER TABLE people MODIFY COLUMN name SET MASKING POLICY nope")
    with pytest.raises(SqlCompilationError, match="invalid identifier 'NOPE'"):
        admin.sql("ALTER TABLE people MODIFY COLUMN nope SET MASKING POLICY other")
    with pytest.raises(SqlCompilationError, match="takes 1 arguments"):
        admin.sql("ALTER TABLE people MODIFY COLUMN name SET MASKING POLICY other USING (name, region)")
    admin.sql("CREATE OR REPLACE MASKING POLICY IF NOT EXISTS other AS (val STRING) RETURNS STRING -> val")


def _catalog_state(admin: lakeclone.Lake) -> dict[str, list[str]]:
    db = sqlite3.connect(admin.warehouse / "catalog.sqlite")
    try:
        return {
            table: sorted(map(repr, db.execute(f"SELECT * FROM {table}").fetchall()))
            for table in ("policies", "policy_references", "tag_references", "tag_policies", "ownership", "grants")
        }
    finally:
        db.close()


def test_denied_and_failed_statements_change_nothing(admin: lakeclone.Lake) -> None:
    protect(admin)
    admin.sql("CREATE TAG pii")
    role = connect_as(
        admin,
        "CLERK",
        "USAGE ON DATABASE LAKE",
        "USAGE ON SCHEMA LAKE.PUBLIC",
        "SELECT ON TABLE people",
        "CREATE TABLE ON SCHEMA LAKE.PUBLIC",
    )
    before = _catalog_state(admin)
    denied = [
        ("CREATE MASKING POLICY m2 AS (v STRING) RETURNS STRING -> v", InsufficientPrivilegesError),
        ("CREATE ROW ACCESS POLICY r2 AS (v STRING) RETURNS BOOLEAN -> TRUE", InsufficientPrivilegesError),
        ("CREATE TAG t2", InsufficientPrivilegesError),
        ("ALTER TABLE people MODIFY COLUMN email UNSET MASKING POLICY", InsufficientPrivilegesError),
        ("ALTER TABLE people DROP ROW ACCESS POLICY by_region", InsufficientPrivilegesError),
        ("DROP MASKING POLICY mask_email", ObjectNotFoundError),
        ("ALTER TABLE people SET TAG pii = 'x'", InsufficientPrivilegesError),
    ]
    for sql, error in denied:
        with pytest.raises(error):
            role.sql(sql)
    # Failed, not denied: a multi-tag ALTER whose second tag does not exist sets neither.
    with pytest.raises(ObjectNotFoundError):
        admin.sql("ALTER TABLE people SET TAG pii = 'x', nope = 'y'")
    assert _catalog_state(admin) == before


def test_privileges_to_create_and_apply(admin: lakeclone.Lake) -> None:
    steward = connect_as(
        admin,
        "STEWARD",
        "USAGE ON DATABASE LAKE",
        "USAGE ON SCHEMA LAKE.PUBLIC",
        "CREATE MASKING POLICY ON SCHEMA LAKE.PUBLIC",
        "CREATE TABLE ON SCHEMA LAKE.PUBLIC",
    )
    steward.sql("CREATE MASKING POLICY hide AS (v STRING) RETURNS STRING -> 'h'")
    assert [r.owner for r in admin.sql("SHOW MASKING POLICIES LIKE 'HIDE'").collect()] == ["STEWARD"]
    steward.sql("CREATE TABLE mine (s STRING)")
    steward.sql("INSERT INTO mine VALUES ('raw')")
    steward.sql("ALTER TABLE mine MODIFY COLUMN s SET MASKING POLICY hide")  # owner of both
    assert rows(steward, "SELECT s FROM mine") == [("h",)]
    # Owning the table is not enough to attach someone else's policy: APPLY on it is needed too.
    with pytest.raises(ObjectNotFoundError):
        steward.sql("ALTER TABLE mine MODIFY COLUMN s SET MASKING POLICY mask_email FORCE")
    admin.sql("GRANT APPLY ON MASKING POLICY mask_email TO ROLE steward")
    steward.sql("ALTER TABLE mine MODIFY COLUMN s SET MASKING POLICY mask_email FORCE")
    assert rows(steward, "SELECT s FROM mine") == [("***MASKED***",)]
    # Account-level APPLY MASKING POLICY lets a role attach policies to tables it does not own.
    officer = connect_as(admin, "OFFICER", "USAGE ON DATABASE LAKE", "USAGE ON SCHEMA LAKE.PUBLIC", "SELECT ON TABLE people")
    with pytest.raises(InsufficientPrivilegesError):
        officer.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY mask_email")
    admin.sql("GRANT APPLY MASKING POLICY ON ACCOUNT TO ROLE officer")
    officer.sql("ALTER TABLE people MODIFY COLUMN email SET MASKING POLICY mask_email")
    assert rows(officer, "SELECT DISTINCT email FROM people") == [("***MASKED***",)]


def test_policies_survive_reconnecting(admin: lakeclone.Lake) -> None:
    protect(admin)
    again = lakeclone.connect(admin.warehouse, spark=admin.spark, clock=admin.clock)
    assert rows(again, "SELECT COUNT(*) FROM people") == [(3,)]
    assert rows(reader(again, "ANALYST_EU", "people"), "SELECT COUNT(*) FROM people") == [(2,)]


def test_errors_are_lakeclone_errors(admin: lakeclone.Lake) -> None:
    admin.sql("CREATE MASKING POLICY broken AS (val STRING) RETURNS STRING -> no_such_function(val)")
    admin.sql("ALTER TABLE people MODIFY COLUMN name SET MASKING POLICY broken")
    with pytest.raises(LakecloneError):
        admin.sql("SELECT name FROM people").collect()
