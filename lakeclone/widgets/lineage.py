"""The clone lineage: a table's sources, its clones, and the files they share.

Three layers, as in :mod:`lakeclone.widgets.timeline`:

* :class:`LineageData` reads :meth:`Lake.lineage <lakeclone.Lake.lineage>` and
  orders its nodes as a tree: every source before its clones.
* :func:`plot_lineage` and :func:`lineage_html` render it as a matplotlib
  figure (a layered tree, left to right by generation) and an HTML table.
* :class:`LineageWidget` puts both in an ipywidgets box with a refresh button
  and a picker to re-root the graph on another table in it, and falls back to
  static HTML and PNG where widgets cannot run.

Example:
    >>> from lakeclone.widgets import lineage_widget
    >>> lake.sql("CREATE TABLE dev CLONE prod")       # doctest: +SKIP
    >>> lineage_widget(lake, "dev")                   # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch, Rectangle
from matplotlib.textpath import TextPath

from lakeclone.clones.lineage import Lineage, LineageNode
from lakeclone.errors import LakecloneError, WidgetError
from lakeclone.widgets import _style
from lakeclone.widgets._live import LiveWidget, fit_picker, one_line, sql_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from lakeclone.lake import Lake

Edge = tuple[str, str, int | None]
"""(source id, clone id, source version the clone was made at)."""

# The default figure is laid out in inches (one data unit = one inch), so that
# the text in the boxes fits whatever the size of the graph.
_BOX_WIDTH = 2.75
_BOX_HEIGHT = 1.45
_COLUMN_PITCH = 3.55  # box plus room for an arrow and its label
_ROW_PITCH = 1.75
_MARGIN = 0.25
_TITLE_HEIGHT = 0.45
_LEGEND_HEIGHT = 0.45
_MIN_WIDTH = 7.0
_TITLE_POINTS = 10
_NAME_POINTS = 9.0
_QUALIFIER_POINTS = 7.5
_NAME_WIDTH = (_BOX_WIDTH - 0.2) * 72  # points of text that fit in a box


@dataclasses.dataclass(frozen=True)
class LineageData:
    """A table's clone lineage, read at one moment, in tree order.

    Attributes:
        table: the table name as given to :meth:`from_lake`.
        root_id: the id of that table's node.
        nodes: every table in the graph, each source before its clones and
            clones of one source oldest first (a depth-first walk), so that a
            table lists the graph top to bottom as the figure draws it.
        edges: ``(source id, clone id, source version)`` of every clone whose
            source is in the graph, in the order of ``nodes``.
        generations: each node's distance from the top of its tree (the
            original table is 0, its clones 1, their clones 2, ...).
        now: when the data was read, by the Lake's clock.

    Example:
        >>> data = LineageData.from_lake(lake, "dev")                  # doctest: +SKIP
        >>> [(n.name, n.kind) for n in data.nodes]                       # doctest: +SKIP
        [('LAKE.PUBLIC.PROD', 'TABLE'), ('LAKE.PUBLIC.DEV', 'SHALLOW CLONE')]
    """

    table: str
    root_id: str
    nodes: tuple[LineageNode, ...]
    edges: tuple[Edge, ...]
    generations: Mapping[str, int]
    now: dt.datetime

    @classmethod
    def from_lake(cls, lake: Lake, table_name: str) -> LineageData:
        """Read the lineage around a table from a Lake.

        Args:
            lake: the Lake holding the table.
            table_name: a live table as Python names it to the Lake, e.g. ``t``
                or ``db.s.t``.

        Returns:
            Its sources, its clones and theirs, as of ``lake.now()``.

        Raises:
            LakecloneError: the table does not exist, or its lineage cannot be read.
        """
        graph = lake.lineage(table_name)
        return cls.from_lineage(graph, table_name, now=lake.now())

    @classmethod
    def from_lineage(cls, graph: Lineage, table_name: str | None = None, *, now: dt.datetime) -> LineageData:
        """Order a :class:`~lakeclone.clones.lineage.Lineage` as a tree.

        Args:
            graph: the lineage.
            table_name: what to call the root; by default its qualified name.
            now: the moment the lineage describes.
        """
        nodes = graph.nodes
        children: dict[str, list[str]] = {node_id: [] for node_id in nodes}
        tops = []
        for node in sorted(nodes.values(), key=_age_order):
            if node.source_id is not None and node.source_id in nodes and node.source_id != node.id:
                children[node.source_id].append(node.id)
            else:
                tops.append(node.id)
        order: list[str] = []
        generations: dict[str, int] = {}

        def walk(node_id: str, generation: int) -> None:
            generations[node_id] = generation
            order.append(node_id)
            for child in children[node_id]:
                if child not in generations:
                    walk(child, generation + 1)

        for top in tops:
            walk(top, 0)
        # A cycle of sources (which the catalog should never hold) has no top;
        # start it anywhere rather than lose its nodes.
        for node in sorted(nodes.values(), key=_age_order):
            if node.id not in generations:
                walk(node.id, 0)
        ordered = tuple(nodes[node_id] for node_id in order)
        edges = tuple(
            (n.source_id, n.id, n.source_version)
            for n in ordered
            if n.source_id is not None and n.source_id in nodes and n.source_id != n.id
        )
        return cls(
            table=table_name or nodes[graph.root].name,
            root_id=graph.root,
            nodes=ordered,
            edges=edges,
            generations=generations,
            now=now.astimezone(dt.timezone.utc),
        )

    @property
    def root(self) -> LineageNode:
        """The node of the table the lineage was read for."""
        return self.node(self.root_id)

    def node(self, key: str) -> LineageNode:
        """A node by id or by qualified name (``DB.SCHEMA.TABLE``).

        Raises:
            KeyError: no such node in the graph.
        """
        for node in self.nodes:
            if key in (node.id, node.name):
                return node
        raise KeyError(f"{key} is not in the lineage of {self.table}")

    def source_of(self, node: LineageNode) -> LineageNode | None:
        """The table ``node`` was cloned from, if it is in the graph."""
        if node.source_id is None:
            return None
        return next((n for n in self.nodes if n.id == node.source_id), None)

    def clones_of(self, node: LineageNode) -> list[LineageNode]:
        """The tables cloned directly from ``node``, oldest first."""
        return [n for n in self.nodes if n.source_id == node.id and n.id != node.id]

    def _repr_html_(self) -> str:
        return lineage_html(self)


def _age_order(node: LineageNode) -> tuple[dt.datetime, str]:
    return (node.created_at, node.name)


# plot_lineage -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Box centres in inches, and the size of the drawing."""

    centres: Mapping[str, tuple[float, float]]
    width: float
    height: float

    @classmethod
    def of(cls, data: LineageData) -> _Layout:
        # A tidy layered tree: leaves take consecutive rows in walk order, and
        # a source sits level with the middle of its clones.
        rows = _tidy_rows(data)
        row_count = max(rows.values(), default=0) + 1
        columns = max(data.generations.values(), default=0) + 1
        # As wide as the title too: a figure cuts off what it does not hold (a long name, a narrow tree).
        title_inches = TextPath((0, 0), _title(data), prop=FontProperties(size=_TITLE_POINTS)).get_extents().width / 72
        width = max(2 * _MARGIN + (columns - 1) * _COLUMN_PITCH + _BOX_WIDTH, _MIN_WIDTH, 2 * _MARGIN + title_inches)
        height = _TITLE_HEIGHT + _LEGEND_HEIGHT + row_count * _ROW_PITCH
        centres = {
            node_id: (
                _MARGIN + data.generations[node_id] * _COLUMN_PITCH + _BOX_WIDTH / 2,
                height - _TITLE_HEIGHT - (row + 0.5) * _ROW_PITCH,
            )
            for node_id, row in rows.items()
        }
        return cls(centres=centres, width=width, height=height)


