"""The catalog of one warehouse: SQLite in the warehouse folder, shared safely by every process using it.

Each part of it lives in a module named for what it stores; :class:`Catalog`
is all of them on one connection.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lakeclone.catalog.access import AccessStore
from lakeclone.catalog.channels import ChannelStore
from lakeclone.catalog.db import SchemaObjectTable, parse_timestamp, timestamp_text
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
from lakeclone.catalog.stages import FILE_FORMATS, STAGES, FileFormatEntry, LoadedFile, StageEntry, StageStore
from lakeclone.catalog.streams import STREAMS, StreamStore
from lakeclone.catalog.transactions import TransactionStore
from lakeclone.catalog.views import VIEWS, ViewStore

if TYPE_CHECKING:
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


class Catalog(
    AccessStore,
    ObjectStore,
    ParameterStore,
    QueryStore,
    SequenceStore,
    DefinitionStore,
    StreamStore,
    ViewStore,
    TransactionStore,
    ChannelStore,
    PolicyStore,
    FolderStore,
    StageStore,
):
    """The catalog of one warehouse: objects, parameters, statements, sequences, definitions, streams, views,
    transactions, access control, channels, policies and tags, the folders statements are writing, stages and load history."""

    def schema_object(self, kind: ObjectKind, name: QualifiedName) -> SchemaObjectEntry | None:
        """The live object of ``kind`` (a table, view, stream, sequence, stage or file format) ``name`` holds, or None."""
        if kind is ObjectKind.TABLE:
            return self.table(name.database, name.schema, name.name)
        return self._named(_SCHEMA_OBJECT_TABLES[kind], name.database, name.schema, name.name)

    def schema_object_by_id(self, kind: ObjectKind, object_id: str) -> SchemaObjectEntry | None:
        """An object of ``kind`` by identity, live or dropped."""
        if kind is ObjectKind.TABLE:
            return self.table_by_id(object_id)
        return self._with_id(_SCHEMA_OBJECT_TABLES[kind], object_id)

    def schema_objects(self, kind: ObjectKind, schema: SchemaEntry) -> Sequence[SchemaObjectEntry]:
        """A schema's live objects of ``kind``, by name."""
        if kind is ObjectKind.TABLE:
            return self.tables(schema)
        return self._in_schema(_SCHEMA_OBJECT_TABLES[kind], schema.id)

    def drop_schema_object(self, kind: ObjectKind, object_id: str, now: dt.datetime) -> None:
        """Mark an object of ``kind`` dropped at ``now`` (not a table: dropping one is more, see ``drop_table``)."""
        self._mark_dropped(_SCHEMA_OBJECT_TABLES[kind].table, object_id, now)

    def horizon(self, table: TableEntry, now: dt.datetime) -> dt.datetime:
        """The oldest moment time travel on ``table`` reaches: its retention window, or a VACUUM that kept less."""
        window = now - self.retention(table)
        vacuumed = self.vacuumed_before(table)
        return max(window, vacuumed) if vacuumed is not None else window
