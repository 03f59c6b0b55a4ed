"""The catalog's rows, as the rest of lakeclone sees them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

# The role that owns every object until lakeclone has roles of its own (access control).
ADMIN_ROLE = "ACCOUNTADMIN"


class TableKind(str, Enum):
    """Whether lakeclone owns a table's files (MANAGED) or only its catalog entry (EXTERNAL)."""

    MANAGED = "MANAGED"
    EXTERNAL = "EXTERNAL"


class CloneKind(str, Enum):
    """How a clone got its files: by reference to its source's (SHALLOW) or by copying them (DEEP)."""

    SHALLOW = "SHALLOW"
    DEEP = "DEEP"


class _SqlWord(str, Enum):
    """An enum whose members read (in messages, results and f-strings) as the SQL text they hold."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return str(self.value).__format__(spec)


class ObjectKind(_SqlWord):
    """The kinds of object a statement names, containers first, each valued as SQL spells it (``FILE FORMAT``).

    They are what privileges are granted on (``ACCOUNT`` included); parameters
    are set on databases, schemas, tables and views (see :mod:`lakeclone.catalog.parameters`).
    A kind reads (in messages and results) and hashes as its value, so that
    the catalog's rows, which hold it as text, key the same dictionaries.
    """

    ACCOUNT = "ACCOUNT"
    ROLE = "ROLE"
    DATABASE = "DATABASE"
    SCHEMA = "SCHEMA"
    TABLE = "TABLE"
    VIEW = "VIEW"
    STREAM = "STREAM"
    SEQUENCE = "SEQUENCE"
    STAGE = "STAGE"
    FILE_FORMAT = "FILE FORMAT"
    MASKING_POLICY = "MASKING POLICY"
    ROW_ACCESS_POLICY = "ROW ACCESS POLICY"
    TAG = "TAG"

    def __hash__(self) -> int:
        return hash(self.value)

    @classmethod
    def named(cls, text: object) -> ObjectKind | None:
        """The kind a statement's words name (``file format``), or None for one lakeclone has no record of."""
        try:
            return cls(str(text or "").upper())
        except ValueError:
            return None


class GranteeKind(_SqlWord):
    """Whom a role is granted to: a user, or another role (whose users then inherit it)."""

    USER = "USER"
    ROLE = "ROLE"


@dataclass(frozen=True)
class DatabaseEntry:
    id: str
    name: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None


@dataclass(frozen=True)
class SchemaEntry:
    id: str
    database_id: str
    database: str
    name: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"


@dataclass(frozen=True)
class SchemaObjectEntry:
    """What every object that lives in a schema by name has: its identity, its schema and its name.

    ``id`` is the object's identity: RENAME keeps it, CREATE (and CREATE OR REPLACE) makes a new one.
    """

    id: str
    schema_id: str
    database: str
    schema: str
    name: str

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


@dataclass(frozen=True)
class TableEntry(SchemaObjectEntry):
    """A table's catalog row.

    Attributes:
        location: the table's folder, a qualified URI.
        owns_folder: lakeclone created the folder, so every file in it is the table's.
        source_id, source_version, clone_kind: the clone's lineage, if it is one.
        purged_at: set once a dropped table's window has passed and its files are gone.
    """

    kind: TableKind
    location: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None
    source_id: str | None = None
    source_version: int | None = None
    clone_kind: CloneKind | None = None
    purged_at: dt.datetime | None = None
    owns_folder: bool = True

    @property
    def managed(self) -> bool:
        return self.kind is TableKind.MANAGED


@dataclass(frozen=True)
class QueryOrigin:
    """Who ran a statement, where, and what kind of statement it is: what the query history shows beside its text.

    Attributes:
        session_id: the session (:class:`lakeclone.catalog.sessions.SessionLease`) that ran it.
        user: the signed-in user; role: the role it ran as.
        database, schema: the session's current database and schema (None when unset).
        query_type: Snowflake's QUERY_TYPE (``SELECT``, ``CREATE_TABLE``, …).
        query_tag: the session's QUERY_TAG.
    """

    session_id: str = ""
    user: str = ""
    role: str = ""
    database: str | None = None
    schema: str | None = None
    query_type: str = ""
    query_tag: str = ""


