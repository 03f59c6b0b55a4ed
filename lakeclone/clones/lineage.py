"""Clone lineage: where a table came from, what was cloned from it, and which files each shares."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from lakeclone.catalog.store import Catalog, TableEntry
from lakeclone.delta.log import Delta
from lakeclone.storage import is_within


@dataclass(frozen=True)
class LineageNode:
    """One table in a lineage graph.

    Attributes:
        name: ``DB.SCHEMA.TABLE``.
        kind: ``TABLE`` for an original, ``SHALLOW CLONE`` or ``DEEP CLONE``.
        source_id: the table it was cloned from, if any.
        source_version: the source's version it was cloned at.
        version: its own current version (None once its log is gone).
        files_owned / bytes_owned: current files stored in its own folder.
        files_shared / bytes_shared: current files it references in another table's folder.
        authorized: False for a table the role may not see: a placeholder named :data:`HIDDEN`, with no
            version and no files, that keeps the graph's shape without telling what the table is.
    """

    id: str
    name: str
    kind: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None
    source_id: str | None
    source_version: int | None
    version: int | None
    files_owned: int
    bytes_owned: int
    files_shared: int
    bytes_shared: int
    authorized: bool = True


HIDDEN = "<not authorized>"
"""The name a lineage shows for a table the role may not see."""


@dataclass
class Lineage:
    """The chain of sources above a table and the tree of clones below it."""

    root: str
    nodes: dict[str, LineageNode] = field(default_factory=dict)

    @property
    def edges(self) -> list[tuple[str, str, int | None]]:
        """(source id, clone id, source version) for every clone in the graph."""
        return [
            (n.source_id, n.id, n.source_version)
            for n in self.nodes.values()
            if n.source_id is not None and n.source_id in self.nodes
        ]

    def hiding(self, visible: Callable[[str], bool]) -> Lineage:
        """This graph with each table ``visible`` (given its id) refuses replaced by a nameless placeholder.

        The root is the table the caller asked for, which it may see.
        """
        nodes = {
            node_id: node if node_id == self.root or visible(node_id) else _placeholder(node)
            for node_id, node in self.nodes.items()
        }
        return Lineage(root=self.root, nodes=nodes)

    def node(self, name: str) -> LineageNode:
        for node in self.nodes.values():
            if node.name == name:
                return node
        raise KeyError(name)


def lineage(catalog: Catalog, delta: Delta, table: TableEntry) -> Lineage:
    """The lineage graph around ``table``: its ancestors and all its descendants."""
    graph = Lineage(root=table.id)
    ancestor: TableEntry | None = table
    while ancestor is not None and ancestor.id not in graph.nodes:
        graph.nodes[ancestor.id] = _node(delta, ancestor)
        ancestor = catalog.objects.table_by_id(ancestor.source_id) if ancestor.source_id else None
    pending = [table.id]
    while pending:
        for clone in catalog.objects.clones_of(pending.pop(), purged=True):
            if clone.id not in graph.nodes:
                graph.nodes[clone.id] = _node(delta, clone)
                pending.append(clone.id)
    return graph


def _node(delta: Delta, table: TableEntry) -> LineageNode:
    log = delta.table(table.location)
    owned = shared = owned_bytes = shared_bytes = 0
    version = None
    if table.purged_at is None and log.exists():
        version = log.version()  # -1 when the log went since Delta last read it (deleted outside lakeclone)
        for file in log.files(version) if version >= 0 else ():
            if is_within(file.uri, table.location):
                owned, owned_bytes = owned + 1, owned_bytes + file.size
            else:
                shared, shared_bytes = shared + 1, shared_bytes + file.size
    kind = f"{table.clone_kind.value} CLONE" if table.clone_kind else "TABLE"
    return LineageNode(
        id=table.id,
        name=table.qualified,
        kind=kind,
        created_at=table.created_at,
        dropped_at=table.dropped_at,
        source_id=table.source_id,
        source_version=table.source_version,
        version=version,
        files_owned=owned,
        bytes_owned=owned_bytes,
        files_shared=shared,
        bytes_shared=shared_bytes,
    )


def _placeholder(node: LineageNode) -> LineageNode:
    return dataclasses.replace(
        node,
        name=HIDDEN,
        dropped_at=None,
        version=None,
        files_owned=0,
        bytes_owned=0,
        files_shared=0,
        bytes_shared=0,
        authorized=False,
    )
