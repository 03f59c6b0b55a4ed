"""A seeded statement fuzzer: only LakecloneErrors escape, quickly, and a failed statement changes nothing.

Statements come from templates of what users write (queries, DML, time
travel, clones, DDL, VACUUM, sequences), filled with ordinary and hostile
values (huge and malformed numbers, lone surrogates, NUL bytes, long names,
hostile LOCATIONs), and from mutations of them (cut short, a word dropped,
doubled or swapped, a stray token). After each statement that fails, the
catalog (every table but the statement log) and every Delta log in the
warehouse must be exactly as before it.

CI runs a few hundred statements; ``pytest --long`` runs thousands, and
``--fuzz-seed N`` another sequence.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import lakeclone

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.spark

STATEMENTS = 200
LONG_STATEMENTS = 3000
# A statement that takes longer than this hangs, as far as a user can tell.
SLOW_SECONDS = 30.0

NUMBERS = ["0", "1", "2", "-1", "3", "2147483648", "1e999999", "-99999999999999999", "1e400", "0.5", "NULL", "'7'"]
STRINGS = ["x", "it''s", "\\", "é", "\x00", "\ud800", "a" * 300, "'; DROP TABLE t; --"]
TIMESTAMPS = ["2024-01-01", "0000-01-01", "-0001-01-01", "10000-01-01", "2024-13-45", "now"]
NAMES = ["c1", "c2", "s1", '"Mixed"', "t", "nope", "x" * 300, '"a.b"']
TOKENS = ["SELECT", "FROM", "WHERE", "CLONE", "AT", "BEFORE", "(", ")", ";", ",", "=>", "NULL", "'", '"', "*", "1e999"]

TEMPLATES = [
    "SELECT * FROM t WHERE k > {n}",
    "SELECT k, COUNT(*) AS n FROM t GROUP BY k ORDER BY k",
    "SELECT t.k, u.v FROM t JOIN u ON t.k = u.k",
    "SELECT k / {n}, CAST(s AS INT) FROM t",
    "SELECT * FROM t AT(VERSION => {n})",
    "SELECT * FROM t AT(OFFSET => -{n})",
    "SELECT * FROM t AT(TIMESTAMP => '{ts}'::TIMESTAMP)",
    "SELECT * FROM t BEFORE(STATEMENT => '{query}')",
    "SELECT * FROM {name}",
    "SELECT '{s}' AS s",
    "INSERT INTO t VALUES ({n}, '{s}')",
    "INSERT INTO t SELECT k + 100, s FROM t WHERE k < {n}",
    "UPDATE t SET s = '{s}' WHERE k = {n}",
    "DELETE FROM t WHERE k = {n}",
    "UPDATE t SET s = u.v FROM u WHERE t.k = u.k",
    "MERGE INTO t USING u ON t.k = u.k WHEN MATCHED THEN UPDATE SET s = u.v "
    "WHEN NOT MATCHED THEN INSERT (k, s) VALUES (u.k, u.v)",
    "CREATE OR REPLACE TABLE {name} CLONE t",
    "CREATE TABLE {name} CLONE t AT(VERSION => {n})",
    "CREATE EXTERNAL TABLE {name} (k INT) LOCATION = '{location}'",
    "CREATE TABLE {name} (k INT, d DATE) DATA_RETENTION_TIME_IN_DAYS = {n}",
    "CREATE TABLE {name} AS SELECT * FROM t",
    "DROP TABLE IF EXISTS {name}",
    "UNDROP TABLE {name}",
    "CREATE SCHEMA IF NOT EXISTS {name}",
    "DROP SCHEMA IF EXISTS {name}",
    "ALTER TABLE {name} RENAME TO {name}",
    "ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = {n}",
    "DESCRIBE HISTORY t LIMIT {n}",
    "DESCRIBE TABLE {name}",
    "SHOW TABLES LIKE '{s}'",
    "SHOW SCHEMAS",
    "VACUUM t RETAIN {n} HOURS DRY RUN",
    "VACUUM {name}",
    "SELECT seq.NEXTVAL",
    "CREATE OR REPLACE SEQUENCE seq START = {n} INCREMENT = {n}",
]


class Generator:
    """Statements from templates, values and mutations, all drawn from one seeded random source."""

    def __init__(self, seed: int, locations: list[str]) -> None:
        self.random = random.Random(seed)
        self.locations = locations
        self.queries: list[str] = ["00000000-0000-0000-0000-000000000000"]

    def statement(self) -> str:
        text = self.filled(self.random.choice(TEMPLATES))
        return self.mutated(text) if self.random.random() < 0.4 else text

    def filled(self, template: str) -> str:
        pick = self.random.choice
        return template.format(
            n=pick(NUMBERS),
            s=pick(STRINGS),
            ts=pick(TIMESTAMPS),
            name=pick(NAMES),
            query=pick(self.queries[-5:]),
            location=pick(self.locations).replace("'", "''"),
        )

    def mutated(self, text: str) -> str:
        words = text.split(" ")
        mutations: list[Callable[[], str]] = [
            lambda: text[: self.random.randrange(1, len(text))],
            lambda: " ".join(w for i, w in enumerate(words) if i != self.random.randrange(len(words))),
            lambda: " ".join([*words[:1], *words]),
            lambda: " ".join(self.random.sample(words, len(words))),
            lambda: " ".join([*words[:1], self.random.choice(TOKENS), *words[1:]]),
        ]
        return self.random.choice(mutations)()


def state(warehouse: Path) -> tuple[object, ...]:
    """What a failed statement must not change: the catalog but its statement log and sessions' leases, and every Delta log.

    A thread of the process renews the leases while statements run (see lakeclone.catalog.sessions).
    """
    with sqlite3.connect(warehouse / "catalog.sqlite") as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        catalog = {
            name: sorted(map(repr, db.execute(f"SELECT * FROM {name}").fetchall()))
            for name in names
            if name not in ("queries", "ticks", "session_leases")
        }
    logs = sorted(
        (str(path.relative_to(warehouse.parent)), path.stat().st_size)
        for path in warehouse.parent.rglob("_delta_log/*")
        if path.is_file()
    )
    return (catalog, logs)


@pytest.fixture
def fuzz_seed(request: pytest.FixtureRequest) -> int:
    return int(request.config.getoption("--fuzz-seed"))


def test_fuzzed_statements_fail_only_with_lakeclone_errors_and_change_nothing(
    tmp_path: Path, spark, clock: lakeclone.ManualClock, request: pytest.FixtureRequest, fuzz_seed: int
) -> None:
    count = LONG_STATEMENTS if request.config.getoption("--long") else STATEMENTS
    warehouse = tmp_path / "warehouse"
    lake = lakeclone.connect(warehouse, spark=spark, clock=clock)
    lake.sql(
        "CREATE TABLE t (k INT, s STRING); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');"
        "CREATE TABLE u (k INT, v STRING); INSERT INTO u VALUES (2, 'B'), (4, 'D');"
        "CREATE SEQUENCE seq; CREATE TABLE c1 CLONE t"
    )
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "keep.csv").write_text("1,2\n")
    locations = [
        str(tmp_path / "ext"),
        "data",
        "~/x",
        f"file://{tmp_path}/uri",
        str(warehouse / "inside"),
        str(warehouse / "catalog.sqlite" / "x"),
        str(tmp_path / "precious"),
        str(tmp_path / "a\x00b"),
        str(tmp_path / ("n" * 300)),
        "/proc/self/x",
        str(tmp_path / "ext" / ".." / "warehouse" / "x"),
    ]
    generator = Generator(fuzz_seed, locations)
    outcomes: Counter[str] = Counter()
    escapes: list[str] = []
    changed: list[str] = []
    slow: list[str] = []

    before = state(warehouse)
    for number in range(count):
        sql = generator.statement()
        started = time.monotonic()
        failure = ""
        try:
            lake.sql(sql).collect()
            outcomes["succeeded"] += 1
        except lakeclone.LakecloneError as error:
            outcomes["LakecloneError"] += 1
            # In a text of several statements, those before the failing one ran (as in Snowflake).
            if error.statement is None or error.statement.number == 1:
                failure = str(error)
            if len(str(error).splitlines()) > 3:  # the message, its "SQL compilation error:" and a position
                escapes.append(f"{sql!r}: a message of {len(str(error).splitlines())} lines")
        except Exception as error:
            failure = f"{type(error).__name__}: {error}"
            outcomes["escaped"] += 1
            escapes.append(f"{sql!r}: {type(error).__name__}: {str(error)[:200]}")
        elapsed = time.monotonic() - started
        if elapsed > SLOW_SECONDS:
            slow.append(f"{sql!r}: {elapsed:.0f} s")
        if lake.last_query_id:
            generator.queries.append(lake.last_query_id)
        after = state(warehouse)
        if failure and after != before:
            changed.append(f"{sql!r}: {failure}")
        if not failure and "SCHEMA" in sql.upper():
            lake.sql("USE SCHEMA LAKE.PUBLIC")  # CREATE SCHEMA moves the session into the new schema
        before = after
        if number % 25 == 24:
            clock.advance(hours=6)  # windows close, so purges and expiries happen too

    summary = f"seed {fuzz_seed}: {count} statements, {dict(outcomes)}"
    print(summary)
    assert not escapes, f"{summary}\nescaped:\n" + "\n".join(escapes)
    assert not changed, f"{summary}\nfailed but changed the warehouse:\n" + "\n".join(changed)
    assert not slow, f"{summary}\nslow:\n" + "\n".join(slow)
    # The generator exercised both sides.
    assert outcomes["succeeded"] > count // 10 and outcomes["LakecloneError"] > count // 10, summary
