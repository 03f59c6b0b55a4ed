"""The channel monitor: each channel of a table or schema, its offset token, rows, errors and lag.

Three layers, as in :mod:`lakeclone.widgets.streams`:

* :class:`ChannelInfo` is one channel as ``SHOW CHANNELS`` reports it (the
  token as the table's own log says it, rows, rows in error, the last error);
  :class:`ChannelsData` holds a table's or a schema's, with the Lake clock's
  time, from which each channel's lag (the age of the oldest row it has not
  committed yet, as Snowpipe Streaming users read it) follows.
* :func:`plot_channels` and :func:`channels_html` draw them as a matplotlib
  figure (rows per channel, with its token and lag) and an HTML table.
* :class:`ChannelMonitor` puts both in an ipywidgets box with a refresh
  button and an auto-refresh toggle, and falls back to static HTML and PNG
  where widgets cannot run (:mod:`lakeclone.widgets._live`).

Auto-refresh runs on the kernel's event loop (``loop.call_later``), not in a
thread: each refresh runs between cells, never alongside a statement of the
same session.

Example:
    >>> from lakeclone.widgets import channels
    >>> channels(lake, "clicks", auto_refresh=2)     # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import html
from enum import Enum
from typing import TYPE_CHECKING

import ipywidgets
from matplotlib.figure import Figure

from lakeclone.errors import LakecloneError, WidgetError
from lakeclone.widgets import _style
from lakeclone.widgets._live import LiveWidget, one_line, sql_name
from lakeclone.widgets.streams import current_schema

if TYPE_CHECKING:
    from lakeclone.lake import Lake

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

CHANNEL_COLOUR = "#117733"
"""A channel's committed rows: a green no operation kind or stream uses."""


class Scope(str, Enum):
    """What a monitor shows the channels of."""

    TABLE = "TABLE"
    SCHEMA = "SCHEMA"


@dataclasses.dataclass(frozen=True)
class ChannelInfo:
    """One channel, as ``SHOW CHANNELS`` reports it.

    Attributes:
        name: the channel's name, as opened.
        table: its table's qualified name.
        client: the streaming client that opened it last.
        offset_token: its latest committed offset token (None: nothing committed yet).
        rows_inserted: rows committed through it.
        rows_in_error: rows rejected with errors (ON_ERROR CONTINUE and SKIP_BATCH).
        last_error: its last error, a rejected row's or a background flush's; None if none.
        status: ``ACTIVE`` or ``ERROR`` (it has a last error).
        created_on: when it was created, by the Lake's clock.
        last_committed_on: its last commit, by the Lake's clock; None before the first.
        pending_since: when the oldest row its client holds uncommitted was inserted, as the client recorded it at
            its last commit or failed flush; None when it held none.
    """

    name: str
    table: str
    client: str
    offset_token: str | None
    rows_inserted: int
    rows_in_error: int
    last_error: str | None
    status: str
    created_on: dt.datetime
    last_committed_on: dt.datetime | None
    pending_since: dt.datetime | None

    def lag(self, now: dt.datetime) -> dt.timedelta:
        """How long its oldest uncommitted row has waited (by the Lake's clock): 0 when it holds none."""
        return dt.timedelta(0) if self.pending_since is None else max(now - self.pending_since, dt.timedelta(0))

    def since_commit(self, now: dt.datetime) -> dt.timedelta | None:
        """How long ago it last committed (by the Lake's clock); None before its first commit."""
        return None if self.last_committed_on is None else max(now - self.last_committed_on, dt.timedelta(0))