@dataclass(frozen=True)
class QueryEntry:
    """A statement lakeclone ran, with the warehouse ticks it started and finished at, and how it ended.

    A statement that failed has ``error_message`` (and, where Snowflake has one
    for its error, ``error_code``); one with neither ``finished_at`` nor an error
    is still running, or its session died under it.
    """

    id: str
    started_tick: int
    finished_tick: int | None
    started_at: dt.datetime
    finished_at: dt.datetime | None
    text: str
    origin: QueryOrigin = QueryOrigin()
    error_code: str | None = None
    error_message: str | None = None


@dataclass(frozen=True)
class SequenceEntry(SchemaObjectEntry):
    """A sequence's catalog row; ``next_value`` is the next value it hands out."""

    next_value: int
    increment: int
    comment: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None
    source_id: str | None = None


@dataclass(frozen=True)
class ViewEntry(SchemaObjectEntry):
    """A view's catalog row. Its definition's unqualified names resolve in its own database and schema.

    Attributes:
        definition: the view's query as written (lsql).
        columns: the view's column names, recorded at CREATE: its column list, or its query's output names.
    """

    definition: str
    columns: tuple[str, ...]
    created_at: dt.datetime
    dropped_at: dt.datetime | None


@dataclass(frozen=True)
class ColumnDefault:
    """A column's default: a sequence's NEXTVAL (by id), a constant lsql expression, or its own numbering."""

    column: str
    sequence_id: str | None = None
    expression: str | None = None
    identity: Identity | None = None

    @property
    def draws(self) -> bool:
        """Whether each row it fills draws a value of a numbering: a sequence's, or the column's own."""
        return self.expression is None


@dataclass(frozen=True)
class Identity:
    """An AUTOINCREMENT (IDENTITY) column's numbering: where it starts and its step; the catalog keeps its next value."""

    start: int
    increment: int


class ConstraintKind(str, Enum):
    PRIMARY_KEY = "PRIMARY KEY"
    UNIQUE = "UNIQUE"
    FOREIGN_KEY = "FOREIGN KEY"


@dataclass(frozen=True)
class ConstraintEntry:
    """An informational PRIMARY KEY, UNIQUE or FOREIGN KEY constraint of a table."""

    table_id: str
    name: str
    kind: ConstraintKind
    columns: tuple[str, ...]
    created_at: dt.datetime
    ref_table_id: str | None = None
    ref_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class VacuumEntry:
    """A VACUUM that removed a table's files: the statement, when it ran, and the oldest moment it kept files for."""

    query_id: str
    vacuumed_at: dt.datetime
    horizon: dt.datetime


@dataclass(frozen=True)
class ClusteringEntry:
    """A table's clustering key (lsql expressions) and whether automatic clustering is on."""

    table_id: str
    keys: tuple[str, ...]
    automatic: bool


class StreamMode(str, Enum):
    """What a stream returns: the net change (DEFAULT) or only inserted rows (APPEND_ONLY)."""

    DEFAULT = "DEFAULT"
    APPEND_ONLY = "APPEND_ONLY"


class SourceKind(str, Enum):
    """What a stream is on."""

    TABLE = "TABLE"
    VIEW = "VIEW"


@dataclass(frozen=True)
class StreamEntry(SchemaObjectEntry):
    """A stream's catalog row: a bookmark on its source's versions.

    Attributes:
        source_id: the table's (or view's) id; a stream follows its source
            through RENAME, never to a new table of the same name.
        offsets: for each base table the stream reads (one, for a table
            stream), the version its changes start after.
        initial_rows: SHOW_INITIAL_ROWS was given and the stream was not consumed
            yet: it returns the rows present at its offset, as inserts.
        offset_at: when the offsets were last set (creation or consumption), by
            the Lake's clock; staleness counts from it.
    """

    source_kind: SourceKind
    source_id: str
    mode: StreamMode
    offsets: Mapping[str, int]
    initial_rows: bool
    comment: str
    created_at: dt.datetime
    offset_at: dt.datetime
    dropped_at: dt.datetime | None = None


