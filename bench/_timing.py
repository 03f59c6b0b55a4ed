"""Shared helpers for lakeclone benchmarks: timing, phase breakdowns, result tables.

The benchmark machine is small and noisy, so a benchmark times a lakeclone
workload and a baseline doing the same work in the same run, alternating
between them, and reports the ratio of their medians (the best-of-N ratio is
kept beside it). Where a target is an absolute time, the baseline's time is
reported beside it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import statistics
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from typing_extensions import Self

_T = TypeVar("_T")


@dataclass
class Timing:
    """Wall-clock samples of one workload, in seconds."""

    samples: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def worst(self) -> float:
        return max(self.samples)

    def stat(self, name: str) -> float:
        """``best`` or ``median``."""
        return float(getattr(self, name))

    def to_dict(self) -> dict[str, Any]:
        return {
            "median_s": round(self.median, 6),
            "best_s": round(self.best, 6),
            "worst_s": round(self.worst, 6),
            "samples_s": [round(s, 6) for s in self.samples],
        }


def timed(fn: Callable[[], _T]) -> tuple[float, _T]:
    """Run ``fn`` once: (seconds, its result)."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


Workload = tuple[Callable[..., Any], "Callable[[int], Any] | None", "Callable[[Any], None] | None"]


def interleave(workloads: Mapping[str, Workload], *, repeat: int, warmup: int = 0) -> dict[str, Timing]:
    """Time several workloads in alternation: A B, B A, A B, ...

    Alternating (and flipping the order each round) spreads the machine's
    drift over all workloads instead of penalising whichever ran last.
    Each workload is ``(fn, prepare, cleanup)``: ``prepare(round)``, when
    given, runs untimed before each run and its result is passed to ``fn``;
    ``cleanup(that result)`` runs untimed after. Either may be None.
    """
    names = list(workloads)
    timings = {name: Timing() for name in names}
    for round_ in range(warmup + repeat):
        order = names if round_ % 2 == 0 else list(reversed(names))
        for name in order:
            fn, prepare, cleanup = workloads[name]
            arg = prepare(round_) if prepare else None
            seconds, _ = timed(functools.partial(fn, arg) if prepare else fn)
            if cleanup:
                cleanup(arg)
            if round_ >= warmup:
                timings[name].samples.append(seconds)
    return timings


def ratio(numerator: Timing, denominator: Timing, stat: str = "median") -> float:
    return numerator.stat(stat) / denominator.stat(stat)


