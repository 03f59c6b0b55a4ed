"""Spark progress: the status tracker's counts, the notebook bar, quiet quick statements (a terminal script: test_terminal_script.py)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

import lakeclone
from lakeclone import progress
from lakeclone.errors import LakecloneError
from lakeclone.progress import NotebookView, Snapshot, Tracker, watching

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def slow_job(spark: SparkSession, tasks: int = 40, millis: int = 50) -> DataFrame:
    """A one-stage job of ``tasks`` tasks, each sleeping ``millis`` ms in the JVM: slow, without using the CPU."""
    return spark.range(0, tasks, 1, tasks).selectExpr(f"reflect('java.lang.Thread', 'sleep', CAST({millis} AS BIGINT)) AS slept")


def progress_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == progress.THREAD_NAME]


class RecordingView(NotebookView):
    """The notebook bar, remembering every state it showed."""

    made: ClassVar[list[RecordingView]] = []

    def __init__(self) -> None:
        super().__init__()
        self.model_id = self.box.model_id
        self.shown: list[tuple[int, int, str]] = []
        self.closed = False
        RecordingView.made.append(self)

    def update(self, snapshot: Snapshot, elapsed: float) -> None:
        super().update(snapshot, elapsed)
        self.shown.append((self.bar.value, self.bar.max, self.label.value))

    def close(self) -> None:
        super().close()
        self.closed = True


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """A real IPython shell, so displays are published (and can be captured)."""
    config = Config()
    config.HistoryAccessor.enabled = False  # no history database in ~/.ipython
    shell = InteractiveShell.instance(config=config)
    yield shell
    InteractiveShell.clear_instance()


@pytest.fixture
def notebook(monkeypatch: pytest.MonkeyPatch, shell: InteractiveShell) -> list[RecordingView]:
    """Progress shows as in a Jupyter kernel, in recording bars."""
    monkeypatch.setattr(progress, "in_kernel", lambda: True)
    monkeypatch.setattr(progress, "NotebookView", RecordingView)
    monkeypatch.setattr(RecordingView, "made", [])
    return RecordingView.made


@pytest.fixture
def watches(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every block watched from now on (whether it lasted long enough to show or not)."""
    made: list[object] = []

    class Recorded(progress._Watch):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(self)

    monkeypatch.setattr(progress, "_Watch", Recorded)
    return made


# --- reading Spark's status tracker ---


@pytest.fixture
def adaptive_execution(spark: SparkSession) -> Iterator[None]:
    """Spark's adaptive execution on, as in a user's session (the tests' shared session runs without it)."""
    key = "spark.sql.adaptive.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, "true")
    try:
        yield
    finally:
        spark.conf.set(key, before)


@pytest.mark.usefixtures("adaptive_execution")
def test_the_tracker_reports_a_real_jobs_stages_and_tasks(spark: SparkSession) -> None:
    tracker = Tracker(spark.sparkContext.statusTracker(), "tracked")
    # 40 slow tasks, then a shuffle to a slow final stage; adaptive execution
    # runs the final stage as a job of its own, in which the first stage is skipped.
    frame = slow_job(spark).groupBy("slept").count().selectExpr("reflect('java.lang.Thread', 'sleep', CAST(800 AS BIGINT))")
    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            spark.sparkContext.setLocalProperty(progress.JOB_GROUP, "tracked")
            frame.collect()
        except BaseException as error:
            failure.append(error)
        finally:
            done.set()

    job = threading.Thread(target=run)
    job.start()
    snapshots = []
    while not done.wait(0.02):
        snapshots.append(tracker.read())
    job.join()
    assert not failure
    first = [s for s in snapshots if s.tasks == 40]
    assert first, snapshots
    # (A stage just done may leave its job running for a moment, with no stage
    # running; Spark's listener may briefly count a task as both active and done,
    # or still list the stage of a job that has just ended.)
    assert all(len(s.stages) <= 1 and s.completed <= 40 for s in first), first
    assert any(s.jobs and s.active for s in first), first
    assert any(0 < s.completed < 40 for s in first), first  # seen part done
    completed = [s.completed for s in first]
    assert completed == sorted(completed)
    # The final stage alone, not the skipped 40 tasks it depends on.
    map_stage = next(s.stages[0] for s in first if s.stages)
    final = [s for s in snapshots if s.stages and s.stages[0] > map_stage]
    assert final and all(1 <= s.tasks < 40 for s in final), final
    assert all(s.tasks <= 40 for s in snapshots)


