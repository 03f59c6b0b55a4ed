"""Progress of the Spark jobs a statement runs: a bar in a notebook, a line on stderr when asked.

While a statement runs, a daemon thread waits :data:`THRESHOLD` seconds. A
statement done by then shows nothing, and its thread never touched Spark. After
that the thread reads Spark's status tracker every :data:`INTERVAL` seconds and
shows what the statement's running jobs (its thread's job group's) are doing::

    Spark: stage 3 · 12/40 tasks · 2.1 s

In a Jupyter kernel that is an ipywidgets progress bar, removed when the
statement ends. In a terminal it is one line on stderr, rewritten in place, and
only when asked for: ``lakeclone.connect(progress=True)`` or ``lake.progress = True``.
``progress=False`` shows nothing anywhere. Nothing here raises into the
statement it watches.

Example:
    >>> with watching(spark, True):  # doctest: +SKIP
    ...     spark.range(10**9, numPartitions=40).selectExpr("sum(hash(id))").collect()
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from lakeclone import frame_notes

if TYPE_CHECKING:
    from pyspark.core.status import SparkStageInfo, StatusTracker
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "INTERVAL",
    "THRESHOLD",
    "NotebookView",
    "Snapshot",
    "TerminalView",
    "Tracker",
    "in_kernel",
    "setting_of",
    "status",
    "tag",
    "watching",
    "watching_frame",
]

log = logging.getLogger(__name__)

# Seconds a block runs before anything is shown: a quick statement shows nothing.
THRESHOLD = 0.5
# The thread-local Spark property naming the job group of the jobs a thread starts.
JOB_GROUP = "spark.jobGroup.id"
# Seconds between two readings of Spark's status tracker.
INTERVAL = 0.25
# Seconds the end of a block waits for the watching thread to finish.
JOIN_TIMEOUT = 2.0

THREAD_NAME = "lakeclone-progress"

# The note (see lakeclone.frame_notes) holding a result frame's Lake's progress setting.
_SETTING = "progress"

_local = threading.local()


@dataclass(frozen=True)
class Snapshot:
    """What Spark's running jobs are doing, summed over their stages that have started.

    Stages a job has not started are left out: adaptive execution skips many of
    them, and their tasks would never be done.

    Attributes:
        jobs: the ids of the running jobs.
        stages: the ids of the running stages.
        tasks: the tasks of the started stages.
        completed: how many of them are done.
        active: how many are running.
        failed: how many attempts failed (Spark retries them).
    """

    jobs: tuple[int, ...] = ()
    stages: tuple[int, ...] = ()
    tasks: int = 0
    completed: int = 0
    active: int = 0
    failed: int = 0

    def label(self, elapsed: float) -> str:
        """The line shown, such as ``Spark: stage 3 · 12/40 tasks · 2.1 s``."""
        parts = []
        if self.stages:
            shown = ", ".join(str(stage) for stage in self.stages[:3])
            more = ", …" if len(self.stages) > 3 else ""
            parts.append(f"stage{'s' if len(self.stages) > 1 else ''} {shown}{more}")
        if self.tasks:
            parts.append(f"{self.completed}/{self.tasks} tasks")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if not parts:
            parts.append("working")
        parts.append(f"{elapsed:.1f} s")
        return "Spark: " + " · ".join(parts)


class Tracker:
    """Reads :class:`Snapshot` s of one job group's running jobs from a SparkContext's status tracker.

    Only the group's: other sessions and threads of the same Spark (a
    channel's background flush, another notebook's statement) run jobs of
    their own at the same time. A stage whose tasks are all done keeps its
    counts, so it is read once.
    """

    def __init__(self, tracker: StatusTracker, group: str) -> None:
        self.tracker = tracker
        self.group = group
        self._finished: dict[int, SparkStageInfo] = {}

    def read(self) -> Snapshot:
        """The group's running jobs' progress now (Spark's counts lag by up to a tenth of a second)."""
        tracker = self.tracker
        running_jobs = set(tracker.getActiveJobsIds())
        jobs = [job_id for job_id in tracker.getJobIdsForGroup(self.group) if job_id in running_jobs]
        stage_ids: set[int] = set()
        for job_id in jobs:
            job = tracker.getJobInfo(job_id)
            if job is not None:
                stage_ids.update(int(stage_id) for stage_id in job.stageIds)
        running = set(tracker.getActiveStageIds()) & stage_ids
        tasks = completed = active = failed = 0
        for stage_id in sorted(stage_ids):
            stage = self._stage(stage_id)
            if stage is None:
                continue
            started = stage.numCompletedTasks + stage.numActiveTasks + stage.numFailedTasks > 0
            if stage_id not in running and not started:
                continue  # not started yet, or skipped
            tasks += stage.numTasks
            completed += stage.numCompletedTasks
            active += stage.numActiveTasks
            failed += stage.numFailedTasks
        return Snapshot(tuple(jobs), tuple(sorted(running)), tasks, completed, active, failed)

    def _stage(self, stage_id: int) -> SparkStageInfo | None:
        stage = self._finished.get(stage_id)
        if stage is None:
            stage = self.tracker.getStageInfo(stage_id)
            if stage is not None and stage.numTasks and stage.numCompletedTasks >= stage.numTasks:
                self._finished[stage_id] = stage
        return stage


class View(Protocol):
    """Where progress is shown."""

    def update(self, snapshot: Snapshot, elapsed: float) -> None: ...

    def close(self) -> None: ...


class NotebookView:
    """An ipywidgets progress bar and its label, displayed in the running cell.

    When closed it is replaced by nothing, so the notebook keeps no trace of
    it (and no reference to a widget that no longer exists).
    """

    def __init__(self) -> None:
        import ipywidgets
        from IPython.display import display

        self.bar = ipywidgets.IntProgress(value=0, min=0, max=1, bar_style="info", layout=ipywidgets.Layout(width="16em"))
        self.label = ipywidgets.Label("Spark")
        self.box = ipywidgets.HBox([self.bar, self.label])
        self._handle = display(self.box, display_id=True)  # type: ignore[no-untyped-call]

    def update(self, snapshot: Snapshot, elapsed: float) -> None:
        with self.bar.hold_sync():
            if snapshot.tasks:
                # max first: a value above the old max would be clipped to it.
                self.bar.max = snapshot.tasks
                self.bar.value = min(snapshot.completed, snapshot.tasks)
            self.bar.bar_style = "warning" if snapshot.failed else "info"
        self.label.value = snapshot.label(elapsed)

    def close(self) -> None:
        try:
            _clear(self._handle)
        finally:
            for widget in (self.box, self.bar, self.label):
                # Each widget brings models of its own for its layout and style.
                for model in (widget, getattr(widget, "layout", None), getattr(widget, "style", None)):
                    if model is not None:
                        model.close()


class TerminalView:
    """One line on stderr, rewritten in place; erased at the end on a terminal, ended on a file."""

    def __init__(self) -> None:
        self._line = _Line()

    def update(self, snapshot: Snapshot, elapsed: float) -> None:
        self._line.write(snapshot.label(elapsed))

    def close(self) -> None:
        self._line.end()


class _Line:
    """A line of stderr that can be rewritten until it ends."""

    def __init__(self) -> None:
        self.width = 0

    def write(self, text: str) -> None:
        stream = sys.stderr
        stream.write("\r" + text.ljust(self.width))
        stream.flush()
        self.width = max(self.width, len(text))

    def end(self) -> None:
        if not self.width:
            return
        stream = sys.stderr
        tty = getattr(stream, "isatty", lambda: False)()
        stream.write("\r" + " " * self.width + "\r" if tty else "\n")
        stream.flush()
        self.width = 0


def _clear(handle: Any) -> None:
    """Replace a display with an empty one."""
    if handle is not None:
        handle.update({"text/plain": ""}, raw=True)


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (an ipykernel-backed IPython shell), where widgets show."""
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _view_for(setting: bool | None) -> Callable[[], View] | None:
    """What to show for a Lake's progress setting: None (auto) shows only in a kernel."""
    if setting is False:
        return None
    if in_kernel():
        return NotebookView
    return TerminalView if setting else None


class _Watch:
    """The daemon thread watching one block."""

    def __init__(self, spark: SparkSession, group: str, make_view: Callable[[], View], threshold: float, interval: float) -> None:
        self.spark = spark
        self.group = group
        self.make_view = make_view
        self.threshold = threshold
        self.interval = interval
        self.started = time.perf_counter()
        self._stop = threading.Event()
        # The thread runs in this context: ipykernel keeps the running cell in a
        # context variable, and displays go to that cell.
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._run,), name=THREAD_NAME, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(JOIN_TIMEOUT)

    def _run(self) -> None:
        view: View | None = None
        try:
            if self._stop.wait(self.threshold):
                return
            tracker = Tracker(self.spark.sparkContext.statusTracker(), self.group)
            while True:
                snapshot = tracker.read()
                if view is None:
                    if self._stop.is_set():
                        return
                    view = self.make_view()
                view.update(snapshot, time.perf_counter() - self.started)
                if self._stop.wait(self.interval):
                    return
        except Exception:
            log.debug("Spark progress display stopped", exc_info=True)
        finally:
            if view is not None:
                try:
                    view.close()
                except Exception:
                    log.debug("Spark progress display not closed", exc_info=True)