def _title(data: LineageData) -> str:
    clones = len(data.edges)
    return (
        f"Clone lineage of {data.root.name}: {len(data.nodes)} "
        f"{'table' if len(data.nodes) == 1 else 'tables'}, {clones} {'clone' if clones == 1 else 'clones'}"
        f"  (as of {_style.format_timestamp(data.now)})"
    )


def _tidy_rows(data: LineageData) -> dict[str, float]:
    """Row of each node: leaves on consecutive rows, each source level with the middle of its clones."""
    rows: dict[str, float] = {}
    next_leaf = 0

    def place(node: LineageNode) -> float:
        nonlocal next_leaf
        clones = [c for c in data.clones_of(node) if c.id not in rows]
        if not clones:
            rows[node.id] = float(next_leaf)
            next_leaf += 1
            return rows[node.id]
        rows[node.id] = -1.0  # placed, so that a cycle stops here
        placed = [place(c) for c in clones]
        rows[node.id] = (placed[0] + placed[-1]) / 2
        return rows[node.id]

    for node in data.nodes:
        if data.generations[node.id] == 0 and node.id not in rows:
            place(node)
    return rows


def plot_lineage(data: LineageData, ax: Axes | None = None) -> Figure:
    """Draw the lineage as a tree of boxes, sources left, clones right.

    Each table is a box outlined in its kind's colour (see
    :data:`~lakeclone.widgets._style.CLONE_KIND_COLOURS`) holding its name,
    kind, current version and creation time (and drop time, drawn faded and
    dashed), and a bar of the bytes of its current files that it owns (stored
    in its own folder) against those it shares (references in its source's
    folder). The table the lineage was read for has a thick outline. Arrows
    run from source to clone, labelled with the source version cloned, ``@v3``.

    Artists carry gids: ``lineage-node`` (one box per table), ``lineage-edge``
    (one arrow per clone), ``edge-label``, ``node-qualifier`` and ``node-name``
    (the table's ``DB.SCHEMA`` and its own name, see :func:`name_lines`),
    ``node-label`` (the box's other lines), and ``owned-bytes`` and
    ``shared-bytes`` (the bar's two parts, one each per table).
    Every node's artists also carry its id in their ``url``.

    Args:
        data: what to draw.
        ax: axes to draw into; by default a new figure sized so that the text
            fits the boxes. No pyplot state is touched either way.

    Returns:
        The figure holding the axes.

    Example:
        >>> figure = plot_lineage(LineageData.from_lake(lake, "dev"))     # doctest: +SKIP
        >>> figure.savefig("lineage.png")                                 # doctest: +SKIP
    """
    layout = _Layout.of(data)
    if ax is None:
        figure = Figure(figsize=(layout.width, layout.height))
        ax = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    else:
        figure = ax.figure.figure
    ax.set_xlim(0, layout.width)
    ax.set_ylim(0, layout.height)
    ax.set_axis_off()

    for source_id, clone_id, version in data.edges:
        _draw_edge(ax, layout.centres[source_id], layout.centres[clone_id], version)
    for node in data.nodes:
        _draw_node(ax, node, layout.centres[node.id], is_root=node.id == data.root_id)

    ax.text(_MARGIN, layout.height - _TITLE_HEIGHT / 2, _title(data), fontsize=_TITLE_POINTS, va="center", ha="left", gid="title")
    handles = _legend_handles(data)
    ax.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(_MARGIN / layout.width, 0.0),
        ncol=len(handles),
        fontsize=8,
        frameon=False,
        handlelength=1.6,
    )
    return figure