class PhaseTimer:
    """Accumulates the time spent in chosen functions, by wrapping them in place.

    Use as a context manager; the originals are restored on exit::

        with PhaseTimer() as phases:
            phases.wrap(some_module, "parse", "parse")
            phases.wrap(SomeClass, "load", "snapshot load")
            run_workload()
        phases.totals  # {"parse": 0.012, "snapshot load": 0.31}

    With ``enabled=False``, calls are recorded only inside :meth:`recording`,
    so that set-up work calling the same functions stays out of the totals.
    Nested phases are each counted in full, so phases may overlap: report
    them as a breakdown of an outer time, not as a sum. The wrapper costs
    about a microsecond per call.
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.totals: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.missing: list[str] = []
        self._restore: list[tuple[Any, str, Any | None]] = []

    def wrap(self, owner: Any, attribute: str, label: str | None = None) -> bool:
        """Time calls of ``owner.attribute`` under ``label``.

        Returns False, wrapping nothing, when ``owner`` has no such attribute:
        engine internals get renamed, and a benchmark should still run (the
        phase is listed in :attr:`missing` instead).
        """
        label = label or attribute
        if isinstance(owner, type):  # the raw attribute (a staticmethod stays one), wherever in the MRO it is
            found = next((k.__dict__[attribute] for k in owner.__mro__ if attribute in k.__dict__), None)
        else:
            found = getattr(owner, attribute, None)
        if found is None:
            self.missing.append(f"{getattr(owner, '__name__', owner)}.{attribute}")
            return False
        original = found
        target = original.__func__ if isinstance(original, (staticmethod, classmethod)) else original
        self.totals.setdefault(label, 0.0)
        self.calls.setdefault(label, 0)

        @functools.wraps(target)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not self.enabled:
                return target(*args, **kwargs)
            start = time.perf_counter()
            try:
                return target(*args, **kwargs)
            finally:
                self.totals[label] += time.perf_counter() - start
                self.calls[label] += 1

        replacement: Any = wrapper
        if isinstance(original, staticmethod):
            replacement = staticmethod(wrapper)
        elif isinstance(original, classmethod):
            replacement = classmethod(wrapper)
        inherited = isinstance(owner, type) and attribute not in owner.__dict__
        self._restore.append((owner, attribute, None if inherited else original))
        setattr(owner, attribute, replacement)
        return True

    @contextlib.contextmanager
    def section(self, label: str) -> Iterator[None]:
        """Time a block under ``label``."""
        self.totals.setdefault(label, 0.0)
        self.calls.setdefault(label, 0)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.totals[label] += time.perf_counter() - start
            self.calls[label] += 1

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Record wrapped calls only inside this block (for a timer made with ``enabled=False``)."""
        previous, self.enabled = self.enabled, True
        try:
            yield
        finally:
            self.enabled = previous

    @contextlib.contextmanager
    def record(self, label: str, *, when: bool = True) -> Iterator[None]:
        """Record the wrapped calls, and the whole block under ``label``, if ``when`` (a timed round)."""
        if not when:
            yield
            return
        with self.recording(), self.section(label):
            yield

    def reset(self) -> None:
        for label in self.totals:
            self.totals[label] = 0.0
            self.calls[label] = 0

    def per_call(self, runs: int) -> dict[str, float]:
        """Each phase's total divided by ``runs`` (the number of outer runs)."""
        return {label: total / runs for label, total in self.totals.items()}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, attribute, original in reversed(self._restore):
            if original is None:  # it was inherited: uncover the base class's again
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, original)
        self._restore.clear()


@contextlib.contextmanager
def spark_jobs(spark: SparkSession) -> Iterator[list[int]]:
    """The ids of the Spark jobs this thread starts inside the block (filled in at its end)."""
    context = spark.sparkContext
    group = f"bench-{uuid.uuid4().hex}"
    context.setJobGroup(group, group)
    jobs: list[int] = []
    try:
        yield jobs
    finally:
        jobs.extend(context.statusTracker().getJobIdsForGroup(group))
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]  # None removes it
        context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


def job_summary(spark: SparkSession, runs: list[list[int]]) -> dict[str, int]:
    """How many Spark jobs a statement ran (median over its runs), and its last run's stages and tasks."""
    tracker = spark.sparkContext.statusTracker()
    stages = tasks = 0
    for job in runs[-1] if runs else []:
        info = tracker.getJobInfo(job)
        for stage in info.stageIds if info else []:
            stage_info = tracker.getStageInfo(stage)
            stages += 1
            tasks += stage_info.numTasks if stage_info is not None else 0
    counts = sorted(len(run) for run in runs)
    return {"jobs_median": counts[len(counts) // 2] if counts else 0, "last_run_stages": stages, "last_run_tasks": tasks}


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table, columns padded to their widest cell."""
    cells = [[str(h) for h in headers], *[[_cell(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def seconds(value: float) -> str:
    """A duration for a table: ms below one second."""
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=False, default=str)
        handle.write("\n")


def environment(spark: SparkSession) -> dict[str, Any]:
    """The machine and versions a report was measured on."""
    from importlib import metadata

    return {
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "spark": spark.version,
        "delta_spark": metadata.version("delta-spark"),
        "spark_default_parallelism": spark.sparkContext.defaultParallelism,
        "spark_master": spark.sparkContext.master,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def print_closing(report: Mapping[str, Any], summary: Sequence[Sequence[Any]], *, baseline_header: str) -> None:
    """A report's ending: each figure that failed with its traceback, the summary table, the total time."""
    for key, figure in report["figures"].items():
        if "error" in figure:
            print()
            print(f"{key}: ERROR\n{figure['traceback']}")
    print()
    print(format_table(["figure", "value", baseline_header, "target", "result"], summary))
    print()
    print(f"Total benchmark time: {report['elapsed_s']:.1f} s; JSON: {report.get('output', '-')}")