def test_the_label_names_stages_tasks_and_time() -> None:
    assert Snapshot((1,), (3,), 40, 12, 2, 0).label(2.14) == "Spark: stage 3 · 12/40 tasks · 2.1 s"
    assert Snapshot((1, 2), (3, 4), 48, 40, 2, 1).label(9) == "Spark: stages 3, 4 · 40/48 tasks · 1 failed · 9.0 s"
    assert Snapshot().label(0.6) == "Spark: working · 0.6 s"


def test_the_embedded_session_has_no_console_progress_bar(spark: SparkSession) -> None:
    assert spark.sparkContext.getConf().get("spark.ui.showConsoleProgress") == "false"


# --- the notebook bar ---


def test_a_slow_block_shows_a_progress_bar_of_its_tasks_and_removes_it(
    spark: SparkSession, notebook: list[RecordingView]
) -> None:
    with capture_output() as captured, watching(spark, threshold=0.1, interval=0.05):
        slow_job(spark).collect()

    [view] = notebook
    assert view.closed and not progress_threads()
    assert any(maximum == 40 and 0 < value < 40 and "/40 tasks" in label for value, maximum, label in view.shown), view.shown
    values = [value for value, maximum, _ in view.shown if maximum == 40]
    assert values == sorted(values)
    # Shown as a widget in the cell, then replaced by nothing.
    shown, *updates = captured.outputs
    assert shown.data[WIDGET_VIEW]["model_id"] == view.model_id
    display_id = shown.transient["display_id"]
    assert updates and all(output.update and output.transient["display_id"] == display_id for output in updates)
    assert updates[-1].data == {"text/plain": ""}
    # The widgets are closed, with their layout and style models: the kernel keeps none of them.
    models = [
        view.box,
        view.bar,
        view.label,
        view.box.layout,
        view.bar.layout,
        view.bar.style,
        view.label.layout,
        view.label.style,
    ]
    assert all(model.comm is None for model in models)


def test_a_bar_shows_only_its_blocks_jobs_and_leaves_the_threads_job_group_as_it_was(
    spark: SparkSession, notebook: list[RecordingView]
) -> None:
    context = spark.sparkContext
    other_started, other_done = threading.Event(), threading.Event()

    def other_thread() -> None:  # another session's statement, or a channel's background flush
        try:
            context.setLocalProperty(progress.JOB_GROUP, "someone else")
            other_started.set()
            slow_job(spark, tasks=7, millis=400).collect()
        finally:
            context.setLocalProperty(progress.JOB_GROUP, None)  # type: ignore[arg-type]
            other_done.set()

    threading.Thread(target=other_thread).start()
    assert other_started.wait(30)
    with watching(spark, threshold=0.0, interval=0.05):
        slow_job(spark, tasks=12, millis=100).collect()
    assert other_done.wait(60)
    [view] = notebook
    # Its 12 tasks, never the other thread's 7 besides (1 is the bar's maximum before any task).
    assert {maximum for _, maximum, _ in view.shown} in ({12}, {1, 12}), view.shown
    assert context.getLocalProperty(progress.JOB_GROUP) is None

    context.setLocalProperty(progress.JOB_GROUP, "the caller's")
    try:
        with watching(spark, threshold=0.0, interval=0.05):
            slow_job(spark, tasks=4, millis=100).collect()
        assert context.getLocalProperty(progress.JOB_GROUP) == "the caller's"
    finally:
        context.setLocalProperty(progress.JOB_GROUP, None)  # type: ignore[arg-type]
    assert any(maximum == 4 for _, maximum, _ in notebook[1].shown), notebook[1].shown


