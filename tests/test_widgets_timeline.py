"""The version timeline widget, on a real Lake: real Spark, real Delta, a manual clock."""

from __future__ import annotations

import base64
import datetime as dt
from typing import TYPE_CHECKING

import pytest
from matplotlib import dates as mdates
from matplotlib.figure import Figure

import lakeclone
from lakeclone.errors import LakecloneError
from lakeclone.widgets import plot_timeline, timeline
from lakeclone.widgets._live import html_text, table_text
from lakeclone.widgets.timeline import TimelineData, VersionTimeline, timeline_html

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from pyspark.sql import SparkSession
    from warehouse_templates import Build

pytestmark = pytest.mark.spark

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _aged(lake: lakeclone.Lake) -> None:
    """Table ``t``: four commits on 2024-01-01, then a one-day retention and a commit two days later.

    Versions 0-3 (CREATE TABLE, WRITE, UPDATE, DELETE) end up beyond the
    retention horizon; version 4 (WRITE) is within it.
    """
    lake.sql("CREATE TABLE t (id INT, name STRING) ENABLE_DELETION_VECTORS = TRUE")
    lake.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    lake.sql("UPDATE t SET name = 'z' WHERE id = 1")
    lake.sql("DELETE FROM t WHERE id = 2")
    lake.sql("ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 1")
    assert isinstance(lake.clock, lakeclone.ManualClock)
    lake.clock.advance(days=2)
    lake.sql("INSERT INTO t VALUES (4, 'd')")


@pytest.fixture
def lake(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    spark: SparkSession,
    clock: lakeclone.ManualClock,
    copy_of: Callable[[Build], lakeclone.Lake],
) -> lakeclone.Lake:
    """An empty Lake; for a test that asks for :func:`aged_table`, a copy of the warehouse :func:`_aged` built."""
    if "aged_table" in request.fixturenames:
        return copy_of(_aged)
    return lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=clock)


@pytest.fixture
def aged_table(lake: lakeclone.Lake) -> str:
    """The name of :func:`_aged`'s table, in ``lake``."""
    return "t"


def history_metrics(lake: lakeclone.Lake, table: str) -> dict[int, dict[str, str]]:
    history = lake.sql(f"DESCRIBE HISTORY {table}").collect()
    return {row["version"]: row["operationMetrics"] for row in history}


def body_rows(table_html: str) -> int:
    # One header row in <thead>; every other <tr is a version.
    return table_html.count("<tr") - 1


# TimelineData ---------------------------------------------------------------


def test_timeline_data_lists_versions_oldest_first_with_their_operations(lake, aged_table):
    data = TimelineData.from_lake(lake, aged_table)

    assert data.table == "t"
    assert [v.version for v in data.versions] == [0, 1, 2, 3, 4]
    assert [v.operation for v in data.versions] == ["CREATE TABLE", "WRITE", "UPDATE", "DELETE", "WRITE"]
    assert data.current.version == 4
    assert data.entry(2).operation == "UPDATE"
    with pytest.raises(KeyError):
        data.entry(99)


def test_timeline_data_reads_rows_and_files_from_the_operation_metrics(lake, aged_table):
    data = TimelineData.from_lake(lake, aged_table)
    metrics = history_metrics(lake, aged_table)

    for entry in data.versions:
        assert entry.metrics == metrics[entry.version]
    create, insert, update, delete, late_insert = data.versions
    # Delta's own metric names: WRITE counts numFiles, UPDATE and DELETE numAddedFiles.
    for entry in (insert, late_insert):
        assert (entry.files_added, entry.bytes_added) == (
            int(entry.metrics["numFiles"]),
            int(entry.metrics["numOutputBytes"]),
        )
    for entry in (update, delete):
        assert (entry.files_added, entry.files_removed, entry.bytes_added) == (
            int(entry.metrics["numAddedFiles"]),
            int(entry.metrics["numRemovedFiles"]),
            int(entry.metrics["numAddedBytes"]),
        )
    assert (create.files_added, create.files_removed) == (0, 0)
    assert insert.files_added >= 1 and insert.files_removed == 0 and insert.rows == 3
    assert update.files_added >= 1 and update.files_removed >= 1
    assert update.row_changes == "1 updated"
    # Deleting one row marks it in a deletion vector instead of rewriting its file.
    assert delete.files_removed == 0 and delete.metrics["numDeletionVectorsAdded"] == "1"
    assert delete.row_changes == "1 deleted"
    assert late_insert.rows == 1


def test_timeline_data_puts_versions_older_than_retention_beyond_the_horizon(lake, clock, aged_table):
    data = TimelineData.from_lake(lake, aged_table)

    assert data.retention_days == 1
    assert data.now.tzinfo is not None
    assert data.now <= clock.peek()
    assert data.horizon == data.now - dt.timedelta(days=1)
    assert all(v.timestamp.tzinfo is not None for v in data.versions)
    assert data.versions[0].timestamp.date() == dt.date(2024, 1, 1)
    assert data.versions[-1].timestamp.date() == dt.date(2024, 1, 3)
    # Version 3 was current until version 4 replaced it, after the horizon.
    assert [v.within_retention for v in data.versions] == [False, False, False, True, True]