def _alpha(node: LineageNode) -> float:
    return _style.EXPIRED_OPACITY if node.dropped_at is not None else 1.0


def _draw_node(ax: Axes, node: LineageNode, centre: tuple[float, float], *, is_root: bool) -> None:
    colour = _style.CLONE_KIND_COLOURS.get(node.kind, _style.KIND_COLOURS["other"])
    alpha = _alpha(node)
    left = centre[0] - _BOX_WIDTH / 2
    bottom = centre[1] - _BOX_HEIGHT / 2
    top = bottom + _BOX_HEIGHT
    box = FancyBboxPatch(
        (left, bottom),
        _BOX_WIDTH,
        _BOX_HEIGHT,
        boxstyle="round,pad=0,rounding_size=0.08",
        facecolor=to_rgba(colour, 0.12 * alpha),
        edgecolor=to_rgba(colour, alpha),
        linewidth=3.0 if is_root else 1.3,
        linestyle="--" if node.dropped_at is not None else "-",
        zorder=2,
        gid="lineage-node",
        url=node.id,
    )
    ax.add_patch(box)
    text_x = left + 0.1

    def line(y: float, text: str, *, gid: str = "node-label", **style: Any) -> None:
        ax.text(text_x, y, text, ha="left", va="center", alpha=alpha, zorder=3, gid=gid, url=node.id, **style)

    # Database and schema on a line of their own, above the table's name, so
    # that clones of one table in other schemas and databases read apart.
    qualifier, table = name_lines(node.name)
    line(top - 0.17, qualifier, fontsize=_QUALIFIER_POINTS, color=_style.MARKER_EDGE_COLOUR, gid="node-qualifier")
    line(top - 0.36, table, fontsize=_NAME_POINTS, fontweight="bold", gid="node-name")
    version = _version_text(node)
    line(top - 0.56, f"{node.kind} · current {version}", fontsize=7.5, color=_style.MARKER_EDGE_COLOUR)
    line(top - 0.73, f"created {_style.format_timestamp(node.created_at)}", fontsize=7)
    if node.dropped_at is not None:
        line(
            top - 0.90,
            f"DROPPED {_style.format_timestamp(node.dropped_at)}",
            fontsize=7,
            color=_style.ERROR_COLOUR,
            fontweight="bold",
        )

    # The bar: owned bytes solid, shared bytes hatched, in proportion.
    bar_left, bar_width, bar_bottom, bar_height = left + 0.1, _BOX_WIDTH - 0.2, bottom + 0.27, 0.13
    total = node.bytes_owned + node.bytes_shared
    owned_width = bar_width * node.bytes_owned / total if total else 0.0
    # Each part from its own bytes: a difference of floats leaves a sliver where there is none.
    shared_width = bar_width * node.bytes_shared / total if total else 0.0
    ax.add_patch(
        Rectangle(
            (bar_left, bar_bottom),
            owned_width,
            bar_height,
            facecolor=_style.OWNED_COLOUR,
            edgecolor="none",
            alpha=alpha,
            zorder=3,
            gid="owned-bytes",
            url=node.id,
        )
    )
    ax.add_patch(
        Rectangle(
            (bar_left + owned_width, bar_bottom),
            shared_width,
            bar_height,
            facecolor=_style.SHARED_COLOUR,
            edgecolor=_style.OWNED_COLOUR,
            hatch=_style.SHARED_HATCH,
            linewidth=0,
            alpha=alpha,
            zorder=3,
            gid="shared-bytes",
            url=node.id,
        )
    )
    ax.add_patch(
        Rectangle(
            (bar_left, bar_bottom),
            bar_width,
            bar_height,
            facecolor="none",
            edgecolor=to_rgba(_style.MARKER_EDGE_COLOUR, alpha),
            linewidth=0.6,
            zorder=4,
        )
    )
    caption_y = bottom + 0.14
    ax.text(
        bar_left,
        caption_y,
        f"owned {_files_and_bytes(node.files_owned, node.bytes_owned)}",
        ha="left",
        va="center",
        fontsize=6.5,
        alpha=alpha,
        zorder=3,
        gid="node-label",
        url=node.id,
    )
    ax.text(
        bar_left + bar_width,
        caption_y,
        f"shared {_files_and_bytes(node.files_shared, node.bytes_shared)}",
        ha="right",
        va="center",
        fontsize=6.5,
        alpha=alpha,
        zorder=3,
        gid="node-label",
        url=node.id,
    )


