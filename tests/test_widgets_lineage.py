"""The clone lineage widget, on a real Lake: real Spark, real Delta, a manual clock."""

from __future__ import annotations

import base64
import datetime as dt
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from lake_helpers import location
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

import lakeclone
from lakeclone.errors import LakecloneError
from lakeclone.widgets import WidgetError, lineage_widget, plot_lineage
from lakeclone.widgets.lineage import LineageData, LineageWidget, lineage_html, name_lines, sql_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)

S, C1, C2, D, TMP = (f"LAKE.PUBLIC.{n}" for n in ("S", "C1", "C2", "D", "TMP"))


def build_graph(lake: lakeclone.Lake) -> None:
    """``s`` → ``c1`` (zero-copy) → ``c2`` (zero-copy) and ``d`` (deep), plus a dropped clone ``tmp`` of ``c1``.

    Each table is written to after it is cloned, so every node owns files of
    its own and the zero-copy clones also share their sources' files.
    """
    lake.sql("CREATE TABLE s (id INT, v STRING)")
    lake.sql("INSERT INTO s VALUES (1, 'a'), (2, 'b')")
    lake.sql("INSERT INTO s VALUES (3, 'c')")  # s is at v2
    lake.sql("CREATE TABLE c1 CLONE s")
    lake.sql("INSERT INTO s VALUES (4, 'd')")  # after the clone: not in c1
    lake.sql("INSERT INTO c1 VALUES (10, 'x')")  # c1 is at v1
    lake.sql("CREATE TABLE c2 CLONE c1")
    lake.sql("INSERT INTO c2 VALUES (20, 'y')")
    lake.sql("CREATE TABLE d DEEP CLONE c1")
    lake.sql("INSERT INTO d VALUES (30, 'z')")
    lake.sql("CREATE TABLE tmp CLONE c1")
    lake.sql("DROP TABLE tmp")


