"""The issue's team scenario for policies, as one readable story (its steps are meant for notebook 04).

A governance schema holds the masking policy and the row access policy that
reads a region mapping table; production's customers table uses them. An
analyst sees masked emails and only the regions the mapping gives their
role; an engineer clones production for development (the clone keeps the
policies), and a schema clone of a schema with its own policy points its
tables at the copy. Real Spark, Delta and SQLite throughout.
"""

from __future__ import annotations

from lake_helpers import rows, session_of

import lakeclone


def test_team_scenario(lake: lakeclone.Lake) -> None:
    admin = lake
    # The policy administrator sets up governance: a mapping of roles to regions, and two policies.
    for statement in (
        "CREATE SCHEMA governance",
        "CREATE SCHEMA prod",
        "CREATE TABLE governance.region_map (role STRING, region STRING)",
        "INSERT INTO governance.region_map VALUES ('ANALYST', 'EU'), ('ANALYST', 'APAC')",
        "CREATE MASKING POLICY governance.email_mask AS (val STRING) RETURNS STRING -> "
        "CASE WHEN IS_ROLE_IN_SESSION('PII_READER') THEN val ELSE '***' || SUBSTR(val, POSITION('@', val)) END",
        "CREATE ROW ACCESS POLICY governance.region_rows AS (region STRING) RETURNS BOOLEAN -> "
        "IS_ROLE_IN_SESSION('ENGINEER') OR EXISTS (SELECT 1 FROM region_map m "
        "WHERE m.role = CURRENT_ROLE() AND m.region = region)",
        "CREATE TABLE prod.customers (id INT, email STRING, region STRING)",
        "INSERT INTO prod.customers VALUES (1, 'ann@eu.com', 'EU'), (2, 'bob@us.com', 'US'), (3, 'cy@apac.com', 'APAC')",
        "ALTER TABLE prod.customers MODIFY COLUMN email SET MASKING POLICY governance.email_mask",
        "ALTER TABLE prod.customers ADD ROW ACCESS POLICY governance.region_rows ON (region)",
    ):
        admin.sql(statement)

    # Roles: an analyst, an engineer who may read PII, and their users.
    for statement in (
        "CREATE ROLE analyst",
        "CREATE ROLE engineer",
        "CREATE ROLE pii_reader",
        "GRANT ROLE pii_reader TO ROLE engineer",
        "CREATE USER ana",
        "CREATE USER eng",
        "GRANT ROLE analyst TO USER ana",
        "GRANT ROLE engineer TO USER eng",
        "GRANT USAGE ON DATABASE lake TO ROLE analyst",
        "GRANT USAGE ON SCHEMA lake.prod TO ROLE analyst",
        "GRANT SELECT ON TABLE prod.customers TO ROLE analyst",
        "GRANT USAGE ON DATABASE lake TO ROLE engineer",
        "GRANT USAGE ON SCHEMA lake.prod TO ROLE engineer",
        "GRANT CREATE TABLE ON SCHEMA lake.prod TO ROLE engineer",
        "GRANT SELECT ON TABLE prod.customers TO ROLE engineer",
    ):
        admin.sql(statement)
    ana = session_of(admin, "ana", "analyst")
    eng = session_of(admin, "eng", "engineer")

    # The analyst sees masked emails, and only the regions the mapping gives ANALYST.
    assert rows(ana, "SELECT id, email, region FROM prod.customers") == [
        (1, "***@eu.com", "EU"),
        (3, "***@apac.com", "APAC"),
    ]
    # The engineer (through PII_READER) sees every row, raw.
    assert rows(eng, "SELECT id, email FROM prod.customers") == [(1, "ann@eu.com"), (2, "bob@us.com"), (3, "cy@apac.com")]

    # The engineer clones production for development, COPY GRANTS: the clone keeps the policies.
    eng.sql("CREATE TABLE prod.customers_dev CLONE prod.customers COPY GRANTS")
    assert rows(ana, "SELECT id, email FROM prod.customers_dev") == [(1, "***@eu.com"), (3, "***@apac.com")]
    references = admin.sql(
        "SELECT POLICY_SCHEMA, POLICY_NAME, REF_COLUMN_NAME FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        "REF_ENTITY_NAME => 'prod.customers_dev', REF_ENTITY_DOMAIN => 'table'))"
    )
    assert rows(admin, "SELECT 1") == [(1,)]
    assert sorted(tuple(r) for r in references.collect()) == [
        ("GOVERNANCE", "EMAIL_MASK", "EMAIL"),
        ("GOVERNANCE", "REGION_ROWS", None),
    ]

    # A schema with its own policy, cloned: the clone's table points at the clone's copy of the policy,
    # while the governance policy it also uses (another schema) stays the one it was.
    admin.sql("CREATE MASKING POLICY prod.id_mask AS (val INT) RETURNS INT -> IFF(IS_ROLE_IN_SESSION('ENGINEER'), val, -1)")
    admin.sql("ALTER TABLE prod.customers MODIFY COLUMN id SET MASKING POLICY prod.id_mask")
    admin.sql("CREATE SCHEMA dev CLONE prod")
    assert [r.name for r in admin.sql("SHOW MASKING POLICIES IN SCHEMA dev").collect()] == ["ID_MASK"]
    cloned = admin.sql(
        "SELECT REF_COLUMN_NAME, POLICY_SCHEMA, POLICY_NAME FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        "REF_ENTITY_NAME => 'dev.customers', REF_ENTITY_DOMAIN => 'table'))"
    )
    assert sorted((tuple(r) for r in cloned.collect()), key=str) == [
        ("EMAIL", "GOVERNANCE", "EMAIL_MASK"),
        ("ID", "DEV", "ID_MASK"),
        (None, "GOVERNANCE", "REGION_ROWS"),
    ]
    # Development relaxes its copy; production's policy is unchanged.
    admin.sql("ALTER MASKING POLICY dev.id_mask SET BODY -> val")
    admin.sql("GRANT USAGE ON SCHEMA lake.dev TO ROLE analyst")
    admin.sql("GRANT SELECT ON TABLE dev.customers TO ROLE analyst")
    assert rows(ana, "SELECT id, email FROM dev.customers") == [(1, "***@eu.com"), (3, "***@apac.com")]
    assert rows(ana, "SELECT id FROM prod.customers") == [(-1,), (-1,)]