def _draw_edge(ax: Axes, source: tuple[float, float], clone: tuple[float, float], version: int | None) -> None:
    start = (source[0] + _BOX_WIDTH / 2, source[1])
    end = (clone[0] - _BOX_WIDTH / 2, clone[1])
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=14,
            color=_style.HORIZON_COLOUR,
            linewidth=1.2,
            shrinkA=0,
            shrinkB=1,
            zorder=1,
            gid="lineage-edge",
        )
    )
    # Half way along, arrows to sibling clones are at least half a row apart.
    x = start[0] + (end[0] - start[0]) * 0.5
    y = start[1] + (end[1] - start[1]) * 0.5
    ax.text(
        x,
        y,
        "@?" if version is None else f"@v{version}",
        ha="center",
        va="center",
        fontsize=8,
        zorder=5,
        gid="edge-label",
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": _style.HORIZON_COLOUR, "lw": 0.6},
    )


def _version_text(node: LineageNode) -> str:
    """``v3``; ``purged`` for a dropped table whose log is gone; ``no log`` if a live one's is."""
    if node.version is not None and node.version >= 0:
        return f"v{node.version}"
    return "purged" if node.dropped_at is not None else "no log"


def _files_and_bytes(files: int, size: int) -> str:
    return f"{_style.format_files(files)}, {_style.format_bytes(size)}"


