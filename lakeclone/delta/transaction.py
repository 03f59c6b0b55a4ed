"""Commits no public delta-spark API can express, made through Delta's own transaction in the JVM.

A DEEP CLONE copies a snapshot's files into the clone's folder and then must
commit add actions naming those copies; a refreshed deep clone also removes
the files its source no longer has. Neither is a SQL, DataFrame or DeltaTable
operation, so this module builds the actions with Delta's own ``Action.fromJson``
and commits them with ``OptimisticTransaction.commit``: Delta checks them,
writes the log, assigns fresh row ids and detects conflicting writers.

A SHALLOW CLONE of a small table is committed the same way, with the
source's own files named by absolute path, as Delta's ``SHALLOW CLONE`` names
them: the command would reconstruct the source version's state and list its
files with Spark jobs (about 1.5 s a table warm), where the version's checksum
already lists them.

A change of a table's columns (ALTER TABLE … ADD COLUMN, a column's comment
or NOT NULL) is a metadata commit of the whole new schema
(:func:`commit_schema`): Delta's SQL would take a Spark type for each column
but not the field metadata lakeclone keeps with it (a declared ``OBJECT`` or
``ARRAY``, a ``VARCHAR``'s length), which CREATE TABLE gave the others.

The only other commits lakeclone makes this way are a channel's
(:func:`commit_txn`): Delta's ``txn`` action, which moves an application's
transaction version, with the files Delta's transaction writes for the
channel's rows, as Delta's streaming sink commits them; or alone, without
writing a data file, for a channel's open (an append of no rows would still
write an empty Parquet file that no version references).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lakeclone.delta.log import Delta, deletion_vector_uri, encode_uuid, sql_name
from lakeclone.storage import relative_to

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

# What a copy must not carry over: Delta assigns a clone's rows fresh row ids,
# as its own CLONE does.
_NOT_COPIED = ("baseRowId", "defaultRowCommitVersion")


@dataclass(frozen=True)
class ClonedFile:
    """An add action of the source, as a clone's log names its file.

    Attributes:
        add: the source's add action (as Delta's JSON form of it).
        path: the file's path as the clone's log writes it, URI-encoded:
            relative to the clone's folder (a deep clone's copy) or absolute
            (a shallow clone's, the source's own file).
        deletion_vector: the descriptor of the file's deletion vector in the
            clone's log (Delta's JSON form), or None when the file has none.
    """

    add: Mapping[str, Any]
    path: str
    deletion_vector: Mapping[str, Any] | None = None

    def action(self) -> dict[str, Any]:
        add = {k: v for k, v in self.add.items() if k not in _NOT_COPIED}
        add["path"] = self.path
        add["dataChange"] = True
        if self.deletion_vector is not None:
            add["deletionVector"] = dict(self.deletion_vector)
        else:
            add.pop("deletionVector", None)
        return {"add": add}


def shallow_files(delta: Delta, source: str, adds: Sequence[Mapping[str, Any]]) -> list[ClonedFile]:
    """The source's files as a shallow clone's log names them, as Delta's own CLONE does.

    A file in the source's folder gets its absolute URI, and so does a
    deletion vector named relative to it (``storageType`` ``u`` becomes
    ``p``); a file or vector named absolutely already (the source is a
    shallow clone itself) keeps its name.
    """
    # Hadoop's own encoding of the folder, as Delta writes absolute paths (Path.toUri).
    base = str(delta.jvm.cls("org.apache.hadoop.fs.Path")(source).toUri().toString()).rstrip("/")
    files = []
    for add in adds:
        path = str(add["path"])
        vector = add.get("deletionVector") or None
        if vector is not None and vector.get("storageType") == "u":
            vector_uri = deletion_vector_uri(vector, source)
            vector = {**vector, "storageType": "p", "pathOrInlineDv": f"{base}/{relative_to(str(vector_uri), source)}"}
        files.append(ClonedFile(add, path if urlsplit(path).scheme else f"{base}/{path}", vector))
    return files


def relative_deletion_vector(descriptor: Mapping[str, Any], file_name: str) -> dict[str, Any]:
    """The descriptor of a deletion vector copied to ``file_name`` (``deletion_vector_<uuid>.bin``) at the target's root."""
    identifier = uuid.UUID(file_name.removeprefix("deletion_vector_").removesuffix(".bin"))
    moved = dict(descriptor)
    moved["storageType"] = "u"
    moved["pathOrInlineDv"] = encode_uuid(identifier)
    return moved


