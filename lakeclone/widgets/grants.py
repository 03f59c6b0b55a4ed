"""The grants of a schema: roles × objects with their privileges, and which policies protect which columns.

Three layers, as in :mod:`lakeclone.widgets.streams`:

* :class:`GrantsData` is what the session's role may see of a schema: the
  schema itself and its tables, views, streams and sequences, each with its
  owner and its grants (``SHOW <kind>S IN SCHEMA`` and ``SHOW GRANTS ON``,
  so exactly what those statements show the role, no more), optionally what
  each role inherits through the role hierarchy (``SHOW GRANTS TO ROLE``),
  and the policies protecting each table's columns
  (``INFORMATION_SCHEMA.POLICY_REFERENCES``).
* :func:`plot_grants` and :func:`grants_html` render it as a matplotlib
  matrix and an HTML table.
* :class:`GrantsWidget` puts both in an ipywidgets box with a refresh button
  and a switch for inherited privileges, and falls back to static HTML and
  PNG where widgets cannot run (see :mod:`lakeclone.widgets._live`).

Example:
    >>> from lakeclone.widgets import grants
    >>> grants(lake, "prod")                          # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING

import ipywidgets
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from lakeclone.widgets import _style
from lakeclone.widgets._live import LiveWidget, sql_name, sql_string
from lakeclone.widgets.streams import current_schema, schema_to_show

if TYPE_CHECKING:
    from lakeclone.lake import Lake


class GrantedOn(str, Enum):
    """The kinds of object a schema's grants view lists, in the order it lists them."""

    SCHEMA = "SCHEMA"
    TABLE = "TABLE"
    VIEW = "VIEW"
    STREAM = "STREAM"
    SEQUENCE = "SEQUENCE"


class Standing(int, Enum):
    """What a role holds on an object, weakest first: the colour of its cell."""

    NONE = 0
    INHERITED = 1
    GRANTED = 2
    GRANT_OPTION = 3
    OWNER = 4


OWNERSHIP = "OWNERSHIP"
ROW_ACCESS = "*"
"""The key of a table's row access policy among its protected columns."""


@dataclasses.dataclass(frozen=True)
class Granted:
    """One privilege a role holds on an object.

    Attributes:
        privilege: ``SELECT``, ``OWNERSHIP``, ...
        role: the role that holds it.
        grant_option: granted WITH GRANT OPTION (the owner may always grant).
        through: None when granted to :attr:`role` itself; else the role
            granted to it (directly or further down the hierarchy) that holds it.
    """

    privilege: str
    role: str
    grant_option: bool = False
    through: str | None = None

    @property
    def text(self) -> str:
        """The privilege as a cell shows it: ``SELECT*`` with grant option, ``(SELECT via READER)`` inherited."""
        if self.through is not None:
            return f"({self.privilege} via {self.through})"
        return self.privilege + ("*" if self.grant_option and self.privilege != OWNERSHIP else "")


@dataclasses.dataclass(frozen=True)
class SecuredObject:
    """An object of the schema, its privileges by role, and its protected columns.

    Attributes:
        kind: what it is.
        name: its qualified name, ``DB.SCHEMA.NAME`` (``DB.SCHEMA`` for the schema).
        owner: the role that owns it.
        granted: every privilege on it: the owner's OWNERSHIP, the grants,
            and, when read with inherited privileges, what roles inherit.
        protections: column -> the policies protecting it; :data:`ROW_ACCESS`
            (``"*"``) for the table's row access policies. Empty for objects
            no policy protects.
    """

    kind: GrantedOn
    name: str
    owner: str
    granted: tuple[Granted, ...]
    protections: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def held_by(self, role: str) -> tuple[Granted, ...]:
        """What ``role`` holds on it: OWNERSHIP first, then its grants, then what it inherits."""
        held = [g for g in self.granted if g.role == role]
        return tuple(sorted(held, key=lambda g: (g.through is not None, g.privilege != OWNERSHIP)))

    def standing(self, role: str) -> Standing:
        """The strongest thing ``role`` holds on it."""
        best = Standing.NONE
        for granted in self.held_by(role):
            if granted.privilege == OWNERSHIP and granted.through is None:
                rank = Standing.OWNER
            elif granted.through is not None:
                rank = Standing.INHERITED
            else:
                rank = Standing.GRANT_OPTION if granted.grant_option else Standing.GRANTED
            best = max(best, rank)
        return best

    @property
    def protections_text(self) -> str:
        """``row access: R; EMAIL: MASK_EMAIL``, or ``""``."""
        parts = []
        if ROW_ACCESS in self.protections:
            parts.append(f"row access: {', '.join(self.protections[ROW_ACCESS])}")
        parts += [f"{column}: {', '.join(policies)}" for column, policies in self.protections.items() if column != ROW_ACCESS]
        return "; ".join(parts)


