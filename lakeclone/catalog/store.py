"""The catalog of one warehouse: SQLite in the warehouse folder, shared safely by every process using it.

Each part of it lives in a module named for what it stores; :class:`Catalog`
holds each part by its name, on one connection.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lakeclone.catalog.access import AccessStore
from lakeclone.catalog.channels import ChannelStore
from lakeclone.catalog.db import CatalogConnection, SchemaObjectTable, Store, parse_timestamp, timestamp_text
from lakeclone.catalog.definitions import DefinitionStore
from lakeclone.catalog.entries import (
    ChannelEntry,
    CloneKind,
    ClusteringEntry,
    ColumnDefault,
    ConstraintEntry,
    ConstraintKind,
    DatabaseEntry,
    ObjectKind,
    QueryEntry,
    QueryOrigin,
    SchemaEntry,
    SchemaObjectEntry,
    SequenceEntry,
    SourceKind,
    StreamEntry,
    StreamMode,
    TableEntry,
    TableKind,
    ViewEntry,
)
from lakeclone.catalog.folders import FolderStore, PendingFolder
from lakeclone.catalog.objects import DEFAULT_DATABASE, DEFAULT_SCHEMA, ObjectStore
from lakeclone.catalog.parameters import ParameterStore
from lakeclone.catalog.policies import PolicyStore
from lakeclone.catalog.queries import QueryStore
from lakeclone.catalog.sequences import SEQUENCES, SequenceStore
from lakeclone.catalog.sessions import SessionStore
from lakeclone.catalog.stages import FILE_FORMATS, STAGES, FileFormatEntry, LoadedFile, StageEntry, StageStore
from lakeclone.catalog.streams import STREAMS, StreamStore
from lakeclone.catalog.transactions import TransactionStore
from lakeclone.catalog.views import VIEWS, ViewStore

if TYPE_CHECKING:
    from pathlib import Path

    from lakeclone.catalog.names import QualifiedName

# Where each kind of schema object a feature owns is kept.
_SCHEMA_OBJECT_TABLES: dict[ObjectKind, SchemaObjectTable[Any]] = {
    ObjectKind.VIEW: VIEWS,
    ObjectKind.STREAM: STREAMS,
    ObjectKind.SEQUENCE: SEQUENCES,
    ObjectKind.STAGE: STAGES,
    ObjectKind.FILE_FORMAT: FILE_FORMATS,
}

__all__ = [
    "DEFAULT_DATABASE",
    "DEFAULT_SCHEMA",
    "Catalog",
    "ChannelEntry",
    "CloneKind",
    "ClusteringEntry",
    "ColumnDefault",
    "ConstraintEntry",
    "ConstraintKind",
    "DatabaseEntry",
    "FileFormatEntry",
    "LoadedFile",
    "ObjectKind",
    "PendingFolder",
    "QueryEntry",
    "QueryOrigin",
    "SchemaEntry",
    "SchemaObjectEntry",
    "SequenceEntry",
    "SourceKind",
    "StageEntry",
    "StreamEntry",
    "StreamMode",
    "TableEntry",
    "TableKind",
    "ViewEntry",
    "parse_timestamp",
    "timestamp_text",
]


class SchemaObjectStore(Store):
    """Every kind of schema object (a table, view, stream, sequence, stage or file format), by its kind."""

    def __init__(self, connection: CatalogConnection, objects: ObjectStore) -> None:
        super().__init__(connection)
        self._objects = objects

    def named(self, kind: ObjectKind, name: QualifiedName) -> SchemaObjectEntry | None:
        """The live object of ``kind`` ``name`` holds, or None."""
        if kind is ObjectKind.TABLE:
            return self._objects.table(name.database, name.schema, name.name)
        return self._named(_SCHEMA_OBJECT_TABLES[kind], name.database, name.schema, name.name)

    def by_id(self, kind: ObjectKind, object_id: str) -> SchemaObjectEntry | None:
        """An object of ``kind`` by identity, live or dropped."""
        if kind is ObjectKind.TABLE:
            return self._objects.table_by_id(object_id)
        return self._with_id(_SCHEMA_OBJECT_TABLES[kind], object_id)

    def in_schema(self, kind: ObjectKind, schema: SchemaEntry) -> Sequence[SchemaObjectEntry]:
        """A schema's live objects of ``kind``, by name."""
        if kind is ObjectKind.TABLE:
            return self._objects.tables(schema)
        return self._in_schema(_SCHEMA_OBJECT_TABLES[kind], schema.id)

    def drop(self, kind: ObjectKind, object_id: str, now: dt.datetime) -> None:
        """Mark an object of ``kind`` dropped at ``now`` (not a table: dropping one is more, see ``ObjectStore.drop_table``)."""
        self._mark_dropped(_SCHEMA_OBJECT_TABLES[kind].table, object_id, now)


class Catalog(CatalogConnection):
    """The catalog of one warehouse, on one connection, in parts grouped by what they store.

    Each part is reached by its name and has the few methods its callers
    need: ``catalog.objects.table(...)``, ``catalog.access.grant(...)``. A
    block of changes to several parts that must land together runs in
    :meth:`~CatalogConnection.transaction` (or a statement's unit of work).

    Attributes:
        objects: databases, schemas and tables.
        schema_objects: any kind of schema object, by kind.
        access: users, roles, grants and ownership.
        parameters: object parameters (retention, change tracking, ...).
        queries: the query history.
        sequences: sequences.
        definitions: table definitions' parts: defaults, constraints, clustering keys.
        streams: streams and their offsets.
        views: views.
        transactions: open transactions and table locks.
        channels: ingestion channels.
        policies: masking and row access policies, tags, and where they apply.
        folders: the folders statements are writing, until they are recorded.
        stages: stages, file formats and load history.
        sessions: sessions' leases, which tell whether a session still runs.
    """

    def __init__(self, path: Path, *, timeout: float = 60, create: bool = True) -> None:
        super().__init__(path, timeout=timeout, create=create)
        self.objects = ObjectStore(self)
        self.schema_objects = SchemaObjectStore(self, self.objects)
        self.access = AccessStore(self)
        self.parameters = ParameterStore(self)
        self.queries = QueryStore(self)
        self.sequences = SequenceStore(self)
        self.definitions = DefinitionStore(self)
        self.streams = StreamStore(self)
        self.views = ViewStore(self)
        self.transactions = TransactionStore(self)
        self.channels = ChannelStore(self)
        self.policies = PolicyStore(self)
        self.folders = FolderStore(self)
        self.stages = StageStore(self)
        self.sessions = SessionStore(self)

    def horizon(self, table: TableEntry, now: dt.datetime) -> dt.datetime:
        """The oldest moment time travel on ``table`` reaches: its retention window, or a VACUUM that kept less."""
        window = now - self.parameters.retention(table)
        vacuumed = self.objects.vacuumed_before(table)
        return max(window, vacuumed) if vacuumed is not None else window