def commit_clone(
    delta: Delta,
    target: str,
    *,
    source: str,
    source_version: int,
    files: Sequence[ClonedFile],
    new_table: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None,
    removes: Sequence[Mapping[str, Any]] = (),
) -> int:
    """Commit a clone's files to ``target`` as one ``CLONE`` version.

    Args:
        target: the clone's folder.
        source, source_version: what was cloned, as DESCRIBE HISTORY shows it.
        files: the files to add: a deep clone's copies, or a shallow clone's
            source files (:func:`shallow_files`).
        new_table: the source's ``metaData`` and ``protocol`` actions when the
            clone is a new table; None to add to an existing clone. As Delta's
            CLONE does, the clone gets a new table id, the metadata without
            the session's default table properties, and the source's
            protocol merged with what the metadata needs (a feature such as
            ``timestampNtz`` is in the protocol alone).
        removes: add actions of the target's current files to remove (a refresh).

    Returns:
        The version committed.

    Raises:
        Py4JJavaError: Delta refused the commit, for one because another writer changed the target.
    """
    jvm = delta.jvm
    actions = [jvm.action(json.dumps({"add": dict(add)})).remove() for add in removes]
    actions.extend(jvm.action(json.dumps(f.action())) for f in files)
    with jvm.active():
        transaction = jvm.delta_log(target).startTransaction()
        if new_table is not None:
            metadata, protocol = new_table
            transaction.updateMetadata(jvm.action(json.dumps({"metaData": {**metadata, "id": str(uuid.uuid4())}})), True)
            needed = transaction.protocol()  # what the metadata needs, as Delta derived it
            transaction.updateProtocol(jvm.action(json.dumps({"protocol": dict(protocol)})).merge(jvm.seq([needed])))
        operation = jvm.operations().Clone(sql_name(source), source_version)
        return int(transaction.commit(jvm.seq(actions), operation))


def commit_schema(delta: Delta, location: str, schema: StructType, *, read_whole_table: bool = False) -> int:
    """Give the table at ``location`` the columns ``schema``, as one metadata commit (Delta's ``UPDATE SCHEMA``).

    Delta's transaction checks the new schema against the table's (and gives
    a new column its column mapping, where the table maps columns); a commit
    that changed the metadata meanwhile makes this one fail.

    Args:
        read_whole_table: the schema holds only if the rows do (a column made
            NOT NULL, checked before): the transaction reads the whole table,
            so that a concurrent write of rows fails it rather than slip past the check.

    Returns:
        The version committed.

    Raises:
        Py4JJavaError: Delta refused the commit.
    """
    jvm = delta.jvm
    with jvm.active():
        transaction = jvm.delta_log(location).startTransaction()
        if read_whole_table:
            transaction.readWholeTable()
        current = transaction.metadata()
        changed = {**json.loads(str(current.json()))["metaData"], "schemaString": schema.json()}
        transaction.updateMetadata(jvm.action(json.dumps({"metaData": changed})), True)
        new_schema = jvm.cls("org.apache.spark.sql.types.DataType").fromJson(schema.json())
        operation = jvm.operations().UpdateSchema(current.schema(), new_schema)
        return int(transaction.commit(jvm.seq([]), operation))


def app_version(snapshot: Any, app_id: str) -> int:
    """The transaction version Delta's ``snapshot`` holds for ``app_id``; -1 when it holds none.

    Delta 4.4's own ``Snapshot.transactions`` (and so ``txnVersion``)
    reconstructs the snapshot's whole state, Spark jobs over the log (about a
    second warm, seconds in a new process), although the version's checksum
    file already holds every app's version whenever Delta could compute them
    incrementally. They are read there; a version without that checksum falls
    back to the reconstruction.
    """
    checksum = snapshot.checksumOpt()
    known = checksum.get().setTransactions() if checksum.isDefined() else None
    if known is not None and known.isDefined():
        found = known.get()
        for index in range(int(found.size())):
            action = found.apply(index)
            if str(action.appId()) == app_id:
                return int(action.version())
        return -1
    transactions = snapshot.transactions().get(app_id)
    return int(transactions.get()) if transactions.isDefined() else -1