@pytest.fixture(scope="module")
def graph_lake(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> lakeclone.Lake:
    """One Lake holding :func:`build_graph`'s tables, shared by the tests that only read it."""
    lake = lakeclone.connect(tmp_path_factory.mktemp("lineage") / "warehouse", spark=spark, clock=lakeclone.ManualClock(START))
    build_graph(lake)
    return lake


def body_rows(table_html: str) -> int:
    return table_html.count("<tr") - 1


def gids(figure: Figure, gid: str) -> list:
    [ax] = figure.axes
    return [a for a in ax.get_children() if a.get_gid() == gid]


# LineageData ------------------------------------------------------------------------


def test_lineage_data_orders_the_graph_as_a_tree(graph_lake):
    data = LineageData.from_lake(graph_lake, "c1")
    graph = graph_lake.lineage("c1")

    assert data.table == "c1"
    assert data.root.name == C1 and data.root_id == graph.root
    # Sources first, clones oldest first, each subtree before the next sibling.
    assert [n.name for n in data.nodes] == [S, C1, C2, D, TMP]
    assert [n.kind for n in data.nodes] == ["TABLE", "SHALLOW CLONE", "SHALLOW CLONE", "DEEP CLONE", "SHALLOW CLONE"]
    assert {n.name: data.generations[n.id] for n in data.nodes} == {S: 0, C1: 1, C2: 2, D: 2, TMP: 2}
    assert set(data.edges) == set(graph.edges)
    named = [(data.node(s).name, data.node(c).name, v) for s, c, v in data.edges]
    assert named == [(S, C1, 2), (C1, C2, 1), (C1, D, 1), (C1, TMP, 1)]
    assert data.source_of(data.root).name == S
    assert [n.name for n in data.clones_of(data.root)] == [C2, D, TMP]
    assert data.node(TMP).dropped_at is not None
    with pytest.raises(KeyError):
        data.node("LAKE.PUBLIC.NOPE")


def test_lineage_data_owned_and_shared_files_follow_the_clones(graph_lake):
    data = LineageData.from_lake(graph_lake, "c1")
    s, c1, c2, d = (data.node(n) for n in (S, C1, C2, D))

    # The original owns everything; zero-copy clones share their sources'
    # files as of the clone and own only what they wrote since.
    assert (s.version, s.files_shared, s.bytes_shared) == (3, 0, 0)
    assert s.files_owned >= 2 and s.bytes_owned > 0
    # s wrote one file after c1 was cloned from it.
    assert (c1.version, c1.files_owned, c1.files_shared) == (1, 1, s.files_owned - 1)
    assert (c2.version, c2.files_owned, c2.files_shared) == (1, 1, c1.files_owned + c1.files_shared)
    assert c2.bytes_shared == c1.bytes_shared + c1.bytes_owned
    # A deep clone copies: it owns c1's files plus its own write, and shares nothing.
    assert (d.version, d.files_shared, d.bytes_shared) == (1, 0, 0)
    assert d.files_owned == c1.files_owned + c1.files_shared + 1
    assert d.bytes_owned > c1.bytes_owned + c1.bytes_shared


def test_lineage_data_of_an_unrelated_table_is_a_single_node(lake):
    lake.sql("CREATE TABLE alone (id INT)")

    data = LineageData.from_lake(lake, "alone")

    assert [n.name for n in data.nodes] == ["LAKE.PUBLIC.ALONE"]
    assert data.edges == ()
    assert len(gids(plot_lineage(data), "lineage-node")) == 1


def test_lineage_data_of_a_missing_table_raises(lake):
    with pytest.raises(LakecloneError):
        LineageData.from_lake(lake, "no_such_table")


# plot_lineage -----------------------------------------------------------------------


def test_plot_lineage_draws_a_box_per_node_and_a_labelled_arrow_per_edge(graph_lake):
    data = LineageData.from_lake(graph_lake, "c1")

    figure = plot_lineage(data)

    assert isinstance(figure, Figure)
    boxes = gids(figure, "lineage-node")
    assert sorted(b.get_url() for b in boxes) == sorted(n.id for n in data.nodes)
    arrows = gids(figure, "lineage-edge")
    assert len(arrows) == len(data.edges) == 4
    assert all(isinstance(a, FancyArrowPatch) for a in arrows)
    assert sorted(t.get_text() for t in gids(figure, "edge-label")) == ["@v1", "@v1", "@v1", "@v2"]
    # Generations run left to right; the root has the thick outline; dropped is faded and dashed.
    left = {b.get_url(): b.get_x() for b in boxes}
    assert left[data.node(S).id] < left[data.root_id] < left[data.node(C2).id] == left[data.node(D).id]
    widths = {b.get_url(): b.get_linewidth() for b in boxes}
    assert widths[data.root_id] == max(widths.values()) > widths[data.node(S).id]
    tmp_box = next(b for b in boxes if b.get_url() == data.node(TMP).id)
    assert tmp_box.get_edgecolor()[3] < 1 and tmp_box.get_linestyle() != "solid"
    qualifiers = {t.get_url(): t.get_text() for t in gids(figure, "node-qualifier")}
    names = {t.get_url(): t.get_text() for t in gids(figure, "node-name")}
    assert {qualifiers[n.id] + "." + names[n.id] for n in data.nodes} == {n.name for n in data.nodes}
    assert any(t.get_text().startswith("DROPPED 2024-01-01") for t in gids(figure, "node-label"))


def test_clones_of_one_table_in_other_schemas_and_databases_read_apart(lake):
    lake.sql(
        "CREATE DATABASE shop; CREATE SCHEMA shop.sales; CREATE TABLE prod_an_hour_ago (id INT);"
        "CREATE SCHEMA shop.sales_dev CLONE shop.sales; CREATE DATABASE shop_dev CLONE shop"
    )
    names = [f"{q}.PROD_AN_HOUR_AGO" for q in ("SHOP.SALES", "SHOP.SALES_DEV", "SHOP_DEV.SALES", "SHOP_DEV.SALES_DEV")]

    widget = lineage_widget(lake, "shop.sales.prod_an_hour_ago")

    assert sorted(n.name for n in widget.data.nodes) == sorted(names)
    figure = widget.figure()
    qualifiers = {t.get_url(): t.get_text() for t in gids(figure, "node-qualifier")}
    tables = {t.get_url(): t.get_text() for t in gids(figure, "node-name")}
    # Each box says which database and schema its table is in, not just "PROD_AN_HOUR_AGO" four times.
    assert sorted(f"{qualifiers[n.id]}.{tables[n.id]}" for n in widget.data.nodes) == sorted(names)
    # The text lines fit their boxes.
    renderer = FigureCanvasAgg(figure).get_renderer()
    boxes = {b.get_url(): b.get_window_extent(renderer) for b in gids(figure, "lineage-node")}
    for text in gids(figure, "node-qualifier") + gids(figure, "node-name") + gids(figure, "node-label"):
        assert text.get_window_extent(renderer).x1 <= boxes[text.get_url()].x1, text.get_text()
    # The table and the picker name them in full.
    assert sorted(cell.lstrip("└ ") for cell in widget.shown().column("table")) == sorted(names)
    labels = [label for label, _ in widget.root_picker.options]
    assert float(widget.root_picker.layout.width.removesuffix("em")) >= 0.6 * max(len(label) for label in labels) + 6


def test_the_title_of_a_long_name_fits_the_figure(lake):
    name = "customer_orders_reconciled_with_the_payment_provider_daily"
    lake.sql(f"CREATE DATABASE reporting_archive; CREATE SCHEMA reporting_archive.finance; CREATE TABLE {name} (id INT)")
    figure = plot_lineage(LineageData.from_lake(lake, f"reporting_archive.finance.{name}"))
    renderer = FigureCanvasAgg(figure).get_renderer()
    [title] = gids(figure, "title")
    assert name.upper() in title.get_text()
    assert title.get_window_extent(renderer).x1 <= figure.bbox.x1, "the title runs past the figure's right edge"


def test_names_too_long_for_a_box_are_cut_in_the_middle():
    qualifier, table = name_lines("A_VERY_LONG_DATABASE_NAME_INDEED.AND_A_LONG_SCHEMA_NAME_AS_WELL." + "T" * 60 + "_DEV")

    assert qualifier.startswith("A_VERY_LONG") and qualifier.endswith("AS_WELL") and "…" in qualifier
    assert table.startswith("TTT") and table.endswith("T_DEV") and "…" in table
    assert name_lines("LAKE.PUBLIC.ORDERS") == ("LAKE.PUBLIC", "ORDERS")


def test_plot_lineage_bars_split_bytes_owned_and_shared(graph_lake):
    data = LineageData.from_lake(graph_lake, "c1")

    figure = plot_lineage(data)

    owned = {r.get_url(): r.get_width() for r in gids(figure, "owned-bytes")}
    shared = {r.get_url(): r.get_width() for r in gids(figure, "shared-bytes")}
    assert set(owned) == set(shared) == {n.id for n in data.nodes}
    for node in data.nodes:
        total = owned[node.id] + shared[node.id]
        assert owned[node.id] / total == pytest.approx(node.bytes_owned / (node.bytes_owned + node.bytes_shared))
    assert shared[data.node(S).id] == 0 and shared[data.node(D).id] == 0
    assert owned[data.node(TMP).id] == 0


def test_plot_lineage_into_given_axes_and_without_pyplot(graph_lake):
    import matplotlib.pyplot as plt

    open_before = plt.get_fignums()
    data = LineageData.from_lake(graph_lake, "s")
    figure = Figure()
    ax = figure.add_subplot()

    assert plot_lineage(data, ax) is figure
    assert len(gids(figure, "lineage-node")) == 5
    assert plot_lineage(data).get_size_inches()[0] > 7
    assert plt.get_fignums() == open_before


# lineage_html -----------------------------------------------------------------------


def test_lineage_html_has_a_row_per_node_with_its_numbers(graph_lake):
    data = LineageData.from_lake(graph_lake, "c2")

    table = lineage_html(data)

    assert [n.name for n in data.nodes] == [S, C1, C2]  # c2's lineage: its sources, no siblings
    assert body_rows(table) == 3
    assert table.index(S) < table.index(C1) < table.index(C2)
    assert table.count("font-weight:bold;background") == 1
    assert f"{C1} @v1" in table and f"{S} @v2" in table
    c2 = data.node(C2)
    assert f">{c2.files_shared}<" in table and "SHALLOW CLONE" in table


def test_lineage_html_fades_dropped_tables(graph_lake):
    table = lineage_html(LineageData.from_lake(graph_lake, "c1"))

    assert body_rows(table) == 5
    assert table.count("opacity:") == 1


# LineageWidget ----------------------------------------------------------------------


def test_widget_shows_header_figure_table_and_live_tables_to_reroot_on(graph_lake):
    widget = lineage_widget(graph_lake, "c1")

    assert isinstance(widget, LineageWidget)
    assert f"<b>{C1}</b> · SHALLOW CLONE of {S}@v2" in widget.header.value
    assert "1 source above, 3 clones below" in widget.header.value
    assert body_rows(widget.table.value) == 5
    [output] = widget.plot.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_SIGNATURE)
    # The dropped clone is drawn, but cannot be re-rooted on.
    assert [value for _label, value in widget.root_picker.options] == [S, C1, C2, D]
    assert widget.root_picker.value == C1


