"""The streams of a schema: each stream's offset, its pending changes and its staleness.

Three layers, as in :mod:`lakeclone.widgets.timeline`:

* :class:`StreamInfo` is one stream as ``SHOW STREAMS`` reports it, with its
  pending changes: ``SELECT COUNT(*)`` from the stream, which never moves its
  offset (only a consuming DML statement does). A stale stream cannot be
  read, so it has no count. :func:`read_streams` reads them through SQL;
  :class:`StreamsData` holds a schema's, and the version timeline reads the
  streams on its table with the same function.
* :func:`plot_streams` and :func:`streams_html` render a schema's streams as a
  matplotlib figure (how long each may still go unconsumed) and an HTML table.
* :class:`StreamsWidget` puts both in an ipywidgets box with a refresh button,
  and falls back to static HTML and PNG where widgets cannot run (the
  plumbing all widgets share is in :mod:`lakeclone.widgets._live`).

Example:
    >>> from lakeclone.widgets import streams
    >>> lake.sql("CREATE STREAM s ON TABLE t")       # doctest: +SKIP
    >>> streams(lake)                                # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import re
from typing import TYPE_CHECKING, Any

import ipywidgets
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from lakeclone.errors import LakecloneError, SqlCompilationError, WidgetError
from lakeclone.widgets import _style
from lakeclone.widgets._live import LiveWidget, one_line, sql_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from lakeclone.lake import Lake

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@dataclasses.dataclass(frozen=True)
class StreamInfo:
    """One stream, as ``SHOW STREAMS`` reports it, and how many changes it holds.

    Attributes:
        name: the stream's name, e.g. ``RAW_CHANGES``.
        database: its database.
        schema: its schema.
        table: its source's qualified name (``table_name``): a table, or a
            view (see :attr:`source_type`).
        mode: ``DEFAULT`` or ``APPEND_ONLY``.
        offset_version: the source table's version the stream's changes start
            after (``offset_version``); None if it has no single one (a view
            over several tables). In :class:`~lakeclone.widgets.timeline.TimelineData`,
            the offset on the timeline's table.
        offsets: every base table's offset, ``DB.S.T@version, …`` (``offsets``).
        pending: the rows ``SELECT COUNT(*) FROM`` the stream returns: its net
            changes waiting to be consumed (an update counts twice, as its
            DELETE and INSERT). None when the stream could not be read
            (it is stale, or see :attr:`unreadable`).
        stale: whether the stream is stale: it cannot be read any more, only
            recreated.
        stale_after: when it goes (or went) stale unless consumed first
            (``STALE_AFTER``); None once its source table is dropped or replaced.
        invalid_reason: why it is stale, or None.
        created_on: when it was created, by the Lake's clock.
        comment: its comment.
        unreadable: the error counting its changes gave although it is not
            stale, on one line; None when it could be read (or is stale).
        source_type: ``Table`` or ``View`` (``source_type``).
    """

    name: str
    database: str
    schema: str
    table: str
    mode: str
    offset_version: int | None
    offsets: str
    pending: int | None
    stale: bool
    stale_after: dt.datetime | None
    invalid_reason: str | None
    created_on: dt.datetime
    comment: str = ""
    unreadable: str | None = None
    source_type: str = "Table"

    @property
    def qualified(self) -> str:
        """``DATABASE.SCHEMA.NAME``."""
        return f"{self.database}.{self.schema}.{self.name}"

    def offset_on(self, table: str) -> int | None:
        """Its offset on one of its base tables (a qualified name), read from :attr:`offsets`; None if not on it.

        Example:
            >>> info = StreamInfo("S", "D", "P", "D.P.V", "DEFAULT", None, "D.P.A@3, D.P.B@7", 0, False, None,
            ...     None, dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), source_type="View")
            >>> info.offset_on("D.P.B"), info.offset_on("D.P.C")
            (7, None)
        """
        found = re.search(rf"(?:^|, ){re.escape(table)}@(\d+)(?=,|$)", self.offsets)
        return None if found is None else int(found.group(1))

    @property
    def source_gone(self) -> bool:
        """Whether its source table was dropped or replaced: then ``SHOW STREAMS`` gives no STALE_AFTER."""
        return self.stale_after is None

    @property
    def summary(self) -> str:
        """The stream in a few words: ``RAW_CHANGES · 3 pending``, or ``… · stale``."""
        if self.stale:
            return f"{self.name} · stale"
        if self.pending is None:
            return f"{self.name} · unreadable"
        return f"{self.name} · {self.pending:,} pending"


def read_streams(lake: Lake, show: str, *, table: str | None = None) -> tuple[StreamInfo, ...]:
    """The streams a ``SHOW STREAMS …`` statement lists, with their pending changes.

    Args:
        lake: the Lake to ask.
        show: the ``SHOW STREAMS`` statement, e.g. ``SHOW STREAMS IN SCHEMA s``.
        table: only the streams on this table (its qualified name, as
            ``SHOW STREAMS`` gives it): on it, or on a view that reads it.

    Returns:
        The streams by database, schema and name. Each is counted with
        ``SELECT COUNT(*)``, which never moves its offset; a stale one is not.

    Raises:
        LakecloneError: the SHOW statement fails (its schema does not exist, say).
    """
    frame = lake.sql(show)
    if table is not None:
        # A close enough filter for Spark; offset_on() decides.
        frame = frame.where((frame["table_name"] == table) | frame["base_tables"].contains(table))
    # unix_micros rather than the timestamps: collect() would turn them into
    # naive datetimes in the machine's zone.
    rows = frame.selectExpr(
        "name",
        "database_name",
        "schema_name",
        "table_name",
        "mode",
        "offset_version",
        "offsets",
        "stale",
        "unix_micros(stale_after) AS stale_after_micros",
        "invalid_reason",
        "unix_micros(created_on) AS created_micros",
        "comment",
        "source_type",
    ).collect()
    streams = []
    for row in sorted(rows, key=lambda r: (r["database_name"], r["schema_name"], r["name"])):
        stale = row["stale"] == "true"
        qualified = f"{row['database_name']}.{row['schema_name']}.{row['name']}"
        pending: int | None = None
        unreadable = None
        if not stale:
            try:
                pending = int(lake.sql(f"SELECT COUNT(*) FROM {sql_name(qualified)}").collect()[0][0])
            except LakecloneError as error:
                unreadable = one_line(error)
        micros = row["stale_after_micros"]
        reason = row["invalid_reason"]
        streams.append(
            StreamInfo(
                name=row["name"],
                database=row["database_name"],
                schema=row["schema_name"],
                table=row["table_name"],
                mode=row["mode"],
                offset_version=row["offset_version"],
                offsets=row["offsets"],
                pending=pending,
                stale=stale,
                stale_after=None if micros is None else _EPOCH + dt.timedelta(microseconds=micros),
                invalid_reason=None if reason in (None, "", "N/A") else reason,
                created_on=_EPOCH + dt.timedelta(microseconds=row["created_micros"]),
                comment=row["comment"] or "",
                unreadable=unreadable,
                source_type=row["source_type"],
            )
        )
    if table is not None:
        streams = [stream for stream in streams if stream.offset_on(table) is not None]
    return tuple(streams)


def current_schema(lake: Lake) -> str:
    """The Lake's current schema as ``DATABASE.SCHEMA``.

    Raises:
        SqlCompilationError: the session has no current schema.
    """
    database, schema = lake.current_database, lake.current_schema
    if not database or not schema:
        raise SqlCompilationError("This session does not have a current schema. Call 'USE SCHEMA', or name the schema.")
    return f"{database}.{schema}"


def schema_to_show(lake: Lake, schema: str | None, kind: str) -> str:
    """The schema a schema widget shows: ``schema``, else the Lake's current one.

    Raises:
        WidgetError: no schema is named and the session has none, saying which widget cannot be shown.
    """
    if schema is not None:
        return schema
    try:
        return sql_name(current_schema(lake))
    except LakecloneError as error:
        raise WidgetError(f"Cannot show the {kind}: {one_line(error)}") from None


@dataclasses.dataclass(frozen=True)
class StreamsData:
    """A schema's streams, read at one moment.

    Attributes:
        schema: the schema as given to :meth:`from_lake` (its SQL text), or
            the current one as ``DATABASE.SCHEMA``.
        streams: its streams by name.
        now: when they were read, by the Lake's clock.

    Example:
        >>> data = StreamsData.from_lake(lake, "public")            # doctest: +SKIP
        >>> [(s.name, s.pending, s.stale) for s in data.streams]    # doctest: +SKIP
        [('RAW_CHANGES', 3, False)]
    """

    schema: str
    streams: tuple[StreamInfo, ...]
    now: dt.datetime

    @classmethod
    def from_lake(cls, lake: Lake, schema: str | None = None) -> StreamsData:
        """Read a schema's streams with ``SHOW STREAMS IN SCHEMA`` and count their changes.

        Args:
            lake: the Lake holding the schema.
            schema: the schema as SQL names it (``s``, ``db.s``); it is put
                into the SQL text unchanged. By default the current schema.

        Raises:
            LakecloneError: the schema does not exist, or there is no current one.
        """
        name = schema if schema is not None else sql_name(current_schema(lake))
        found = read_streams(lake, f"SHOW STREAMS IN SCHEMA {name}")
        # Read after the streams, so that "now" is not older than what they say.
        return cls(schema=name, streams=found, now=lake.now().astimezone(dt.timezone.utc))

    @property
    def stale(self) -> tuple[StreamInfo, ...]:
        """The stale streams."""
        return tuple(s for s in self.streams if s.stale)

    def stream(self, name: str) -> StreamInfo:
        """A stream by name (``RAW_CHANGES``) or qualified name.

        Raises:
            KeyError: no such stream in the schema.
        """
        for info in self.streams:
            if name in (info.name, info.qualified):
                return info
        raise KeyError(f"no stream {name} in {self.schema}")

    def _repr_html_(self) -> str:
        return streams_html(self)


def days_left(stream: StreamInfo, now: dt.datetime) -> float | None:
    """Days from ``now`` until ``stream`` goes stale; negative once it is; None if its source is gone."""
    if stream.stale_after is None:
        return None
    return (stream.stale_after - now) / dt.timedelta(days=1)


def stream_colour(stream: StreamInfo) -> str:
    """The colour of a stream's marks: the error colour when stale."""
    return _style.STALE_STREAM_COLOUR if stream.stale else _style.STREAM_COLOUR