def start_txn(delta: Delta, location: str, app_id: str) -> tuple[Any, int]:
    """A Delta transaction on ``location`` that has read ``app_id``'s version, and that version.

    What ``txnVersion`` does, without its state reconstruction
    (:func:`app_version`): the transaction records that it depends on the
    app's version, so Delta fails its commit when a concurrent commit moved it
    (``ConcurrentTransactionException``).
    """
    transaction = delta.jvm.delta_log(location).startTransaction()
    current = app_version(transaction.snapshot(), app_id)
    transaction.readTxn().addOne(app_id)
    return transaction, current


def commit_txn(
    delta: Delta,
    location: str,
    *,
    app_id: str,
    version: int,
    last_updated_ms: int,
    frame: DataFrame | None = None,
) -> bool:
    """Commit ``app_id``'s transaction version ``version``, with the rows of ``frame`` if given, as one Delta commit.

    It is Delta's own rule for an idempotent write, as its streaming sink and
    the DataFrame writer's ``txnAppId``/``txnVersion`` options apply it:
    nothing is committed when the table already holds ``version`` or a later
    one for ``app_id``; and since the transaction reads the app's version, a
    concurrent commit for the same app makes this one fail
    (``ConcurrentTransactionException``). Without a frame the commit is
    Delta's ``txn`` action alone and writes no file. With one, Delta's
    transaction writes the files (its constraints, generated columns and
    statistics apply, as in any append) and commits them with the ``txn``
    action, as Delta's streaming sink does; the writer options would read the
    app's version by reconstructing the table's whole state (see
    :func:`app_version`). The commit carries the
    session's commit metadata like any other (``commitInfo.userMetadata``);
    DESCRIBE HISTORY shows it as a ``STREAMING UPDATE`` with the app as its
    query id and ``version`` as its epoch.

    Args:
        frame: rows of some of the table's columns, with the table's types.

    Returns:
        Whether it committed.

    Raises:
        ColumnsChanged: the frame has a column the table does not have, or not of its type.
        Py4JJavaError: Delta refused the commit, for one because a concurrent commit moved the app's version.
    """
    jvm = delta.jvm
    with jvm.active():
        transaction, current = start_txn(delta, location, app_id)
        if current >= version:
            return False
        actions = jvm.cls("java.util.ArrayList")()
        actions.add(jvm.action(json.dumps({"txn": {"appId": app_id, "version": version, "lastUpdated": last_updated_ms}})))
        if frame is not None:
            _require_table_columns(transaction, frame)
            actions.addAll(jvm.cls("scala.jdk.javaapi.CollectionConverters").asJava(transaction.writeFiles(frame._jdf)))
        append = jvm.cls("org.apache.spark.sql.streaming.OutputMode").Append()
        operation = jvm.operations().StreamingUpdate(append, app_id, version, jvm.none())
        transaction.commit(jvm.cls("scala.jdk.javaapi.CollectionConverters").asScala(actions).toList(), operation)
        return True


class ColumnsChanged(Exception):
    """The table's columns are no longer those the rows to commit were built for.

    Attributes:
        columns: the rows' columns the table no longer has, or not of their type.
    """

    def __init__(self, columns: Sequence[str]) -> None:
        super().__init__(", ".join(columns))
        self.columns = tuple(columns)


def _require_table_columns(transaction: Any, frame: DataFrame) -> None:
    """Raise :class:`ColumnsChanged` unless each of the frame's columns is one of the table's, of its type.

    Delta's transaction writes whatever columns it is given (its writer's
    schema check sits outside it), and a column the table lacks would be
    written to the files and never read back.
    """
    from pyspark.sql.types import StructType

    table = StructType.fromJson(json.loads(str(transaction.metadata().schemaString())))
    # simpleString leaves out nullability and field metadata, which an append may differ in.
    table_types = {field.name.lower(): field.dataType.simpleString() for field in table.fields}
    changed = [
        field.name for field in frame.schema.fields if table_types.get(field.name.lower()) != field.dataType.simpleString()
    ]
    if changed:
        raise ColumnsChanged(changed)
