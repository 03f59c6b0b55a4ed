"""The version timeline: one table's Delta versions against its retention horizon.

Three layers, so that everything but the clicking is testable headless:

* :class:`TimelineData` reads ``DESCRIBE HISTORY`` and the table's
  ``DATA_RETENTION_TIME_IN_DAYS`` from a :class:`~lakeclone.Lake`, and the
  streams on the table with ``SHOW STREAMS`` (their offsets, pending changes
  and staleness; see :mod:`lakeclone.widgets.streams`).
* :func:`plot_timeline` and :func:`timeline_html` render it as a matplotlib
  figure and an HTML table: each stream's offset is a marker under the
  version it stands at, labelled with its name and pending changes.
* :class:`VersionTimeline` puts both in an ipywidgets box with a refresh button
  and a version picker, and falls back to static HTML and PNG where widgets
  cannot run (the plumbing all widgets share is in :mod:`lakeclone.widgets._live`).

Example:
    >>> from lakeclone.widgets import timeline
    >>> lake.sql("CREATE TABLE t (id INT)")          # doctest: +SKIP
    >>> timeline(lake, "t")                          # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import ipywidgets
from matplotlib import dates as mdates
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from lakeclone.widgets import _style
from lakeclone.widgets._live import LiveWidget, fit_picker, scrolling_html, sql_name
from lakeclone.widgets.streams import StreamInfo, read_streams, stream_colour, stream_state_html

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from lakeclone.lake import Lake

RETENTION_PARAMETER = "DATA_RETENTION_TIME_IN_DAYS"
"""The table parameter that sets how far back time travel reaches."""

Spacing = Literal["even", "time"]
"""How :func:`plot_timeline` spaces versions along the x axis.

``even`` gives every version the same slot, so that a burst of commits stays
readable next to a quiet week; ``time`` puts each at its commit time, so that
the distance to the horizon is true to scale.
"""

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

# Beyond this many version labels along the axis they overlap; label every
# n-th version instead (always including the current one).
_MAX_AXIS_LABELS = 30


@dataclasses.dataclass(frozen=True)
class VersionEntry:
    """One commit of a table, as ``DESCRIBE HISTORY`` reports it.

    Attributes:
        version: the Delta version the commit made.
        timestamp: commit time by the Lake's clock, timezone-aware UTC.
        operation: Delta's operation name, such as ``WRITE`` or ``MERGE``.
        user_name: who committed, when recorded.
        rows: ``numOutputRows``: rows the commit wrote (for DML this includes
            unchanged rows copied from rewritten files).
        files_added: data files the commit added.
        files_removed: data files the commit logically removed.
        bytes_added: bytes of the files added.
        bytes_removed: bytes of the files removed.
        query_id: the statement's id, for ``BEFORE(STATEMENT => '<id>')``.
        within_retention: whether time travel can still reach this version: it
            is the current one, or it was still current at the retention horizon
            or later (the next version was committed after the horizon).
        parameters: ``operationParameters``.
        metrics: ``operationMetrics``, decimal strings.
    """

    version: int
    timestamp: dt.datetime
    operation: str
    user_name: str | None
    rows: int | None
    files_added: int
    files_removed: int
    bytes_added: int
    bytes_removed: int
    query_id: str | None
    within_retention: bool
    parameters: Mapping[str, str] = dataclasses.field(default_factory=dict)
    metrics: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The operation's group, which picks its colour: ``create``, ``write``, ``update``, ..."""
        return _style.operation_kind(self.operation)

    @property
    def row_changes(self) -> str:
        """The DML row counts that are not zero, e.g. ``"2 updated, 1 deleted"``; else ``""``.

        Example:
            >>> import datetime as dt
            >>> entry = VersionEntry(3, dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "MERGE",
            ...     None, 5, 1, 1, 10, 10, None, True,
            ...     metrics={"numTargetRowsInserted": "2", "numTargetRowsUpdated": "1",
            ...              "numTargetRowsDeleted": "0"})
            >>> entry.row_changes
            '2 inserted, 1 updated'
        """
        changes = []
        # MERGE reports its counts under Delta's numTargetRows* names.
        for verb, names in (
            ("inserted", ("numInsertedRows", "numTargetRowsInserted")),
            ("updated", ("numUpdatedRows", "numTargetRowsUpdated")),
            ("deleted", ("numDeletedRows", "numTargetRowsDeleted")),
        ):
            count = sum(_int_or_none(self.metrics.get(name)) or 0 for name in names)
            if count:
                changes.append(f"{count:,} {verb}")
        return ", ".join(changes)


