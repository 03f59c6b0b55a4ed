"""Warehouses a test file's fixture builds once per test process, and a private copy of one for each test.

Building a fixture's tables costs a Delta commit per statement, about a
second each on two busy cores; a privilege matrix pays it once per case. A
template is built once with the statements a fixture would run, then each test
gets a copy of its folder, catalog included, in its own ``tmp_path``: its own
tables to change and its own Delta logs, as if it had run the statements
itself.

A copy is a copy of a warehouse at rest (no statement runs while it is
taken). The catalog names tables by absolute location, so the copy's catalog
is rewritten to name the copy's folders, and a template whose Delta logs name
its own folder (a shallow clone's files do) is refused: its copies would read
and write the template's files.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import lakeclone

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG_FILE = "catalog.sqlite"

Build = Callable[[lakeclone.Lake], object]


@dataclass(frozen=True)
class Template:
    """A built warehouse, the time its clock showed when the build ended, and what the build returned."""

    warehouse: Path
    ended: dt.datetime
    value: object


class WarehouseTemplates:
    """The templates of one test process, built on first use: one per build function."""

    def __init__(self, root: Path, spark: SparkSession, start: dt.datetime) -> None:
        self._root = root
        self._spark = spark
        self._start = start
        self._built: dict[Build, Template] = {}
        self._shared: dict[Build, lakeclone.Lake] = {}

    def copy(self, build: Build, into: Path, clock: lakeclone.ManualClock) -> lakeclone.Lake:
        """A Lake as the administrator on a copy at ``into`` of what ``build`` made, with ``clock`` moved to where the build left it.

        Args:
            build: runs the fixture's statements on a new warehouse's Lake
                (``lake.clock`` is its clock); a module-level function, so
                that it names one template.
            into: the copy's warehouse folder, which must not exist yet.
            clock: the test's clock; it stands at the build's start and is
                moved to the build's end, so that the test's commits follow
                the copied ones in time.
        """
        template = self._built.get(build) or self._build(build)
        into = into.resolve()
        shutil.copytree(template.warehouse, into, ignore=shutil.ignore_patterns("sessions", f"{CATALOG_FILE}*"))
        with (
            contextlib.closing(sqlite3.connect(template.warehouse / CATALOG_FILE)) as source,
            contextlib.closing(sqlite3.connect(into / CATALOG_FILE)) as target,
        ):
            source.backup(target)
            _relocate(target, template.warehouse, into)
        behind = template.ended - clock.peek()
        clock.advance(seconds=max(behind.total_seconds(), 0.0))
        return lakeclone.connect(into, spark=self._spark, clock=clock)

    def shared(self, build: Build) -> lakeclone.Lake:
        """A Lake on what ``build`` made, built once per process and shared by the tests that only read it.

        Nothing is copied, so a shallow clone's files are no obstacle; a test
        that changed the warehouse would change it for every later test.
        """
        lake = self._shared.get(build)
        if lake is None:
            warehouse = self._warehouse(build, "shared")
            lake = lakeclone.connect(warehouse, spark=self._spark, clock=lakeclone.ManualClock(self._start))
            build(lake)
            self._shared[build] = lake
        return lake

    def built(self, build: Build) -> object:
        """What ``build`` returned when it made its template (plain values, such as the ids of its statements)."""
        return self._built[build].value

    def _warehouse(self, build: Build, kind: str) -> Path:
        """The folder of ``build``'s warehouse of ``kind`` (a template to copy, or one shared): one per build function."""
        return (self._root / kind / f"{build.__module__}.{build.__qualname__}" / "warehouse").resolve()

    def _build(self, build: Build) -> Template:
        warehouse = self._warehouse(build, "templates")
        clock = lakeclone.ManualClock(self._start)
        value = build(lakeclone.connect(warehouse, spark=self._spark, clock=clock))
        _refuse_self_references(warehouse)
        template = Template(warehouse, clock.peek(), value)
        self._built[build] = template
        return template


def _relocate(catalog: sqlite3.Connection, old: Path, new: Path) -> None:
    """Rewrite every text value of the catalog that names ``old``'s folder to name ``new``'s.

    Then no value may still hold the template's folder name in any spelling (a
    percent-encoded URI would escape the rewrite).
    """
    tables = [name for (name,) in catalog.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    columns = [(table, row[1]) for table in tables for row in catalog.execute(f'PRAGMA table_info("{table}")')]
    with catalog:
        for table, column in columns:
            catalog.execute(
                f'UPDATE "{table}" SET "{column}" = replace("{column}", ?, ?) '
                f'WHERE typeof("{column}") = \'text\' AND instr("{column}", ?) > 0',
                (str(old), str(new), str(old)),
            )
    for table, column in columns:
        (left,) = catalog.execute(
            f'SELECT count(*) FROM "{table}" WHERE typeof("{column}") = \'text\' AND instr("{column}", ?) > 0',
            (old.parent.name,),
        ).fetchone()
        assert left == 0, f"the copy's catalog still names the template's folder in {table}.{column}"


def _refuse_self_references(warehouse: Path) -> None:
    """Fail unless every Delta log of the template names its files relative to its table's folder.

    Looks for the template's folder name, which a path names in any spelling.
    """
    named = warehouse.parent.name.encode()
    for log in warehouse.rglob("_delta_log/*"):
        if log.is_file() and named in log.read_bytes():
            raise AssertionError(
                f"{log} names the template's own folder (a shallow clone's files?): its copies would share "
                "the template's files, so build this warehouse in the test instead"
            )
