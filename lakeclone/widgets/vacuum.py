"""The VACUUM explorer: which files VACUUM would keep or delete, and why, before it does.

Three layers, as in :mod:`lakeclone.widgets.timeline`:

* :meth:`Lake.vacuum_plan <lakeclone.Lake.vacuum_plan>` makes the
  :class:`~lakeclone.vacuum.plan.VacuumPlan` (a dry run: nothing is deleted),
  and :func:`reason_groups` groups its files by reason.
* :func:`plot_vacuum` and :func:`vacuum_html` render a plan as a bar chart of
  bytes per reason and as HTML tables.
* :class:`VacuumExplorer` puts both in an ipywidgets box with a retention
  field that re-plans, and a "Vacuum now" button that deletes only after a
  second, confirming click.

Example:
    >>> from lakeclone.widgets import vacuum_explorer
    >>> vacuum_explorer(lake, "orders", retain_hours=24)     # doctest: +SKIP
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator

from lakeclone.errors import LakecloneError
from lakeclone.vacuum.plan import FileDecision, Reason, VacuumPlan
from lakeclone.widgets import _style
from lakeclone.widgets.timeline import RETENTION_PARAMETER

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from lakeclone.lake import Lake

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
"""The Spark setting with which Delta refuses a RETAIN shorter than the table's retention."""

# Reasons in the order they are listed: why VACUUM keeps a file, strongest
# first, then what it deletes.
_CATEGORY_ORDER = ("current", "retention", "clone", "other", "delete")


@dataclasses.dataclass(frozen=True)
class ReasonGroup:
    """The files of a plan that share one reason.

    Attributes:
        reason: the plan's reason; ``str()`` of it reads e.g. ``current`` or ``clone LAKE.PUBLIC.C@3``.
        files: the decisions with that reason, by path.
    """

    reason: Reason
    files: tuple[FileDecision, ...]

    @property
    def category(self) -> str:
        """``current``, ``retention``, ``clone``, ``other`` (a keep reason) or ``delete``."""
        return _style.vacuum_reason_category(self.reason.kind.value)

    @property
    def delete(self) -> bool:
        """Whether VACUUM deletes these files."""
        return self.reason.delete

    @property
    def bytes(self) -> int:
        return sum(d.size for d in self.files)

    @property
    def label(self) -> str:
        """``delete: 2 files, 3.1 KiB``."""
        return f"{self.reason}: {_style.format_files(len(self.files))}, {_style.format_bytes(self.bytes)}"


def reason_groups(plan: VacuumPlan) -> list[ReasonGroup]:
    """The plan's files grouped by reason: kept ones first (current, retention, clones), deleted ones last.

    Example:
        >>> [str(g.reason) for g in reason_groups(lake.vacuum_plan("t"))]          # doctest: +SKIP
        ['current', 'clone LAKE.PUBLIC.C@1', 'delete']
    """
    by_reason: dict[Reason, list[FileDecision]] = {}
    for decision in plan.decisions:
        by_reason.setdefault(decision.reason, []).append(decision)
    groups = [ReasonGroup(reason, tuple(sorted(files, key=lambda d: d.path))) for reason, files in by_reason.items()]
    return sorted(groups, key=lambda g: (_CATEGORY_ORDER.index(g.category), str(g.reason)))


def _delete_summary(plan: VacuumPlan) -> tuple[int, int]:
    doomed = plan.to_delete
    return len(doomed), sum(d.size for d in doomed)


# plot_vacuum ------------------------------------------------------------------------