def read_channels(lake: Lake, show: str) -> tuple[ChannelInfo, ...]:
    """The channels a ``SHOW CHANNELS …`` statement lists, by table and name.

    Raises:
        LakecloneError: the statement fails (no such table or schema, say).
    """
    # unix_micros rather than the timestamps: collect() would turn them into naive local datetimes.
    frame = lake.sql(show).selectExpr(
        "name",
        "database_name",
        "schema_name",
        "table_name",
        "client_name",
        "offset_token",
        "rows_inserted",
        "rows_in_error",
        "last_error",
        "status",
        "unix_micros(created_on) AS created_micros",
        "unix_micros(last_committed_on) AS committed_micros",
        "unix_micros(pending_since) AS pending_micros",
    )
    found = []
    for row in frame.collect():
        committed, pending = row["committed_micros"], row["pending_micros"]
        found.append(
            ChannelInfo(
                name=row["name"],
                table=f"{row['database_name']}.{row['schema_name']}.{row['table_name']}",
                client=row["client_name"],
                offset_token=row["offset_token"],
                rows_inserted=int(row["rows_inserted"]),
                rows_in_error=int(row["rows_in_error"]),
                last_error=row["last_error"],
                status=row["status"],
                created_on=_EPOCH + dt.timedelta(microseconds=row["created_micros"]),
                last_committed_on=None if committed is None else _EPOCH + dt.timedelta(microseconds=committed),
                pending_since=None if pending is None else _EPOCH + dt.timedelta(microseconds=pending),
            )
        )
    return tuple(sorted(found, key=lambda c: (c.table, c.name)))


@dataclasses.dataclass(frozen=True)
class ChannelsData:
    """The channels of a table or a schema, read at one moment.

    Attributes:
        scope: whether :attr:`name` is a table or a schema.
        name: the table or schema as given (its SQL text).
        channels: its channels, by table and name.
        now: when they were read, by the Lake's clock.
    """

    scope: Scope
    name: str
    channels: tuple[ChannelInfo, ...]
    now: dt.datetime

    @classmethod
    def from_lake(cls, lake: Lake, name: str, scope: Scope = Scope.TABLE) -> ChannelsData:
        """Read the channels of a table (or a schema) with ``SHOW CHANNELS IN TABLE`` (``IN SCHEMA``).

        Raises:
            LakecloneError: no such table or schema.
        """
        found = read_channels(lake, f"SHOW CHANNELS IN {scope.value} {name}")
        return cls(scope=scope, name=name, channels=found, now=lake.now().astimezone(dt.timezone.utc))

    @property
    def rows_inserted(self) -> int:
        return sum(c.rows_inserted for c in self.channels)

    @property
    def rows_in_error(self) -> int:
        return sum(c.rows_in_error for c in self.channels)

    def channel(self, name: str) -> ChannelInfo:
        """A channel by name (the first, by table, when channels of several tables share it).

        Raises:
            KeyError: no such channel.
        """
        for info in self.channels:
            if info.name == name:
                return info
        raise KeyError(f"no channel {name} in {self.name}")

    def _repr_html_(self) -> str:
        return channels_html(self)


def _lag_text(info: ChannelInfo, now: dt.datetime) -> str:
    return _style.format_age(info.lag(now))


def _last_commit_text(info: ChannelInfo, now: dt.datetime) -> str:
    since = info.since_commit(now)
    return "never" if since is None else f"{_style.format_age(since)} ago"


# plot_channels -----------------------------------------------------------------------