@dataclasses.dataclass(frozen=True)
class TimelineData:
    """A table's versions and its retention horizon, read at one moment.

    Attributes:
        table: the table name as given to :meth:`from_lake`.
        versions: every version in commit order, oldest first.
        retention_days: the table's ``DATA_RETENTION_TIME_IN_DAYS``.
        horizon: ``now - retention_days``; versions committed before it can no
            longer be time-travelled to.
        now: when the data was read, by the Lake's clock.
        streams: the streams on the table, in any schema, and those on views
            that read it, by offset and name; each one's ``offset_version`` is
            its offset on this table. A stream whose source was dropped or
            replaced is on another table, whatever its name: it is not among them.

    Example:
        >>> data = TimelineData.from_lake(lake, "t")                   # doctest: +SKIP
        >>> [(v.version, v.operation, v.within_retention) for v in data.versions]  # doctest: +SKIP
        [(0, 'CREATE TABLE', False), (1, 'WRITE', True)]
    """

    table: str
    versions: tuple[VersionEntry, ...]
    retention_days: int
    horizon: dt.datetime
    now: dt.datetime
    streams: tuple[StreamInfo, ...] = ()

    @classmethod
    def from_lake(cls, lake: Lake, table_name: str, *, streams: bool = True) -> TimelineData:
        """Read a table's history and retention, and the streams on it, from a Lake.

        Args:
            lake: the Lake holding the table.
            table_name: the table as SQL names it, e.g. ``t``, ``db.s.t`` or
                ``"My Table"``; it is put into the SQL text unchanged.
            streams: whether to read the streams on the table: ``SHOW
                STREAMS`` in every database, and ``SELECT COUNT(*)`` from each
                stream that is not stale (which moves no offset).

        Returns:
            The table's timeline as of ``lake.now()``.

        Raises:
            LakecloneError: the table does not exist, or the Lake cannot read it.
        """
        # unix_micros rather than the timestamp itself: collect() would turn a
        # timestamp into a naive datetime in the *machine's* zone.
        rows = (
            lake.sql(f"DESCRIBE HISTORY {table_name}")
            .selectExpr(
                "version",
                "unix_micros(timestamp) AS commit_micros",
                "userName",
                "operation",
                "operationParameters",
                "operationMetrics",
                "queryId",
            )
            .collect()
        )
        [parameter] = lake.sql(f"SHOW PARAMETERS LIKE '{RETENTION_PARAMETER}' IN TABLE {table_name}").select("value").collect()
        retention_days = int(parameter["value"])
        on_table = _streams_on(lake, table_name) if streams else ()
        # Read after the history, so that "now" is not older than any commit.
        now = lake.now().astimezone(dt.timezone.utc)
        horizon = now - dt.timedelta(days=retention_days)

        ordered = sorted(rows, key=lambda r: r["version"])
        # A version is readable until the next one replaces it, so what decides
        # is when its successor was committed; the newest is always readable.
        replaced_at = [_EPOCH + dt.timedelta(microseconds=later["commit_micros"]) for later in ordered[1:]] + [None]
        versions = []
        for row, successor in zip(ordered, replaced_at, strict=True):
            timestamp = _EPOCH + dt.timedelta(microseconds=row["commit_micros"])
            metrics = dict(row["operationMetrics"] or {})
            versions.append(
                VersionEntry(
                    version=row["version"],
                    timestamp=timestamp,
                    operation=row["operation"],
                    user_name=row["userName"],
                    rows=_int_or_none(metrics.get("numOutputRows")),
                    files_added=_first_metric(metrics, FILES_ADDED),
                    files_removed=_first_metric(metrics, FILES_REMOVED),
                    bytes_added=_first_metric(metrics, BYTES_ADDED),
                    bytes_removed=_first_metric(metrics, BYTES_REMOVED),
                    query_id=row["queryId"],
                    within_retention=successor is None or successor >= horizon,
                    parameters=dict(row["operationParameters"] or {}),
                    metrics=metrics,
                )
            )
        return cls(
            table=table_name,
            versions=tuple(versions),
            retention_days=retention_days,
            horizon=horizon,
            now=now,
            streams=on_table,
        )

    @property
    def current(self) -> VersionEntry:
        """The newest version: what a query without time travel reads."""
        return self.versions[-1]

    def entry(self, version: int) -> VersionEntry:
        """The entry of one version.

        Raises:
            KeyError: the table has no such version.
        """
        for entry in self.versions:
            if entry.version == version:
                return entry
        raise KeyError(f"{self.table} has no version {version}")

    def streams_at(self, version: int) -> tuple[StreamInfo, ...]:
        """The streams whose offset is ``version``: their pending changes are the ones after it."""
        return tuple(s for s in self.streams if s.offset_version == version)

    @property
    def stale_streams(self) -> tuple[StreamInfo, ...]:
        """The streams on the table that are stale."""
        return tuple(s for s in self.streams if s.stale)

    def _repr_html_(self) -> str:
        return timeline_html(self)