def plot_vacuum(plan: VacuumPlan, ax: Axes | None = None, *, retain_hours: float | None = None) -> Figure:
    """Draw the bytes VACUUM keeps and deletes, one horizontal bar per reason.

    Kept reasons are green and blue, ``delete`` vermillion and hatched (see
    :data:`~lakeclone.widgets._style.VACUUM_REASON_COLOURS`); each bar is
    labelled with its files and bytes.

    Artists carry gids: ``reason-bar`` (one bar per reason, top to bottom in
    :func:`reason_groups` order) and ``reason-label``.

    Args:
        plan: what to draw, from :meth:`Lake.vacuum_plan <lakeclone.Lake.vacuum_plan>`.
        ax: axes to draw into; by default a new figure. No pyplot state is touched.
        retain_hours: the retention the plan was made with, for the title.

    Returns:
        The figure holding the axes.

    Example:
        >>> figure = plot_vacuum(lake.vacuum_plan("t", retain_hours=0))    # doctest: +SKIP
    """
    groups = reason_groups(plan)
    if ax is None:
        figure = Figure(figsize=(8.0, 1.5 + 0.45 * max(len(groups), 1)), layout="constrained")
        ax = figure.add_subplot()
    else:
        figure = ax.figure.figure

    ys = list(range(len(groups)))[::-1]  # first group on top
    sizes = [g.bytes for g in groups]
    bars = ax.barh(
        ys,
        sizes,
        height=0.6,
        color=[_style.VACUUM_REASON_COLOURS[g.category] for g in groups],
        edgecolor=_style.MARKER_EDGE_COLOUR,
        linewidth=0.6,
        zorder=2,
    )
    largest = max(sizes, default=0) or 1
    for bar, group in zip(bars, groups, strict=True):
        bar.set_gid("reason-bar")
        if group.delete:
            bar.set_hatch("//")
        ax.annotate(
            f"{_style.format_files(len(group.files))} · {_style.format_bytes(group.bytes)}",
            (bar.get_width(), bar.get_y() + bar.get_height() / 2),
            xytext=(4, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
            gid="reason-label",
        )
    ax.set_yticks(ys, labels=[str(g.reason) for g in groups])
    ax.tick_params(axis="y", labelsize=8)
    # Room on the right for the labels of the longest bar.
    ax.set_xlim(0, largest * 1.35)
    _byte_ticks(ax, largest * 1.35)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("size of the files")
    ax.spines[["top", "right"]].set_visible(False)
    if not groups:
        ax.text(0.5, 0.5, "no data files", transform=ax.transAxes, ha="center", va="center", color="#666666")
        ax.set_yticks([])
    files, size = _delete_summary(plan)
    total = sum(sizes)
    retain = "" if retain_hours is None else f" RETAIN {retain_hours:g} HOURS"
    ax.set_title(
        f"VACUUM {plan.table}{retain}: deletes {_style.format_files(files)} ({_style.format_bytes(size)}) "
        f"of {len(plan.decisions):,} ({_style.format_bytes(total)})\n"
        f"keeps what versions since {_style.format_timestamp(plan.horizon)} need",
        fontsize=9.5,
        loc="left",
    )
    categories = {g.category for g in groups}
    ax.legend(
        handles=[
            Patch(
                facecolor=colour,
                edgecolor=_style.MARKER_EDGE_COLOUR,
                linewidth=0.6,
                hatch="//" if category == "delete" else None,
                label=_style.VACUUM_REASON_LABELS[category],
            )
            for category, colour in _style.VACUUM_REASON_COLOURS.items()
            if category in categories
        ],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        frameon=False,
    )
    return figure


def _byte_ticks(ax: Axes, limit: float) -> None:
    """Ticks at round numbers of one binary unit (0, 256 KiB, 512 KiB, ...), not of bytes."""
    unit, name = 1, "B"
    for candidate in ("KiB", "MiB", "GiB", "TiB"):
        if limit / unit < 1024:
            break
        unit, name = unit * 1024, candidate
    ticks = [t * unit for t in MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]).tick_values(0, limit / unit)]
    ax.xaxis.set_major_locator(FixedLocator([t for t in ticks if 0 <= t <= limit]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value / unit:g} {name}"))


# vacuum_html ------------------------------------------------------------------------


def vacuum_html(plan: VacuumPlan, *, files: bool = True) -> str:
    """The plan as HTML: totals per reason, then each reason's files in a ``<details>`` block.

    Args:
        plan: what to show.
        files: whether to list the files as well as the totals.

    Returns:
        A totals ``<table>`` with one body row per reason and a total row,
        followed (with ``files``) by one collapsed ``<details>`` per reason.

    Example:
        >>> vacuum_html(lake.vacuum_plan("t")).count("<details")    # doctest: +SKIP
        2
    """
    summary = vacuum_totals_html(plan)
    if not files:
        return summary
    blocks = []
    for group in reason_groups(plan):
        swatch = _style.colour_swatch(_style.VACUUM_REASON_COLOURS[group.category])
        blocks.append(
            f"<details><summary>{swatch}{html.escape(group.label)}</summary>{files_html(plan, group)}</details>"
        )
    return summary + "".join(blocks)


def vacuum_totals_html(plan: VacuumPlan) -> str:
    """The totals table: files and bytes per reason, and what VACUUM does with them."""
    rows = []
    styles = []
    for group in reason_groups(plan):
        rows.append(
            [
                _style.colour_swatch(_style.VACUUM_REASON_COLOURS[group.category]) + html.escape(str(group.reason)),
                "DELETE" if group.delete else "KEEP",
                _style.format_count(len(group.files)),
                _style.format_bytes(group.bytes),
            ]
        )
        styles.append(f"color:{_style.ERROR_COLOUR};font-weight:bold;" if group.delete else "")
    total_bytes = sum(d.size for d in plan.decisions)
    rows.append(["<b>total</b>", "", f"<b>{len(plan.decisions):,}</b>", f"<b>{_style.format_bytes(total_bytes)}</b>"])
    styles.append("border-top:1px solid currentColor;")
    return _style.html_table(["reason", "action", "files", "bytes"], rows, row_styles=styles, numeric_columns=[2, 3])


def files_html(plan: VacuumPlan, group: ReasonGroup) -> str:
    """One reason's files: path relative to the table's folder, and size."""
    rows = [[f"<code>{html.escape(d.relative)}</code>", _style.format_bytes(d.size)] for d in group.files]
    return _style.html_table(["file", "size"], rows, numeric_columns=[1])


# VacuumExplorer ---------------------------------------------------------------------


class VacuumExplorer(ipywidgets.VBox):
    """Explore what ``VACUUM`` would delete from a table, then run it deliberately.

    Shows a header (the table and its configured retention), a retention
    field in hours (changing it re-plans; the Plan button re-plans at the
    same retention), the plan's totals per reason, the bar chart of
    :func:`plot_vacuum`, and an accordion with each reason's files. Planning
    is a dry run (:meth:`Lake.vacuum_plan <lakeclone.Lake.vacuum_plan>`).

    Deleting takes two clicks: "Vacuum now" is enabled only while a plan with
    files to delete is on show; its first click asks "delete N files (X)?" and
    its second runs ``VACUUM <table> RETAIN <hours> HOURS``. Before running it
    plans once more and, if the files to delete have changed since the plan
    on show (new commits, a moved clock), shows the new plan and asks again
    instead. Errors, such as Delta's retention check refusing a short
    RETAIN, are shown in the widget rather than raised.

    Args:
        lake: the Lake holding the table.
        table_name: the table as SQL names it; it goes into the SQL text unchanged.
        retain_hours: the retention to plan with, in whole hours; by default
            the table's ``DATA_RETENTION_TIME_IN_DAYS``.

    Attributes:
        plan: the :class:`~lakeclone.vacuum.plan.VacuumPlan` on show, or None
            while there is none (planning failed).
        header: the header line (``ipywidgets.HTML``).
        hours_input: the retention in hours (``BoundedIntText``).
        plan_button: re-plans at the same retention.
        totals: the totals table (``HTML``).
        plot: the figure, as a PNG in an ``Output``.
        files: an ``Accordion`` with one page of files per reason.
        vacuum_button: "Vacuum now", then "Confirm: delete N files".
        cancel_button: withdraws a pending confirmation.
        confirmation: the confirmation question (``HTML``).
        result: what the last vacuum or plan did, or its error (``HTML``).

    Raises:
        LakecloneError: the table does not exist or cannot be read.

    Example:
        >>> explorer = VacuumExplorer(lake, "t", retain_hours=0)     # doctest: +SKIP
        >>> explorer.vacuum_button.click(); explorer.vacuum_button.click()  # doctest: +SKIP
    """

    plan: VacuumPlan | None

    def __init__(self, lake: Lake, table_name: str, *, retain_hours: int | None = None) -> None:
        self._lake = lake
        self._table_name = table_name
        # Read first, so that a missing table fails before any widget is made.
        self.configured_hours = _configured_hours(lake, table_name)
        hours = self.configured_hours if retain_hours is None else retain_hours
        if hours < 0 or hours != int(hours):
            raise ValueError(f"retain_hours must be a whole number of hours >= 0, not {retain_hours!r}")
        plan = lake.vacuum_plan(table_name, retain_hours=hours)

        self.plan = None
        self._plan_hours: int | None = None
        self._armed = False
        self._png = b""
        self.header = ipywidgets.HTML()
        self.hours_input = ipywidgets.BoundedIntText(
            value=int(hours),
            min=0,
            max=10**7,
            description="Retain (hours)",
            continuous_update=False,
            style={"description_width": "initial"},
            layout=ipywidgets.Layout(width="14em"),
        )
        self.plan_button = ipywidgets.Button(
            description="Plan", icon="refresh", tooltip="Plan again (dry run: nothing is deleted)"
        )
        self.vacuum_button = ipywidgets.Button(
            description="Vacuum now", icon="trash", button_style="danger", disabled=True
        )
        self.cancel_button = ipywidgets.Button(
            description="Cancel", layout=ipywidgets.Layout(display="none")
        )
        self.confirmation = ipywidgets.HTML()
        self.result = ipywidgets.HTML()
        self.totals = ipywidgets.HTML()
        self.plot = ipywidgets.Output()
        self.files = ipywidgets.Accordion()
        super().__init__(
            children=[
                self.header,
                ipywidgets.HBox([self.hours_input, self.plan_button]),
                self.totals,
                self.plot,
                self.files,
                ipywidgets.HBox([self.vacuum_button, self.cancel_button, self.confirmation]),
                self.result,
            ]
        )
        self.hours_input.observe(self._on_hours_changed, names="value")
        self.plan_button.on_click(self._on_plan_clicked)
        self.vacuum_button.on_click(self._on_vacuum_clicked)
        self.cancel_button.on_click(self._on_cancel_clicked)
        self._show(plan, int(hours))

    @property
    def table_name(self) -> str:
        return self._table_name

    @property
    def retain_hours(self) -> int:
        """The retention in the field; set it to re-plan."""
        return int(self.hours_input.value)

    @retain_hours.setter
    def retain_hours(self, hours: int) -> None:
        self.hours_input.value = hours

    @property
    def armed(self) -> bool:
        """Whether the next click of "Vacuum now" deletes files."""
        return self._armed

    def replan(self) -> VacuumPlan | None:
        """Plan again at the field's retention (a dry run) and show it; an error is shown, not raised.

        Returns:
            The new plan, or None if planning failed.
        """
        hours = self.retain_hours
        try:
            plan = self._lake.vacuum_plan(self._table_name, retain_hours=hours)
        except LakecloneError as error:
            self._show_none(_style.error_html("Planning failed", error))
            return None
        self._show(plan, hours)
        return plan

    def figure(self) -> Figure:
        """A new figure of the plan on show; see :func:`plot_vacuum`.

        Raises:
            ValueError: there is no plan on show.
        """
        if self.plan is None:
            raise ValueError("no VACUUM plan on show")
        return plot_vacuum(self.plan, retain_hours=self._plan_hours)

    def static(self) -> bytes:
        """The plan's figure as PNG bytes (empty while there is no plan)."""
        return self._png

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(**kwargs) or {"text/plain": repr(self)}
        body = f"<div>{self.header.value}</div>"
        if self.plan is not None:
            png = base64.b64encode(self._png).decode("ascii")
            bundle["image/png"] = png
            alt = f"VACUUM plan of {html.escape(self.plan.table)}"
            body += f'{vacuum_html(self.plan)}<img src="data:image/png;base64,{png}" alt="{alt}">'
        bundle["text/html"] = body + f"<div>{self.result.value}</div>"
        return bundle

    # Showing a plan ---------------------------------------------------------------

    def _header_html(self, hours: int | None) -> str:
        configured = self.configured_hours
        text = (
            f"<b>{html.escape(self._table_name)}</b> · configured retention "
            f"{_style.format_days(int(configured // 24))} ({configured:g} hours)"
        )
        if self.plan is not None:
            text += f" · <code>{html.escape(self.plan.location)}</code>"
        if hours is not None:
            text += (
                f"<br>Dry run of <code>VACUUM {html.escape(self._table_name)} RETAIN {hours} HOURS</code>: "
                f"keeps what versions since {_style.format_timestamp(self._horizon_or_now())} need"
            )
            if hours < configured and self._check_enabled():
                text += (
                    f'<br><span style="color:{_style.ERROR_COLOUR};">{hours} hours is shorter than the '
                    f"table's retention: Delta's retention check ({RETENTION_CHECK}) will refuse to run it."
                    "</span>"
                )
        return text

    def _horizon_or_now(self) -> dt.datetime:
        return self.plan.horizon if self.plan is not None else self._lake.now()

    def _check_enabled(self) -> bool:
        return str(self._lake.spark.conf.get(RETENTION_CHECK, "true")).lower() != "false"

    def _show(self, plan: VacuumPlan, hours: int) -> None:
        self.plan = plan
        self._plan_hours = hours
        self._disarm()
        self._png = _style.figure_to_png(plot_vacuum(plan, retain_hours=hours))
        self.header.value = self._header_html(hours)
        self.totals.value = vacuum_totals_html(plan)
        self.plot.outputs = (
            {
                "output_type": "display_data",
                "data": {
                    "image/png": base64.b64encode(self._png).decode("ascii"),
                    "text/plain": f"<VACUUM plan of {plan.table}>",
                },
                "metadata": {},
            },
        )
        groups = reason_groups(plan)
        self.files.children = [ipywidgets.HTML(files_html(plan, g)) for g in groups]
        self.files.titles = tuple(g.label for g in groups)
        self.files.selected_index = None
        files, size = _delete_summary(plan)
        self.vacuum_button.disabled = files == 0
        self.vacuum_button.tooltip = (
            f"Delete {_style.format_files(files)} ({_style.format_bytes(size)})" if files else "Nothing to delete"
        )

    def _show_none(self, message: str) -> None:
        self.plan = None
        self._plan_hours = None
        self._disarm()
        self._png = b""
        self.header.value = self._header_html(None)
        self.totals.value = ""
        self.plot.outputs = ()
        self.files.children = []
        self.vacuum_button.disabled = True
        self.result.value = message

    # Running it -------------------------------------------------------------------

    def _arm(self) -> None:
        assert self.plan is not None
        files, size = _delete_summary(self.plan)
        self._armed = True
        self.vacuum_button.description = f"Confirm: delete {_style.format_files(files)}"
        self.cancel_button.layout.display = None
        self.confirmation.value = (
            f"Delete {_style.format_files(files)} ({_style.format_bytes(size)}) from "
            f"<b>{html.escape(self.plan.table)}</b>? This cannot be undone."
        )

    def _disarm(self) -> None:
        self._armed = False
        self.vacuum_button.description = "Vacuum now"
        self.cancel_button.layout.display = "none"
        self.confirmation.value = ""

    def _run(self) -> None:
        assert self.plan is not None and self._plan_hours is not None
        shown, hours = self.plan, self._plan_hours
        self._disarm()
        # Only what was on show may go: if the files to delete changed since
        # (a commit, a moved clock), show the new plan and ask again.
        try:
            fresh = self._lake.vacuum_plan(self._table_name, retain_hours=hours)
        except LakecloneError as error:
            self.result.value = _style.error_html("Vacuum not run: planning failed", error)
            return
        if {d.path for d in fresh.to_delete} != {d.path for d in shown.to_delete}:
            self._show(fresh, hours)
            self.result.value = (
                f'<span style="color:{_style.ERROR_COLOUR};">The table changed since the plan was shown, '
                "so nothing was deleted. Here is the new plan.</span>"
            )
            return
        try:
            [row] = self._lake.sql(f"VACUUM {self._table_name} RETAIN {hours} HOURS").collect()
        except LakecloneError as error:
            self.result.value = _style.error_html("Vacuum failed", error)
            return
        counts = row.asDict()
        files = int(counts.get("number of files deleted", 0))
        size = int(counts.get("number of bytes deleted", 0))
        message = (
            f"<b>VACUUM {html.escape(self._table_name)} RETAIN {hours} HOURS</b> deleted "
            f"{_style.format_files(files)} ({_style.format_bytes(size)}) at "
            f"{_style.format_timestamp(self._lake.now())}."
        )
        self.replan()
        self.result.value = message

    def _on_vacuum_clicked(self, _button: ipywidgets.Button) -> None:
        if self.plan is None:  # a disabled button cannot be clicked, but click() can
            return
        if self._armed:
            self._run()
        else:
            self._arm()

    def _on_cancel_clicked(self, _button: ipywidgets.Button) -> None:
        self._disarm()

    def _on_hours_changed(self, _change: Mapping[str, Any]) -> None:
        self.result.value = ""
        self.replan()

    def _on_plan_clicked(self, _button: ipywidgets.Button) -> None:
        self.result.value = ""
        self.replan()


def _configured_hours(lake: Lake, table_name: str) -> float:
    [parameter] = (
        lake.sql(f"SHOW PARAMETERS LIKE '{RETENTION_PARAMETER}' IN TABLE {table_name}").select("value").collect()
    )
    return float(parameter["value"]) * 24


def vacuum_explorer(lake: Lake, table_name: str, *, retain_hours: int | None = None) -> VacuumExplorer:
    """A :class:`VacuumExplorer` of one table: the notebook one-liner.

    Example:
        >>> from lakeclone.widgets import vacuum_explorer
        >>> vacuum_explorer(lake, "orders", retain_hours=0)        # doctest: +SKIP
    """
    return VacuumExplorer(lake, table_name, retain_hours=retain_hours)