@contextlib.contextmanager
def watching(
    spark: SparkSession,
    setting: bool | None = None,
    *,
    threshold: float | None = None,
    interval: float | None = None,
) -> Iterator[None]:
    """Show the progress of the Spark jobs run while the block runs, once it has run ``threshold`` seconds.

    Blocks nested in a watched block (in the same thread) show nothing of their own.
    The block's jobs are those of the thread's job group: the one it is in
    already, else one of its own for the length of the block.

    Args:
        spark: the session whose jobs to watch.
        setting: a Lake's ``progress``: None shows a bar in a Jupyter kernel
            and nothing elsewhere, True also shows a line on stderr outside a
            kernel, False shows nothing.
        threshold: seconds before anything shows; defaults to :data:`THRESHOLD`.
        interval: seconds between updates; defaults to :data:`INTERVAL`.
    """
    watch = None
    own_group = False
    if not getattr(_local, "watching", False):
        try:
            make_view = _view_for(setting)
            if make_view is not None:
                context = spark.sparkContext
                group = context.getLocalProperty(JOB_GROUP)
                if group is None:
                    group, own_group = f"lakeclone-progress-{uuid.uuid4().hex}", True
                    context.setLocalProperty(JOB_GROUP, group)
                watch = _Watch(
                    spark,
                    group,
                    make_view,
                    THRESHOLD if threshold is None else threshold,
                    INTERVAL if interval is None else interval,
                )
        except Exception:
            log.debug("Spark progress display not started", exc_info=True)
    if watch is None:
        yield
        return
    _local.watching = True
    try:
        yield
    finally:
        _local.watching = False
        try:
            watch.stop()
            if own_group:
                spark.sparkContext.setLocalProperty(JOB_GROUP, None)  # type: ignore[arg-type]  # None removes it
        except Exception:
            log.debug("Spark progress display not stopped", exc_info=True)