def name_lines(qualified: str) -> tuple[str, str]:
    """A node's name as its box shows it: ``DB.SCHEMA`` above, the table's own name below.

    Each line is cut in the middle with an ellipsis if it is too wide for the
    box, so that both its start and its end (``..._DEV``) still show.

    Example:
        >>> name_lines("SHOP_DEV.SALES_DEV.PROD_AN_HOUR_AGO")
        ('SHOP_DEV.SALES_DEV', 'PROD_AN_HOUR_AGO')
    """
    parts = qualified.split(".", 2)
    qualifier, table = ".".join(parts[:-1]), parts[-1]
    return (
        _fit(qualifier, FontProperties(size=_QUALIFIER_POINTS)),
        _fit(table, FontProperties(size=_NAME_POINTS, weight="bold")),
    )


def _fit(text: str, font: FontProperties) -> str:
    """``text`` if it fits a box's width in ``font``; else its start and end around an ellipsis."""

    def fits(candidate: str) -> bool:
        return TextPath((0, 0), candidate, prop=font).get_extents().width <= _NAME_WIDTH

    if not text or fits(text):  # an empty text (a placeholder's qualifier) has no extents to measure
        return text
    keep = len(text) - 1
    while keep > 2:
        head = (keep + 1) // 2
        candidate = text[:head] + "…" + text[len(text) - (keep - head) :]
        if fits(candidate):
            return candidate
        keep -= 1
    return text[:1] + "…"


def _legend_handles(data: LineageData) -> list[Any]:
    kinds = {n.kind for n in data.nodes}
    handles: list[Any] = [
        Patch(facecolor=to_rgba(colour, 0.12), edgecolor=colour, linewidth=1.3, label=kind.lower())
        for kind, colour in _style.CLONE_KIND_COLOURS.items()
        if kind in kinds
    ]
    handles += [
        Patch(facecolor=_style.OWNED_COLOUR, label="bytes owned"),
        Patch(
            facecolor=_style.SHARED_COLOUR,
            edgecolor=_style.OWNED_COLOUR,
            hatch=_style.SHARED_HATCH,
            linewidth=0,
            label="bytes shared (zero-copy)",
        ),
    ]
    if any(n.dropped_at is not None for n in data.nodes):
        handles.append(Patch(facecolor="none", edgecolor=_style.HORIZON_COLOUR, linestyle="--", label="dropped"))
    return handles


# lineage_html -----------------------------------------------------------------------


