"""The live/static plumbing every lakeclone widget shares.

A widget shows one table: it reads it (``_read``), draws it as a PNG and fills
its ipywidgets from what it read (``_render``). :class:`LiveWidget` does the
rest, once for all widgets:

* the first read: a table that cannot be read raises a one-line
  :class:`WidgetError` (IPython shows just the message, not Spark's stack);
* ``refresh()`` and the refresh button: a table that is gone (dropped) or
  cannot be read puts the widget in an **error state**: it says so in its
  status line, and shows nothing it could not read (no stale picture, no
  stale rows) until a refresh succeeds;
* the static fallback (``_repr_mimebundle_``: HTML and PNG where widgets
  cannot run), ``figure()`` and ``static()``;
* :meth:`LiveWidget.shown`: what the widget's models hold, as plain text, so
  that tests and notebooks check what a user sees without a screenshot;
* widths: buttons size to their label, pickers to their longest option, and
  wide tables scroll in place rather than being cut off at the right.

Example:
    >>> one_line(ValueError("SQL compilation error:\\nObject 'T' does not exist."))
    "SQL compilation error: Object 'T' does not exist."
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import html
import re
from collections.abc import Iterator, Sequence
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import ipywidgets

from lakeclone.errors import LakecloneError, ObjectNotFoundError, WidgetError
from lakeclone.widgets import _style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from lakeclone.lake import Lake

DataT = TypeVar("DataT")


def one_line(error: BaseException) -> str:
    """An error's message on one line: its lines joined with spaces."""
    return " ".join(line.strip() for line in str(error).splitlines() if line.strip())


# Unquoted identifiers as lsql normalises them; anything else needs quotes.
_PLAIN_IDENTIFIER = re.compile(r"[A-Z_][A-Z0-9_$]*")


def sql_name(qualified: str) -> str:
    """A ``DB.SCHEMA.NAME`` name as the catalog prints it, as SQL text, quoting the parts that need it.

    Widgets read names back from ``SHOW`` and ``DESCRIBE`` (stored as
    written, upper case unless quoted) and put them into SQL of their own.

    Example:
        >>> sql_name("LAKE.PUBLIC.ORDERS"), sql_name("LAKE.PUBLIC.My Table")
        ('LAKE.PUBLIC.ORDERS', 'LAKE.PUBLIC."My Table"')
    """
    parts = qualified.split(".", 2)
    return ".".join(part if _PLAIN_IDENTIFIER.fullmatch(part) else '"' + part.replace('"', '""') + '"' for part in parts)


def sql_string(text: str) -> str:
    """``text`` as an lsql string literal (Snowflake's: a quote is doubled, a backslash escapes).

    Example:
        >>> print(sql_string("LAKE.PUBLIC.O'BRIEN"))
        'LAKE.PUBLIC.O''BRIEN'
    """
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


# Reading the models back -------------------------------------------------------------


class _TableText(HTMLParser):
    """Collects the text of each ``<th>``/``<td>`` of the first table, row by row."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._depth = 0
        self._done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth += 1
        elif tag == "tr" and self._depth == 1:
            self.rows.append([])
        elif tag in ("td", "th") and self._depth == 1 and self.rows:
            self._cell = []
        elif tag == "br" and self._cell is not None and self._depth == 1:
            self._cell.append(" ")  # a line break in a cell separates words, as it shows

    def handle_endtag(self, tag: str) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth -= 1
            self._done = self._depth == 0
        elif tag in ("td", "th") and self._cell is not None and self._depth == 1:
            self.rows[-1].append(_squeeze("".join(self._cell)))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None and self._depth == 1:
            self._cell.append(data)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _squeeze(text: str) -> str:
    return " ".join(text.replace("\xa0", " ").split())


def html_text(markup: str) -> str:
    """The text an HTML fragment shows, whitespace squeezed.

    Example:
        >>> html_text("<b>orders</b> · current version <b>v4</b><br><small>(as of now)</small>")
        'orders · current version v4 (as of now)'
    """
    parser = _Text()
    parser.feed(markup)
    parser.close()
    return _squeeze("".join(parser.parts))


def table_text(markup: str) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The header cells and body rows of the first table in an HTML fragment, as text.

    Example:
        >>> table_text(_style.html_table(["version", "rows"], [["v1", "4"]]))
        (('version', 'rows'), (('v1', '4'),))
    """
    parser = _TableText()
    parser.feed(markup)
    parser.close()
    if not parser.rows:
        return (), ()
    header, *body = parser.rows
    return tuple(header), tuple(tuple(row) for row in body)


@dataclasses.dataclass(frozen=True)
class Shown:
    """What a widget shows, read back from its ipywidgets models as plain text.

    This is the state a front end renders, so checking it checks the
    display without a screenshot.

    Attributes:
        header: the header line.
        status: the status line: ``""`` while the table reads fine, else
            what failed (see :attr:`LiveWidget.error`).
        columns: the header cells of the widget's table.
        rows: its body rows, one tuple of cell texts per row.
        images: how many pictures the plot area holds (0 or 1).
    """

    header: str
    status: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    images: int

    def column(self, name: str) -> list[str]:
        """The cells of one column, top to bottom.

        Raises:
            KeyError: the table has no such column.
        """
        if name not in self.columns:
            raise KeyError(f"no column {name!r} in {self.columns}")
        index = self.columns.index(name)
        return [row[index] for row in self.rows]


