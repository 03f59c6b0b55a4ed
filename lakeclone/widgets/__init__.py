"""Jupyter widgets for looking at lakeclone tables.

Each widget is an ipywidgets box that live-updates in a kernel and falls back
to static HTML and PNG where widgets cannot run. Importing this package
imports ipywidgets and matplotlib, which ``import lakeclone`` alone does not.

Example:
    >>> from lakeclone.widgets import timeline
    >>> timeline(lake, "orders")          # doctest: +SKIP
"""

from __future__ import annotations

from lakeclone.widgets.timeline import (
    TimelineData,
    VersionEntry,
    VersionTimeline,
    plot_timeline,
    timeline,
    timeline_html,
)

__all__ = [
    "TimelineData",
    "VersionEntry",
    "VersionTimeline",
    "plot_timeline",
    "timeline",
    "timeline_html",
]