def lineage_html(data: LineageData) -> str:
    """The lineage as an HTML table, one row per table in tree order.

    Clones are indented under their source; the root row is bold and
    highlighted, dropped tables faded.

    Example:
        >>> html = lineage_html(LineageData.from_lake(lake, "dev"))      # doctest: +SKIP
        >>> html.count("<tr") - 1 == len(data.nodes)                      # doctest: +SKIP
        True
    """
    rows = []
    styles = []
    for node in data.nodes:
        source = data.source_of(node)
        if source is None:
            cloned_from = "–"
        else:
            at = "" if node.source_version is None else f" @v{node.source_version}"
            cloned_from = html.escape(source.name) + at
        indent = "&nbsp;&nbsp;&nbsp;" * data.generations[node.id] + ("└&nbsp;" if source is not None else "")
        total = node.bytes_owned + node.bytes_shared
        shared_share = f"{100 * node.bytes_shared / total:.0f}%" if total else "–"
        rows.append(
            [
                indent
                + _style.colour_swatch(_style.CLONE_KIND_COLOURS.get(node.kind, _style.KIND_COLOURS["other"]))
                + html.escape(node.name),
                html.escape(node.kind),
                _version_text(node),
                cloned_from,
                _style.format_timestamp(node.created_at),
                "–" if node.dropped_at is None else _style.format_timestamp(node.dropped_at),
                _style.format_count(node.files_owned),
                _style.format_bytes(node.bytes_owned),
                _style.format_count(node.files_shared),
                _style.format_bytes(node.bytes_shared),
                shared_share,
            ]
        )
        style = "" if node.dropped_at is None else f"opacity:{_style.EXPIRED_OPACITY};"
        if node.id == data.root_id:
            style += "font-weight:bold;background:rgba(86,180,233,0.18);"
        styles.append(style)
    return _style.html_table(
        [
            "table",
            "kind",
            "version",
            "cloned from",
            "created",
            "dropped",
            "owned files",
            "owned bytes",
            "shared files",
            "shared bytes",
            "shared %",
        ],
        rows,
        row_styles=styles,
        numeric_columns=[6, 7, 8, 9, 10],
    )


def _header_html(data: LineageData | None, table_name: str) -> str:
    if data is None:
        return f"<b>{html.escape(table_name)}</b> · clone lineage"
    root = data.root
    source = data.source_of(root)
    what = html.escape(root.kind)
    if source is not None:
        at = "" if root.source_version is None else f"@v{root.source_version}"
        what += f" of {html.escape(source.name)}{at}"
    below = len(data.nodes) - 1 - _ancestor_count(data)
    version = _version_text(root)
    return (
        f"<b>{html.escape(root.name)}</b> · {what} · current version <b>{version}</b> · "
        f"{_ancestor_count(data)} {'source' if _ancestor_count(data) == 1 else 'sources'} above, "
        f"{below} {'clone' if below == 1 else 'clones'} below · "
        f"owns {_files_and_bytes(root.files_owned, root.bytes_owned)}, "
        f"shares {_files_and_bytes(root.files_shared, root.bytes_shared)} "
        f"<small>(as of {_style.format_timestamp(data.now)})</small>"
    )


def _ancestor_count(data: LineageData) -> int:
    count, node, seen = 0, data.source_of(data.root), {data.root_id}
    while node is not None and node.id not in seen:
        seen.add(node.id)
        count += 1
        node = data.source_of(node)
    return count


# LineageWidget ----------------------------------------------------------------------


