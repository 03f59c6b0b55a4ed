"""Jupyter widgets for looking at lakeclone tables.

Each widget is an ipywidgets box that live-updates in a kernel and falls back
to static HTML and PNG where widgets cannot run. All of them share
:class:`LiveWidget`'s plumbing: a table that cannot be read raises a one-line
:class:`WidgetError` when the widget is made, and puts the widget in an error
state (it says so, and shows nothing stale) when a refresh fails; ``shown()``
reads back what a widget shows, as :class:`Shown`. Importing this package
imports ipywidgets and matplotlib, which ``import lakeclone`` alone does not.

Example:
    >>> from lakeclone.widgets import channels, grants, timeline, lineage_widget, streams, vacuum_explorer
    >>> timeline(lake, "orders")          # doctest: +SKIP
    >>> streams(lake, "shop.sales")       # doctest: +SKIP
    >>> lineage_widget(lake, "orders")    # doctest: +SKIP
    >>> vacuum_explorer(lake, "orders")   # doctest: +SKIP
    >>> grants(lake, "shop.sales")        # doctest: +SKIP
    >>> channels(lake, "orders")          # doctest: +SKIP
"""

from __future__ import annotations

from lakeclone.errors import WidgetError
from lakeclone.widgets._live import LiveWidget, Shown
from lakeclone.widgets.channels import (
    ChannelInfo,
    ChannelMonitor,
    ChannelsData,
    channels,
    channels_html,
    plot_channels,
)
from lakeclone.widgets.grants import GrantsData, GrantsWidget, grants, grants_html, plot_grants
from lakeclone.widgets.lineage import (
    LineageData,
    LineageWidget,
    lineage_html,
    lineage_widget,
    plot_lineage,
)
from lakeclone.widgets.streams import (
    StreamInfo,
    StreamsData,
    StreamsWidget,
    plot_streams,
    streams,
    streams_html,
)
from lakeclone.widgets.timeline import (
    TimelineData,
    VersionEntry,
    VersionTimeline,
    plot_timeline,
    timeline,
    timeline_html,
)
from lakeclone.widgets.vacuum import (
    ReasonGroup,
    VacuumExplorer,
    plot_vacuum,
    reason_groups,
    vacuum_explorer,
    vacuum_html,
)

__all__ = [
    "ChannelInfo",
    "ChannelMonitor",
    "ChannelsData",
    "GrantsData",
    "GrantsWidget",
    "LineageData",
    "LineageWidget",
    "LiveWidget",
    "ReasonGroup",
    "Shown",
    "StreamInfo",
    "StreamsData",
    "StreamsWidget",
    "TimelineData",
    "VacuumExplorer",
    "VersionEntry",
    "VersionTimeline",
    "WidgetError",
    "channels",
    "channels_html",
    "grants",
    "grants_html",
    "lineage_html",
    "lineage_widget",
    "plot_channels",
    "plot_grants",
    "plot_lineage",
    "plot_streams",
    "plot_timeline",
    "plot_vacuum",
    "reason_groups",
    "streams",
    "streams_html",
    "timeline",
    "timeline_html",
    "vacuum_explorer",
    "vacuum_html",
]
