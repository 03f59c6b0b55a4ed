"""What every widget shares (lakeclone.widgets._live): one-line errors, labels that fit, reading back what is shown."""

from __future__ import annotations

import traceback
from pathlib import Path

import ipywidgets
import pytest

from lakeclone.errors import LakecloneError
from lakeclone.widgets import WidgetError, lineage_widget, timeline, vacuum_explorer
from lakeclone.widgets._live import LiveWidget, html_text, table_text

pytestmark = pytest.mark.spark

WIDGETS = {"version timeline": timeline, "clone lineage": lineage_widget, "VACUUM plan": vacuum_explorer}
WIDGETS_FOLDER = Path(__file__).resolve().parents[1] / "lakeclone" / "widgets"


def test_an_unknown_table_raises_one_line_with_no_internal_traceback(lake):
    for kind, make in WIDGETS.items():
        with pytest.raises(WidgetError) as raised:
            make(lake, "nope")

        error = raised.value
        assert isinstance(error, LakecloneError)
        assert str(error) == (
            f"Cannot show the {kind} of nope: SQL compilation error: Object 'LAKE.PUBLIC.NOPE' does not exist or not authorized."
        )
        # Nothing chained: no "During handling of the above exception..." with the engine's stack.
        assert error.__cause__ is None and error.__suppress_context__
        frames = traceback.extract_tb(error.__traceback__)
        assert all(Path(f.filename).parent in (WIDGETS_FOLDER, Path(__file__).parent) for f in frames), frames
        # And IPython shows just the one line (as it does for a failing %%lsql cell).
        assert error._render_traceback_() == [f"WidgetError: {error}"]


def walk(widget: ipywidgets.Widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def test_every_button_and_picker_fits_its_label_and_tables_scroll_in_place(lake):
    lake.sql("CREATE TABLE a_table_with_a_rather_long_name (id INT); CREATE TABLE c CLONE a_table_with_a_rather_long_name")
    widgets: list[LiveWidget] = [make(lake, "a_table_with_a_rather_long_name") for make in WIDGETS.values()]

    buttons = [w for widget in widgets for w in walk(widget) if isinstance(w, ipywidgets.Button)]
    # Refresh x2, Plan, Vacuum now, Cancel: ipywidgets' fixed 148 px would cut "Confirm: delete 12 files".
    assert len(buttons) == 5
    assert all(b.layout.width == "auto" for b in buttons)
    pickers = [w for widget in widgets for w in walk(widget) if isinstance(w, ipywidgets.Dropdown)]
    assert len(pickers) == 2
    for picker in pickers:
        longest = max(len(label) for label, _ in picker.options)
        assert float(picker.layout.width.removesuffix("em")) >= 0.6 * longest + 6, picker.options
        assert picker.layout.max_width == "100%"
    for widget in widgets:
        assert widget.table in widget.children or any(widget.table in getattr(c, "children", ()) for c in widget.children)
        assert widget.table.layout.overflow == "auto"


def test_shown_reads_text_back_from_html():
    header = "<b>t</b> · current version <b>v4</b><br><small>(as of&nbsp;now)</small>"
    table = (
        "<table><thead><tr><th>name</th><th>id</th></tr></thead><tbody>"
        "<tr><td>&nbsp;&nbsp;└&nbsp;<b>LAKE.PUBLIC.C</b></td><td><code>ab-<wbr>cd</code><br>ef</td></tr>"
        "<tr><td><table><tr><td>nested</td></tr></table>x</td><td>1</td></tr></tbody></table><table><tr><td>2nd</td></tr></table>"
    )

    assert html_text(header) == "t · current version v4 (as of now)"
    assert table_text(table) == (("name", "id"), (("└ LAKE.PUBLIC.C", "ab-cd ef"), ("x", "1")))
    assert table_text("") == ((), ())
