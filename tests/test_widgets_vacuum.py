"""The VACUUM explorer, on a real Lake: real Spark, real Delta, a manual clock, real files deleted."""

from __future__ import annotations

import base64
import os
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
from delta_reader import folder_files, local_path, named_files, needed_files
from lake_helpers import location
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

import lakeclone
from lakeclone.widgets import _style, plot_vacuum, reason_groups, vacuum_explorer
from lakeclone.widgets.vacuum import VacuumExplorer, vacuum_html

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from pyspark.sql import SparkSession
    from warehouse_templates import WarehouseTemplates

    from lakeclone.vacuum.plan import FileDecision

pytestmark = pytest.mark.spark

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
LOW_RETENTION_ERROR = "would delete files inside the table&#x27;s retention of 168 hours"


def _clones_and_rewrites(lake: lakeclone.Lake) -> None:
    """Table ``s`` with a clone ``c1`` and a clone of that, ``c2``; then ``s`` deletes and rewrites rows.

    At ``RETAIN 0 HOURS`` ``s``'s folder then holds current files, a file only
    the clones still read (rewritten by the UPDATE), a file nobody needs
    (inserted after the clones and deleted again), and the deletion vectors
    Delta wrote for the DELETE and the UPDATE but never committed (each found
    that every row of its one-row file goes, so it removed the file instead).
    """
    lake.sql("CREATE TABLE s (id INT, v STRING) ENABLE_DELETION_VECTORS = TRUE")
    lake.sql("INSERT INTO s VALUES (1, 'a'), (2, 'b')")
    lake.sql("INSERT INTO s VALUES (3, 'c')")
    lake.sql("CREATE TABLE c1 CLONE s")
    lake.sql("INSERT INTO c1 VALUES (10, 'x')")
    lake.sql("CREATE TABLE c2 CLONE c1")
    lake.sql("INSERT INTO c2 VALUES (20, 'y')")
    lake.sql("INSERT INTO s VALUES (4, 'd')")
    lake.sql("DELETE FROM s WHERE id = 4")
    lake.sql("UPDATE s SET v = 'z' WHERE id = 3")
    assert isinstance(lake.clock, lakeclone.ManualClock)
    lake.clock.advance(hours=2)


@pytest.fixture
def cloned(lake: lakeclone.Lake) -> str:
    """:func:`_clones_and_rewrites`' table ``s``, on the test's own Lake: for tests that vacuum."""
    _clones_and_rewrites(lake)
    return "s"


@pytest.fixture(scope="module")
def reading_lake(warehouse_templates: WarehouseTemplates) -> lakeclone.Lake:
    """One Lake holding :func:`_clones_and_rewrites`' tables, for the tests that only plan and draw."""
    return warehouse_templates.shared(_clones_and_rewrites)


@pytest.fixture
def lake(request: pytest.FixtureRequest, tmp_path: Path, spark: SparkSession, clock: lakeclone.ManualClock) -> lakeclone.Lake:
    """An empty Lake of the test's own; for a test that asks for :func:`cloned_to_read`, the shared :func:`reading_lake`."""
    if "cloned_to_read" in request.fixturenames:
        return request.getfixturevalue("reading_lake")
    return lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=clock)


@pytest.fixture
def cloned_to_read(lake: lakeclone.Lake) -> str:
    """:func:`_clones_and_rewrites`' table ``s`` in the shared Lake: the test must change nothing."""
    return "s"


def rows(lake: lakeclone.Lake, query: str) -> list[tuple]:
    return sorted(tuple(r) for r in lake.sql(query).collect())


def data_files(folder: str) -> set[str]:
    """The local paths of every file under a table's folder outside its log; never empty here."""
    files = folder_files(folder)
    assert files, folder
    return files


def unneeded(lake: lakeclone.Lake) -> set[str]:
    """The files in ``s``'s folder that neither ``s`` nor its clones read now, from the log's JSON.

    At ``RETAIN 0 HOURS`` that is exactly what VACUUM deletes.
    """
    needed = set().union(*(needed_files(location(lake, name)) for name in ("s", "c1", "c2")))
    return folder_files(location(lake, "s")) - needed