def test_timeline_retention_flags_agree_with_what_time_travel_can_read(lake, aged_table):
    data = TimelineData.from_lake(lake, aged_table)

    for entry in data.versions:
        query = f"SELECT COUNT(*) FROM {aged_table} AT(VERSION => {entry.version})"
        if entry.within_retention:
            lake.sql(query).collect()
        else:
            with pytest.raises(LakecloneError, match="Time travel data is not available"):
                lake.sql(query).collect()


def test_timeline_data_of_a_fresh_table_is_all_within_the_default_retention(lake):
    lake.sql("CREATE TABLE fresh (id INT)")
    lake.sql("INSERT INTO fresh VALUES (1)")

    data = TimelineData.from_lake(lake, "fresh")

    assert data.retention_days == 7
    assert [v.within_retention for v in data.versions] == [True, True]


def test_timeline_data_of_a_missing_table_raises(lake):
    with pytest.raises(LakecloneError):
        TimelineData.from_lake(lake, "no_such_table")


# plot_timeline --------------------------------------------------------------


def test_plot_timeline_draws_one_marker_per_version_and_the_horizon(lake, aged_table):
    data = TimelineData.from_lake(lake, aged_table)

    figure = plot_timeline(data)

    assert isinstance(figure, Figure)
    [ax] = figure.axes
    [markers] = [c for c in ax.collections if c.get_gid() == "versions"]
    assert len(markers.get_offsets()) == 5
    # Expired versions are drawn faded, those time travel can still reach opaque.
    assert [alpha < 1 for alpha in markers.get_facecolors()[:, 3]] == [True, True, True, False, False]
    [horizon] = [line for line in ax.lines if line.get_gid() == "retention-horizon"]
    assert horizon.get_xdata()[0] == pytest.approx(2.5)  # between v2 and v3
    assert [p for p in ax.patches if p.get_gid() == "expired-region"]
    added_bars = [p for p in ax.patches if p.get_gid() == "files-added"]
    assert [bar.get_height() for bar in added_bars] == [v.files_added for v in data.versions]
    labels = [t.get_text() for t in ax.texts if t.get_gid() == "version-label"]
    assert labels == ["v0", "v1", "v2", "v3", "v4"]


def test_plot_timeline_by_time_puts_the_horizon_at_its_time(lake, aged_table):
    data = TimelineData.from_lake(lake, aged_table)
    figure = Figure()
    ax = figure.add_subplot()

    assert plot_timeline(data, ax, spacing="time") is figure

    [horizon] = [line for line in ax.lines if line.get_gid() == "retention-horizon"]
    assert horizon.get_xdata()[0] == pytest.approx(mdates.date2num(data.horizon))
    [markers] = [c for c in ax.collections if c.get_gid() == "versions"]
    commit_times = [mdates.date2num(v.timestamp) for v in data.versions]
    assert list(markers.get_offsets()[:, 0]) == pytest.approx(commit_times)
    with pytest.raises(ValueError, match="spacing"):
        plot_timeline(data, spacing="log")  # type: ignore[arg-type]


def test_plot_timeline_leaves_no_pyplot_figures_open(lake, aged_table):
    import matplotlib.pyplot as plt

    open_before = plt.get_fignums()

    plot_timeline(TimelineData.from_lake(lake, aged_table))

    assert plt.get_fignums() == open_before


# timeline_html --------------------------------------------------------------


def test_timeline_html_has_one_row_per_version_newest_first_expired_faded(lake, aged_table):
    data = TimelineData.from_lake(lake, aged_table)

    table = timeline_html(data, selected_version=2)

    assert body_rows(table) == 5
    assert table.index(">v4<") < table.index(">v3<") < table.index(">v0<")
    assert table.count("opacity:") == 3
    assert table.count("font-weight:bold") == 1
    _columns, rows = table_text(table)
    assert all(entry.query_id for entry in data.versions)
    assert [row[-1] for row in rows] == [f"{entry.query_id[:8]}…" for entry in reversed(data.versions)]


# VersionTimeline ------------------------------------------------------------


def test_widget_shows_header_table_and_figure(lake, aged_table):
    widget = timeline(lake, aged_table)

    assert isinstance(widget, VersionTimeline)
    shown = widget.shown()
    assert shown.header.startswith(
        "t · current version v4 · 5 versions · retention 1 day: time travel reaches back to 2024-01-02"
    )
    assert shown.status == "" and widget.error is None
    assert shown.column("version") == ["v4", "v3", "v2", "v1", "v0"]
    assert shown.column("retention") == ["within", "within", "expired", "expired", "expired"]
    assert shown.images == 1
    [output] = widget.plot.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_SIGNATURE)
    assert widget.selected_version == 4
    assert [value for _label, value in widget.version_picker.options] == [4, 3, 2, 1, 0]