class LineageWidget(LiveWidget[LineageData]):
    """A live clone lineage of one table, for notebooks.

    Shows a header (the table, its kind and source, how much it owns and
    shares), a refresh button, a picker to re-root the graph on another live
    table in it, :func:`plot_lineage`'s figure and :func:`lineage_html`'s
    table. Where widgets cannot run it renders as static HTML and PNG.

    When a refresh fails (the root was dropped, say), the widget says so in
    its status line and shows no graph until a refresh or a re-root succeeds;
    see :class:`~lakeclone.widgets._live.LiveWidget`.

    Args:
        lake: the Lake holding the table.
        table_name: the table as Python names it to the Lake.

    Attributes:
        data: the :class:`LineageData` on show; None in the error state.
        error: what the last refresh could not read, or None.
        header: the header line (``ipywidgets.HTML``).
        status: what failed, if anything (``HTML``).
        refresh_button: reloads from the lake.
        root_picker: a ``Dropdown`` of the graph's live tables; picking one
            re-roots the graph on it.
        plot: the figure, as a PNG in an ``Output``.
        table: the nodes table (``HTML``).

    Raises:
        WidgetError: the table's lineage cannot be read (one line, nothing chained).

    Example:
        >>> widget = LineageWidget(lake, "dev")            # doctest: +SKIP
        >>> widget.reroot("LAKE.PUBLIC.PROD")              # doctest: +SKIP
    """

    kind = "clone lineage"
    refresh_tooltip = "Reload the lineage from the lake"

    def reroot(self, name: str) -> None:
        """Show the lineage of another table, by a name the Lake understands.

        A node's ``DB.SCHEMA.TABLE`` name works as it is, and so does any name
        of a live table, in or outside the graph on show.

        Raises:
            WidgetError: the table cannot be read; what is on show stays.
        """
        target = sql_name(name) if name in self._names() else name
        try:
            data = LineageData.from_lake(self._lake, target)
        except LakecloneError as error:
            raise WidgetError(f"Cannot show the {self.kind} of {name}: {one_line(error)}") from None
        self._table_name = data.table
        self._show(data)

    # LiveWidget --------------------------------------------------------------------

    def _read(self) -> LineageData:
        data = LineageData.from_lake(self._lake, self._table_name)
        if data.root.version is None or data.root.version < 0:
            # The catalog lists the table, but its Delta log is gone (its folder
            # was deleted behind the Lake's back; Delta then reports version -1):
            # there is nothing to show.
            raise LakecloneError(f"{data.root.name} has no Delta log: its folder is gone.")
        return data

    def _plot(self, data: LineageData) -> Figure:
        return plot_lineage(data)

    def _title(self, data: LineageData) -> str:
        return data.root.name

    def _header_html(self, data: LineageData | None) -> str:
        return _header_html(data, self._table_name)

    def _static_html(self, data: LineageData) -> str:
        return lineage_html(data)

    def _children(self) -> list[ipywidgets.Widget]:
        self.root_picker = ipywidgets.Dropdown(description="Root", tooltip="Re-root on another table")
        self.root_picker.observe(self._on_root_picked, names="value")
        return [ipywidgets.HBox([self.refresh_button, self.root_picker]), self.plot, self.table]

    def _render(self, data: LineageData) -> None:
        self.table.value = lineage_html(data)
        # Only live tables can be read again; dropped ones, and those the role may not see, stay in the figure.
        options = [
            (f"{'  ' * data.generations[n.id]}{n.name} ({n.kind.lower()})", n.name)
            for n in data.nodes
            if (n.dropped_at is None and n.authorized) or n.id == data.root_id
        ]
        with self._quietly():
            self.root_picker.options = options
            self.root_picker.value = data.root.name
        fit_picker(self.root_picker, [label for label, _ in options])

    def _clear(self) -> None:
        # The tables of the last graph stay on offer, to re-root on one still there.
        self.root_picker.value = None

    def _names(self) -> set[str]:
        return {name for _label, name in self.root_picker.options}

    def _on_root_picked(self, change: Mapping[str, Any]) -> None:
        picked = change["new"]
        if self._syncing or picked is None or (self.data is not None and picked == self.data.root.name):
            return
        try:
            self.reroot(picked)
        except WidgetError as error:
            self._note("Re-root failed", error)
            with self._quietly():
                self.root_picker.value = None if self.data is None else self.data.root.name


def lineage_widget(lake: Lake, table_name: str) -> LineageWidget:
    """A :class:`LineageWidget` of one table: the notebook one-liner.

    Raises:
        WidgetError: the table does not exist or cannot be read (one line, nothing chained).

    Example:
        >>> from lakeclone.widgets import lineage_widget
        >>> lineage_widget(lake, "dev")                   # doctest: +SKIP
    """
    return LineageWidget(lake, table_name)
