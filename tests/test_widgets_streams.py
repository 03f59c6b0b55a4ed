"""Streams in the widgets: the streams widget, and stream offsets on the version timeline.

On a real Lake (real Spark, real Delta) with a manual clock: staleness comes
from moving the clock past a table's consume-within window, as in
tests/test_streams.py.
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import TYPE_CHECKING

import pytest
from matplotlib import dates as mdates
from matplotlib.figure import Figure

import lakeclone
from lakeclone.widgets import WidgetError, _style, plot_streams, plot_timeline, streams, timeline
from lakeclone.widgets._live import table_text
from lakeclone.widgets.streams import StreamsData, StreamsWidget, streams_html
from lakeclone.widgets.timeline import TimelineData, timeline_html

if TYPE_CHECKING:
    from collections.abc import Callable

    from warehouse_templates import Build, WarehouseTemplates

pytestmark = pytest.mark.spark

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DAY = dt.timedelta(days=1)


def build_pipeline(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    """Table RAW, whose streams must be consumed within one day, and three streams on it.

    * v0 CREATE TABLE, v1 INSERT (1, 'a'), (2, 'b');
    * FORGOTTEN, made then: turning change tracking on is v2 (Delta's protocol
      upgrade), v3 (row tracking's backfill) and v4 (the properties), and its
      offset is v4; nobody consumes it, and two days later it is stale;
    * two days later, CHANGES (offset v4 too), v5 INSERT (3, 'c'), OTHER.APPENDS
      (APPEND_ONLY, offset v5), v6 UPDATE of row 2, v7 INSERT (4, 'd').

    CHANGES holds 4 changes (rows 3 and 4, and row 2's DELETE and INSERT),
    APPENDS 1 (row 4). A table CURATED is there to consume into.
    """
    lake.sql("CREATE TABLE raw (id INT, v STRING) DATA_RETENTION_TIME_IN_DAYS = 1 MAX_DATA_EXTENSION_TIME_IN_DAYS = 1")
    lake.sql("INSERT INTO raw VALUES (1, 'a'), (2, 'b')")
    lake.sql("CREATE STREAM forgotten ON TABLE raw")
    lake.sql("CREATE TABLE curated (id INT, v STRING)")
    lake.sql("CREATE SCHEMA other; USE SCHEMA public")
    clock.advance(days=2)
    lake.sql("CREATE STREAM changes ON TABLE raw")
    lake.sql("INSERT INTO raw VALUES (3, 'c')")
    lake.sql("CREATE STREAM other.appends ON TABLE public.raw APPEND_ONLY = TRUE")
    lake.sql("UPDATE raw SET v = 'B' WHERE id = 2")
    lake.sql("INSERT INTO raw VALUES (4, 'd')")


def _pipeline(lake: lakeclone.Lake) -> None:
    assert isinstance(lake.clock, lakeclone.ManualClock)
    build_pipeline(lake, lake.clock)


@pytest.fixture(scope="module")
def piped(warehouse_templates: WarehouseTemplates) -> lakeclone.Lake:
    """One Lake holding :func:`build_pipeline`'s tables and streams, for the tests that only read it."""
    return warehouse_templates.shared(_pipeline)


@pytest.fixture
def pipeline(copy_of: Callable[[Build], lakeclone.Lake]) -> lakeclone.Lake:
    """A copy of what :func:`build_pipeline` made, the test's own, for tests that change it (``clock`` is its clock)."""
    return copy_of(_pipeline)


def described(lake: lakeclone.Lake, name: str) -> tuple[int, str]:
    (row,) = lake.sql(f"DESCRIBE STREAM {name}").collect()
    return row.offset_version, row.stale


def gids(figure: Figure, gid: str) -> list:
    [ax] = figure.axes
    return [a for a in ax.get_children() if a.get_gid() == gid]


# StreamsData -------------------------------------------------------------------------


def test_streams_data_lists_a_schemas_streams_with_offsets_pending_changes_and_staleness(piped):
    data = StreamsData.from_lake(piped)

    assert data.schema == "LAKE.PUBLIC"  # the current schema
    assert [s.qualified for s in data.streams] == ["LAKE.PUBLIC.CHANGES", "LAKE.PUBLIC.FORGOTTEN"]
    changes, forgotten = data.streams
    assert (changes.table, changes.mode, changes.offset_version, changes.offsets) == (
        "LAKE.PUBLIC.RAW",
        "DEFAULT",
        4,
        "LAKE.PUBLIC.RAW@4",
    )
    assert (changes.pending, changes.stale, changes.invalid_reason) == (4, False, None)
    assert changes.pending == piped.sql("SELECT COUNT(*) FROM changes").first()[0]
    assert changes.created_on.tzinfo is not None and changes.created_on.date() == dt.date(2024, 1, 3)
    assert changes.stale_after == changes.created_on + DAY  # consumed within a day
    # A stale stream cannot be read: no count, and SHOW STREAMS' reason.
    assert (forgotten.offset_version, forgotten.pending, forgotten.stale) == (4, None, True)
    assert forgotten.stale_after == forgotten.created_on + DAY < data.now
    assert forgotten.invalid_reason.startswith("its offset is outside the data retention period since 2024-01-02")
    assert data.stale == (forgotten,) and data.stream("FORGOTTEN") is forgotten
    assert (changes.summary, forgotten.summary) == ("CHANGES · 4 pending", "FORGOTTEN · stale")
    with pytest.raises(KeyError):
        data.stream("APPENDS")

    [appends] = StreamsData.from_lake(piped, "other").streams
    assert (appends.qualified, appends.table, appends.mode, appends.offset_version, appends.pending) == (
        "LAKE.OTHER.APPENDS",
        "LAKE.PUBLIC.RAW",
        "APPEND_ONLY",
        5,
        1,
    )


def test_counting_moves_no_offset_and_a_consuming_statement_empties_the_stream(pipeline):
    before = StreamsData.from_lake(pipeline)
    StreamsData.from_lake(pipeline)

    assert described(pipeline, "changes") == (4, "false")
    assert StreamsData.from_lake(pipeline).stream("CHANGES").pending == before.stream("CHANGES").pending == 4

    pipeline.sql("INSERT INTO curated SELECT id, v FROM changes WHERE METADATA$ACTION = 'INSERT'")
    after = StreamsData.from_lake(pipeline).stream("CHANGES")

    assert (after.offset_version, after.pending) == (7, 0)
    assert after.stale_after > before.stream("CHANGES").stale_after  # consuming pushed it forward


def test_a_stream_whose_table_is_dropped_is_stale_with_no_stale_after(pipeline):
    pipeline.sql("DROP TABLE raw")

    data = StreamsData.from_lake(pipeline)

    changes = data.stream("CHANGES")
    assert (changes.stale, changes.pending, changes.stale_after, changes.source_gone) == (True, None, None, True)
    assert changes.invalid_reason == "its base table LAKE.PUBLIC.RAW was dropped or replaced"
    assert table_text(streams_html(data))[1][0][6:] == ("–", "its base table LAKE.PUBLIC.RAW was dropped or replaced")


# plot_streams and streams_html -------------------------------------------------------


def test_plot_streams_draws_the_time_left_before_each_stream_goes_stale(piped):
    data = StreamsData.from_lake(piped)

    figure = plot_streams(data)

    [ax] = figure.axes
    changes, forgotten = [bar for bar in ax.patches if bar.get_gid() == "time-left"]
    # Live: a bar from now to its STALE_AFTER. Stale: from its STALE_AFTER back to now, hatched, in the error colour.
    assert changes.get_width() == pytest.approx((data.stream("CHANGES").stale_after - data.now) / DAY)
    assert changes.get_width() > 0 and not changes.get_hatch()
    assert forgotten.get_width() == pytest.approx((data.stream("FORGOTTEN").stale_after - data.now) / DAY)
    assert forgotten.get_width() < 0 and forgotten.get_hatch() == "////"
    assert to_hex(forgotten.get_facecolor()) == _style.STALE_STREAM_COLOUR.lower()
    labels = [t.get_text() for t in ax.texts if t.get_gid() == "stream-label"]
    assert labels[0].startswith("v4 · 4 pending · 23h") and labels[1] == "v4 · stale"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["CHANGES", "FORGOTTEN"]
    assert ax.get_title(loc="left").startswith("LAKE.PUBLIC: 2 streams, 1 stale")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["time left to consume", "stale: recreate it"]


def test_streams_html_has_a_row_per_stream_and_marks_the_stale_ones(piped):
    data = StreamsData.from_lake(piped)

    table = streams_html(data)

    columns, rows = table_text(table)
    assert columns == ("name", "table", "mode", "offset version", "pending changes", "stale", "stale after", "reason")
    assert [row[:6] for row in rows] == [
        ("CHANGES", "LAKE.PUBLIC.RAW", "DEFAULT", "v4", "4", "false"),
        ("FORGOTTEN", "LAKE.PUBLIC.RAW", "DEFAULT", "v4", "–", "true"),
    ]
    assert rows[0][6].startswith("2024-01-04 00:00:00") and rows[0][6].endswith("(in 23h 59m)")
    assert rows[1][6].startswith("2024-01-02 00:00:00") and rows[1][6].endswith("(1d 0h ago)")
    assert rows[0][7] == "" and rows[1][7].startswith("its offset is outside the data retention period")
    assert table.count(f"color:{_style.STALE_STREAM_COLOUR};") == 1  # the one stale cell


# StreamsWidget -----------------------------------------------------------------------


def test_widget_shows_header_table_and_figure_and_falls_back_to_html_and_png(piped):
    widget = streams(piped)

    assert isinstance(widget, StreamsWidget) and widget.schema == "LAKE.PUBLIC"
    shown = widget.shown()
    assert shown.header.startswith("LAKE.PUBLIC · 2 streams · 1 stale · 4 pending changes (as of 2024-01-03")
    assert shown.status == "" and shown.images == 1
    assert shown.column("name") == ["CHANGES", "FORGOTTEN"]
    assert shown.column("pending changes") == ["4", "–"]
    assert shown.column("stale") == ["false", "true"]
    [output] = widget.plot.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_SIGNATURE)
    bundle = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"]) == widget.static()
    assert table_text(bundle["text/html"]) == (shown.columns, shown.rows)  # the first table after the header
    assert 'alt="streams of LAKE.PUBLIC"' in bundle["text/html"]

    other = streams(piped, "other").shown()
    assert other.header.startswith("other · 1 stream · 0 stale · 1 pending change ")
    assert other.column("name") == ["APPENDS"] and other.column("mode") == ["APPEND_ONLY"]


def test_widget_of_the_current_schema_keeps_it_after_a_use(pipeline):
    widget = streams(pipeline)
    pipeline.sql("USE SCHEMA other")

    widget.refresh()

    assert widget.shown().column("name") == ["CHANGES", "FORGOTTEN"]
    assert streams(pipeline).shown().column("name") == ["APPENDS"]


def test_refresh_button_shows_a_consumption_and_a_stream_going_stale(pipeline, clock):
    widget = streams(pipeline)
    pipeline.sql("INSERT INTO curated SELECT id, v FROM changes WHERE METADATA$ACTION = 'INSERT'")

    widget.refresh_button.click()

    assert widget.shown().column("offset version") == ["v7", "v4"]
    assert widget.shown().column("pending changes") == ["0", "–"]

    clock.advance(days=2)
    widget.refresh_button.click()

    assert widget.shown().column("stale") == ["true", "true"]
    assert widget.shown().header.startswith("LAKE.PUBLIC · 2 streams · 2 stale · 0 pending changes")
    with pytest.raises(lakeclone.LakecloneError, match=r"Stream LAKE\.PUBLIC\.CHANGES is stale"):
        pipeline.sql("SELECT * FROM changes")


def test_a_schema_without_streams_shows_an_empty_table_and_says_so(lake):
    lake.sql("CREATE SCHEMA empty")

    widget = streams(lake, "empty")

    shown = widget.shown()
    assert shown.header.startswith("empty · 0 streams · 0 stale · 0 pending changes")
    assert shown.columns[0] == "name" and shown.rows == () and shown.images == 1
    [ax] = widget.figure().axes
    assert [t.get_text() for t in ax.texts] == ["no streams in empty"]


def test_an_unknown_schema_raises_one_line_and_a_dropped_one_puts_the_widget_in_the_error_state(lake):
    with pytest.raises(WidgetError) as raised:
        streams(lake, "nope")
    assert str(raised.value) == (
        "Cannot show the streams of nope: SQL compilation error: Schema 'LAKE.NOPE' does not exist or not authorized."
    )
    assert raised.value.__cause__ is None and raised.value.__suppress_context__

    lake.sql("CREATE SCHEMA gone; CREATE TABLE t (id INT); CREATE STREAM s ON TABLE t")
    widget = streams(lake, "gone")
    lake.sql("DROP SCHEMA gone")

    assert widget.refresh() is False

    shown = widget.shown()
    assert widget.error == "gone is gone: SQL compilation error: Schema 'LAKE.GONE' does not exist or not authorized."
    assert shown.status.startswith(widget.error) and "UNDROP SCHEMA brings back a dropped schema" in shown.status
    assert (shown.header, shown.rows, shown.images) == ("gone · streams", (), 0)
    assert "image/png" not in widget._repr_mimebundle_()

    lake.sql("UNDROP SCHEMA gone")
    assert widget.refresh() is True and widget.shown().column("name") == ["S"]


# Streams on the version timeline -----------------------------------------------------


def test_timeline_data_reads_the_streams_on_its_table_from_every_schema(piped):
    data = TimelineData.from_lake(piped, "raw")

    assert [(s.qualified, s.offset_version, s.pending, s.stale) for s in data.streams] == [
        ("LAKE.PUBLIC.CHANGES", 4, 4, False),
        ("LAKE.PUBLIC.FORGOTTEN", 4, None, True),
        ("LAKE.OTHER.APPENDS", 5, 1, False),
    ]
    assert [s.name for s in data.streams_at(4)] == ["CHANGES", "FORGOTTEN"] and data.streams_at(6) == ()
    assert [s.name for s in data.stale_streams] == ["FORGOTTEN"]
    assert TimelineData.from_lake(piped, "lake.public.raw").streams == data.streams
    assert TimelineData.from_lake(piped, "raw", streams=False).streams == ()
    assert TimelineData.from_lake(piped, "curated").streams == ()


def test_timeline_leaves_out_streams_on_a_dropped_table_of_the_same_name(pipeline):
    pipeline.sql("DROP TABLE raw; CREATE TABLE raw (id INT, v STRING)")

    data = TimelineData.from_lake(pipeline, "raw")

    assert data.streams == ()
    assert "streams" not in table_text(timeline_html(data))[0]
    assert StreamsData.from_lake(pipeline).stream("CHANGES").source_gone  # the streams widget still lists them


def test_a_stream_on_a_view_shows_on_the_timeline_of_the_table_the_view_reads(pipeline):
    pipeline.sql("CREATE VIEW big AS SELECT id, v FROM raw WHERE id > 1")
    pipeline.sql("CREATE STREAM big_changes ON VIEW big")
    (described_row,) = pipeline.sql("DESCRIBE STREAM big_changes").collect()
    pipeline.sql("INSERT INTO raw VALUES (5, 'e'), (0, 'z')")  # one row in the view, one not

    data = TimelineData.from_lake(pipeline, "raw")

    assert (described_row.table_name, described_row.offset_version) == ("LAKE.PUBLIC.BIG", 7)
    on_view = data.streams[-1]
    assert (on_view.qualified, on_view.table, on_view.source_type) == ("LAKE.PUBLIC.BIG_CHANGES", "LAKE.PUBLIC.BIG", "View")
    assert (on_view.offset_version, on_view.pending, on_view.offset_on("LAKE.PUBLIC.RAW")) == (7, 1, 7)
    assert [s.name for s in data.streams_at(7)] == ["BIG_CHANGES"]
    assert TimelineData.from_lake(pipeline, "curated").streams == ()
    row = StreamsData.from_lake(pipeline)._repr_html_()
    assert "LAKE.PUBLIC.BIG <small>(view)</small>" in row


def test_plot_timeline_marks_each_streams_offset_under_its_version(piped):
    data = TimelineData.from_lake(piped, "raw")

    figure = plot_timeline(data)

    [ax] = figure.axes
    live = [c for c in ax.collections if c.get_gid() == "stream-offset"]
    stale = [c for c in ax.collections if c.get_gid() == "stale-stream-offset"]
    assert [c.get_url() for c in live] == ["LAKE.PUBLIC.CHANGES", "LAKE.OTHER.APPENDS"]
    assert [c.get_url() for c in stale] == ["LAKE.PUBLIC.FORGOTTEN"]
    # Under the version of its offset (one slot per version), in lanes below the files.
    assert [c.get_offsets()[0][0] for c in live] == [4.0, 5.0] and stale[0].get_offsets()[0][0] == 4.0
    lanes = sorted((c.get_offsets()[0][1] for c in (*live, *stale)), reverse=True)
    [lane_top] = [line.get_ydata()[0] for line in ax.lines if line.get_gid() == "stream-lane"]
    assert lane_top > lanes[0] > lanes[1] > lanes[2] >= ax.get_ylim()[0]
    assert max(ax.get_yticks()) == -min(ax.get_yticks()) and min(ax.get_yticks()) >= lane_top  # file ticks only
    # Stale is drawn differently: another marker, the error colour.
    assert to_hex(stale[0].get_facecolors()[0]) == _style.STALE_STREAM_COLOUR.lower()
    assert to_hex(live[0].get_facecolors()[0]) == _style.STREAM_COLOUR.lower()
    assert stale[0].get_paths()[0] != live[0].get_paths()[0]
    # Pending changes run from the offset to the current version; a stale stream has none.
    bands = [line.get_xdata() for line in ax.lines if line.get_gid() == "stream-pending"]
    assert [list(band) for band in bands] == [[4.0, 7.0], [5.0, 7.0]]
    labels = [t.get_text() for t in ax.texts if t.get_gid() == "stream-label"]
    assert labels == ["CHANGES · 4 pending", "FORGOTTEN · stale", "APPENDS · 1 pending"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "stream: changes pending" in legend
    assert [text.split(":")[0] for text in legend if text.startswith(("CHANGES", "FORGOTTEN", "APPENDS"))] == [
        "CHANGES",
        "FORGOTTEN",
        "APPENDS",
    ]
    assert any(text.startswith("CHANGES: stale after 2024-01-04 00:00:00") for text in legend)
    assert any(text.startswith("FORGOTTEN: stale since 2024-01-02 00:00:00") for text in legend)
    assert ax.get_title(loc="left").endswith("3 streams (1 stale)")


def test_plot_timeline_by_time_puts_the_offsets_at_their_versions_commit_times(piped):
    data = TimelineData.from_lake(piped, "raw")

    figure = plot_timeline(data, spacing="time")

    [ax] = figure.axes
    [appends] = [c for c in ax.collections if c.get_url() == "LAKE.OTHER.APPENDS"]
    assert appends.get_offsets()[0][0] == pytest.approx(mdates.date2num(data.entry(5).timestamp))


def test_timeline_widget_lists_the_streams_at_their_versions_in_its_table_and_header(piped):
    widget = timeline(piped, "raw")

    shown = widget.shown()
    assert shown.columns == ("version", "committed", "operation", "rows", "+files", "−files", "retention", "streams", "query id")
    by_version = dict(zip(shown.column("version"), shown.column("streams"), strict=True))
    assert by_version["v7"] == by_version["v6"] == by_version["v3"] == by_version["v1"] == ""
    assert by_version["v5"].startswith("APPENDS: 1 pending, stale after 2024-01-04 00:00:00")
    changes, forgotten = by_version["v4"].split("; ")
    assert changes.startswith("CHANGES: 4 pending, stale after 2024-01-04 00:00:00") and changes.endswith("(in 23h 59m)")
    assert forgotten.startswith("FORGOTTEN: stale since 2024-01-02 00:00:00")
    assert " · streams: CHANGES at v4 (4 pending), FORGOTTEN at v4 (stale), APPENDS at v5 (1 pending) (as of" in shown.header
    # The static fallback shows the same, and picking a version shows the offsets there.
    assert "<b>FORGOTTEN</b>: <span" in widget._repr_mimebundle_()["text/html"]
    widget.selected_version = 4
    assert "Stream offsets here: <b>CHANGES</b>: 4 pending" in widget.details.value
    widget.selected_version = 7
    assert "Stream offsets here" not in widget.details.value


def to_hex(colour) -> str:
    from matplotlib.colors import to_hex as hex_of

    return hex_of(colour, keep_alpha=False)
