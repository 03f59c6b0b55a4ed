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

import dataclasses
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
from lakeclone.widgets._live import LiveWidget, button, scrolling_html, sql_string
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
        blocks.append(f"<details><summary>{swatch}{html.escape(group.label)}</summary>{files_html(plan, group)}</details>")
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


@dataclasses.dataclass(frozen=True)
class _Planned:
    """A plan, the retention it was made with, and the table's own retention, read together."""

    plan: VacuumPlan
    hours: int
    configured_hours: float


class VacuumExplorer(LiveWidget[_Planned]):
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
    RETAIN, are shown in the widget rather than raised. A table that can no
    longer be planned (dropped, say) puts the widget in the error state of
    :class:`~lakeclone.widgets._live.LiveWidget`: no plan, and nothing to click.

    Args:
        lake: the Lake holding the table.
        table_name: the table as SQL names it; it goes into the SQL text unchanged.
        retain_hours: the retention to plan with, in whole hours; by default
            the table's ``DATA_RETENTION_TIME_IN_DAYS``.

    Attributes:
        plan: the :class:`~lakeclone.vacuum.plan.VacuumPlan` on show, or None
            while there is none (planning failed).
        error: what the last planning could not read, or None.
        header: the header line (``ipywidgets.HTML``).
        status: what failed, if anything (``HTML``).
        hours_input: the retention in hours (``BoundedIntText``).
        plan_button: re-plans at the same retention (the :attr:`refresh_button`).
        totals: the totals table (``HTML``; also :attr:`table`).
        plot: the figure, as a PNG in an ``Output``.
        files: an ``Accordion`` with one page of files per reason.
        vacuum_button: "Vacuum now", then "Confirm: delete N files".
        cancel_button: withdraws a pending confirmation.
        confirmation: the confirmation question (``HTML``).
        result: what the last vacuum did, or its error (``HTML``).

    Raises:
        WidgetError: the table does not exist or cannot be read (one line, nothing chained).
        ValueError: ``retain_hours`` is not a whole number of hours >= 0.

    Example:
        >>> explorer = VacuumExplorer(lake, "t", retain_hours=0)     # doctest: +SKIP
        >>> explorer.vacuum_button.click(); explorer.vacuum_button.click()  # doctest: +SKIP
    """

    kind = "VACUUM plan"
    refresh_label = "Plan"
    refresh_tooltip = "Plan again (dry run: nothing is deleted)"

    configured_hours: float

    def __init__(self, lake: Lake, table_name: str, *, retain_hours: int | None = None) -> None:
        if retain_hours is not None and (retain_hours < 0 or retain_hours != int(retain_hours)):
            raise ValueError(f"retain_hours must be a whole number of hours >= 0, not {retain_hours!r}")
        self._wanted_hours = None if retain_hours is None else int(retain_hours)
        self._armed = False
        super().__init__(lake, table_name)

    @property
    def plan(self) -> VacuumPlan | None:
        return None if self.data is None else self.data.plan

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
        self._wanted_hours = self.retain_hours
        self.refresh()
        return self.plan

    # LiveWidget --------------------------------------------------------------------

    def _read(self) -> _Planned:
        configured = _configured_hours(self._lake, self._table_name)
        hours = int(configured) if self._wanted_hours is None else self._wanted_hours
        plan = self._lake.vacuum_plan(self._table_name, retain_hours=hours)
        return _Planned(plan, hours, configured)

    def _plot(self, data: _Planned) -> Figure:
        return plot_vacuum(data.plan, retain_hours=data.hours)

    def _title(self, data: _Planned) -> str:
        return data.plan.table

    def _static_html(self, data: _Planned) -> str:
        return vacuum_html(data.plan)

    def _footer_html(self) -> str:
        return f"<div>{self.result.value}</div>"

    def _children(self) -> list[ipywidgets.Widget]:
        self.plan_button = self.refresh_button
        self.totals = self.table
        self.hours_input = ipywidgets.BoundedIntText(
            value=self._wanted_hours or 0,
            min=0,
            max=10**7,
            description="Retain (hours)",
            continuous_update=False,
            style={"description_width": "initial"},
            layout=ipywidgets.Layout(width="14em"),
        )
        self.vacuum_button = button("Vacuum now", icon="trash", button_style="danger", disabled=True)
        self.cancel_button = button("Cancel")
        self.cancel_button.layout.display = "none"
        self.confirmation = ipywidgets.HTML()
        self.result = ipywidgets.HTML()
        self.files = ipywidgets.Accordion()
        self.hours_input.observe(self._on_hours_changed, names="value")
        self.vacuum_button.on_click(self._on_vacuum_clicked)
        self.cancel_button.on_click(self._on_cancel_clicked)
        return [
            ipywidgets.HBox([self.hours_input, self.refresh_button]),
            self.table,
            self.plot,
            self.files,
            ipywidgets.HBox([self.vacuum_button, self.cancel_button, self.confirmation]),
            self.result,
        ]

    def _render(self, data: _Planned) -> None:
        plan = data.plan
        self.configured_hours = data.configured_hours
        self._wanted_hours = data.hours
        with self._quietly():
            self.hours_input.value = data.hours
        self._disarm()
        self.table.value = vacuum_totals_html(plan)
        groups = reason_groups(plan)
        self.files.children = [scrolling_html(value=files_html(plan, g)) for g in groups]
        self.files.titles = tuple(g.label for g in groups)
        self.files.selected_index = None
        files, size = _delete_summary(plan)
        self.vacuum_button.disabled = files == 0
        self.vacuum_button.tooltip = (
            f"Delete {_style.format_files(files)} ({_style.format_bytes(size)})" if files else "Nothing to delete"
        )

    def _clear(self) -> None:
        self._disarm()
        self.files.children = []
        self.vacuum_button.disabled = True
        self.vacuum_button.tooltip = "Nothing to delete: there is no plan"

    def _header_html(self, data: _Planned | None) -> str:
        configured = data.configured_hours if data is not None else getattr(self, "configured_hours", None)
        text = f"<b>{html.escape(self._table_name)}</b>"
        if configured is not None:
            text += f" · configured retention {_style.format_days(int(configured // 24))} ({configured:g} hours)"
        if data is None:
            return text
        text += f" · <code>{html.escape(data.plan.location)}</code>"
        hours = data.hours
        text += (
            f"<br>Dry run of <code>VACUUM {html.escape(self._table_name)} RETAIN {hours} HOURS</code>: "
            f"keeps what versions since {_style.format_timestamp(data.plan.horizon)} need"
        )
        if hours < data.configured_hours and self._check_enabled():
            text += (
                f'<br><span style="color:{_style.ERROR_COLOUR};">{hours} hours is shorter than the '
                f"table's retention: the retention check will refuse to run it (<code>ALTER SESSION SET "
                f"{RETENTION_CHECK} = FALSE</code> allows it)."
                "</span>"
            )
        return text

    def _check_enabled(self) -> bool:
        (setting,) = self._lake.sql(f"SHOW PARAMETERS LIKE {sql_string(RETENTION_CHECK)} IN SESSION").collect()
        return bool(setting.value == "true")

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
        assert self.data is not None
        shown, hours = self.data.plan, self.data.hours
        self._disarm()
        # Only what was on show may go: if the files to delete changed since
        # (a commit, a moved clock), show the new plan and ask again.
        try:
            fresh = self._lake.vacuum_plan(self._table_name, retain_hours=hours)
        except LakecloneError as error:
            self._fail(error)
            self.result.value = f'<span style="color:{_style.ERROR_COLOUR};">Nothing was deleted.</span>'
            return
        if {d.path for d in fresh.to_delete} != {d.path for d in shown.to_delete}:
            self._show(_Planned(fresh, hours, self.configured_hours))
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
        if self._syncing:
            return
        self.result.value = ""
        self.replan()

    def _on_refresh_clicked(self, _button: ipywidgets.Button) -> None:
        self.result.value = ""
        self.replan()


def _configured_hours(lake: Lake, table_name: str) -> float:
    [parameter] = lake.sql(f"SHOW PARAMETERS LIKE '{RETENTION_PARAMETER}' IN TABLE {table_name}").select("value").collect()
    return float(parameter["value"]) * 24


def vacuum_explorer(lake: Lake, table_name: str, *, retain_hours: int | None = None) -> VacuumExplorer:
    """A :class:`VacuumExplorer` of one table: the notebook one-liner.

    Raises:
        WidgetError: the table does not exist or cannot be read (one line, nothing chained).

    Example:
        >>> from lakeclone.widgets import vacuum_explorer
        >>> vacuum_explorer(lake, "orders", retain_hours=0)        # doctest: +SKIP
    """
    return VacuumExplorer(lake, table_name, retain_hours=retain_hours)