@dataclass(frozen=True)
class TrackingInterval:
    """Versions of a table whose changes are tracked: from the commit that turned tracking on to the one that turned it off."""

    table_id: str
    since_version: int
    until_version: int | None = None

    def covers(self, start: int, end: int) -> bool:
        """Whether the changes after version ``start`` up to ``end`` are all tracked."""
        return self.since_version <= start and (self.until_version is None or end < self.until_version)


@dataclass(frozen=True)
class Consumption:
    """A statement consuming a stream, recorded before its Delta commit so that a crash can be resolved.

    Attributes:
        session_id: the session running the statement; while it lives, the record is its lock on the stream.
        target: the location of the table the statement commits to.
        offsets: the offsets the stream moves to once the statement has committed.
        initial_rows: whether the stream still owes its initial rows afterwards.
    """

    stream_id: str
    query_id: str
    session_id: str
    target: str
    offsets: Mapping[str, int] = field(default_factory=dict)
    initial_rows: bool = False


class LockMode(Enum):
    """How a session holds a table it writes."""

    STATEMENT = "STATEMENT"
    """An autocommit statement, for the length of the statement; several may write at once (Delta's own concurrency)."""
    TRANSACTION = "TRANSACTION"
    """An open transaction, until COMMIT or ROLLBACK; no one else writes meanwhile."""


@dataclass(frozen=True)
class TableLock:
    """A session writing a table.

    Attributes:
        transaction_id: the transaction holding it; None for one autocommit statement's lock.
        query_id: the statement that took it.
        base_version: a transaction's lock only: the version committed when it was taken,
            which every other session reads until the transaction ends.
    """

    table_id: str
    session_id: str
    transaction_id: str | None
    query_id: str
    base_version: int | None

    @property
    def mode(self) -> LockMode:
        return LockMode.STATEMENT if self.transaction_id is None else LockMode.TRANSACTION


@dataclass(frozen=True)
class TransactionEntry:
    """An open transaction, as other sessions (and recovery) see it."""

    id: str
    session_id: str
    name: str | None
    started_at: dt.datetime
    started_tick: int


class HiddenOutcome(Enum):
    """Why a range of versions was never committed."""

    ROLLED_BACK = "ROLLED_BACK"
    INTERMEDIATE = "INTERMEDIATE"


@dataclass(frozen=True)
class HiddenVersions:
    """Versions of a table no session reads: they stand for ``base_version``."""

    table_id: str
    first_version: int
    last_version: int
    base_version: int
    outcome: HiddenOutcome

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.first_version <= version <= self.last_version


@dataclass(frozen=True)
class ChannelEntry:
    """A channel's catalog row: which table it writes, its current open, and what it last committed.

    Attributes:
        app_id: the Delta ``txnAppId`` its commits carry; a new one starts the offset token at NULL.
        generation: how many times it was opened; only the latest open's handle is valid.
        txn_version: the ``txnVersion`` of its last commit, as last read from the table's log (None: none yet).
        offset_token: the token that commit carried (a cache of the log).
        pending_since: when the oldest row its client holds uncommitted was inserted, as the client last recorded
            it (at a commit, or a failed flush); None when it held none.
    """

    id: str
    table_id: str
    name: str
    client: str
    app_id: str
    generation: int
    txn_version: int | None
    offset_token: str | None
    rows_inserted: int
    rows_in_error: int
    last_error: str | None
    created_at: dt.datetime
    opened_at: dt.datetime
    last_committed_at: dt.datetime | None
    pending_since: dt.datetime | None