def local_paths(decisions: Iterable[FileDecision]) -> set[str]:
    """The local paths of a plan's files (a plan names them as URIs)."""
    return {str(local_path(d.path)) for d in decisions}


def file_rows(path: str) -> list[tuple]:
    """The (id, v) rows stored in one data file, read with pyarrow by position (names may be physical ones)."""
    return [tuple(row.values()) for row in pq.read_table(path).select([0, 1]).to_pylist()]


def bars(figure: Figure) -> list:
    [ax] = figure.axes
    return [p for p in ax.patches if p.get_gid() == "reason-bar"]


# The plan and its static rendering --------------------------------------------------


def test_plan_after_rewriting_source_rows_keeps_clone_files_and_deletes_the_rest(lake, cloned_to_read, retention_check_off):
    plan = lake.vacuum_plan(cloned_to_read, retain_hours=0)

    groups = reason_groups(plan)
    reasons = [str(g.reason) for g in groups]
    assert reasons[0] == "current" and reasons[-1] == "delete"
    [clone_reason] = [r for r in reasons if r.startswith("clone ")]
    assert clone_reason.startswith("clone LAKE.PUBLIC.C1@")
    assert {str(g.reason): (len(g.files), g.bytes) for g in groups} == plan.totals()
    assert [g.category for g in groups] == ["current", "clone", "delete"]
    # What goes is what nobody reads: the file of the row inserted after the clones and
    # deleted again, and the deletion vectors no commit names.
    doomed = local_paths(plan.to_delete)
    assert doomed == unneeded(lake)
    [parquet] = [f for f in doomed if f.endswith(".parquet")]
    assert file_rows(parquet) == [(4, "d")]
    assert all(os.path.basename(f).startswith("deletion_vector_") for f in doomed - {parquet})
    assert not (doomed - {parquet}) & named_files(location(lake, "s"))
    # Within the default retention nothing goes.
    assert "delete" not in lake.vacuum_plan(cloned_to_read).totals()


def test_plot_vacuum_draws_a_bar_of_bytes_per_reason_keep_and_delete_coloured(lake, cloned_to_read):
    plan = lake.vacuum_plan(cloned_to_read, retain_hours=0)
    totals = plan.totals()

    figure = plot_vacuum(plan, retain_hours=0)

    drawn = bars(figure)
    assert len(drawn) == len(totals) == 3
    [ax] = figure.axes
    reasons = [str(g.reason) for g in reason_groups(plan)]
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == sorted(reasons)
    # Top to bottom in reason_groups order: current first, delete last.
    assert [bar.get_y() for bar in drawn] == sorted((bar.get_y() for bar in drawn), reverse=True)
    by_reason = dict(zip(reasons, drawn, strict=True))
    for reason, (_files, size) in totals.items():
        assert by_reason[reason].get_width() == size
    assert to_rgb(by_reason["delete"].get_facecolor()) == to_rgb(_style.VACUUM_REASON_COLOURS["delete"])
    assert to_rgb(by_reason["current"].get_facecolor()) == to_rgb(_style.VACUUM_REASON_COLOURS["current"])
    assert by_reason["delete"].get_hatch() and not by_reason["current"].get_hatch()
    assert f"RETAIN 0 HOURS: deletes {_style.format_files(len(unneeded(lake)))} (" in ax.get_title(loc="left")


def test_plot_vacuum_of_an_empty_table_and_without_pyplot(lake):
    import matplotlib.pyplot as plt

    open_before = plt.get_fignums()
    lake.sql("CREATE TABLE e (id INT)")

    figure = plot_vacuum(lake.vacuum_plan("e"))

    assert bars(figure) == []
    assert plt.get_fignums() == open_before