# Widths ------------------------------------------------------------------------------


def button(description: str, **kwargs: Any) -> ipywidgets.Button:
    """A button as wide as its label, whatever the label becomes.

    ipywidgets gives buttons a fixed width (148 px) and cuts longer labels
    with an ellipsis; ``width: auto`` sizes the button to its text instead.
    """
    return ipywidgets.Button(description=description, layout=ipywidgets.Layout(width="auto"), **kwargs)


# Em per character of a picker's label: generous, for capitals in a proportional font.
_EM_PER_CHARACTER = 0.62
_PICKER_PADDING_EM = 3.5  # the drop-down arrow and the padding around the text


def fit_picker(picker: ipywidgets.Dropdown, labels: Sequence[str], *, description_em: float = 6.5) -> None:
    """Make a Dropdown wide enough for the longest of its option ``labels`` and its description.

    ipywidgets gives drop-downs a fixed 300 px, which cuts long options; the
    width set here follows the options, and never exceeds the output's width.
    """
    longest = max((len(label) for label in labels), default=10)
    em = description_em + _PICKER_PADDING_EM + _EM_PER_CHARACTER * longest
    picker.layout.width = f"{em:.1f}em"
    picker.layout.max_width = "100%"


def scrolling_html(**kwargs: Any) -> ipywidgets.HTML:
    """An HTML widget whose wide content scrolls sideways right under it, rather than spilling out.

    A table wider than the notebook otherwise overflows the widget's box, whose
    scrollbar is far below (under the figure) or, in some front ends, missing:
    the right-hand columns look cut off.
    """
    return ipywidgets.HTML(layout=ipywidgets.Layout(overflow="auto", max_width="100%"), **kwargs)


def scrolling_div(markup: str) -> str:
    """Static HTML that scrolls sideways when wider than the page (for the fallback rendering)."""
    return f'<div style="overflow-x:auto;max-width:100%;">{markup}</div>'


# LiveWidget ---------------------------------------------------------------------------