def tag(frame: DataFrame, setting: bool | None) -> DataFrame:
    """``frame``, remembering its Lake's progress setting for the actions run on it later."""
    return frame_notes.note(frame, _SETTING, setting)


def setting_of(frame: DataFrame) -> bool | None:
    """The progress setting :func:`tag` gave ``frame``; None (auto) if none."""
    setting: bool | None = frame_notes.noted(frame, _SETTING)
    return setting


def watching_frame(frame: DataFrame) -> contextlib.AbstractContextManager[None]:
    """:func:`watching` for an action on ``frame`` (``collect``, ``toPandas``…), with its Lake's setting."""
    return watching(frame.sparkSession, setting_of(frame))


@contextlib.contextmanager
def status(text: str, setting: bool | None = None) -> Iterator[None]:
    """Say ``text`` (such as ``Starting Spark…``) while the block runs.

    Where it shows follows ``setting`` as in :func:`watching`, but at once: no
    threshold. In a notebook it is removed when the block ends. On stderr it
    stays, a line of its own: what Spark itself prints while starting would
    land in the middle of a line rewritten in place.
    """
    handle: Any = None
    try:
        if setting is not False and in_kernel():
            from IPython.display import display

            handle = display({"text/plain": text}, raw=True, display_id=True)  # type: ignore[no-untyped-call]
        elif setting:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
    except Exception:
        log.debug("status not shown", exc_info=True)
    try:
        yield
    finally:
        try:
            _clear(handle)
        except Exception:
            log.debug("status not removed", exc_info=True)