@dataclasses.dataclass(frozen=True)
class GrantsData:
    """What the session's role may see of a schema's grants, read at one moment.

    Attributes:
        schema: the schema as given (its SQL text), or the current one.
        objects: the schema, then its tables, views, streams and sequences by name.
        roles: the roles holding anything on them (the matrix's columns), ACCOUNTADMIN first.
        inherited: whether privileges inherited through the role hierarchy were read.
        now: when they were read, by the Lake's clock.

    Example:
        >>> data = GrantsData.from_lake(lake, "prod")                  # doctest: +SKIP
        >>> data.object("LAKE.PROD.ORDERS").held_by("ANALYST")         # doctest: +SKIP
        (Granted(privilege='SELECT', role='ANALYST', grant_option=False, through=None),)
    """

    schema: str
    objects: tuple[SecuredObject, ...]
    roles: tuple[str, ...]
    inherited: bool
    now: dt.datetime

    @classmethod
    def from_lake(cls, lake: Lake, schema: str | None = None, *, inherited: bool = False) -> GrantsData:
        """Read a schema's grants as the session's role sees them.

        Args:
            lake: the Lake holding the schema; its role decides what is shown.
            schema: the schema as SQL names it (``s``, ``db.s``); by default the current one.
            inherited: also read what each role inherits from the roles granted to it
                (PUBLIC's grants count for every role).

        Raises:
            LakecloneError: the schema does not exist or the role may not use it.
        """
        name = schema if schema is not None else sql_name(current_schema(lake))
        listed = [(GrantedOn.SCHEMA, _schema_of(lake, name))]
        for kind in (GrantedOn.TABLE, GrantedOn.VIEW, GrantedOn.STREAM, GrantedOn.SEQUENCE):
            found = lake.sql(f"SHOW {kind.value}S IN SCHEMA {name}").collect()
            listed += sorted(((kind, f"{r['database_name']}.{r['schema_name']}.{r['name']}") for r in found), key=lambda o: o[1])
        hierarchy = _hierarchy(lake) if inherited else {}
        objects = [_read_object(lake, kind, qualified, hierarchy) for kind, qualified in listed]
        roles = {g.role for o in objects for g in o.granted}
        ordered = sorted(roles, key=lambda role: (role != "ACCOUNTADMIN", role))
        return cls(
            schema=name,
            objects=tuple(objects),
            roles=tuple(ordered),
            inherited=inherited,
            now=lake.now().astimezone(dt.timezone.utc),
        )

    def object(self, name: str) -> SecuredObject:
        """An object by qualified name (``DB.SCHEMA.NAME``, or ``DB.SCHEMA`` for the schema).

        Raises:
            KeyError: the role sees no such object in the schema.
        """
        for secured in self.objects:
            if secured.name == name:
                return secured
        raise KeyError(f"no object {name} in {self.schema}")

    def _repr_html_(self) -> str:
        return grants_html(self)