class LiveWidget(ipywidgets.VBox, Generic[DataT]):
    """A widget of one table: read it, show it, refresh it, and say so when that fails.

    Subclasses set :attr:`kind` and implement ``_read`` (may raise
    LakecloneError), ``_plot``, ``_header_html``, ``_static_html``,
    ``_children`` (their layout), ``_render`` and ``_clear`` (fill and empty
    their own widgets).

    Attributes:
        data: what the widget shows, or None in the error state.
        error: the error state's message (one line), or None while the table
            reads fine.
        header: the header line (``ipywidgets.HTML``).
        status: the status line (``HTML``): empty, or what failed, in the
            error colour.
        refresh_button: reads the table again.
        table: the widget's table (``HTML``); it scrolls sideways when wide.
        plot: the figure, as a PNG in an ``Output``.

    Raises:
        WidgetError: the table does not exist or cannot be read.
    """

    kind: ClassVar[str] = "widget"
    """What the widget shows, for messages: ``version timeline``, ``clone lineage``, ..."""

    subject: ClassVar[str] = "table"
    """What the widget is of (``table``, ``schema``), for the hint when it is gone: ``UNDROP TABLE`` …"""

    refresh_label: ClassVar[str] = "Refresh"
    refresh_tooltip: ClassVar[str] = "Read the table again"

    data: DataT | None
    error: str | None

    def __init__(self, lake: Lake, table_name: str) -> None:
        self._lake = lake
        self._table_name = table_name
        # Read first, so that a missing table fails before any widget is made.
        data = self._read_or_raise(f"Cannot show the {self.kind} of {table_name}")
        self.data = None
        self.error = None
        self._png = b""
        self._syncing = False
        self.header = ipywidgets.HTML()
        self.status = ipywidgets.HTML()
        self.refresh_button = button(self.refresh_label, icon="refresh", tooltip=self.refresh_tooltip)
        self.table = scrolling_html()
        self.plot = ipywidgets.Output()
        super().__init__(children=[self.header, self.status, *self._children()])
        self.refresh_button.on_click(self._on_refresh_clicked)
        self._show(data)

    @property
    def table_name(self) -> str:
        """The table shown, as last given to the Lake."""
        return self._table_name

    def refresh(self) -> bool:
        """Read the table again and show it; show the error state if that fails.

        Returns:
            Whether the table could be read. If not (it was dropped, say), the
            widget says so in :attr:`status`, :attr:`error` holds the message,
            and nothing read before stays on show.
        """
        try:
            data = self._read()
        except LakecloneError as error:
            self._fail(error)
            return False
        self._show(data)
        return True

    def figure(self) -> Figure:
        """A new figure of what is on show.

        Raises:
            ValueError: nothing is on show (the error state).
        """
        if self.data is None:
            raise ValueError(f"no {self.kind} on show: {self.error}")
        return self._plot(self.data)

    def static(self) -> bytes:
        """The figure on show as PNG bytes, for places widgets cannot run; empty in the error state."""
        return self._png

    def shown(self) -> Shown:
        """What the widget shows now, read back from its models; see :class:`Shown`."""
        columns, rows = table_text(self.table.value)
        return Shown(
            header=html_text(self.header.value),
            status=html_text(self.status.value),
            columns=columns,
            rows=rows,
            images=sum("image/png" in output.get("data", {}) for output in self.plot.outputs),
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # Front ends pick the richest type they can render: the live widget in
        # a kernel, else the HTML (header, status, table and figure), else the PNG.
        bundle = super()._repr_mimebundle_(**kwargs) or {"text/plain": repr(self)}
        body = f"<div>{self.header.value}</div>"
        if self.status.value:
            body += f"<div>{self.status.value}</div>"
        if self.data is not None:
            png = base64.b64encode(self._png).decode("ascii")
            bundle["image/png"] = png
            alt = html.escape(f"{self.kind} of {self._title(self.data)}", quote=True)
            body += scrolling_div(self._static_html(self.data)) + f'<img src="data:image/png;base64,{png}" alt="{alt}">'
        else:
            bundle.pop("image/png", None)
        bundle["text/html"] = body + self._footer_html()
        return bundle

    # What subclasses provide -----------------------------------------------------

    def _read(self) -> DataT:
        raise NotImplementedError

    def _plot(self, data: DataT) -> Figure:
        raise NotImplementedError

    def _title(self, data: DataT) -> str:
        """The name of what is shown, for the picture's alt text."""
        return self._table_name

    def _header_html(self, data: DataT | None) -> str:
        """The header line; ``data`` is None in the error state."""
        raise NotImplementedError

    def _static_html(self, data: DataT) -> str:
        """The HTML of the static fallback, between the header and the picture."""
        return str(self.table.value)

    def _footer_html(self) -> str:
        """HTML the static fallback ends with (e.g. the result of the last action)."""
        return ""

    def _children(self) -> list[ipywidgets.Widget]:
        """The widget's rows below its header and status line; must include :attr:`refresh_button`."""
        raise NotImplementedError

    def _render(self, data: DataT) -> None:
        """Fill the subclass's own widgets (the table among them) from ``data``."""
        raise NotImplementedError

    def _clear(self) -> None:
        """Empty the subclass's own widgets for the error state."""

    # Shared plumbing -------------------------------------------------------------

    def _read_or_raise(self, what: str) -> DataT:
        """Read, turning a LakecloneError into a one-line WidgetError (not chained)."""
        try:
            return self._read()
        except LakecloneError as error:
            message = f"{what}: {one_line(error)}"
        raise WidgetError(message) from None

    @contextlib.contextmanager
    def _quietly(self) -> Iterator[None]:
        """Set widget values without the observers reacting (see ``_syncing``)."""
        syncing, self._syncing = self._syncing, True
        try:
            yield
        finally:
            self._syncing = syncing

    def _show(self, data: DataT) -> None:
        self.data = data
        self.error = None
        self.status.value = ""
        self._png = _style.figure_to_png(self._plot(data))
        self.header.value = self._header_html(data)
        # The PNG goes in as display data rather than via `with self.plot:
        # display(figure)`, which needs a kernel and the inline backend; this
        # way the same code runs in tests, and no pyplot figure is left open.
        self.plot.outputs = (
            {
                "output_type": "display_data",
                "data": {
                    "image/png": base64.b64encode(self._png).decode("ascii"),
                    "text/plain": f"<{self.kind} of {self._title(data)}>",
                },
                "metadata": {},
            },
        )
        self._render(data)

    def _fail(self, error: LakecloneError) -> None:
        """The error state: say what failed, and show nothing that was read before."""
        if isinstance(error, ObjectNotFoundError):
            prefix = f"{self._table_name} is gone"
            hint = (
                "Nothing is shown until a refresh finds it again; "
                f"UNDROP {self.subject.upper()} brings back a dropped {self.subject}."
            )
        else:
            prefix = "Refresh failed"
            hint = "Nothing is shown until a refresh succeeds."
        when = _style.format_timestamp(self._lake.now())
        self.error = f"{prefix}: {one_line(error)}"
        self.data = None
        self._png = b""
        self.plot.outputs = ()
        self.table.value = ""
        self.header.value = self._header_html(None)
        self.status.value = (
            _style.error_html(prefix, LakecloneError(one_line(error)))
            + f"<br><small>{html.escape(hint)} (Tried at {when}.)</small>"
        )
        with self._quietly():
            self._clear()

    def _note(self, prefix: str, error: LakecloneError) -> None:
        """Say in the status line that an action failed, keeping what is on show."""
        self.status.value = _style.error_html(prefix, LakecloneError(one_line(error)))

    def _on_refresh_clicked(self, _button: ipywidgets.Button) -> None:
        # refresh() raises nothing a user can cause: a click handler's
        # exception would go to the kernel log, not where the user looks.
        self.refresh()