def test_vacuum_html_lists_totals_and_files_per_reason(lake, cloned_to_read):
    plan = lake.vacuum_plan(cloned_to_read, retain_hours=0)

    page = vacuum_html(plan)

    assert page.count("<details>") == 3
    totals_table = page.split("<details>")[0]
    assert totals_table.count("<tr") - 1 == 3 + 1  # one row per reason and the total
    for reason, (files, size) in plan.totals().items():
        assert reason in totals_table
        assert f"{reason}: {_style.format_files(files)}, {_style.format_bytes(size)}" in page
    for decision in plan.decisions:
        assert os.path.basename(decision.path) in page
    assert ">DELETE<" in totals_table and ">KEEP<" in totals_table


# VacuumExplorer ---------------------------------------------------------------------


def test_explorer_shows_the_plan_totals_and_files_per_reason(lake, cloned_to_read):
    explorer = vacuum_explorer(lake, cloned_to_read, retain_hours=0)

    assert isinstance(explorer, VacuumExplorer)
    plan = explorer.plan
    totals = plan.totals()
    assert set(totals) >= {"current", "delete"} and any(r.startswith("clone ") for r in totals)
    assert explorer.retain_hours == 0
    assert explorer.files.titles == tuple(
        f"{r}: {_style.format_files(f)}, {_style.format_bytes(b)}"
        for r, (f, b) in ((str(g.reason), totals[str(g.reason)]) for g in reason_groups(plan))
    )
    assert len(explorer.files.children) == len(totals)
    for page, group in zip(explorer.files.children, reason_groups(plan), strict=True):
        assert page.value.count("<tr") - 1 == len(group.files)
    assert explorer.totals.value.count("<tr") - 1 == len(totals) + 1
    [output] = explorer.plot.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_SIGNATURE)
    assert "RETAIN 0 HOURS" in explorer.header.value
    assert "configured retention 7 days (168 hours)" in explorer.header.value
    # The default retention check is on: the header warns before anyone clicks.
    assert "retention check" in explorer.header.value


def test_changing_the_retention_replans(lake, cloned_to_read):
    explorer = vacuum_explorer(lake, cloned_to_read)
    assert explorer.retain_hours == 168
    assert "delete" not in explorer.plan.totals()
    assert explorer.vacuum_button.disabled  # nothing to delete

    explorer.hours_input.value = 0

    assert "delete" in explorer.plan.totals()
    assert explorer.plan.totals() == lake.vacuum_plan(cloned_to_read, retain_hours=0).totals()
    assert not explorer.vacuum_button.disabled
    assert "RETAIN 0 HOURS" in explorer.header.value


def test_vacuum_now_needs_a_plan_and_a_confirming_second_click(lake, cloned, retention_check_off):
    explorer = vacuum_explorer(lake, cloned, retain_hours=0)
    folder = explorer.plan.location
    before = data_files(folder)
    doomed = _style.format_files(len(unneeded(lake)))

    explorer.vacuum_button.click()

    assert explorer.armed
    assert explorer.confirmation.value.startswith(f"Delete {doomed} (")
    assert explorer.vacuum_button.description == f"Confirm: delete {doomed}"
    # ipywidgets' fixed button width (148 px) would cut that label; these buttons size to their text.
    assert explorer.vacuum_button.layout.width == explorer.cancel_button.layout.width == "auto"
    assert data_files(folder) == before  # nothing deleted by the first click

    explorer.cancel_button.click()
    assert not explorer.armed and explorer.confirmation.value == ""
    explorer.vacuum_button.click()
    explorer.hours_input.value = 1  # a new plan withdraws the question
    assert not explorer.armed
    assert data_files(folder) == before

    # No plan on show (the table is gone): the widget says so, and the button is off.
    explorer.vacuum_button.click()
    lake.sql("DROP TABLE s")
    assert explorer.replan() is None
    assert explorer.plan is None and explorer.vacuum_button.disabled and not explorer.armed
    assert explorer.error == "s is gone: SQL compilation error: Object 'LAKE.PUBLIC.S' does not exist or not authorized."
    shown = explorer.shown()
    assert shown.status.startswith(explorer.error) and (shown.rows, shown.images) == ((), 0)
    assert explorer.files.children == () and explorer.vacuum_button.description == "Vacuum now"
    explorer.vacuum_button.click()
    assert not explorer.armed
    assert data_files(folder) == before