def _schema_of(lake: Lake, schema: str) -> str:
    """The schema's qualified name, as the catalog prints it; fails as SHOW does for a schema the role may not use."""
    [row] = lake.sql(f"SHOW GRANTS ON SCHEMA {schema}").limit(1).collect()
    return str(row["name"])


def _hierarchy(lake: Lake) -> dict[str, set[str]]:
    """Each role -> every role it inherits from: granted to it, to those, …, and PUBLIC."""
    granted: dict[str, set[str]] = {}
    for row in lake.sql("SHOW ROLES").collect():
        role = str(row["name"])
        shown = lake.sql(f"SHOW GRANTS TO ROLE {sql_name(role)}").collect()
        granted[role] = {str(r["name"]) for r in shown if r["granted_on"] == "ROLE"}
    closure: dict[str, set[str]] = {}
    for role in granted:
        found: set[str] = set()
        pending = [role]
        while pending:
            for parent in granted.get(pending.pop(), set()):
                if parent not in found and parent != role:
                    found.add(parent)
                    pending.append(parent)
        if role != "PUBLIC":
            found.add("PUBLIC")
        closure[role] = found
    return closure


def _read_object(lake: Lake, kind: GrantedOn, name: str, hierarchy: Mapping[str, set[str]]) -> SecuredObject:
    rows = lake.sql(f"SHOW GRANTS ON {kind.value} {sql_name(name)}").collect()
    direct = [Granted(r["privilege"], r["grantee_name"], r["grant_option"] == "true") for r in rows]
    owner = next(g.role for g in direct if g.privilege == OWNERSHIP)
    inherited = [
        Granted(g.privilege, role, g.grant_option, through=g.role)
        for role, parents in sorted(hierarchy.items())
        for g in direct
        if g.role in parents and (g.privilege, role) not in {(d.privilege, d.role) for d in direct}
    ]
    unique = list(dict.fromkeys(inherited))  # a privilege inherited along two paths shows once per path
    protections = _protections(lake, name) if kind is GrantedOn.TABLE else {}
    return SecuredObject(kind, name, owner, (*direct, *unique), protections)


def _protections(lake: Lake, name: str) -> dict[str, tuple[str, ...]]:
    """Column -> qualified names of the policies protecting it (the row access policy under :data:`ROW_ACCESS`).

    As Snowflake lists them: ``INFORMATION_SCHEMA.POLICY_REFERENCES`` for the
    table, masking policies that come through tags included.
    """
    rows = lake.sql(
        "SELECT * FROM TABLE(INFORMATION_SCHEMA.POLICY_REFERENCES("
        f"REF_ENTITY_NAME => {sql_string(sql_name(name))}, REF_ENTITY_DOMAIN => 'TABLE'))"
    ).collect()
    found: dict[str, list[str]] = {}
    for row in rows:
        column = ROW_ACCESS if row["POLICY_KIND"] == "ROW_ACCESS_POLICY" else row["REF_COLUMN_NAME"]
        policy = ".".join((row["POLICY_DB"], row["POLICY_SCHEMA"], row["POLICY_NAME"]))
        if policy not in found.setdefault(column, []):
            found[column].append(policy)
    return {column: tuple(policies) for column, policies in found.items()}


# plot_grants --------------------------------------------------------------------------

STANDING_COLOURS: Mapping[Standing, str] = {
    Standing.NONE: "#FFFFFF",
    Standing.INHERITED: "#DCEBF5",
    Standing.GRANTED: "#8CC5E6",
    Standing.GRANT_OPTION: "#3C8DC4",
    Standing.OWNER: "#0B4F85",
}
STANDING_LABELS: Mapping[Standing, str] = {
    Standing.INHERITED: "inherited through a role",
    Standing.GRANTED: "granted",
    Standing.GRANT_OPTION: "granted WITH GRANT OPTION",
    Standing.OWNER: "owner",
}