def plot_channels(data: ChannelsData) -> Figure:
    """Draw each channel's committed rows and rows in error, labelled with its token and lag.

    Artists carry gids: ``rows-inserted``, ``rows-in-error`` (the bars) and
    ``channel-label`` (the labels).
    """
    count = len(data.channels)
    figure = Figure(figsize=(8.5, 1.5 + 0.42 * max(count, 1)), layout="constrained")
    ax = figure.add_subplot()
    ax.set_title(
        f"{data.name}: {count} {'channel' if count == 1 else 'channels'}, {data.rows_inserted:,} rows "
        f"(as of {_style.format_timestamp(data.now)})",
        fontsize=10,
        loc="left",
    )
    if not data.channels:
        ax.text(0.5, 0.5, f"no channels in {data.name}", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return figure
    rows = list(range(count))
    inserted = [c.rows_inserted for c in data.channels]
    errors = [c.rows_in_error for c in data.channels]
    for bar in ax.barh(rows, inserted, height=0.55, color=CHANNEL_COLOUR, edgecolor=_style.MARKER_EDGE_COLOUR, lw=0.6):
        bar.set_gid("rows-inserted")
    for bar in ax.barh(
        rows, errors, left=inserted, height=0.55, color=_style.ERROR_COLOUR, edgecolor=_style.MARKER_EDGE_COLOUR, lw=0.6
    ):
        bar.set_gid("rows-in-error")
    high = max(i + e for i, e in zip(inserted, errors, strict=True)) or 1
    for row, info in zip(rows, data.channels, strict=True):
        token = "no token" if info.offset_token is None else f"token {info.offset_token}"
        label = f"{token} · lag {_lag_text(info, data.now)}"
        if info.rows_in_error:
            label += f" · {info.rows_in_error:,} in error"
        ax.annotate(
            label,
            (info.rows_inserted + info.rows_in_error, row),
            xytext=(5, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
            color=_style.ERROR_COLOUR if info.status == "ERROR" else _style.HORIZON_COLOUR,
            gid="channel-label",
        )
    ax.set_xlim(0, high * 1.8)  # room on the right for the labels
    ax.set_ylim(count - 0.4, -0.6)  # first channel on top, as in the table
    labels = [
        info.name if data.scope is Scope.TABLE else f"{info.table.rsplit('.', 1)[-1]}.{info.name}" for info in data.channels
    ]
    ax.set_yticks(rows, labels=labels, fontsize=8)
    ax.set_xlabel("rows committed (green) and rows in error (red)")
    ax.spines[["top", "right"]].set_visible(False)
    return figure


# channels_html -----------------------------------------------------------------------

COLUMNS = ("channel", "table", "offset token", "rows inserted", "rows in error", "last error", "last commit", "lag", "status")
"""The columns of :func:`channels_html`."""


def channels_html(data: ChannelsData) -> str:
    """The channels as an HTML table; a channel with an error says so in the error colour."""
    rows = []
    for info in data.channels:
        status = html.escape(info.status)
        if info.status == "ERROR":
            status = f'<span style="color:{_style.ERROR_COLOUR};"><b>{status}</b></span>'
        rows.append(
            [
                _style.colour_swatch(CHANNEL_COLOUR) + html.escape(info.name),
                html.escape(info.table),
                "–" if info.offset_token is None else html.escape(info.offset_token),
                _style.format_count(info.rows_inserted),
                _style.format_count(info.rows_in_error),
                html.escape(info.last_error or ""),
                _last_commit_text(info, data.now),
                _lag_text(info, data.now),
                status,
            ]
        )
    return _style.html_table(COLUMNS, rows, numeric_columns=[3, 4], wrapping_columns=[5])


def _header_html(data: ChannelsData | None, name: str) -> str:
    title = html.escape(name)
    if data is None:
        return f"<b>{title}</b> · channels"
    count = len(data.channels)
    return (
        f"<b>{title}</b> · {count} {'channel' if count == 1 else 'channels'} · "
        f"{data.rows_inserted:,} rows inserted · {data.rows_in_error:,} in error "
        f"<small>(as of {_style.format_timestamp(data.now)})</small>"
    )


# ChannelMonitor ----------------------------------------------------------------------


class ChannelMonitor(LiveWidget[ChannelsData]):
    """A live monitor of the channels of a table (or of a schema).

    Shows a header (how many channels, rows inserted and in error), a refresh
    button, an auto-refresh toggle, the channels as an HTML table and
    :func:`plot_channels`' figure; static HTML and PNG where widgets cannot
    run. A dropped table puts it in the error state.

    Args:
        lake: the Lake holding the table.
        table: the table as SQL names it; None for a schema's channels.
        schema: the schema (when ``table`` is None); by default the current one.
        auto_refresh: seconds between refreshes while auto-refresh is on; None
            leaves it off (the toggle turns it on at :data:`DEFAULT_INTERVAL`).

    Attributes:
        auto_refresh_toggle: turns auto-refresh on and off.
        refreshes: how many refreshes (by button, call or timer) have run.

    Raises:
        WidgetError: no such table or schema.
    """

    kind = "channels"
    refresh_tooltip = "Read the channels again"
    DEFAULT_INTERVAL = 2.0

    def __init__(
        self, lake: Lake, table: str | None = None, *, schema: str | None = None, auto_refresh: float | None = None
    ) -> None:
        self.scope = Scope.TABLE if table is not None else Scope.SCHEMA
        if table is not None:
            name = table
        elif schema is not None:
            name = schema
        else:
            try:
                name = sql_name(current_schema(lake))
            except LakecloneError as error:
                raise WidgetError(f"Cannot show the {self.kind}: {one_line(error)}") from None
        self.subject = self.scope.value.lower()  # type: ignore[misc]  # per instance: a table or a schema
        self.refreshes = 0
        self.interval = self.DEFAULT_INTERVAL if auto_refresh is None else float(auto_refresh)
        if self.interval <= 0:
            raise WidgetError("auto_refresh is a number of seconds above 0.")
        self._timer: asyncio.TimerHandle | None = None
        self.auto_refresh_toggle = ipywidgets.ToggleButton(
            value=False,
            description="Auto-refresh",
            icon="clock-o",
            tooltip="Read the channels again on a timer",
            layout=ipywidgets.Layout(width="auto"),
        )
        super().__init__(lake, name)
        self.auto_refresh_toggle.observe(self._on_toggle, names="value")
        if auto_refresh is not None:
            self.auto_refresh_toggle.value = True

    @property
    def auto_refreshing(self) -> bool:
        """Whether a timer refresh is scheduled."""
        return self._timer is not None

    def refresh(self) -> bool:
        self.refreshes += 1
        return super().refresh()

    def close(self) -> None:
        """Stop auto-refresh and close the widget's models."""
        toggle = getattr(self, "auto_refresh_toggle", None)  # None: __init__ failed before making it
        if toggle is not None:
            toggle.value = False
        if getattr(self, "_timer", None) is not None:
            self._cancel()
        super().close()

    # Auto-refresh -------------------------------------------------------------------

    def _on_toggle(self, change: dict[str, object]) -> None:
        if self._syncing:
            return
        if change["new"]:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                # No event loop runs here (a plain script): nothing could fire the timer.
                self._note("Auto-refresh is off", LakecloneError("it needs a running event loop, as a Jupyter kernel has."))
                with self._quietly():
                    self.auto_refresh_toggle.value = False
                return
            self._schedule(loop)
        else:
            self._cancel()

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = loop.call_later(self.interval, self._tick, loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        if not self.auto_refresh_toggle.value:
            return
        self.refresh()
        if self.auto_refresh_toggle.value:
            self._schedule(loop)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # LiveWidget --------------------------------------------------------------------

    def _read(self) -> ChannelsData:
        return ChannelsData.from_lake(self._lake, self._table_name, self.scope)

    def _plot(self, data: ChannelsData) -> Figure:
        return plot_channels(data)

    def _header_html(self, data: ChannelsData | None) -> str:
        return _header_html(data, self._table_name)

    def _static_html(self, data: ChannelsData) -> str:
        return channels_html(data)

    def _children(self) -> list[ipywidgets.Widget]:
        return [ipywidgets.HBox([self.refresh_button, self.auto_refresh_toggle]), self.table, self.plot]

    def _render(self, data: ChannelsData) -> None:
        self.table.value = channels_html(data)


def channels(
    lake: Lake, table: str | None = None, *, schema: str | None = None, auto_refresh: float | None = None
) -> ChannelMonitor:
    """A :class:`ChannelMonitor` of a table's (or a schema's) channels: the notebook one-liner.

    Example:
        >>> from lakeclone.widgets import channels
        >>> channels(lake, "clicks")                   # doctest: +SKIP
        >>> channels(lake, schema="public", auto_refresh=5)   # doctest: +SKIP
    """
    return ChannelMonitor(lake, table, schema=schema, auto_refresh=auto_refresh)