def test_picking_another_table_reroots_the_graph(graph_lake):
    widget = lineage_widget(graph_lake, "c1")

    widget.root_picker.value = C2

    assert widget.data.root.name == C2
    assert [n.name for n in widget.data.nodes] == [S, C1, C2]
    assert widget.table_name == C2
    assert f"<b>{C2}</b>" in widget.header.value and "2 sources above, 0 clones below" in widget.header.value
    assert [value for _label, value in widget.root_picker.options] == [S, C1, C2]

    widget.root_picker.value = S

    assert widget.data.root.name == S
    assert len(widget.data.nodes) == 5
    assert "0 sources above, 4 clones below" in widget.header.value
    widget.reroot("d")
    assert widget.data.root.name == D and widget.root_picker.value == D


def test_refresh_picks_up_new_clones_and_says_so_when_the_root_is_dropped(lake):
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    widget = lineage_widget(lake, "s")
    assert len(widget.data.nodes) == 1

    lake.sql("CREATE TABLE c CLONE s")
    widget.refresh_button.click()

    assert [n.name for n in widget.data.nodes] == ["LAKE.PUBLIC.S", "LAKE.PUBLIC.C"]
    assert len(gids(widget.figure(), "lineage-edge")) == 1

    lake.sql("DROP TABLE s")
    widget.refresh_button.click()

    assert widget.error == "s is gone: SQL compilation error: Object 'LAKE.PUBLIC.S' does not exist or not authorized."
    shown = widget.shown()
    assert shown.status.startswith(widget.error)
    assert (shown.header, shown.rows, shown.images, widget.data) == ("s · clone lineage", (), 0, None)
    # The last graph's tables stay on offer, to re-root on one that is still there.
    assert widget.root_picker.value is None
    widget.root_picker.value = "LAKE.PUBLIC.C"
    assert widget.error is None and widget.data.root.name == "LAKE.PUBLIC.C"
    assert widget.shown().column("table") == ["LAKE.PUBLIC.S", "└ LAKE.PUBLIC.C"]