def test_query_ids_show_shortened_whole_on_hover_and_in_the_details(lake, aged_table):
    widget = timeline(lake, aged_table)

    # The table shows each id's first characters, and the whole id when the pointer rests on it.
    ids = [v.query_id for v in reversed(widget.data.versions)]
    assert all(len(i) == 36 for i in ids)
    assert widget.shown().column("query id") == [i[:8] + "…" for i in ids]
    assert all(f'<code title="{i}">{i[:8]}…</code>' in widget.table.value for i in ids)
    # The picked version's details give it whole, to copy into BEFORE(STATEMENT => '<id>').
    for entry in widget.data.versions:
        widget.selected_version = entry.version
        assert f"query id {entry.query_id}" in html_text(widget.details.value)
    # A table still too wide for the notebook scrolls under the table itself, not at the bottom of the widget.
    assert widget.table.layout.overflow == "auto"
    assert "overflow-x:auto" in widget._repr_mimebundle_()["text/html"]
    # The picker is as wide as its longest option (ipywidgets' default 300 px cuts them).
    longest = max(len(label) for label, _ in widget.version_picker.options)
    assert float(widget.version_picker.layout.width.removesuffix("em")) >= 0.6 * longest + 6


def test_a_merges_clause_conditions_show_without_sparks_attribute_ids(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, v STRING); CREATE TABLE s (id INT, v STRING); INSERT INTO s VALUES (1, 'a')")
    lake.sql(
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.v = 'b' THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED AND s.id > 0 THEN INSERT (id, v) VALUES (s.id, s.v)"
    )
    recorded = lake.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0].operationParameters["notMatchedPredicates"]
    assert "(ID#" in recorded  # Delta records the condition as Spark analysed it
    widget = timeline(lake, "t")
    widget.selected_version = 1
    assert "(ID &gt; 0)" in widget.details.value and "#" not in widget.details.value.split("operationParameters")[1]


def test_picking_a_version_shows_its_parameters_and_metrics(lake, aged_table):
    widget = timeline(lake, aged_table)

    widget.selected_version = 2

    assert "<b>v2</b> · UPDATE" in widget.details.value
    assert f" · {lake.current_user} · " in widget.details.value and "unknown user" not in widget.details.value
    assert "numUpdatedRows" in widget.details.value
    assert "operationParameters" in widget.details.value
    assert widget.table.value.count("font-weight:bold") == 1
    with pytest.raises(KeyError):
        widget.selected_version = 99


def test_refresh_button_picks_up_a_new_commit_and_keeps_the_pick(lake, aged_table):
    widget = timeline(lake, aged_table)
    widget.selected_version = 1

    lake.sql("INSERT INTO t VALUES (5, 'e')")
    widget.refresh_button.click()

    assert widget.data.current.version == 5
    assert body_rows(widget.table.value) == 6
    assert "current version <b>v5</b>" in widget.header.value
    assert widget.selected_version == 1


def test_a_dropped_table_puts_the_timeline_in_the_error_state_until_it_is_back(lake, aged_table):
    widget = timeline(lake, aged_table)
    widget.selected_version = 2
    lake.sql("DROP TABLE t")

    assert widget.refresh() is False

    assert widget.error == "t is gone: SQL compilation error: Object 'LAKE.PUBLIC.T' does not exist or not authorized."
    shown = widget.shown()
    assert shown.status.startswith(widget.error) and "UNDROP TABLE" in shown.status
    # Nothing stale stays on show: no versions, no picture, nothing to pick.
    assert (shown.header, shown.rows, shown.images) == ("t · version timeline", (), 0)
    assert widget.data is None and widget.static() == b"" and widget.details.value == ""
    assert widget.version_picker.options == () and widget.version_picker.disabled
    assert widget.selected_version is None
    with pytest.raises(ValueError, match="no version timeline on show"):
        widget.figure()
    bundle = widget._repr_mimebundle_()
    assert "image/png" not in bundle and "t is gone" in bundle["text/html"] and "<table" not in bundle["text/html"]

    lake.sql("UNDROP TABLE t")
    widget.refresh_button.click()

    assert widget.error is None and widget.shown().status == ""
    assert len(widget.shown().rows) == 5 and widget.shown().images == 1
    assert widget.selected_version == 4 and not widget.version_picker.disabled


def test_two_timelines_of_one_table_each_show_the_moment_they_read(lake, clock):
    # What notebook 01 relies on: a widget shown in one section is not changed by a later section's.
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    morning = timeline(lake, "t")
    lake.sql("ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 1")
    clock.advance(days=2)

    later = timeline(lake, "t")

    assert "retention 7 days" in morning.shown().header and "retention 1 day" in later.shown().header
    assert morning.shown().column("retention") == ["within"] * 2
    assert later.shown().column("retention") == ["within", "expired"]
    assert "retention 7 days" in morning._repr_mimebundle_()["text/html"]
    assert morning.refresh() and morning.shown().rows == later.shown().rows


def test_static_rendering_is_png_and_the_mimebundle_falls_back_to_it(lake, aged_table):
    widget = timeline(lake, aged_table)

    assert widget.static().startswith(PNG_SIGNATURE)
    assert isinstance(widget.figure(), Figure)
    bundle = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"]) == widget.static()
    assert body_rows(bundle["text/html"].split("<img")[0]) == 5
    assert "data:image/png;base64," in bundle["text/html"]