def _streams_on(lake: Lake, table_name: str) -> tuple[StreamInfo, ...]:
    """The streams on a table, from ``SHOW STREAMS`` in every database: a stream may live in any schema."""
    [detail] = lake.sql(f"DESCRIBE DETAIL {table_name}").select("name").collect()
    qualified = str(detail["name"])  # as SHOW STREAMS names the table a stream is on
    databases = [row["name"] for row in lake.sql("SHOW DATABASES").select("name").collect()]
    found = [
        # A stream on a view has an offset on each table the view reads: this one's is the one on the axis.
        dataclasses.replace(stream, offset_version=stream.offset_on(qualified))
        for database in databases
        for stream in read_streams(lake, f"SHOW STREAMS IN DATABASE {sql_name(database)}", table=qualified)
        # Without a STALE_AFTER the stream's table was dropped or replaced: it
        # is on an old table of that name, not on this one.
        if not stream.source_gone
    ]
    return tuple(sorted(found, key=lambda s: (s.offset_version if s.offset_version is not None else -1, s.qualified)))


def _int_or_none(text: str | None) -> int | None:
    return None if text is None else int(text)


# Each Delta operation names its file metrics its own way: WRITE and CTAS
# (numFiles, numOutputBytes), UPDATE/DELETE/OPTIMIZE (numAddedFiles...), MERGE
# (numTargetFilesAdded...), CLONE (sourceNumOfFiles: the files the clone's
# first version reads). Metadata-only commits have none: they touched no files.
FILES_ADDED = ("numAddedFiles", "numTargetFilesAdded", "numFiles", "sourceNumOfFiles")
FILES_REMOVED = ("numRemovedFiles", "numTargetFilesRemoved")
BYTES_ADDED = ("numAddedBytes", "numTargetBytesAdded", "numOutputBytes", "sourceTableSize")
BYTES_REMOVED = ("numRemovedBytes", "numTargetBytesRemoved", "removedFilesSize")


def _first_metric(metrics: dict[str, str], names: tuple[str, ...]) -> int:
    """The first of ``names`` the commit's metrics hold, as an int; 0 when none."""
    for name in names:
        if name in metrics:
            return int(metrics[name])
    return 0


