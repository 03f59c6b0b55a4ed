"""The grants view: roles × objects of a schema, owners, grant options, inheritance, protected columns.

On a real Lake (real Spark, real Delta, the real SQLite catalog): every grant
is made with GRANT, every object with CREATE, and what the widget shows is
read back through ``shown()``.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable

import pytest
from warehouse_templates import Build

import lakeclone
from lakeclone.widgets import WidgetError, grants, plot_grants
from lakeclone.widgets.grants import GrantsData, GrantsWidget, grants_html

pytestmark = pytest.mark.spark

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_users = itertools.count()


def session_as(admin: lakeclone.Lake, role: str) -> lakeclone.Lake:
    user = f"GU{next(_users)}"
    admin.sql(f"CREATE USER {user}")
    admin.sql(f"GRANT ROLE {role} TO USER {user}")
    return lakeclone.connect(admin.warehouse, spark=admin.spark, clock=admin.clock, user=user, role=role)


def _team(lake: lakeclone.Lake) -> None:
    for statement in (
        "CREATE SCHEMA prod",
        "CREATE TABLE prod.orders (id INT, email STRING) CHANGE_TRACKING = TRUE",
        "CREATE TABLE prod.secret (a INT)",
        "CREATE VIEW prod.recent AS SELECT id FROM prod.orders",
        "CREATE STREAM prod.feed ON TABLE prod.orders",
        "CREATE SEQUENCE prod.ids",
        "CREATE ROLE engineer",
        "CREATE ROLE reader",
        "CREATE ROLE analyst",
        "GRANT ROLE reader TO ROLE analyst",
        "GRANT USAGE ON DATABASE lake TO ROLE analyst",
        "GRANT USAGE ON SCHEMA lake.prod TO ROLE analyst",
        "GRANT USAGE ON SCHEMA lake.prod TO ROLE engineer",
        "GRANT USAGE ON DATABASE lake TO ROLE engineer",
        "GRANT INSERT ON TABLE prod.orders TO ROLE engineer WITH GRANT OPTION",
        "GRANT SELECT ON VIEW prod.recent TO ROLE engineer",
        "GRANT SELECT ON TABLE prod.orders TO ROLE reader",
        "GRANT USAGE ON SEQUENCE prod.ids TO ROLE engineer",
    ):
        lake.sql(statement)


@pytest.fixture
def team(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """Schema PROD with table ORDERS, table SECRET, view RECENT, stream FEED and sequence IDS, and three roles.

    ACCOUNTADMIN owns everything; ENGINEER holds INSERT on ORDERS WITH GRANT OPTION, SELECT on the
    view and USAGE on the sequence; READER holds SELECT on ORDERS; ANALYST is granted READER (so
    inherits its SELECT) and USAGE on the schema; nobody but the administrator sees SECRET.
    """
    return copy_of(_team)


def cell(widget: GrantsWidget, name: str, role: str) -> str:
    shown = widget.shown()
    [row] = [row for row in shown.rows if row[0] == name]
    return row[shown.columns.index(role)]


def test_the_administrator_sees_every_object_with_owner_grant_option_and_grants(team: lakeclone.Lake) -> None:
    widget = grants(team, "prod")
    shown = widget.shown()
    assert shown.columns == ("object", "kind", "ACCOUNTADMIN", "ANALYST", "ENGINEER", "READER", "protected columns")
    assert shown.column("object") == [
        "LAKE.PROD",
        "LAKE.PROD.ORDERS",
        "LAKE.PROD.SECRET",
        "LAKE.PROD.RECENT",
        "LAKE.PROD.FEED",
        "LAKE.PROD.IDS",
    ]
    assert shown.column("kind") == ["schema", "table", "table", "view", "stream", "sequence"]
    assert shown.column("ACCOUNTADMIN") == ["OWNERSHIP"] * 6
    assert cell(widget, "LAKE.PROD.ORDERS", "ENGINEER") == "INSERT*"  # * = WITH GRANT OPTION
    assert cell(widget, "LAKE.PROD.ORDERS", "READER") == "SELECT"
    assert cell(widget, "LAKE.PROD.RECENT", "ENGINEER") == "SELECT"
    assert cell(widget, "LAKE.PROD.IDS", "ENGINEER") == "USAGE"
    assert cell(widget, "LAKE.PROD", "ANALYST") == "USAGE"
    # Without the hierarchy, ANALYST's inherited SELECT is not shown.
    assert cell(widget, "LAKE.PROD.ORDERS", "ANALYST") == ""
    assert shown.column("protected columns") == [""] * 6
    assert shown.header.startswith("prod · 6 objects · 4 roles · 0 with protected columns")
    assert shown.images == 1 and widget.static().startswith(PNG_SIGNATURE)


def test_inherited_privileges_are_shown_through_the_role_hierarchy(team: lakeclone.Lake) -> None:
    widget = grants(team, "prod", inherited=True)
    assert cell(widget, "LAKE.PROD.ORDERS", "ANALYST") == "(SELECT via READER)"
    assert "with inherited privileges" in widget.shown().header
    # The switch takes it back off, and on again.
    widget.inherited_toggle.value = False
    assert cell(widget, "LAKE.PROD.ORDERS", "ANALYST") == ""
    widget.inherited_toggle.value = True
    assert cell(widget, "LAKE.PROD.ORDERS", "ANALYST") == "(SELECT via READER)"
    data = widget.data
    assert data is not None
    assert [g.text for g in data.object("LAKE.PROD.ORDERS").held_by("ANALYST")] == ["(SELECT via READER)"]


def test_a_role_sees_only_what_show_lists_for_it(team: lakeclone.Lake) -> None:
    engineer = session_as(team, "ENGINEER")
    widget = grants(engineer, "prod")
    shown = widget.shown()
    # ENGINEER holds nothing on SECRET or the stream: they are not there, as in SHOW TABLES / SHOW STREAMS.
    assert shown.column("object") == ["LAKE.PROD", "LAKE.PROD.ORDERS", "LAKE.PROD.RECENT", "LAKE.PROD.IDS"]
    assert "LAKE.PROD.SECRET" not in str(widget._repr_mimebundle_()["text/html"])
    # A role that may not use the schema cannot look at it at all.
    team.sql("CREATE ROLE nobody")
    with pytest.raises(WidgetError, match=r"Cannot show the grants of prod: .*Database 'LAKE' does not exist or not authorized"):
        grants(session_as(team, "NOBODY"), "prod")


def test_protected_columns_are_the_policies_the_table_s_references_list(team: lakeclone.Lake) -> None:
    for statement in (
        "CREATE MASKING POLICY prod.mask_email AS (val STRING) RETURNS STRING -> '***'",
        "CREATE ROW ACCESS POLICY prod.region_rows AS (id INT) RETURNS BOOLEAN -> id > 0",
        "ALTER TABLE prod.orders MODIFY COLUMN email SET MASKING POLICY prod.mask_email",
        "ALTER TABLE prod.orders ADD ROW ACCESS POLICY prod.region_rows ON (id)",
    ):
        team.sql(statement)
    widget = grants(team, "prod")
    expected = "row access: LAKE.PROD.REGION_ROWS; EMAIL: LAKE.PROD.MASK_EMAIL"
    assert cell(widget, "LAKE.PROD.ORDERS", "protected columns") == expected
    assert cell(widget, "LAKE.PROD.SECRET", "protected columns") == ""
    assert "1 with protected columns" in widget.shown().header
    assert widget.data is not None
    assert widget.data.object("LAKE.PROD.ORDERS").protections == {
        "EMAIL": ("LAKE.PROD.MASK_EMAIL",),
        "*": ("LAKE.PROD.REGION_ROWS",),
    }
    # A policy that comes through a tag counts like one set on the column.
    team.sql("ALTER TABLE prod.orders MODIFY COLUMN email UNSET MASKING POLICY")
    team.sql("CREATE TAG prod.pii")
    team.sql("ALTER TAG prod.pii SET MASKING POLICY prod.mask_email")
    team.sql("ALTER TABLE prod.orders MODIFY COLUMN email SET TAG prod.pii = 'x'")
    assert widget.refresh()
    assert cell(widget, "LAKE.PROD.ORDERS", "protected columns") == expected
    # A refresh after the policies come off shows no protection any more.
    team.sql("ALTER TAG prod.pii UNSET MASKING POLICY prod.mask_email")
    team.sql("ALTER TABLE prod.orders DROP ROW ACCESS POLICY prod.region_rows")
    assert widget.refresh()
    assert cell(widget, "LAKE.PROD.ORDERS", "protected columns") == ""


def test_a_refresh_shows_new_grants_and_a_dropped_schema_is_the_error_state(team: lakeclone.Lake) -> None:
    widget = grants(team, "prod")
    team.sql("GRANT OWNERSHIP ON TABLE prod.secret TO ROLE engineer")
    team.sql("GRANT SELECT ON TABLE prod.secret TO ROLE reader WITH GRANT OPTION")
    assert widget.refresh()
    assert cell(widget, "LAKE.PROD.SECRET", "ENGINEER") == "OWNERSHIP"
    assert cell(widget, "LAKE.PROD.SECRET", "ACCOUNTADMIN") == ""
    assert cell(widget, "LAKE.PROD.SECRET", "READER") == "SELECT*"
    team.sql("DROP SCHEMA prod")
    assert not widget.refresh()
    shown = widget.shown()
    assert shown.status.startswith("prod is gone") and shown.rows == () and shown.images == 0
    assert widget.static() == b""


def test_static_fallback_and_figure(team: lakeclone.Lake) -> None:
    widget = grants(team, "prod", inherited=True)
    bundle = widget._repr_mimebundle_()
    assert "OWNERSHIP" in bundle["text/html"] and "(SELECT via READER)" in bundle["text/html"]
    assert base64.b64decode(bundle["image/png"]).startswith(PNG_SIGNATURE)
    data = GrantsData.from_lake(team, "prod", inherited=True)
    figure = plot_grants(data)
    labels = [t.get_text() for t in figure.axes[0].texts if t.get_gid() == "cell-label"]
    assert "OWN" in labels and "INS*" in labels and "(SEL)" in labels
    assert "USAGE" in labels and "USA" not in labels  # a short privilege is spelled out
    assert len([p for p in figure.axes[0].patches if p.get_gid() == "cell"]) == len(data.objects) * len(data.roles)
    assert grants_html(data).count("<tr") == len(data.objects) + 1


def test_an_unknown_schema_raises_one_line(lake: lakeclone.Lake) -> None:
    with pytest.raises(WidgetError, match=r"^Cannot show the grants of nope: SQL compilation error: Schema 'LAKE\.NOPE'"):
        grants(lake, "nope")