def test_a_table_whose_delta_log_is_gone_is_an_error_not_an_empty_node(lake):
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    widget = lineage_widget(lake, "s")

    shutil.rmtree(Path(location(lake, "s")) / "_delta_log")

    assert widget.refresh() is False
    assert widget.error == "Refresh failed: LAKE.PUBLIC.S has no Delta log: its folder is gone."
    assert widget.shown().rows == () and "no log" not in widget.shown().header


def test_rerooting_on_a_table_that_is_gone_shows_the_error(lake):
    lake.sql("CREATE TABLE s (id INT); CREATE TABLE c CLONE s")
    widget = lineage_widget(lake, "s")
    lake.sql("DROP TABLE c")

    widget.root_picker.value = "LAKE.PUBLIC.C"

    assert widget.shown().status == (
        "Re-root failed: Cannot show the clone lineage of LAKE.PUBLIC.C: "
        "SQL compilation error: Object 'LAKE.PUBLIC.C' does not exist or not authorized."
    )
    # The graph on show stays: it is the re-root that failed, not the table shown.
    assert widget.error is None and widget.data.root.name == "LAKE.PUBLIC.S"
    assert widget.root_picker.value == "LAKE.PUBLIC.S" and widget.shown().images == 1
    with pytest.raises(WidgetError) as raised:
        widget.reroot("c")
    assert raised.value.__suppress_context__ and raised.value.__cause__ is None
    assert "\n" not in str(raised.value)


def test_rerooting_quotes_names_that_need_it(lake):
    assert sql_name('LAKE.PUBLIC.My "odd" Table') == 'LAKE.PUBLIC."My ""odd"" Table"'
    lake.sql('CREATE TABLE s (id INT); CREATE TABLE "Mixed Case" CLONE s')
    widget = lineage_widget(lake, "s")

    widget.root_picker.value = "LAKE.PUBLIC.Mixed Case"

    assert widget.data.root.name == "LAKE.PUBLIC.Mixed Case"
    assert widget.data.source_of(widget.data.root).name == "LAKE.PUBLIC.S"


def test_static_rendering_is_png_and_the_mimebundle_falls_back_to_it(graph_lake):
    widget = lineage_widget(graph_lake, "c1")

    assert widget.static().startswith(PNG_SIGNATURE)
    assert isinstance(widget.figure(), Figure)
    bundle = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"]) == widget.static()
    assert body_rows(bundle["text/html"].split("<img")[0]) == 5
    assert "data:image/png;base64," in bundle["text/html"]
