"""Colours, number formats and HTML pieces shared by lakeclone's widgets.

Every widget renders twice: as live ipywidgets in a kernel, and as static
HTML/PNG where widgets cannot run (nbval, GitHub, PDF exports). Both paths
take their colours and formats from here so that the two look the same, and
so that an UPDATE is the same orange in the version timeline, the clone
lineage and the vacuum explorer.

Example:
    >>> operation_kind("CREATE OR REPLACE TABLE")
    'create'
    >>> KIND_COLOURS["delete"]
    '#D55E00'
    >>> format_bytes(1536)
    '1.5 KiB'
    >>> format_days(1)
    '1 day'
"""

from __future__ import annotations

import datetime as dt
import html
import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Okabe-Ito colours: distinguishable with the common colour-vision
# deficiencies, and readable on both light and dark notebook themes.
KIND_COLOURS: Mapping[str, str] = {
    "create": "#0072B2",
    "write": "#009E73",
    "update": "#E69F00",
    "delete": "#D55E00",
    "merge": "#CC79A7",
    "clone": "#56B4E9",
    "restore": "#F0E442",
    "maintenance": "#999999",
    "metadata": "#666666",
    "other": "#000000",
}
"""Colour of each operation kind (see :func:`operation_kind`), in legend order."""

KIND_LABELS: Mapping[str, str] = {
    "create": "create / replace",
    "write": "insert / write",
    "update": "update",
    "delete": "delete / truncate",
    "merge": "merge",
    "clone": "clone",
    "restore": "restore",
    "maintenance": "optimize / vacuum",
    "metadata": "schema / properties",
    "other": "other",
}
"""Legend text of each operation kind."""

FILES_ADDED_COLOUR = "#8CC5B0"
"""Bars of files added: a muted tint, so the saturated version markers stay in front."""

FILES_REMOVED_COLOUR = "#EBA98F"
"""Bars of files removed."""

HORIZON_COLOUR = "#333333"
"""The retention horizon line."""

EXPIRED_SHADE = "#888888"
"""Fill of the region beyond retention; drawn translucent."""

EXPIRED_OPACITY = 0.45
"""Opacity of whatever can no longer be reached by time travel.

Opacity rather than a grey text colour, because a fixed grey is unreadable
on one of JupyterLab's light or dark themes.
"""

MARKER_EDGE_COLOUR = "#222222"
"""Outline of markers, which keeps the pale kinds (restore) visible on white."""

# Delta Lake's operation names, grouped by what they do to the table. Exact
# names first; prefixes catch the families (CREATE TABLE AS SELECT, VACUUM END,
# SHALLOW CLONE, ...).
_KIND_BY_OPERATION: Mapping[str, str] = {
    "WRITE": "write",
    "STREAMING UPDATE": "write",
    "COPY INTO": "write",
    "UPDATE": "update",
    "DELETE": "delete",
    "TRUNCATE": "delete",
    "MERGE": "merge",
    "RESTORE": "restore",
    "OPTIMIZE": "maintenance",
    "REORG": "maintenance",
}
_KIND_BY_PREFIX: Sequence[tuple[str, str]] = (
    ("CREATE", "create"),
    ("REPLACE TABLE", "create"),
    ("VACUUM", "maintenance"),
    ("SET ", "metadata"),
    ("UNSET ", "metadata"),
    ("ADD ", "metadata"),
    ("DROP ", "metadata"),
    ("CHANGE ", "metadata"),
    ("RENAME ", "metadata"),
    ("REPLACE COLUMNS", "metadata"),
    ("UPGRADE PROTOCOL", "metadata"),
)


def operation_kind(operation: str) -> str:
    """Group a Delta history ``operation`` into one of the :data:`KIND_COLOURS` kinds.

    Args:
        operation: the ``operation`` column of ``DESCRIBE HISTORY``.

    Returns:
        ``create``, ``write``, ``update``, ``delete``, ``merge``, ``clone``,
        ``restore``, ``maintenance``, ``metadata`` or ``other``.

    Example:
        >>> operation_kind("SHALLOW CLONE"), operation_kind("VACUUM END")
        ('clone', 'maintenance')
    """
    name = operation.strip().upper()
    if name in _KIND_BY_OPERATION:
        return _KIND_BY_OPERATION[name]
    if "CLONE" in name:
        return "clone"
    for prefix, kind in _KIND_BY_PREFIX:
        if name.startswith(prefix):
            return kind
    return "other"


def format_count(n: int | None) -> str:
    """A count with thousands separators; an en dash when unknown.

    Example:
        >>> format_count(1234567), format_count(None)
        ('1,234,567', '–')
    """
    return "–" if n is None else f"{n:,}"


def format_bytes(n: int | None) -> str:
    """A byte size in binary units: exact bytes below 1 KiB, else one decimal below 100.

    Example:
        >>> format_bytes(0), format_bytes(999), format_bytes(5 * 2**30), format_bytes(300 * 2**20)
        ('0 B', '999 B', '5.0 GiB', '300 MiB')
    """
    if n is None:
        return "–"
    if abs(n) < 1024:
        return f"{n} B"
    size, unit = float(n), "B"
    for larger in ("KiB", "MiB", "GiB", "TiB"):
        size, unit = size / 1024, larger
        if abs(size) < 1024:
            break
    return f"{size:.1f} {unit}" if abs(size) < 100 else f"{size:.0f} {unit}"


