"""The catalog's schema, as numbered migrations; ``PRAGMA user_version`` records how far a file has come.

A migration runs once per catalog file, inside the transaction that opens it,
so two processes opening an old warehouse at once migrate it exactly once.
Add a migration to the end of :data:`MIGRATIONS`; never change one that has shipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from lakeclone.errors import CatalogVersionError

# The schema of every catalog written before migrations were numbered. Its
# statements are IF NOT EXISTS so that such a catalog (user_version 0) passes
# through it unchanged.
INITIAL = """
CREATE TABLE IF NOT EXISTS databases (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS databases_live_name ON databases(name) WHERE dropped_at IS NULL;

CREATE TABLE IF NOT EXISTS schemas (
    id TEXT PRIMARY KEY,
    database_id TEXT NOT NULL REFERENCES databases(id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS schemas_live_name
    ON schemas(database_id, name) WHERE dropped_at IS NULL;

CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('MANAGED', 'EXTERNAL')),
    location TEXT NOT NULL,
    created_at TEXT NOT NULL,
    dropped_at TEXT,
    source_id TEXT REFERENCES tables(id),
    source_version INTEGER,
    clone_kind TEXT CHECK (clone_kind IN ('SHALLOW', 'DEEP')),
    purged_at TEXT
);
CREATE INDEX IF NOT EXISTS tables_source ON tables(source_id);
CREATE UNIQUE INDEX IF NOT EXISTS tables_live_name
    ON tables(schema_id, name) WHERE dropped_at IS NULL;

CREATE TABLE IF NOT EXISTS parameters (
    object_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (object_id, key)
);

CREATE TABLE IF NOT EXISTS queries (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    text TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS sequences (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    next_value INTEGER NOT NULL,
    increment INTEGER NOT NULL CHECK (increment <> 0),
    comment TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    dropped_at TEXT,
    source_id TEXT REFERENCES sequences(id)
);
CREATE UNIQUE INDEX IF NOT EXISTS sequences_live_name
    ON sequences(schema_id, name) WHERE dropped_at IS NULL;

CREATE TABLE IF NOT EXISTS column_defaults (
    table_id TEXT NOT NULL REFERENCES tables(id),
    column_name TEXT NOT NULL,
    sequence_id TEXT REFERENCES sequences(id),
    expression TEXT,
    CHECK ((sequence_id IS NULL) <> (expression IS NULL)),
    PRIMARY KEY (table_id, column_name)
);

CREATE TABLE IF NOT EXISTS table_constraints (
    table_id TEXT NOT NULL REFERENCES tables(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')),
    columns TEXT NOT NULL,
    ref_table_id TEXT REFERENCES tables(id),
    ref_columns TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (table_id, name)
);
CREATE INDEX IF NOT EXISTS table_constraints_ref ON table_constraints(ref_table_id);

CREATE TABLE IF NOT EXISTS clustering (
    table_id TEXT PRIMARY KEY REFERENCES tables(id),
    keys TEXT NOT NULL,
    automatic INTEGER NOT NULL CHECK (automatic IN (0, 1))
);
"""

# Tables on delta-spark:
# - a table's location is a URI (file:/abs/path for a local folder);
# - whether lakeclone made the table's folder (VACUUM deletes files no version
#   ever referenced only from folders it made);
# - the oldest moment a VACUUM of the table kept files for: versions before it
#   may have lost files, whatever the table's retention says;
# - ticks: one counter for the whole warehouse, taken by every statement as it
#   starts and finishes and by every commit, which orders them exactly however
#   coarse or fine the clock is (time travel by statement relies on it).
DELTA_SPARK = """
UPDATE tables SET location = 'file:' || location WHERE location LIKE '/%';
ALTER TABLE tables ADD COLUMN owns_folder INTEGER NOT NULL DEFAULT 0 CHECK (owns_folder IN (0, 1));
UPDATE tables SET owns_folder = 1 WHERE kind = 'MANAGED';
ALTER TABLE tables ADD COLUMN vacuumed_before TEXT;
CREATE TABLE ticks (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
INSERT INTO ticks (id, value) SELECT 1, COALESCE(MAX(rowid), 0) FROM queries;
ALTER TABLE queries ADD COLUMN started_tick INTEGER;
ALTER TABLE queries ADD COLUMN finished_tick INTEGER;
UPDATE queries SET started_tick = rowid;
"""

# Streams and change tracking:
# - streams live in schemas like tables; offsets is a JSON object of base table
#   id -> the version the stream's changes start after;
# - change_tracking: the versions of a table whose changes are tracked;
# - stream_consumptions: a statement consuming a stream, written before its
#   Delta commit and removed, with the offsets moved, when the statement
#   finishes; one left by a crashed session is resolved from the target's log.
STREAMS = """
CREATE TABLE streams (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    source_kind TEXT NOT NULL CHECK (source_kind IN ('TABLE', 'VIEW')),
    source_id TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('DEFAULT', 'APPEND_ONLY')),
    offsets TEXT NOT NULL,
    initial_rows INTEGER NOT NULL CHECK (initial_rows IN (0, 1)),
    comment TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    offset_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX streams_live_name ON streams(schema_id, name) WHERE dropped_at IS NULL;
CREATE INDEX streams_source ON streams(source_id);

CREATE TABLE change_tracking (
    table_id TEXT NOT NULL REFERENCES tables(id),
    since_version INTEGER NOT NULL,
    until_version INTEGER,
    PRIMARY KEY (table_id, since_version)
);

CREATE TABLE stream_consumptions (
    stream_id TEXT PRIMARY KEY REFERENCES streams(id),
    query_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    target TEXT NOT NULL,
    offsets TEXT NOT NULL,
    initial_rows INTEGER NOT NULL CHECK (initial_rows IN (0, 1))
);
"""

# Views: a view lives in a schema beside tables and streams, sharing their
# namespace (the engine checks every kind; each unique index covers its own).
# ``definition`` is the query as written; ``columns`` the JSON list of the
# view's column names recorded at CREATE. Parameters (COMMENT, CHANGE_TRACKING)
# live in ``parameters`` by the view's id, as a table's do.
VIEWS = """
CREATE TABLE views (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    columns TEXT NOT NULL,
    created_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX views_live_name ON views(schema_id, name) WHERE dropped_at IS NULL;
"""

# Transactions (BEGIN … COMMIT): each open one, the tables it holds locked with
# the version committed when it took the lock, and the versions no session may
# read (a rolled-back transaction's, and a committed one's intermediate states).
TRANSACTIONS = """
CREATE TABLE transactions (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    name TEXT,
    started_at TEXT NOT NULL,
    started_tick INTEGER NOT NULL
);

CREATE TABLE table_locks (
    table_id TEXT NOT NULL REFERENCES tables(id),
    session_id TEXT NOT NULL,
    transaction_id TEXT REFERENCES transactions(id),
    query_id TEXT NOT NULL,
    base_version INTEGER,
    CHECK ((transaction_id IS NULL) = (base_version IS NULL))
);
CREATE INDEX table_locks_table ON table_locks(table_id);
CREATE UNIQUE INDEX table_locks_exclusive ON table_locks(table_id) WHERE transaction_id IS NOT NULL;

CREATE TABLE table_lock_epochs (
    table_id TEXT PRIMARY KEY REFERENCES tables(id),
    epoch INTEGER NOT NULL
);

CREATE TABLE hidden_versions (
    table_id TEXT NOT NULL REFERENCES tables(id),
    first_version INTEGER NOT NULL,
    last_version INTEGER NOT NULL,
    base_version INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('ROLLED_BACK', 'INTERMEDIATE')),
    PRIMARY KEY (table_id, first_version)
);
"""

# Users, roles and grants. A new warehouse, and one written before access
# control, gets the administrator user with ACCOUNTADMIN (above SYSADMIN), and
# every object that exists is owned by ACCOUNTADMIN. An object with no
# ownership row (the default database, created before any statement runs) is
# ACCOUNTADMIN's too: see lakeclone.catalog.access.
ACCESS = """
CREATE TABLE users (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);

CREATE TABLE roles (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE role_grants (
    role TEXT NOT NULL REFERENCES roles(name),
    grantee_kind TEXT NOT NULL CHECK (grantee_kind IN ('USER', 'ROLE')),
    grantee TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    PRIMARY KEY (role, grantee_kind, grantee)
);

CREATE TABLE grants (
    object_kind TEXT NOT NULL,
    object_id TEXT NOT NULL,
    privilege TEXT NOT NULL,
    role TEXT NOT NULL REFERENCES roles(name),
    grant_option INTEGER NOT NULL DEFAULT 0,
    granted_by TEXT NOT NULL,
    PRIMARY KEY (object_kind, object_id, privilege, role)
);
CREATE INDEX grants_role ON grants(role);

CREATE TABLE future_grants (
    container_kind TEXT NOT NULL CHECK (container_kind IN ('SCHEMA', 'DATABASE')),
    container_id TEXT NOT NULL,
    object_kind TEXT NOT NULL,
    privilege TEXT NOT NULL,
    role TEXT NOT NULL REFERENCES roles(name),
    grant_option INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (container_kind, container_id, object_kind, privilege, role)
);

CREATE TABLE ownership (
    object_kind TEXT NOT NULL,
    object_id TEXT NOT NULL,
    role TEXT NOT NULL REFERENCES roles(name),
    PRIMARY KEY (object_kind, object_id)
);

INSERT INTO users (name, created_at) VALUES ('ADMIN', '1970-01-01T00:00:00.000000Z');
INSERT INTO roles (name, owner, created_at) VALUES
    ('ACCOUNTADMIN', 'ACCOUNTADMIN', '1970-01-01T00:00:00.000000Z'),
    ('SYSADMIN', 'ACCOUNTADMIN', '1970-01-01T00:00:00.000000Z'),
    ('PUBLIC', 'ACCOUNTADMIN', '1970-01-01T00:00:00.000000Z');
INSERT INTO role_grants (role, grantee_kind, grantee, granted_by) VALUES
    ('ACCOUNTADMIN', 'USER', 'ADMIN', 'ACCOUNTADMIN'),
    ('SYSADMIN', 'ROLE', 'ACCOUNTADMIN', 'ACCOUNTADMIN');
INSERT INTO grants (object_kind, object_id, privilege, role, grant_option, granted_by) VALUES
    ('ACCOUNT', '', 'CREATE DATABASE', 'SYSADMIN', 0, 'ACCOUNTADMIN');
INSERT INTO ownership (object_kind, object_id, role)
    SELECT 'DATABASE', id, 'ACCOUNTADMIN' FROM databases;
INSERT INTO ownership (object_kind, object_id, role)
    SELECT 'SCHEMA', id, 'ACCOUNTADMIN' FROM schemas;
INSERT INTO ownership (object_kind, object_id, role)
    SELECT 'TABLE', id, 'ACCOUNTADMIN' FROM tables;
INSERT INTO ownership (object_kind, object_id, role)
    SELECT 'VIEW', id, 'ACCOUNTADMIN' FROM views;
INSERT INTO ownership (object_kind, object_id, role)
    SELECT 'STREAM', id, 'ACCOUNTADMIN' FROM streams;
INSERT INTO ownership (object_kind, object_id, role)
    SELECT 'SEQUENCE', id, 'ACCOUNTADMIN' FROM sequences
"""

# Channels (Snowpipe-Streaming-style ingestion): one row per channel of a
# table. ``app_id`` is the Delta txn appId its commits carry; a new id (a new
# channel, a recreated table, a channel expired after 30 days) starts its offset
# token at NULL. ``generation`` counts opens: a handle whose generation is no
# longer current is invalid. ``txn_version`` and ``offset_token`` cache what the
# table's log says the channel last committed (the log is the source of truth).
CHANNELS = """
CREATE TABLE channels (
    id TEXT PRIMARY KEY,
    table_id TEXT NOT NULL REFERENCES tables(id),
    name TEXT NOT NULL,
    client TEXT NOT NULL,
    app_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    txn_version INTEGER,
    offset_token TEXT,
    rows_inserted INTEGER NOT NULL DEFAULT 0,
    rows_in_error INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    last_committed_at TEXT
);
CREATE UNIQUE INDEX channels_table_name ON channels(table_id, name);
"""

# Masking policies, row access policies and tags: schema-level objects, one
# table for the three kinds (a name is unique per schema and kind). ``signature``
# is the JSON list of [argument, type] pairs; a tag has none, and its
# ``allowed_values`` is a JSON list or NULL. ``policy_references`` attaches a
# policy to a table or view: a masking policy to one column (``column_name``),
# a row access policy to the object (``column_name`` '') with its ON columns;
# ``using_columns`` is the JSON list of the columns the policy's arguments read.
# ``tag_references`` holds a tag's value on an object ('' column) or a column;
# ``tag_policies`` the masking policies a tag carries (tag-based masking).
POLICIES = """
CREATE TABLE policies (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('MASKING POLICY', 'ROW ACCESS POLICY', 'TAG')),
    signature TEXT NOT NULL,
    return_type TEXT,
    body TEXT,
    allowed_values TEXT,
    comment TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX policies_name ON policies(schema_id, kind, name);

CREATE TABLE policy_references (
    policy_id TEXT NOT NULL REFERENCES policies(id),
    object_kind TEXT NOT NULL,
    object_id TEXT NOT NULL,
    column_name TEXT NOT NULL,
    using_columns TEXT NOT NULL,
    PRIMARY KEY (object_id, column_name, policy_id)
);
CREATE INDEX policy_references_policy ON policy_references(policy_id);

CREATE TABLE tag_references (
    tag_id TEXT NOT NULL REFERENCES policies(id),
    object_kind TEXT NOT NULL,
    object_id TEXT NOT NULL,
    column_name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (object_id, column_name, tag_id)
);
CREATE INDEX tag_references_tag ON tag_references(tag_id);

CREATE TABLE tag_policies (
    tag_id TEXT NOT NULL REFERENCES policies(id),
    policy_id TEXT NOT NULL REFERENCES policies(id),
    PRIMARY KEY (tag_id, policy_id)
)
"""

# - pending_folders: the folder a running statement writes a new table into,
#   with the session running it; the statement's catalog record removes the
#   row, and a session that finds a dead session's row removes what the folder
#   holds (the whole folder when the statement made it).
PENDING_FOLDERS = """
CREATE TABLE pending_folders (
    location TEXT PRIMARY KEY,
    query_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    made INTEGER NOT NULL
);
CREATE INDEX pending_folders_query ON pending_folders(query_id)
"""

# The session's QUERY_TAG when each statement ran.
QUERY_TAGS = """
ALTER TABLE queries ADD COLUMN query_tag TEXT NOT NULL DEFAULT ''
"""

# - stages: named external locations COPY INTO loads files from, with the
#   file format options a COPY takes by default (JSON); a namespace of their own per schema.
# - file_formats: named file formats (their options, JSON), in a namespace of their own per schema.
# - loaded_files: COPY INTO's load history, per table and file: the file's
#   checksum, when it was loaded and how many rows. A row is pending from
#   before the load's Delta commit until its statement (or transaction)
#   finishes; a dead session's pending rows stand if the table's log holds
#   the holder's commit, else they are removed.
STAGES = """
CREATE TABLE stages (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    file_format TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX stages_live_name ON stages(schema_id, name) WHERE dropped_at IS NULL;
CREATE TABLE file_formats (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    options TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX file_formats_live_name ON file_formats(schema_id, name) WHERE dropped_at IS NULL;
CREATE TABLE loaded_files (
    table_id TEXT NOT NULL,
    uri TEXT NOT NULL,
    checksum TEXT NOT NULL,
    rows_loaded INTEGER NOT NULL,
    loaded_at TEXT NOT NULL,
    holder TEXT NOT NULL,
    session_id TEXT NOT NULL,
    pending INTEGER NOT NULL
);
CREATE INDEX loaded_files_file ON loaded_files(table_id, uri);
CREATE INDEX loaded_files_holder ON loaded_files(holder)
"""

# What QUERY_HISTORY shows of each statement beside its text: the session,
# user and role that ran it, its current database and schema, its kind, and
# how it failed (a statement that failed has an error message).
QUERY_HISTORY = """
ALTER TABLE queries ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE queries ADD COLUMN user_name TEXT NOT NULL DEFAULT '';
ALTER TABLE queries ADD COLUMN role_name TEXT NOT NULL DEFAULT '';
ALTER TABLE queries ADD COLUMN database_name TEXT;
ALTER TABLE queries ADD COLUMN schema_name TEXT;
ALTER TABLE queries ADD COLUMN query_type TEXT NOT NULL DEFAULT '';
ALTER TABLE queries ADD COLUMN error_code TEXT;
ALTER TABLE queries ADD COLUMN error_message TEXT;
CREATE INDEX queries_started ON queries(started_tick)
"""

# Each VACUUM that removed files: time travel to a version it broke names it.
VACUUMS = """
CREATE TABLE vacuums (
    table_id TEXT NOT NULL REFERENCES tables(id),
    query_id TEXT NOT NULL,
    vacuumed_at TEXT NOT NULL,
    horizon TEXT NOT NULL
);
CREATE INDEX vacuums_of_table ON vacuums(table_id, vacuumed_at)
"""

# When the oldest row a channel has not committed yet was inserted, as its client last recorded it (a flush's
# commit, or a failed flush): NULL when it held none. A channel's lag is its age.
CHANNEL_PENDING = """
ALTER TABLE channels ADD COLUMN pending_since TEXT
"""

# A column's default may be its own numbering (AUTOINCREMENT, IDENTITY): where it started, its step and the
# value it hands out next. SQLite changes no CHECK of a table in place: the table is made again.
IDENTITY_COLUMNS = """
CREATE TABLE column_defaults_new (
    table_id TEXT NOT NULL REFERENCES tables(id),
    column_name TEXT NOT NULL,
    sequence_id TEXT REFERENCES sequences(id),
    expression TEXT,
    identity_start INTEGER,
    identity_increment INTEGER,
    identity_next INTEGER,
    CHECK ((sequence_id IS NOT NULL) + (expression IS NOT NULL) + (identity_increment IS NOT NULL) = 1),
    CHECK ((identity_start IS NULL) = (identity_increment IS NULL) AND (identity_next IS NULL) = (identity_increment IS NULL)),
    PRIMARY KEY (table_id, column_name)
);
INSERT INTO column_defaults_new (table_id, column_name, sequence_id, expression)
    SELECT table_id, column_name, sequence_id, expression FROM column_defaults ORDER BY rowid;
DROP TABLE column_defaults;
ALTER TABLE column_defaults_new RENAME TO column_defaults
"""

# Session liveness as leases in the catalog, which a session on another machine can read
# (it was a lock file beside the catalog, which only this machine's sessions could test).
SESSION_LEASES = """
CREATE TABLE session_leases (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    process_started TEXT NOT NULL,
    started_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
)
"""

Migration = Callable[[sqlite3.Connection], None]


def _script(sql: str) -> Migration:
    def run(db: sqlite3.Connection) -> None:
        for statement in sql.split(";"):
            if statement.strip():
                db.execute(statement)

    return run


MIGRATIONS: tuple[Migration, ...] = (
    _script(INITIAL),
    _script(DELTA_SPARK),
    _script(STREAMS),
    _script(VIEWS),
    _script(TRANSACTIONS),
    _script(ACCESS),
    _script(CHANNELS),
    _script(POLICIES),
    _script(PENDING_FOLDERS),
    _script(QUERY_TAGS),
    _script(STAGES),
    _script(QUERY_HISTORY),
    _script(VACUUMS),
    _script(CHANNEL_PENDING),
    _script(IDENTITY_COLUMNS),
    _script(SESSION_LEASES),
)
"""Migration ``n`` (1-based) brings a catalog from user_version ``n - 1`` to ``n``."""


def migrate(db: sqlite3.Connection) -> int:
    """Apply the migrations a catalog lacks, inside the caller's transaction; returns its new version.

    Raises:
        CatalogVersionError: the catalog is newer than this lakeclone.
    """
    current = int(db.execute("PRAGMA user_version").fetchone()[0])
    if current > len(MIGRATIONS):
        raise CatalogVersionError(
            f"The catalog is at schema version {current}, newer than this lakeclone's "
            f"{len(MIGRATIONS)}: upgrade lakeclone to open this warehouse."
        )
    for number, migration in enumerate(MIGRATIONS[current:], start=current + 1):
        migration(db)
        db.execute(f"PRAGMA user_version = {number}")
    return len(MIGRATIONS)