def test_a_quick_statement_shows_nothing_and_never_asks_spark(
    lake: lakeclone.Lake, notebook: list[RecordingView], watches: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    asked: list[object] = []
    monkeypatch.setattr(progress, "Tracker", asked.append)
    # Far above what a SELECT of one row takes, even on a machine busy with other work.
    monkeypatch.setattr(progress, "THRESHOLD", 30.0)
    before = len(watches)
    del notebook[:]
    with capture_output() as captured:
        assert lake.sql("SELECT id FROM t").collect()[0].ID == 1
    assert len(watches) == before + 2  # the statement, then its rows: both watched
    assert notebook == [] and asked == [] and captured.outputs == []
    assert not progress_threads()


def test_statements_and_fetching_their_rows_show_progress_unless_the_lake_says_not(
    lake: lakeclone.Lake, notebook: list[RecordingView], watches: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "THRESHOLD", 0.0)  # everything shows
    lake.sql("CREATE TABLE t (id INT)")
    del watches[:], notebook[:]
    lake.sql("INSERT INTO t VALUES (1), (2)")
    assert len(watches) == 1  # the statement; the handler's own actions nest in it
    frame = lake.sql("SELECT * FROM t")
    assert len(watches) == 2
    frame.toPandas()
    assert len(watches) == 3  # the rows, fetched later
    assert all(view.closed for view in notebook) and not progress_threads()

    lake.progress = False
    del watches[:], notebook[:]
    lake.sql("INSERT INTO t VALUES (3)")
    lake.sql("SELECT * FROM t").toPandas()
    assert watches == [] and notebook == []


def test_an_lsql_cells_fetch_shows_progress_with_its_lakes_setting(
    lake: lakeclone.Lake, notebook: list[RecordingView], watches: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "THRESHOLD", 0.0)
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext lakeclone").raise_error()
    shell.user_ns["other"] = lake
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    del watches[:]
    shell.run_cell("%%lsql --lake other -o rows\nSELECT * FROM t").raise_error()
    assert list(shell.user_ns["rows"].ID) == [1]
    assert len(watches) == 2  # the statement, and the cell fetching its rows

    lake.progress = False
    del watches[:]
    shell.run_cell("%%lsql --lake other\nSELECT * FROM t").raise_error()
    assert watches == []


def test_progress_never_breaks_the_block(
    spark: SparkSession, notebook: list[RecordingView], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A failing block: its error comes through unchanged, and the bar goes.
    with pytest.raises(LakecloneError, match="the block's own"), watching(spark, threshold=0.0, interval=0.01):
        slow_job(spark, tasks=4, millis=200).collect()
        raise LakecloneError("the block's own")
    assert notebook and all(view.closed for view in notebook) and not progress_threads()

    # A failing display: the block runs to its end regardless.
    def broken(self: RecordingView, snapshot: Snapshot, elapsed: float) -> None:
        raise RuntimeError("no frontend")

    monkeypatch.setattr(RecordingView, "update", broken)
    del notebook[:]
    with watching(spark, threshold=0.0, interval=0.01):
        assert len(slow_job(spark, tasks=4, millis=200).collect()) == 4
    assert notebook and all(view.closed for view in notebook) and not progress_threads()


def test_starting_spark_is_said_in_a_notebook_and_removed_after(
    notebook: list[RecordingView], capsys: pytest.CaptureFixture[str]
) -> None:
    with capture_output() as captured, progress.status("Starting Spark…"):
        [shown] = captured.outputs
        assert shown.data == {"text/plain": "Starting Spark…"}
    shown, removed = captured.outputs
    assert removed.update and removed.transient == shown.transient and removed.data == {"text/plain": ""}
    with capture_output() as captured, progress.status("Starting Spark…", False):
        pass
    assert captured.outputs == []
    assert capsys.readouterr() == ("", "")


def test_nothing_shows_outside_a_kernel_unless_asked(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    assert not progress.in_kernel()
    with watching(spark, None, threshold=0.0, interval=0.02):
        slow_job(spark, tasks=8).collect()
    assert capsys.readouterr() == ("", "")

    with watching(spark, True, threshold=0.0, interval=0.02):
        slow_job(spark, tasks=8).collect()
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("\rSpark: ") and err.endswith("\n")  # not a terminal: the line ends
    assert "/8 tasks" in err
    assert not progress_threads()


def test_a_plain_ipython_shell_is_not_a_kernel(shell: InteractiveShell) -> None:
    assert not progress.in_kernel()