def _abbreviation(granted: Granted) -> str:
    words = granted.privilege.replace(OWNERSHIP, "OWN").split()
    # Three letters are unambiguous for the long words (SEL, INS, MON); a short one is spelled out (USAGE, not USA).
    text = "".join(w[0] for w in words) if len(words) > 1 else words[0] if len(words[0]) <= 5 else words[0][:3]
    return text + ("*" if granted.grant_option and granted.privilege != OWNERSHIP and granted.through is None else "")


def plot_grants(data: GrantsData) -> Figure:
    """Draw the matrix: one row per object, one column per role, each cell coloured by :class:`Standing`.

    Cells carry the privileges' abbreviations (``SEL``, ``INS``, ``OWN``, ``USAGE``, ``CT`` for CREATE TABLE, ``*`` for
    grant option); rows of tables with protected columns say ``[protected]``. Artists carry gids:
    ``cell`` (the squares) and ``cell-label``.
    """
    rows, columns = len(data.objects), len(data.roles)
    figure = Figure(figsize=(2.8 + 1.25 * max(columns, 1), 1.3 + 0.42 * max(rows, 1)), layout="constrained")
    ax = figure.add_subplot()
    ax.set_title(
        f"{data.schema}: {rows} {'object' if rows == 1 else 'objects'} × {columns} "
        f"{'role' if columns == 1 else 'roles'} (as of {_style.format_timestamp(data.now)})",
        fontsize=10,
        loc="left",
    )
    if not data.roles:
        ax.text(0.5, 0.5, f"no grants the role may see in {data.schema}", ha="center", va="center")
        ax.set_axis_off()
        return figure
    for row, secured in enumerate(data.objects):
        for column, role in enumerate(data.roles):
            standing = secured.standing(role)
            [bar] = ax.bar([column], [0.9], bottom=row - 0.45, width=0.95, color=STANDING_COLOURS[standing], edgecolor="#BBBBBB")
            bar.set_gid("cell")
            labels = " ".join(_abbreviation(g) for g in secured.held_by(role) if g.through is None)
            if data.inherited and standing is Standing.INHERITED:
                labels = "(" + " ".join(_abbreviation(g) for g in secured.held_by(role)) + ")"
            if labels:
                colour = "white" if standing >= Standing.GRANT_OPTION else "#111111"
                ax.text(column, row, labels, ha="center", va="center", fontsize=7, color=colour, gid="cell-label")
    ax.set_xlim(-0.55, columns - 0.45)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xticks(range(columns), labels=list(data.roles), fontsize=8, rotation=30, ha="right")
    names = [
        f"{o.name.rsplit('.', 1)[-1]} ({o.kind.value.lower()})" + (" [protected]" if o.protections else "") for o in data.objects
    ]
    ax.set_yticks(range(rows), labels=names, fontsize=8)
    ax.spines[["top", "right", "left", "bottom"]].set_visible(False)
    ax.tick_params(length=0)
    handles = [Patch(facecolor=STANDING_COLOURS[s], edgecolor="#BBBBBB", label=STANDING_LABELS[s]) for s in STANDING_LABELS]
    if not data.inherited:
        handles = handles[1:]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figure


# grants_html --------------------------------------------------------------------------


def grants_html(data: GrantsData) -> str:
    """The matrix as an HTML table: ``object``, ``kind``, one column per role, ``protected columns``.

    A cell lists what the role holds: ``OWNERSHIP``, ``SELECT*`` (``*``: WITH GRANT OPTION),
    ``(SELECT via READER)`` inherited through the hierarchy.
    """
    columns = ["object", "kind", *data.roles, "protected columns"]
    rows = []
    for secured in data.objects:
        cells = []
        for role in data.roles:
            held = secured.held_by(role)
            text = ", ".join(html.escape(g.text) for g in held)
            if secured.standing(role) is Standing.OWNER:
                text = text.replace(OWNERSHIP, f"<b>{OWNERSHIP}</b>", 1)
            cells.append(text)
        rows.append([html.escape(secured.name), secured.kind.value.lower(), *cells, html.escape(secured.protections_text)])
    return _style.html_table(columns, rows, wrapping_columns=list(range(2, len(columns))))


