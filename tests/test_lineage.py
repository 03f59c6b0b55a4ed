"""Clone lineage: ``lake.lineage(name)`` — the chain of sources, the tree of clones, owned and shared files."""

from __future__ import annotations

import os

import pytest
from delta_reader import kernel_rows, live_adds, spark_rows
from lake_helpers import location, rows

import lakeclone

pytestmark = pytest.mark.spark


def sizes(folder: str) -> list[int]:
    """The sizes of the table's live data files, from its log's JSON."""
    return sorted(add["size"] for add in live_adds(folder).values())


def summary(node) -> tuple:
    return (node.kind, node.files_owned, node.files_shared, node.bytes_owned, node.bytes_shared)


def test_lineage_of_a_clone_of_a_clone(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT, v STRING); INSERT INTO s VALUES (1, 'a'); INSERT INTO s VALUES (2, 'b')")
    lake.sql("CREATE TABLE c1 CLONE s; CREATE TABLE c2 CLONE c1")
    source = location(lake, "s")
    total = sum(sizes(source))

    graph = lake.lineage("c2")
    s, c1, c2 = (graph.node(f"LAKE.PUBLIC.{n}") for n in ("S", "C1", "C2"))
    assert graph.root == c2.id
    assert len(graph.nodes) == 3
    assert sorted(graph.edges) == sorted([(s.id, c1.id, 2), (c1.id, c2.id, 0)])
    assert (s.source_id, c1.source_id, c2.source_id) == (None, s.id, c1.id)
    assert (s.version, c1.version, c2.version) == (2, 0, 0)
    assert summary(s) == ("TABLE", 2, 0, total, 0)
    assert summary(c1) == ("SHALLOW CLONE", 0, 2, 0, total)
    assert summary(c2) == ("SHALLOW CLONE", 0, 2, 0, total)

    # A write to the middle clone: c1 now owns the rewritten file; c2 still shares the original's.
    lake.sql("UPDATE c1 SET v = 'A' WHERE id = 1")
    middle = location(lake, "c1")
    owned = [add["size"] for path, add in live_adds(middle).items() if path.startswith(middle + os.sep)]
    assert len(owned) == 1
    graph = lake.lineage("c2")
    s, c1, c2 = (graph.node(f"LAKE.PUBLIC.{n}") for n in ("S", "C1", "C2"))
    assert c1.version == 1
    assert (c1.files_owned, c1.files_shared, c1.bytes_owned) == (1, 1, owned[0])
    assert c1.bytes_owned + c1.bytes_shared == sum(sizes(middle))
    assert summary(c2) == ("SHALLOW CLONE", 0, 2, 0, total)
    assert summary(s) == ("TABLE", 2, 0, total, 0)

    # From the original, the lineage is every descendant, deep clones included.
    lake.sql("CREATE TABLE d DEEP CLONE c1")
    graph = lake.lineage("s")
    assert graph.root == graph.node("LAKE.PUBLIC.S").id
    assert {n.name for n in graph.nodes.values()} == {"LAKE.PUBLIC.S", "LAKE.PUBLIC.C1", "LAKE.PUBLIC.C2", "LAKE.PUBLIC.D"}
    d = graph.node("LAKE.PUBLIC.D")
    assert summary(d) == ("DEEP CLONE", 2, 0, sum(sizes(location(lake, "d"))), 0)
    assert (d.source_id, d.source_version) == (graph.node("LAKE.PUBLIC.C1").id, 1)
    # A sibling branch is not part of c2's lineage: only its ancestors and descendants are.
    assert {n.name for n in lake.lineage("c2").nodes.values()} == {"LAKE.PUBLIC.S", "LAKE.PUBLIC.C1", "LAKE.PUBLIC.C2"}

    for name, expected in (
        ("s", [(1, "a"), (2, "b")]),
        ("c1", [(1, "A"), (2, "b")]),
        ("c2", [(1, "a"), (2, "b")]),
        ("d", [(1, "A"), (2, "b")]),
    ):
        folder = location(lake, name)
        assert rows(lake, f"SELECT * FROM {name}") == kernel_rows(folder) == spark_rows(lake.spark, folder) == expected


def test_lineage_keeps_dropped_clones_and_sources(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE s (id INT); INSERT INTO s VALUES (1)")
    lake.sql("CREATE TABLE c CLONE s; CREATE TABLE c_old CLONE s AT(VERSION => 0)")
    lake.sql("DROP TABLE c_old; DROP TABLE s")
    graph = lake.lineage("c")
    s = graph.node("LAKE.PUBLIC.S")
    assert s.dropped_at is not None
    assert graph.node("LAKE.PUBLIC.C").dropped_at is None
    assert {n.name for n in graph.nodes.values()} == {"LAKE.PUBLIC.S", "LAKE.PUBLIC.C"}
    lake.sql("UNDROP TABLE s")
    graph = lake.lineage("s")
    old = graph.node("LAKE.PUBLIC.C_OLD")
    assert old.dropped_at is not None
    assert (old.source_version, old.files_owned, old.files_shared) == (0, 0, 0)
    assert sorted(graph.edges) == sorted([(s.id, graph.node("LAKE.PUBLIC.C").id, 1), (s.id, old.id, 0)])


def test_lineage_of_a_plain_table(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    graph = lake.lineage("t")
    (node,) = graph.nodes.values()
    assert graph.edges == []
    assert (node.name, node.kind, node.source_id, node.source_version, node.version) == ("LAKE.PUBLIC.T", "TABLE", None, None, 1)
    assert (node.files_owned, node.files_shared) == (1, 0)
    with pytest.raises(lakeclone.LakecloneError, match="does not exist"):
        lake.lineage("nosuch")
