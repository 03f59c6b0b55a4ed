"""The catalog of one warehouse: SQLite in the warehouse folder, shared safely by every process using it.

Each part of it lives in a module named for what it stores; :class:`Catalog`
is all of them on one connection.
"""

from __future__ import annotations

import datetime as dt

from lakeclone.catalog.access import AccessStore
from lakeclone.catalog.channels import ChannelStore
from lakeclone.catalog.db import parse_timestamp, timestamp_text
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
from lakeclone.catalog.sequences import SequenceStore
from lakeclone.catalog.stages import FileFormatEntry, LoadedFile, StageEntry, StageStore
from lakeclone.catalog.streams import StreamStore
from lakeclone.catalog.transactions import TransactionStore
from lakeclone.catalog.views import ViewStore

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

    def horizon(self, table: TableEntry, now: dt.datetime) -> dt.datetime:
        """The oldest moment time travel on ``table`` reaches: its retention window, or a VACUUM that kept less."""
        window = now - self.retention(table)
        vacuumed = self.vacuumed_before(table)
        return max(window, vacuumed) if vacuumed is not None else window