def _header_html(data: GrantsData | None, schema: str) -> str:
    name = html.escape(schema)
    if data is None:
        return f"<b>{name}</b> · grants"
    count = len(data.objects)
    protected = sum(1 for o in data.objects if o.protections)
    inherited = " · with inherited privileges" if data.inherited else ""
    return (
        f"<b>{name}</b> · {count} {'object' if count == 1 else 'objects'} · {len(data.roles)} "
        f"{'role' if len(data.roles) == 1 else 'roles'} · {protected} with protected columns{inherited} "
        f"<small>(as of {_style.format_timestamp(data.now)}; * = WITH GRANT OPTION)</small>"
    )


# GrantsWidget -------------------------------------------------------------------------


class GrantsWidget(LiveWidget[GrantsData]):
    """A live matrix of a schema's grants: roles × objects, owners, grant options, policies.

    It shows only what the session's role may see, as ``SHOW`` does. The
    ``inherited`` switch adds what roles inherit through the role hierarchy.

    Args:
        lake: the Lake holding the schema; its session's role decides what is shown.
        schema: the schema as SQL names it; by default the current one.
        inherited: start with inherited privileges shown.

    Attributes:
        data: the :class:`GrantsData` on show; None in the error state.
        inherited_toggle: shows or hides inherited privileges.

    Raises:
        WidgetError: the schema does not exist or the role may not use it.
    """

    kind = "grants"
    subject = "schema"
    refresh_tooltip = "Read the schema's grants again"

    def __init__(self, lake: Lake, schema: str | None = None, *, inherited: bool = False) -> None:
        self._inherited = inherited
        super().__init__(lake, schema_to_show(lake, schema, self.kind))

    @property
    def schema(self) -> str:
        """The schema shown, as its SQL text."""
        return self._table_name

    def _read(self) -> GrantsData:
        return GrantsData.from_lake(self._lake, self._table_name, inherited=self._inherited)

    def _plot(self, data: GrantsData) -> Figure:
        return plot_grants(data)

    def _header_html(self, data: GrantsData | None) -> str:
        return _header_html(data, self._table_name)

    def _static_html(self, data: GrantsData) -> str:
        return grants_html(data)

    def _children(self) -> list[ipywidgets.Widget]:
        self.inherited_toggle = ipywidgets.Checkbox(value=self._inherited, description="inherited through roles", indent=False)
        self.inherited_toggle.observe(self._on_inherited_toggled, names="value")
        return [ipywidgets.HBox([self.refresh_button, self.inherited_toggle]), self.table, self.plot]

    def _render(self, data: GrantsData) -> None:
        self.table.value = grants_html(data)
        with self._quietly():
            self.inherited_toggle.value = data.inherited

    def _on_inherited_toggled(self, change: Mapping[str, object]) -> None:
        if self._syncing:
            return
        self._inherited = bool(change["new"])
        self.refresh()


def grants(lake: Lake, schema: str | None = None, *, inherited: bool = False) -> GrantsWidget:
    """A :class:`GrantsWidget` of a schema's grants: the notebook one-liner.

    Args:
        lake: the Lake holding the schema; its role decides what is shown.
        schema: the schema as SQL names it (``s``, ``db.s``); by default the current one.
        inherited: also show what roles inherit through the role hierarchy.

    Raises:
        WidgetError: the schema does not exist or the role may not use it (one line, nothing chained).

    Example:
        >>> from lakeclone.widgets import grants
        >>> grants(lake, "prod", inherited=True)       # doctest: +SKIP
    """
    return GrantsWidget(lake, schema, inherited=inherited)