def test_clicking_through_deletes_exactly_the_plans_delete_files(lake, cloned, retention_check_off):
    c1_before, c2_before = rows(lake, "SELECT * FROM c1"), rows(lake, "SELECT * FROM c2")
    explorer = vacuum_explorer(lake, cloned, retain_hours=0)
    plan = explorer.plan
    before = data_files(plan.location)
    doomed = local_paths(plan.to_delete)
    assert doomed and doomed == unneeded(lake) and doomed < before

    explorer.vacuum_button.click()
    explorer.vacuum_button.click()

    assert data_files(plan.location) == before - doomed
    files, size = len(doomed), sum(d.size for d in plan.to_delete)
    assert f"deleted {_style.format_files(files)} ({_style.format_bytes(size)})" in explorer.result.value
    # Re-planned: nothing left to delete, and the clones still read.
    assert "delete" not in explorer.plan.totals()
    assert explorer.vacuum_button.disabled and not explorer.armed
    assert rows(lake, "SELECT * FROM c1") == c1_before == [(1, "a"), (2, "b"), (3, "c"), (10, "x")]
    assert rows(lake, "SELECT * FROM c2") == c2_before
    assert rows(lake, "SELECT * FROM s") == [(1, "a"), (2, "b"), (3, "z")]


def test_a_changed_table_is_not_vacuumed_without_a_new_confirmation(lake, cloned, retention_check_off):
    explorer = vacuum_explorer(lake, cloned, retain_hours=0)
    shown = local_paths(explorer.plan.to_delete)
    explorer.vacuum_button.click()

    lake.sql("INSERT INTO s VALUES (5, 'e')")
    lake.sql("DELETE FROM s WHERE id = 5")  # one more file to delete
    before = data_files(explorer.plan.location)
    explorer.vacuum_button.click()

    assert data_files(explorer.plan.location) == before
    assert "changed since the plan was shown" in explorer.result.value
    # The new plan on show: the first one's files, and the row's file (with its uncommitted vector).
    now_doomed = local_paths(explorer.plan.to_delete)
    assert now_doomed == unneeded(lake) and shown < now_doomed and not explorer.armed
    [added] = [f for f in now_doomed - shown if f.endswith(".parquet")]
    assert file_rows(added) == [(5, "e")]


def test_a_too_short_retention_shows_the_retention_checks_error_in_the_widget(lake, cloned_to_read):
    assert lake.spark.conf.get(RETENTION_CHECK, "true") != "false"
    explorer = vacuum_explorer(lake, cloned_to_read, retain_hours=0)
    before = data_files(explorer.plan.location)

    explorer.vacuum_button.click()
    explorer.vacuum_button.click()  # raises nothing

    assert "Vacuum failed" in explorer.result.value
    assert LOW_RETENTION_ERROR in explorer.result.value
    assert data_files(explorer.plan.location) == before
    assert explorer.plan is not None and not explorer.vacuum_button.disabled


def test_bad_retain_hours_and_missing_tables_raise(lake):
    from lakeclone.errors import LakecloneError

    with pytest.raises(LakecloneError):
        vacuum_explorer(lake, "no_such_table")
    lake.sql("CREATE TABLE t (id INT)")
    with pytest.raises(ValueError, match="whole number"):
        vacuum_explorer(lake, "t", retain_hours=-1)


def test_static_rendering_is_png_and_the_mimebundle_falls_back_to_it(lake, cloned_to_read):
    explorer = vacuum_explorer(lake, cloned_to_read, retain_hours=0)

    assert explorer.static().startswith(PNG_SIGNATURE)
    assert isinstance(explorer.figure(), Figure)
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"]) == explorer.static()
    assert bundle["text/html"].count("<details>") == 3
    assert "data:image/png;base64," in bundle["text/html"]