def format_timestamp(when: dt.datetime) -> str:
    """A UTC timestamp to the second, with milliseconds only when there are any.

    Commits made by a :class:`~lakeclone.ManualClock` are a millisecond apart,
    so the milliseconds are what tells them apart; real commits rarely need them.

    Example:
        >>> import datetime as dt
        >>> format_timestamp(dt.datetime(2024, 1, 1, 0, 0, 0, 3000, tzinfo=dt.timezone.utc))
        '2024-01-01 00:00:00.003 UTC'
    """
    utc = when.astimezone(dt.timezone.utc)
    text = utc.strftime("%Y-%m-%d %H:%M:%S")
    if utc.microsecond:
        text += f".{utc.microsecond // 1000:03d}"
    return text + " UTC"


def format_age(age: dt.timedelta) -> str:
    """A duration as its two largest units, for "how long ago".

    Example:
        >>> import datetime as dt
        >>> format_age(dt.timedelta(days=2, hours=3, minutes=4))
        '2d 3h'
        >>> format_age(dt.timedelta(seconds=42))
        '42s'
    """
    seconds = int(age.total_seconds())
    if seconds < 0:
        return "in the future"
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        amount, seconds = divmod(seconds, size)
        if amount or parts:
            parts.append(f"{amount}{unit}")
    return " ".join(parts[:2]) or "0s"


def format_days(days: int) -> str:
    """A retention period in days, as Snowflake's docs speak of it.

    Example:
        >>> format_days(0), format_days(1), format_days(90)
        ('0 days', '1 day', '90 days')
    """
    return f"{days} day" if days == 1 else f"{days} days"


def colour_swatch(colour: str) -> str:
    """An inline HTML square of ``colour``, to key a table row to a plot marker."""
    return (
        f'<span style="display:inline-block;width:0.8em;height:0.8em;margin-right:0.4em;'
        f'border-radius:50%;border:1px solid {MARKER_EDGE_COLOUR};background:{colour};"></span>'
    )