def stream_state_html(stream: StreamInfo, now: dt.datetime) -> str:
    """A stream's pending changes and STALE_AFTER as HTML, e.g. for a cell of the version timeline."""
    name = f"<b>{html.escape(stream.name)}</b>"
    if stream.stale:
        since = f" since {_style.format_timestamp(stream.stale_after)}" if stream.stale_after is not None else ""
        return f'{name}: <span style="color:{_style.STALE_STREAM_COLOUR};"><b>stale</b>{since}</span>'
    pending = "unreadable" if stream.pending is None else f"{stream.pending:,} pending"
    after = f", stale after {_style.format_deadline(stream.stale_after, now)}" if stream.stale_after is not None else ""
    return f"{name}: {pending}{after}"


# plot_streams -------------------------------------------------------------------------


def plot_streams(data: StreamsData, ax: Axes | None = None) -> Figure:
    """Draw how long each stream may still go unconsumed, with its pending changes.

    One row per stream, in the table's order: a bar from now to its
    STALE_AFTER (to the right while it is live), or from its STALE_AFTER to
    now in the stale colour, hatched, once it is stale. The label beside it
    gives its offset version and its pending changes.

    Artists carry gids: ``time-left`` (the bars), ``stream-label`` (the
    labels) and ``now`` (the dotted line at 0).

    Args:
        data: what to draw.
        ax: axes to draw into; by default a new figure of its own (no pyplot state is touched).

    Returns:
        The figure holding the axes.
    """
    count = len(data.streams)
    if ax is None:
        figure = Figure(figsize=(8.5, 1.5 + 0.42 * max(count, 1)), layout="constrained")
        ax = figure.add_subplot()
    else:
        figure = ax.figure.figure
    stale = len(data.stale)
    ax.set_title(
        f"{data.schema}: {count} {'stream' if count == 1 else 'streams'}, {stale} stale "
        f"(as of {_style.format_timestamp(data.now)})",
        fontsize=10,
        loc="left",
    )
    if not data.streams:
        ax.text(0.5, 0.5, f"no streams in {data.schema}", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return figure

    lefts = [days_left(s, data.now) for s in data.streams]
    known = [d for d in lefts if d is not None] or [0.0]
    low, high = min(*known, 0.0), max(*known, 0.0)
    span = (high - low) or 1.0
    rows = list(range(count))
    for row, stream, days in zip(rows, data.streams, lefts, strict=True):
        if days is not None:
            [bar] = ax.barh(
                [row],
                [days],
                height=0.55,
                color=stream_colour(stream),
                alpha=0.85 if not stream.stale else 0.6,
                hatch="////" if stream.stale else None,
                edgecolor=_style.MARKER_EDGE_COLOUR,
                linewidth=0.6,
            )
            bar.set_gid("time-left")
        offset = "" if stream.offset_version is None else f"v{stream.offset_version} · "
        if stream.source_gone:
            label = "source table dropped or replaced"
        elif stream.stale:
            label = f"{offset}stale"
        elif stream.pending is None:
            label = f"{offset}unreadable"
        else:
            label = f"{offset}{stream.pending:,} pending · {_style.format_age(dt.timedelta(days=days or 0.0))} left"
        ax.annotate(
            label,
            (max(days or 0.0, 0.0), row),
            xytext=(5, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
            color=stream_colour(stream),
            gid="stream-label",
        )
    ax.axvline(0, color=_style.HORIZON_COLOUR, linestyle=":", lw=1, gid="now")
    # Room on the right for the labels.
    ax.set_xlim(low - 0.08 * span, high + 0.6 * span)
    ax.set_ylim(count - 0.4, -0.6)  # first stream on top, as in the table
    ax.set_yticks(rows, labels=[s.name for s in data.streams], fontsize=8)
    ax.set_xlabel("days until STALE_AFTER (0: now; negative: stale since)")
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(handles=_legend_handles(data), loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figure


def _legend_handles(data: StreamsData) -> list[Any]:
    handles: list[Any] = [
        Patch(facecolor=_style.STREAM_COLOUR, edgecolor=_style.MARKER_EDGE_COLOUR, label="time left to consume"),
    ]
    if data.stale:
        handles.append(
            Patch(
                facecolor=_style.STALE_STREAM_COLOUR,
                edgecolor=_style.MARKER_EDGE_COLOUR,
                hatch="////",
                alpha=0.6,
                label="stale: recreate it",
            )
        )
    return handles


# streams_html -------------------------------------------------------------------------

COLUMNS = ("name", "table", "mode", "offset version", "pending changes", "stale", "stale after", "reason")
"""The columns of :func:`streams_html`."""


def streams_html(data: StreamsData) -> str:
    """The streams as an HTML table, like ``SHOW STREAMS`` with the pending changes.

    Stale streams say so in the stale colour, and have no count.

    Example:
        >>> html = streams_html(StreamsData.from_lake(lake))       # doctest: +SKIP
    """
    rows = []
    for stream in data.streams:
        stale = f'<span style="color:{_style.STALE_STREAM_COLOUR};"><b>true</b></span>' if stream.stale else "false"
        offset = f"v{stream.offset_version}" if stream.offset_version is not None else html.escape(stream.offsets)
        after = "–" if stream.stale_after is None else _style.format_deadline(stream.stale_after, data.now)
        reason = stream.invalid_reason or (f"cannot be read: {stream.unreadable}" if stream.unreadable else "")
        rows.append(
            [
                _style.colour_swatch(stream_colour(stream)) + html.escape(stream.name),
                html.escape(stream.table) + (" <small>(view)</small>" if stream.source_type == "View" else ""),
                html.escape(stream.mode),
                offset,
                _style.format_count(stream.pending),
                stale,
                after,
                html.escape(reason),
            ]
        )
    return _style.html_table(COLUMNS, rows, numeric_columns=[4], wrapping_columns=[7])


def _header_html(data: StreamsData | None, schema: str) -> str:
    name = html.escape(schema)
    if data is None:
        return f"<b>{name}</b> · streams"
    count = len(data.streams)
    pending = sum(s.pending or 0 for s in data.streams)
    return (
        f"<b>{name}</b> · {count} {'stream' if count == 1 else 'streams'} · {len(data.stale)} stale · "
        f"{pending:,} pending {'change' if pending == 1 else 'changes'} "
        f"<small>(as of {_style.format_timestamp(data.now)})</small>"
    )


# StreamsWidget ------------------------------------------------------------------------


class StreamsWidget(LiveWidget[StreamsData]):
    """A live list of a schema's streams: offsets, pending changes, staleness.

    Shows a header (the schema, how many streams, how many stale, how many
    changes wait), a refresh button, the streams as an HTML table and
    :func:`plot_streams`' figure. Where widgets cannot run it renders as
    static HTML and PNG instead. Reading it moves no offset: the counts are
    plain queries. A schema that is dropped puts it in the error state; see
    :class:`~lakeclone.widgets._live.LiveWidget`.

    Args:
        lake: the Lake holding the schema.
        schema: the schema as SQL names it; by default the current one, as
            it is when the widget is made (a later ``USE`` does not change it).

    Attributes:
        data: the :class:`StreamsData` on show; None in the error state.
        schema: the schema shown.

    Raises:
        WidgetError: the schema does not exist, or there is no current one.

    Example:
        >>> StreamsWidget(lake, "shop.sales")     # doctest: +SKIP
    """

    kind = "streams"
    subject = "schema"
    refresh_tooltip = "Read the schema's streams again"

    def __init__(self, lake: Lake, schema: str | None = None) -> None:
        super().__init__(lake, schema_to_show(lake, schema, self.kind))

    @property
    def schema(self) -> str:
        """The schema shown, as its SQL text."""
        return self._table_name

    # LiveWidget --------------------------------------------------------------------

    def _read(self) -> StreamsData:
        return StreamsData.from_lake(self._lake, self._table_name)

    def _plot(self, data: StreamsData) -> Figure:
        return plot_streams(data)

    def _header_html(self, data: StreamsData | None) -> str:
        return _header_html(data, self._table_name)

    def _static_html(self, data: StreamsData) -> str:
        return streams_html(data)

    def _children(self) -> list[ipywidgets.Widget]:
        return [ipywidgets.HBox([self.refresh_button]), self.table, self.plot]

    def _render(self, data: StreamsData) -> None:
        self.table.value = streams_html(data)


def streams(lake: Lake, schema: str | None = None) -> StreamsWidget:
    """A :class:`StreamsWidget` of a schema's streams: the notebook one-liner.

    Args:
        lake: the Lake holding the schema.
        schema: the schema as SQL names it (``s``, ``db.s``); by default the current one.

    Returns:
        The widget; leave it last in a cell to show it.

    Raises:
        WidgetError: the schema does not exist (one line, nothing chained).

    Example:
        >>> from lakeclone.widgets import streams
        >>> streams(lake, "shop.sales")                # doctest: +SKIP
    """
    return StreamsWidget(lake, schema)
