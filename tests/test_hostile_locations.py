"""Hostile LOCATIONs: whatever a CREATE, INSERT, VACUUM, DROP or purge does, no file outside a table's own folder changes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import lakeclone

pytestmark = pytest.mark.spark


def files_under(root: Path, skip: set[Path]) -> dict[str, tuple[int, str]]:
    """Every file under ``root`` but those under ``skip``: relative path -> (size, SHA-256)."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) not in skip]
        for name in names:
            path = Path(folder, name)
            if path not in skip:
                found[str(path.relative_to(root))] = (path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def folder_of(lake: lakeclone.Lake, name: str) -> Path:
    (detail,) = lake.sql(f"DESCRIBE DETAIL {name}").collect()
    return Path(detail.location.removeprefix("file:"))


def hostile_locations(sandbox: Path, warehouse: Path, host: Path) -> list[str]:
    return [
        "data",
        "./x",
        "~/x",
        "file:relative",
        f"file://{sandbox}/../{sandbox.name}/precious",
        str(sandbox / "precious"),
        str(sandbox / "precious" / "_delta_log"),
        str(host),
        str(host / "sub"),
        str(host.parent),
        str(warehouse),
        str(warehouse / "tables"),
        str(warehouse / "catalog.sqlite"),
        str(warehouse / "catalog.sqlite" / "x"),
        str(sandbox / "elsewhere" / ".." / "warehouse" / "x"),
        str(sandbox / "a\x00b"),
        str(sandbox / ("n" * 300)),
        "/proc/self/x",
        str(sandbox / "it's here"),
        str(sandbox / "100%20 percent"),
    ]


def test_hostile_locations_touch_nothing_outside_a_tables_own_folder(tmp_path: Path, spark, clock: lakeclone.ManualClock) -> None:
    sandbox = tmp_path / "sandbox"
    warehouse = sandbox / "warehouse"
    lake = lakeclone.connect(warehouse, spark=spark, clock=clock)
    (sandbox / "precious").mkdir()
    (sandbox / "precious" / "precious.csv").write_text("id,name\n1,ann\n")
    (sandbox / "precious" / "_delta_log").write_text("a file, not a log")
    host = sandbox / "tables" / "host"
    lake.sql(f"CREATE EXTERNAL TABLE host (x INT) LOCATION = '{host}'; INSERT INTO host VALUES (1)")
    lake.sql("CREATE TABLE managed (x INT); INSERT INTO managed VALUES (2)")

    # The catalog records every statement: it is the warehouse's own file, not a table's neighbour.
    catalog = {warehouse / name for name in ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm")}
    tables = {host, folder_of(lake, "managed")}
    created: set[Path] = set()
    before = files_under(sandbox, catalog | tables)
    outcomes = {"created": 0, "refused": 0}
    for text in hostile_locations(sandbox, warehouse, host):
        quoted = text.replace("'", "''")
        for statement in (
            f"CREATE EXTERNAL TABLE e (x INT) LOCATION = '{quoted}'",
            f"CREATE EXTERNAL TABLE e LOCATION = '{quoted}' AS SELECT 1 AS x",
            f"CREATE EXTERNAL TABLE e LOCATION = '{quoted}' CLONE host",
            f"CREATE EXTERNAL TABLE e CLONE host LOCATION = '{quoted}'",
        ):
            try:
                lake.sql(statement)
            except lakeclone.LakecloneError:
                outcomes["refused"] += 1
                continue
            outcomes["created"] += 1
            created.add(folder_of(lake, "e"))
            lake.sql("INSERT INTO e VALUES (3); VACUUM e; DROP TABLE e")

    # Purge everything dropped (any DROP does), then VACUUM the tables that stay.
    clock.advance(days=10)
    lake.sql("DROP TABLE IF EXISTS nothing; VACUUM host; VACUUM managed")

    after = files_under(sandbox, catalog | tables | created)
    assert after == {k: v for k, v in before.items() if not any(Path(sandbox, k).is_relative_to(c) for c in created)}
    assert (sandbox / "precious" / "precious.csv").read_text() == "id,name\n1,ann\n"
    assert [tuple(r) for r in lake.sql("SELECT * FROM host").collect()] == [(1,)]
    assert [tuple(r) for r in lake.sql("SELECT * FROM managed").collect()] == [(2,)]
    # Only the harmless spellings of a fresh folder made tables.
    assert outcomes["refused"] > 3 * outcomes["created"], outcomes


def test_a_symbolic_link_leads_no_table_into_another_s_folder_or_the_warehouse(
    tmp_path: Path, spark, clock: lakeclone.ManualClock
) -> None:
    """The links are the machine's (a tenant with SQL makes none); a LOCATION through one is judged where it leads."""
    warehouse = tmp_path / "warehouse"
    lake = lakeclone.connect(warehouse, spark=spark, clock=clock)
    victim = tmp_path / "outside" / "secret"
    lake.sql(f"CREATE EXTERNAL TABLE secret (x STRING) LOCATION = '{victim}'")
    lake.sql("INSERT INTO secret VALUES ('SECRET')")
    lake.sql("CREATE TABLE managed (x STRING)")  # the warehouse's tables folder exists
    (tmp_path / "to_table").symlink_to(victim)
    (tmp_path / "to_warehouse").symlink_to(warehouse / "tables")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "to_elsewhere").symlink_to(tmp_path / "elsewhere")
    before = files_under(victim, set())
    for link, refusal in (("to_table", "overlaps the folder of table"), ("to_warehouse", "overlaps the warehouse")):
        for statement in (
            f"CREATE EXTERNAL TABLE e (x STRING) LOCATION = '{tmp_path / link}'",
            f"CREATE EXTERNAL TABLE e LOCATION = '{tmp_path / link / 'sub'}' AS SELECT 'y' AS x",
        ):
            with pytest.raises(lakeclone.LakecloneError, match=refusal):
                lake.sql(statement)
    assert files_under(victim, set()) == before
    # A link to a free folder is fine: the table lives where it leads.
    lake.sql(f"CREATE EXTERNAL TABLE e (x STRING) LOCATION = '{tmp_path / 'to_elsewhere'}'")
    assert folder_of(lake, "e") == tmp_path / "elsewhere"