def plot_timeline(data: TimelineData, ax: Axes | None = None, *, spacing: Spacing = "even") -> Figure:
    """Draw a table's versions along a time axis, with the retention horizon.

    Each version is a marker on the baseline, coloured by operation kind;
    files added rise above it and files removed hang below. The dashed line
    is the retention horizon, and the shaded region left of it holds the
    versions that time travel can no longer reach (drawn faded).

    Under the versions, one lane per stream on the table: a diamond under the
    version the stream's offset stands at, labelled with its name and pending
    changes, and a band from there to the current version (the changes a
    consuming statement would read). A stale stream is a cross in the error
    colour, with no band; the legend gives each stream's STALE_AFTER.

    Artists carry gids for finding them again: ``versions`` (the markers),
    ``files-added`` and ``files-removed`` (the bars), ``version-label``,
    ``retention-horizon``, ``expired-region`` and, on a time scale, ``now``;
    ``stream-offset`` and ``stale-stream-offset`` (one marker per stream,
    its url the stream's qualified name), ``stream-label``, ``stream-pending``
    (the bands) and ``stream-lane`` (the line above the lanes).

    Args:
        data: what to draw.
        ax: axes to draw into; by default a new figure of its own. No pyplot
            state is touched either way, so this is safe in headless processes
            and leaks no figures.
        spacing: ``even`` (one slot per version, commit times as tick labels)
            or ``time`` (true-to-scale commit times). See :data:`Spacing`.

    Returns:
        The figure holding the axes.

    Raises:
        ValueError: ``spacing`` is neither ``even`` nor ``time``.

    Example:
        >>> figure = plot_timeline(TimelineData.from_lake(lake, "t"))   # doctest: +SKIP
        >>> figure.savefig("timeline.png")                              # doctest: +SKIP
    """
    layout = _XLayout.of(data, spacing)
    drawn = _drawn_streams(data)
    if ax is None:
        width = min(max(7.0, 0.55 * len(data.versions) + 4.5), 16.0)
        figure = Figure(figsize=(width, 3.8 + 0.3 * len(drawn)), layout="constrained")
        ax = figure.add_subplot()
    else:
        # The root figure even when ax sits in a SubFigure (`ax.figure` alone
        # would be the SubFigure, which cannot be saved).
        figure = ax.figure.figure

    labelled = _draw_versions(ax, data, layout)
    _draw_horizon(ax, data, layout)
    if spacing == "even":
        ax.set_xticks(
            [layout.positions[i] for i in labelled],
            labels=[_tick_label(data.versions[i].timestamp) for i in labelled],
        )
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel("commit time (UTC), one slot per version")
    else:
        locator = mdates.AutoDateLocator(tz=dt.timezone.utc)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=dt.timezone.utc))
        ax.set_xlabel("commit time (UTC)")
    ax.set_xlim(layout.left, layout.right)

    tallest = max([1] + [max(v.files_added, v.files_removed) for v in data.versions])
    # Symmetric, with headroom for the version labels above the tallest bar.
    ax.set_ylim(-1.35 * tallest, 1.35 * tallest)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, symmetric=True))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{abs(value):g}"))
    ax.set_ylabel("files  ↑ added  ↓ removed")
    ax.spines[["top", "right"]].set_visible(False)
    if drawn:
        _draw_streams(ax, data, layout, drawn, tallest)
    ax.set_title(
        f"{data.table}: {len(data.versions)} {'version' if len(data.versions) == 1 else 'versions'}, "
        f"current v{data.current.version}, "
        f"retention {_style.format_days(data.retention_days)}{_streams_phrase(data)}",
        fontsize=10,
        loc="left",
    )
    ax.legend(handles=_legend_handles(data), loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figure


@dataclasses.dataclass(frozen=True)
class _XLayout:
    """Where versions, the horizon and the axis ends go along x."""

    positions: list[float]
    horizon: float
    left: float
    right: float
    bar_width: float
    now: float | None  # drawn only on a time scale; evenly spaced slots have no place for it

    @classmethod
    def of(cls, data: TimelineData, spacing: Spacing) -> _XLayout:
        versions = data.versions
        if spacing == "even":
            first_within = next((i for i, v in enumerate(versions) if v.within_retention), len(versions))
            # On evenly spaced slots the horizon's place is between the last
            # expired version and the first one within retention.
            return cls(
                positions=[float(i) for i in range(len(versions))],
                horizon=first_within - 0.5,
                left=-0.8,
                right=len(versions) - 0.2,
                bar_width=0.6,
                now=None,
            )
        if spacing == "time":
            positions = [mdates.date2num(v.timestamp) for v in versions]
            horizon = mdates.date2num(data.horizon)
            now = mdates.date2num(data.now)
            first, last = min(horizon, positions[0]), max(now, positions[-1])
            margin = 0.05 * (last - first or 1.0)
            return cls(
                positions=positions,
                horizon=horizon,
                left=first - margin,
                right=last + margin,
                bar_width=0.4 * (last - first or 1.0) / max(len(versions), 10),
                now=now,
            )
        raise ValueError(f"spacing must be 'even' or 'time', not {spacing!r}")


def _faded(entry: VersionEntry) -> float:
    return 1.0 if entry.within_retention else _style.EXPIRED_OPACITY


def _draw_versions(ax: Axes, data: TimelineData, layout: _XLayout) -> list[int]:
    """Draw markers, file bars and version labels; return the indexes that got a label."""
    versions = data.versions
    xs = layout.positions
    ax.axhline(0, color=_style.HORIZON_COLOUR, lw=0.8, zorder=1)
    for gid, colour, heights in (
        ("files-added", _style.FILES_ADDED_COLOUR, [v.files_added for v in versions]),
        ("files-removed", _style.FILES_REMOVED_COLOUR, [-v.files_removed for v in versions]),
    ):
        bars = ax.bar(xs, heights, layout.bar_width, color=colour, zorder=2)
        for bar, entry in zip(bars, versions, strict=True):
            bar.set_gid(gid)
            bar.set_alpha(_faded(entry))
    ax.scatter(
        xs,
        [0] * len(versions),
        s=90,
        c=[to_rgba(_style.KIND_COLOURS[v.kind], _faded(v)) for v in versions],
        edgecolors=[to_rgba(_style.MARKER_EDGE_COLOUR, _faded(v)) for v in versions],
        linewidths=0.8,
        zorder=3,
        gid="versions",
    )
    stride = math.ceil(len(versions) / _MAX_AXIS_LABELS)
    labelled = [i for i in range(len(versions)) if (len(versions) - 1 - i) % stride == 0]
    for i in labelled:
        ax.annotate(
            f"v{versions[i].version}",
            (xs[i], versions[i].files_added),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
            alpha=_faded(versions[i]),
            gid="version-label",
        )
    return labelled


def _draw_horizon(ax: Axes, data: TimelineData, layout: _XLayout) -> None:
    if layout.horizon > layout.left:
        ax.axvspan(layout.left, layout.horizon, color=_style.EXPIRED_SHADE, alpha=0.15, lw=0, gid="expired-region")
    ax.axvline(layout.horizon, color=_style.HORIZON_COLOUR, linestyle="--", lw=1.2, zorder=4, gid="retention-horizon")
    # Label the horizon on the side with more room, so that it stays clear of
    # the newest versions' labels when few versions are within retention.
    on_left = layout.horizon - layout.left > layout.right - layout.horizon
    when = _style.format_timestamp(data.horizon)
    ax.text(
        layout.horizon,
        0.98,
        f"retention horizon \n{when} " if on_left else f" retention horizon\n {when}",
        transform=ax.get_xaxis_transform(),
        ha="right" if on_left else "left",
        va="top",
        fontsize=7.5,
        color=_style.HORIZON_COLOUR,
    )
    if layout.now is not None:
        ax.axvline(layout.now, color=_style.HORIZON_COLOUR, linestyle=":", lw=1, gid="now")
        ax.text(
            layout.now,
            1.0,
            "now",
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=7.5,
            color=_style.HORIZON_COLOUR,
        )


def _streams_phrase(data: TimelineData) -> str:
    """``, 2 streams (1 stale)`` for titles and headers; empty without streams."""
    if not data.streams:
        return ""
    count = len(data.streams)
    return f", {count} {'stream' if count == 1 else 'streams'} ({len(data.stale_streams)} stale)"


def _drawn_streams(data: TimelineData) -> list[StreamInfo]:
    """The streams whose offset is a version on the axis, in lane order."""
    versions = {v.version for v in data.versions}
    return [s for s in data.streams if s.offset_version in versions]


# Lanes of stream offsets under the versions, in multiples of the tallest bar.
_LANE_HEIGHT = 0.45


def _draw_streams(ax: Axes, data: TimelineData, layout: _XLayout, drawn: list[StreamInfo], tallest: int) -> None:
    """One lane per stream under the versions: its offset, its label, and its pending band."""
    index = {v.version: i for i, v in enumerate(data.versions)}
    top = -1.35 * tallest
    lane = _LANE_HEIGHT * tallest
    current_x = layout.positions[-1]
    middle = (layout.left + layout.right) / 2
    ax.axhline(top, color=_style.EXPIRED_SHADE, lw=0.6, zorder=1, gid="stream-lane")
    for k, stream in enumerate(drawn):
        assert stream.offset_version is not None  # _drawn_streams keeps only those on the axis
        x = layout.positions[index[stream.offset_version]]
        y = top - (k + 0.7) * lane
        colour = stream_colour(stream)
        ax.plot([x, x], [y, 0], color=colour, lw=0.7, linestyle=":", alpha=0.7, zorder=1.5)
        if not stream.stale and current_x > x:
            ax.plot(
                [x, current_x],
                [y, y],
                color=colour,
                lw=4,
                alpha=0.3,
                solid_capstyle="butt",
                zorder=2,
                gid="stream-pending",
            )
        marker = ax.scatter(
            [x],
            [y],
            s=60,
            marker=_style.STALE_STREAM_MARKER if stream.stale else _style.STREAM_MARKER,
            c=[colour],
            edgecolors=_style.MARKER_EDGE_COLOUR,
            linewidths=0.6,
            zorder=5,
            gid="stale-stream-offset" if stream.stale else "stream-offset",
        )
        marker.set_url(stream.qualified)
        # Labels point into the plot, so that they stay clear of the legend on the right.
        on_left = x > middle
        ax.annotate(
            stream.summary,
            (x, y),
            xytext=(-8 if on_left else 8, 0),
            textcoords="offset points",
            ha="right" if on_left else "left",
            va="center",
            fontsize=7.5,
            color=colour,
            gid="stream-label",
        )
    # The lanes below the files: keep the file axis's ticks on the files only.
    ticks = MaxNLocator(integer=True, symmetric=True).tick_values(-1.35 * tallest, 1.35 * tallest)
    ax.set_yticks([t for t in ticks if abs(t) <= 1.35 * tallest])
    ax.set_ylim(top - (len(drawn) + 0.3) * lane, 1.35 * tallest)


def _tick_label(timestamp: dt.datetime) -> str:
    day, _, time = _style.format_timestamp(timestamp).removesuffix(" UTC").partition(" ")
    return f"{day}\n{time}"


def _legend_handles(data: TimelineData) -> list[Any]:
    kinds_present = {v.kind for v in data.versions}
    handles: list[Any] = [
        Line2D(
            [],
            [],
            linestyle="",
            marker="o",
            markersize=8,
            markerfacecolor=colour,
            markeredgecolor=_style.MARKER_EDGE_COLOUR,
            label=_style.KIND_LABELS[kind],
        )
        for kind, colour in _style.KIND_COLOURS.items()
        if kind in kinds_present
    ]
    handles += [
        Patch(color=_style.FILES_ADDED_COLOUR, label="files added"),
        Patch(color=_style.FILES_REMOVED_COLOUR, label="files removed"),
        Line2D([], [], color=_style.HORIZON_COLOUR, linestyle="--", label="retention horizon"),
        Patch(color=_style.EXPIRED_SHADE, alpha=0.15, label="beyond time travel"),
    ]
    drawn = _drawn_streams(data)
    # The band is drawn for live streams with changes after their offset (see _draw_streams).
    if any(not s.stale and s.offset_version != data.current.version for s in drawn):
        handles.append(Line2D([], [], color=_style.STREAM_COLOUR, lw=4, alpha=0.3, label="stream: changes pending"))
    # Each stream's STALE_AFTER: when it goes stale unless consumed.
    for stream in drawn:
        if stream.stale:
            when = f"stale since {_style.format_timestamp(stream.stale_after)}" if stream.stale_after else "stale"
        else:
            when = f"stale after {_style.format_timestamp(stream.stale_after)}" if stream.stale_after else ""
        handles.append(
            Line2D(
                [],
                [],
                linestyle="",
                marker=_style.STALE_STREAM_MARKER if stream.stale else _style.STREAM_MARKER,
                markersize=7,
                markerfacecolor=stream_colour(stream),
                markeredgecolor=_style.MARKER_EDGE_COLOUR,
                label=f"{stream.name}: {when}",
            )
        )
    return handles


def timeline_html(data: TimelineData, *, selected_version: int | None = None) -> str:
    """The versions as an HTML table, newest first, like ``DESCRIBE HISTORY``.

    Versions beyond the retention horizon are faded, and the selected version
    (if any) is highlighted. When the table has streams, a ``streams`` column
    names those whose offset each version is, with their pending changes and
    STALE_AFTER (or that they are stale).

    Args:
        data: what to show.
        selected_version: the version to highlight.

    Returns:
        A ``<table>`` element with one body row per version.

    Example:
        >>> html = timeline_html(TimelineData.from_lake(lake, "t"))    # doctest: +SKIP
        >>> html.count("<tr") - 1 == len(data.versions)                # doctest: +SKIP
        True
    """
    rows = []
    styles = []
    for entry in reversed(data.versions):
        age = _style.format_age(data.now - entry.timestamp)
        rows_cell = _style.format_count(entry.rows)
        if entry.row_changes:
            rows_cell += f" <small>({html.escape(entry.row_changes)})</small>"
        rows.append(
            [
                f"v{entry.version}",
                f'<span title="{age} ago">{_style.format_timestamp(entry.timestamp)}</span>',
                _style.colour_swatch(_style.KIND_COLOURS[entry.kind]) + html.escape(entry.operation),
                rows_cell,
                f"+{entry.files_added:,}",
                f"−{entry.files_removed:,}",
                "within" if entry.within_retention else "expired",
                *([";<br>".join(stream_state_html(s, data.now) for s in data.streams_at(entry.version))] if data.streams else []),
                _short_query_id_html(entry.query_id),
            ]
        )
        style = "" if entry.within_retention else f"opacity:{_style.EXPIRED_OPACITY};"
        if entry.version == selected_version:
            style += "font-weight:bold;background:rgba(86,180,233,0.18);"
        styles.append(style)
    columns = ["version", "committed", "operation", "rows", "+files", "−files", "retention"]
    columns += ["streams"] if data.streams else []
    columns += ["query id"]
    return _style.html_table(
        columns,
        rows,
        row_styles=styles,
        numeric_columns=[3, 4, 5],
    )


# How many characters of a query id the table shows: the full id is in its tooltip and the version's details.
QUERY_ID_SHOWN = 8


def _short_query_id_html(query_id: str | None) -> str:
    """A query id's first characters, the whole id on hover."""
    if not query_id:
        return ""
    shown = html.escape(query_id[:QUERY_ID_SHOWN]) + ("…" if len(query_id) > QUERY_ID_SHOWN else "")
    return f'<code title="{html.escape(query_id, quote=True)}">{shown}</code>'


def _header_html(data: TimelineData | None, table_name: str) -> str:
    table = html.escape(table_name)
    if data is None:
        return f"<b>{table}</b> · version timeline"
    return (
        f"<b>{table}</b> · current version <b>v{data.current.version}</b> · "
        f"{len(data.versions)} {'version' if len(data.versions) == 1 else 'versions'} · "
        f"retention {_style.format_days(data.retention_days)}: "
        f"time travel reaches back to {_style.format_timestamp(data.horizon)}"
        f"{_streams_header(data)} "
        f"<small>(as of {_style.format_timestamp(data.now)})</small>"
    )


def _streams_header(data: TimelineData) -> str:
    """`` · streams: S at v2 (3 pending), T at v1 (stale)`` for the header; empty without streams."""
    if not data.streams:
        return ""
    parts = []
    for stream in data.streams:
        at = f" at v{stream.offset_version}" if stream.offset_version is not None else ""
        state = "stale" if stream.stale else ("unreadable" if stream.pending is None else f"{stream.pending:,} pending")
        parts.append(f"<b>{html.escape(stream.name)}</b>{at} ({state})")
    return " · streams: " + ", ".join(parts)


def _details_html(entry: VersionEntry, data: TimelineData) -> str:
    here = data.streams_at(entry.version)
    offsets = "<div>Stream offsets here: " + "; ".join(stream_state_html(s, data.now) for s in here) + "</div>" if here else ""
    summary = (
        f"<b>v{entry.version}</b> · {html.escape(entry.operation)} · "
        f"{_style.format_timestamp(entry.timestamp)} · "
        f"{html.escape(entry.user_name or 'unknown user')} · "
        f"+{_style.format_bytes(entry.bytes_added)} / −{_style.format_bytes(entry.bytes_removed)}"
    )
    # In full, to copy into BEFORE(STATEMENT => '<id>').
    statement = f"<div>query id <code>{html.escape(entry.query_id)}</code></div>" if entry.query_id else ""
    return (
        f"<div>{summary}</div>{statement}{offsets}"
        '<div style="display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start;">'
        f"<div>{_style.key_value_table('operationParameters', entry.parameters)}</div>"
        f"<div>{_style.key_value_table('operationMetrics', entry.metrics)}</div>"
        "</div>"
    )


class VersionTimeline(LiveWidget[TimelineData]):
    """A live timeline of one table's versions, for notebooks.

    Shows a header (table, current version, retention, the streams on it), a
    refresh button, a version picker with the picked version's
    operationParameters and operationMetrics (and the streams whose offset it
    is), the versions as an HTML table, and :func:`plot_timeline`'s figure.
    Where widgets cannot run (nbval, GitHub, PDF exports) it renders as
    static HTML and PNG instead.

    When a refresh fails (the table was dropped, say), the widget says so in
    its status line and shows no versions until a refresh succeeds; see
    :class:`~lakeclone.widgets._live.LiveWidget`.

    Args:
        lake: the Lake holding the table.
        table_name: the table as SQL names it.
        spacing: how the figure spaces versions; see :data:`Spacing`.

    Attributes:
        data: the :class:`TimelineData` on show; None in the error state.
        error: what the last refresh could not read, or None.
        header: the header line (``ipywidgets.HTML``).
        status: what failed, if anything (``HTML``).
        refresh_button: reloads from the lake.
        version_picker: a ``Dropdown`` of versions, newest first.
        details: the picked version's parameters and metrics (``HTML``).
        table: the versions table (``HTML``).
        plot: the figure, as a PNG in an ``Output``.

    Raises:
        WidgetError: the table cannot be read (one line, nothing chained).

    Example:
        >>> widget = VersionTimeline(lake, "t")     # doctest: +SKIP
        >>> widget                                  # doctest: +SKIP
        >>> widget.selected_version = 2             # doctest: +SKIP
    """

    kind = "version timeline"
    refresh_tooltip = "Reload the history from the lake"

    def __init__(self, lake: Lake, table_name: str, *, spacing: Spacing = "even") -> None:
        if spacing not in ("even", "time"):
            raise ValueError(f"spacing must be 'even' or 'time', not {spacing!r}")
        self._spacing: Spacing = spacing
        super().__init__(lake, table_name)

    @property
    def selected_version(self) -> int | None:
        """The version whose details are shown (None in the error state); set it to pick another."""
        value = self.version_picker.value
        return None if value is None else int(value)

    @selected_version.setter
    def selected_version(self, version: int) -> None:
        if self.data is None:
            raise ValueError(f"no {self.kind} on show: {self.error}")
        self.data.entry(version)  # a KeyError here beats the Dropdown's TraitError
        self.version_picker.value = version

    # LiveWidget --------------------------------------------------------------------

    def _read(self) -> TimelineData:
        return TimelineData.from_lake(self._lake, self._table_name)

    def _plot(self, data: TimelineData) -> Figure:
        return plot_timeline(data, spacing=self._spacing)

    def _header_html(self, data: TimelineData | None) -> str:
        return _header_html(data, self._table_name)

    def _static_html(self, data: TimelineData) -> str:
        return timeline_html(data)

    def _children(self) -> list[ipywidgets.Widget]:
        self.version_picker = ipywidgets.Dropdown(description="Version")
        self.details = scrolling_html()
        self.version_picker.observe(self._on_version_picked, names="value")
        return [
            ipywidgets.HBox([self.refresh_button, self.version_picker]),
            self.details,
            self.table,
            self.plot,
        ]

    def _render(self, data: TimelineData) -> None:
        kept = self.version_picker.value
        versions = [v.version for v in data.versions]
        options = [
            (f"v{v.version} · {v.operation} · {_style.format_timestamp(v.timestamp)}", v.version) for v in reversed(data.versions)
        ]
        with self._quietly():
            self.version_picker.options = options
            self.version_picker.value = kept if kept in versions else data.current.version
        self.version_picker.disabled = False
        fit_picker(self.version_picker, [label for label, _ in options])
        self._show_selection()

    def _clear(self) -> None:
        self.version_picker.options = []
        self.version_picker.disabled = True
        self.details.value = ""

    def _show_selection(self) -> None:
        if self.data is None or self.version_picker.value is None:
            return
        selected = self.version_picker.value
        self.details.value = _details_html(self.data.entry(selected), self.data)
        self.table.value = timeline_html(self.data, selected_version=selected)

    def _on_version_picked(self, _change: Mapping[str, Any]) -> None:
        if not self._syncing:
            self._show_selection()


def timeline(lake: Lake, table_name: str, *, spacing: Spacing = "even") -> VersionTimeline:
    """A :class:`VersionTimeline` of one table: the notebook one-liner.

    Args:
        lake: the Lake holding the table.
        table_name: the table as SQL names it.
        spacing: how the figure spaces versions; see :data:`Spacing`.

    Returns:
        The widget; leave it last in a cell to show it.

    Raises:
        WidgetError: the table does not exist or cannot be read (one line, nothing chained).

    Example:
        >>> import lakeclone
        >>> from lakeclone.widgets import timeline
        >>> lake = lakeclone.connect()                 # doctest: +SKIP
        >>> timeline(lake, "orders")                   # doctest: +SKIP
    """
    return VersionTimeline(lake, table_name, spacing=spacing)
