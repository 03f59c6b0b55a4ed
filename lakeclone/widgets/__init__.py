"""Jupyter widgets for looking at lakeclone tables.

Each widget is an ipywidgets box that live-updates in a kernel and falls back
to static HTML and PNG where widgets cannot run. All of them share
one plumbing (``LiveWidget`` in ``lakeclone.widgets._live``): a table that cannot be
read raises a one-line :class:`WidgetError` when the widget is made, and puts
the widget in an error state (it says so, and shows nothing stale) when a
refresh fails; ``shown()`` reads back what a widget shows. Importing this package
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
from lakeclone.widgets.channels import channels, plot_channels
from lakeclone.widgets.grants import grants, plot_grants
from lakeclone.widgets.lineage import lineage_widget, plot_lineage
from lakeclone.widgets.streams import plot_streams, streams
from lakeclone.widgets.timeline import plot_timeline, timeline
from lakeclone.widgets.vacuum import plot_vacuum, reason_groups, vacuum_explorer

# What a notebook calls: a widget for each view, and its static picture. The
# widgets' classes, their data models and HTML renderings live in the modules
# named for each (``lakeclone.widgets.timeline``...), for whoever builds on them.
__all__ = [
    "WidgetError",
    "channels",
    "grants",
    "lineage_widget",
    "plot_channels",
    "plot_grants",
    "plot_lineage",
    "plot_streams",
    "plot_timeline",
    "plot_vacuum",
    "reason_groups",
    "streams",
    "timeline",
    "vacuum_explorer",
]
