"""VACUUM over random histories: every live table and clone reads at every version inside its retention.

A seeded history of INSERTs, UPDATEs and DELETEs (on tables with deletion vectors
and without),
shallow and deep clones at past versions, DROPs, UNDROPs, clock moves and
VACUUMs runs against a model of each table's rows at each of its versions.
After every VACUUM (and, with ``--long``, every DROP, which purges what has
expired) and at the end, each live table reads its model's rows now (through
lakeclone and the Delta kernel) and at every version lakeclone still serves: a
version may be refused as out of retention, never fail for a missing file.

CI runs one short history; ``pytest --long`` runs many longer ones.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
from delta_reader import kernel_rows, latest_version, sorted_rows
from lake_helpers import location

import lakeclone
from lakeclone.errors import DataNotAvailableError, TimeTravelError

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.spark

SEEDS = [1]
STEPS = 20
LONG_SEEDS = list(range(100, 112))
LONG_STEPS = 60

Rows = list[tuple[int, int]]


@dataclass
class Table:
    """What the model knows of one table: its rows at each version it has."""

    name: str
    folder: str
    versions: dict[int, Rows] = field(default_factory=dict)
    live: bool = True
    expired: set[int] = field(default_factory=set)  # versions lakeclone refused as out of retention

    @property
    def latest(self) -> Rows:
        return self.versions[max(self.versions)]


class History:
    """One seeded history, run on a Lake and on the model side by side."""

    def __init__(self, lake: lakeclone.Lake, clock: lakeclone.ManualClock, seed: int, *, long: bool) -> None:
        self.lake = lake
        self.long = long
        self.clock = clock
        self.random = random.Random(seed)
        self.tables: dict[str, Table] = {}
        self.next_key = 0
        self.counts: Counter[str] = Counter()

    def create(self, name: str, retention: int | None) -> None:
        option = f" DATA_RETENTION_TIME_IN_DAYS = {retention}" if retention else ""
        # Half the tables mark deleted rows in deletion vectors, half rewrite files.
        if self.random.random() < 0.5:
            option += " ENABLE_DELETION_VECTORS = TRUE"
        self.lake.sql(f"CREATE TABLE {name} (k INT, v INT){option}")
        self.tables[name] = Table(name, location(self.lake, name), {0: []})
        self.insert(self.tables[name])

    def live(self) -> list[Table]:
        return [t for t in self.tables.values() if t.live]

    def record(self, table: Table, rows: Rows) -> None:
        """The table's latest version holds ``rows`` (a statement that changed nothing made no version)."""
        table.versions[latest_version(table.folder)] = sorted_rows(rows)

    # Steps ------------------------------------------------------------------------------------------

    def insert(self, table: Table) -> None:
        keys = range(self.next_key, self.next_key + self.random.randint(1, 3))
        self.next_key += len(keys)
        self.lake.sql(f"INSERT INTO {table.name} VALUES " + ", ".join(f"({k}, 0)" for k in keys))
        self.record(table, table.latest + [(k, 0) for k in keys])

    def update(self, table: Table) -> None:
        r = self.random.randrange(3)
        self.lake.sql(f"UPDATE {table.name} SET v = v + 1 WHERE k % 3 = {r}")
        self.record(table, [(k, v + 1) if k % 3 == r else (k, v) for k, v in table.latest])

    def delete(self, table: Table) -> None:
        r = self.random.randrange(4)
        self.lake.sql(f"DELETE FROM {table.name} WHERE k % 4 = {r}")
        self.record(table, [(k, v) for k, v in table.latest if k % 4 != r])

    def clone(self, source: Table) -> None:
        version = self.random.choice(sorted(source.versions))
        name = f"c{len(self.tables)}"
        deep = "DEEP " if self.random.random() < 0.25 else ""
        try:
            self.lake.sql(f"CREATE TABLE {name} {deep}CLONE {source.name} AT(VERSION => {version})")
        except TimeTravelError as error:
            assert not isinstance(error, DataNotAvailableError), (source.name, version, str(error))
            self.counts["clones refused: out of retention"] += 1
            return
        self.tables[name] = Table(name, location(self.lake, name))
        self.record(self.tables[name], source.versions[version])
        self.counts["clones"] += 1

    def drop(self, table: Table) -> None:
        self.lake.sql(f"DROP TABLE {table.name}")
        table.live = False
        self.counts["drops"] += 1
        if self.long:
            self.check()

    def undrop(self, table: Table) -> None:
        try:
            self.lake.sql(f"UNDROP TABLE {table.name}")
        except lakeclone.LakecloneError as error:
            assert "did not exist or was purged" in str(error), str(error)
            del self.tables[table.name]  # purged: its name is free, and it never comes back
            self.counts["undrops refused: purged"] += 1
            return
        table.live = True
        self.counts["undrops"] += 1

    def vacuum(self, table: Table) -> None:
        self.lake.sql(f"VACUUM {table.name}")
        self.counts["vacuums"] += 1
        self.check()

    def step(self) -> None:
        live = self.live()
        dropped = [t for t in self.tables.values() if not t.live]
        choice = self.random.choices(
            ["insert", "update", "delete", "clone", "drop", "undrop", "clock", "vacuum"],
            weights=[4, 3, 2, 2, 1 if len(live) > 2 else 0, 1 if dropped else 0, 2, 2],
        )[0]
        self.counts[choice] += 1
        if choice == "clock":
            self.clock.advance(hours=self.random.randint(1, 40))
        elif choice == "undrop":
            self.undrop(self.random.choice(dropped))
        else:
            getattr(self, choice)(self.random.choice(live))

    # The property ----------------------------------------------------------------------------------

    def check(self) -> None:
        for table in self.live():
            assert sorted_rows(self.lake.sql(f"SELECT k, v FROM {table.name}").collect()) == table.latest, table.name
            assert kernel_rows(table.folder) == table.latest, table.name
            versions = sorted(set(table.versions) - table.expired)
            # All versions in one query; one at a time only when some version has left retention.
            union = " UNION ALL ".join(
                f"SELECT {version} AS version, k, v FROM {table.name} AT(VERSION => {version})" for version in versions
            )
            try:
                rows = self.lake.sql(union).collect()
            except lakeclone.LakecloneError:
                for version in versions:
                    self.check_version(table, version)
                continue
            for version in versions:
                found = sorted_rows((r.K, r.V) for r in rows if version == r.VERSION)
                assert found == table.versions[version], (table.name, version)
            self.counts["versions read"] += len(versions)

    def check_version(self, table: Table, version: int) -> None:
        query = f"SELECT k, v FROM {table.name} AT(VERSION => {version})"
        try:
            found = sorted_rows(self.lake.sql(query).collect())
        except TimeTravelError as error:
            # Out of the table's retention: refused, which is not a lost file. Time only
            # moves forward, so the version stays out.
            assert not isinstance(error, DataNotAvailableError), (query, str(error))
            table.expired.add(version)
            self.counts["versions out of retention"] += 1
            return
        except lakeclone.LakecloneError as error:
            pytest.fail(f"wrongful deletion: {query} failed: {error}")
        assert found == table.versions[version], query
        self.counts["versions read"] += 1


@pytest.mark.usefixtures("retention_check_off")
def test_vacuum_and_purges_never_break_a_live_table_or_clone_inside_its_retention(
    tmp_path: Path, spark, request: pytest.FixtureRequest
) -> None:
    long = request.config.getoption("--long")
    totals: Counter[str] = Counter()
    for seed in LONG_SEEDS if long else SEEDS:
        clock = lakeclone.ManualClock()
        lake = lakeclone.connect(tmp_path / f"warehouse_{seed}", spark=spark, clock=clock)
        history = History(lake, clock, seed, long=long)
        history.create("a", 1)
        history.create("b", 2)
        history.create("d", None)
        for _ in range(LONG_STEPS if long else STEPS):
            history.step()
        history.check()
        totals += history.counts
    print(f"VACUUM histories: {len(LONG_SEEDS if long else SEEDS)}, {dict(sorted(totals.items()))}")
    assert totals["vacuums"] and totals["clones"] and totals["versions read"]