def html_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    row_styles: Sequence[str] | None = None,
    numeric_columns: Sequence[int] = (),
    wrapping_columns: Sequence[int] = (),
) -> str:
    """An HTML table with inline styles only.

    Inline styles, not a ``<style>`` block, because GitHub and some notebook
    sanitisers drop style blocks but keep ``style`` attributes.

    Args:
        columns: header texts (escaped here).
        rows: cells as HTML (the caller escapes text it puts in them).
        row_styles: one CSS declaration string per row, e.g. for greying out.
        numeric_columns: indexes of right-aligned columns.
        wrapping_columns: indexes of columns whose cells may wrap (at ``<wbr>``
            or spaces) when the table is wider than the page; the others never do.

    Returns:
        A ``<table>`` element.

    Example:
        >>> html_table(["n"], [["1"]], numeric_columns=[0]).count("<tr")
        2
    """

    def cell(tag: str, content: str, index: int) -> str:
        align = "right" if index in numeric_columns else "left"
        wrap = "normal" if index in wrapping_columns and tag == "td" else "nowrap"
        return f'<{tag} style="text-align:{align};padding:2px 8px;white-space:{wrap};">{content}</{tag}>'

    header = "".join(cell("th", html.escape(name), i) for i, name in enumerate(columns))
    body = []
    for r, row in enumerate(rows):
        style = row_styles[r] if row_styles else ""
        cells = "".join(cell("td", content, i) for i, content in enumerate(row))
        body.append(f'<tr style="{style}">{cells}</tr>')
    return (
        '<table style="border-collapse:collapse;font-size:0.9em;">'
        f'<thead><tr style="border-bottom:1px solid currentColor;">{header}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def key_value_table(title: str, values: Mapping[str, str]) -> str:
    """A two-column HTML table of a string map, sorted by key, under a bold title; long values wrap.

    Values are shown without Spark's attribute ids (see :func:`without_attribute_ids`).

    Example:
        >>> "numFiles" in key_value_table("Metrics", {"numFiles": "3"})
        True
    """
    if not values:
        return f"<b>{html.escape(title)}</b><br><i>none</i>"
    rows = [[html.escape(key), _breakable(without_attribute_ids(str(values[key])))] for key in sorted(values)]
    return f"<b>{html.escape(title)}</b>" + html_table(["key", "value"], rows, wrapping_columns=[1])


# An attribute id Spark gives each column of a plan (``METADATA$ACTION#5601``, ``ID#65L``), after the column's name.
_ATTRIBUTE_ID = re.compile(r"(?<=[\w$`])#\d+L?\b")


def without_attribute_ids(text: str) -> str:
    """``text`` (a predicate Delta recorded from Spark's plan) without the attribute ids after column names.

    Delta records a MERGE clause's condition as Spark analysed it, each column
    with its id, which means nothing to the reader.

    Example:
        >>> without_attribute_ids('[{"predicate":"(METADATA$ACTION#5601 = DELETE)","actionType":"delete"}]')
        '[{"predicate":"(METADATA$ACTION = DELETE)","actionType":"delete"}]'
    """
    return _ATTRIBUTE_ID.sub("", text)


def _breakable(text: str) -> str:
    """``text`` escaped for HTML, with a break opportunity after each comma (a JSON list of clauses wraps there)."""
    return html.escape(text).replace(",", ",<wbr>")


def figure_to_png(figure: Figure, *, dpi: int = 100) -> bytes:
    """Render a matplotlib figure to PNG bytes without touching pyplot.

    Example:
        >>> from matplotlib.figure import Figure
        >>> figure_to_png(Figure(figsize=(1, 1)))[:8]
        b'\\x89PNG\\r\\n\\x1a\\n'
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


# Clone lineage and VACUUM ------------------------------------------------------------

CLONE_KIND_COLOURS: Mapping[str, str] = {
    "TABLE": KIND_COLOURS["create"],
    "SHALLOW CLONE": KIND_COLOURS["clone"],
    # A deep clone writes its own copy of the data: the colour of a write.
    "DEEP CLONE": KIND_COLOURS["write"],
}
"""Colour of each lineage node kind (:class:`~lakeclone.clones.lineage.LineageNode` ``kind``)."""

OWNED_COLOUR = "#0072B2"
"""Files a table stores in its own folder: the storage it pays for."""

SHARED_COLOUR = "#A6D8F2"
"""Files a table references in another table's folder (zero-copy); drawn hatched as well."""

SHARED_HATCH = "////"
"""Hatching of shared-file bars, so owned and shared differ without colour too."""

VACUUM_REASON_COLOURS: Mapping[str, str] = {
    "current": KIND_COLOURS["write"],
    "retention": FILES_ADDED_COLOUR,
    "clone": KIND_COLOURS["clone"],
    "other": KIND_COLOURS["maintenance"],
    "delete": KIND_COLOURS["delete"],
}
"""Colour of each VACUUM reason category: greens and blue are kept, vermillion is deleted."""

VACUUM_REASON_LABELS: Mapping[str, str] = {
    "current": "kept: current version",
    "retention": "kept: within retention",
    "clone": "kept: a clone needs it",
    "other": "kept: other reason",
    "delete": "deleted by VACUUM",
}
"""Legend text of each VACUUM reason category."""

ERROR_COLOUR = KIND_COLOURS["delete"]
"""Text colour of errors shown inside a widget."""


def vacuum_reason_category(kind: str) -> str:
    """Group a VACUUM reason's kind (``current``, ``retention``, ``clone``, ``delete``, ...) for colouring.

    A keep reason added later (see ``lakeclone.vacuum.plan.KEEP_REASONS``) is ``other``.

    Example:
        >>> vacuum_reason_category("clone"), vacuum_reason_category("not the table's")
        ('clone', 'other')
    """
    return kind if kind in VACUUM_REASON_COLOURS else "other"


def format_files(n: int) -> str:
    """A count of files with its noun.

    Example:
        >>> format_files(1), format_files(1200)
        ('1 file', '1,200 files')
    """
    return f"{n:,} file" if n == 1 else f"{n:,} files"


def error_html(prefix: str, error: BaseException) -> str:
    """An error message for a widget: coloured, escaped, line breaks kept.

    Example:
        >>> "Vacuum failed" in error_html("Vacuum failed", ValueError("x < 1"))
        True
    """
    text = html.escape(str(error)).replace("\n", "<br>")
    return f'<span style="color:{ERROR_COLOUR};"><b>{html.escape(prefix)}:</b> {text}</span>'


# Streams -----------------------------------------------------------------------------

STREAM_COLOUR = "#332288"
"""A stream's offset marker and its pending changes: an indigo that no operation kind uses."""

STALE_STREAM_COLOUR = ERROR_COLOUR
"""A stale stream: it can no longer be read, only recreated."""

STREAM_MARKER = "D"
"""Matplotlib marker of a live stream's offset."""

STALE_STREAM_MARKER = "X"
"""Matplotlib marker of a stale stream's offset: a cross, so that it differs without colour too."""


def format_deadline(when: dt.datetime, now: dt.datetime) -> str:
    """A deadline and how far it is from ``now``, e.g. for a stream's ``STALE_AFTER``.

    Example:
        >>> import datetime as dt
        >>> now = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
        >>> format_deadline(now + dt.timedelta(days=13, hours=2), now)
        '2024-01-14 02:00:00 UTC (in 13d 2h)'
        >>> format_deadline(now - dt.timedelta(hours=5), now)
        '2023-12-31 19:00:00 UTC (5h 0m ago)'
    """
    if when >= now:
        return f"{format_timestamp(when)} (in {format_age(when - now)})"
    return f"{format_timestamp(when)} ({format_age(now - when)} ago)"
