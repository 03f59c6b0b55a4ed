"""Reading a Delta table's log through delta-spark: versions, history, snapshots and the files they name.

Every read goes through Delta's own ``DeltaLog`` in the driver JVM (or Spark
reading the table), so checkpoints, deletion vectors and shallow clones'
absolute paths are Delta's to interpret. File locations come back as
qualified URIs (see :mod:`lakeclone.storage`), comparable with a folder listing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeclone.delta.commits import Commit
from lakeclone.delta.jvm import Jvm
from lakeclone.errors import TableFilesMissingError
from lakeclone.storage import Storage, join, qualified_form, resolve_log_path

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

LOG_FOLDER = "_delta_log"

# Delta names a deletion vector file after a UUID it writes in Z85 (base 85).
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_ENCODED_UUID = 20

# The largest version read from its checksum's file list (see TableLog.listed_frame),
# which reads every listed file: Delta's own read skips files by their statistics.
LISTED_READ_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class TableFile:
    """A data file of a snapshot, with the deletion vector file that hides some of its rows.

    Attributes:
        uri: the data file, qualified.
        size: its bytes.
        num_records: rows in the file (deleted ones included), from Delta's stats; 0 when unknown.
        deletion_vector: the deletion vector's file, qualified; None when there is none or it is inline.
        deleted_rows: rows the deletion vector hides.
    """

    uri: str
    size: int
    num_records: int = 0
    deletion_vector: str | None = None
    deleted_rows: int = 0

    @property
    def uris(self) -> tuple[str, ...]:
        """Every file this entry needs on storage."""
        return (self.uri,) if self.deletion_vector is None else (self.uri, self.deletion_vector)


@dataclass(frozen=True)
class Snapshot:
    """A table at one version."""

    location: str
    version: int
    table_id: str
    schema_json: str
    configuration: Mapping[str, str]
    description: str | None
    partition_columns: tuple[str, ...]
    min_reader_version: int
    min_writer_version: int
    features: tuple[str, ...]
    num_files: int
    size: int

    @property
    def schema(self) -> StructType:
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self.schema_json))


@dataclass(frozen=True)
class TableCounts:
    """A version's rows (as readers see them) and bytes."""

    version: int
    rows: int
    size: int


@dataclass
class _History:
    table_id: str
    commits: list[Commit] = field(default_factory=list)


# How many versions' metadata a Delta object keeps (the oldest asked for goes first).
METADATA_TEXTS_KEPT = 1024


class Delta:
    """delta-spark for one SparkSession, with a cache of the (immutable) history of each table read."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.jvm = Jvm(spark)
        self._histories: dict[str, _History] = {}
        self._counted: dict[str, TableCounts] = {}
        self._latest_versions: dict[str, int] = {}
        self.metadata_texts: dict[tuple[str, int], str] = {}
        """The JSON of the ``metaData`` action of a version, by (location, version): see TableLog.metadata_action."""
        self._storage = Storage(spark)

    def table(self, location: str, name: str | None = None) -> TableLog:
        """The log of the table at ``location`` (a qualified URI), which errors call ``name`` where given."""
        return TableLog(self, location, name)

    def latest_version(self, location: str) -> int:
        """The latest version of the table at ``location``; -1 when there is none.

        Asking Delta takes a listing of the log and a few JVM round trips (~2.5
        ms in a statement, for every table it reads). A version this object
        found before is still the latest while its commit file is there and
        the next one is not: Delta's versions follow each other, and a commit
        is its file (lakeclone's tables have no commit coordinator). That is two
        questions to storage; anything else asks Delta.
        """
        known = self._latest_versions.get(location)
        if (
            known is not None
            and self._storage.exists(commit_file(location, known))
            and not self._storage.exists(commit_file(location, known + 1))
        ):
            return known
        version = self.table(location).version()
        if version >= 0:
            self._latest_versions[location] = version
        return version

    def committed(self, location: str) -> int:
        """The version of the table at ``location`` Delta last committed or read in this process, asking no storage.

        Right after a commit through this process's Delta it is that commit's
        version (or a later one Delta has read since). It becomes the version
        :meth:`latest_version` checks first, so that the statement after a
        write does not ask Delta for the version the write just made.
        """
        version = self.table(location).known_version()
        if version >= 0:
            self._latest_versions[location] = version
        return version

    def latest_counts(self, locations: Sequence[str]) -> dict[str, TableCounts]:
        """Each table's rows and bytes at its latest version, by location.

        Counted once per version: a table counted before is counted again only
        if its next version's commit file exists, and whether any has is one
        question to storage for all of them (SHOW TABLES lists many tables,
        and asking Delta for each one's latest version takes a log listing and
        a few JVM round trips apiece). Asking also whether each counted
        version's commit file is still there would notice a table whose files
        were deleted outside lakeclone, but doubles the cost; a session that
        had not counted it yet counts it as empty.
        """
        known = {location: self._counted[location] for location in locations if location in self._counted}
        next_commits = {commit_file(location, counts.version + 1): location for location, counts in known.items()}
        for uri in self._storage.existing(next_commits):
            del known[next_commits[uri]]
        for location in locations:
            if location not in known:
                known[location] = self._counted[location] = self.table(location).latest_counts()
        return {location: known[location] for location in locations}


def commit_file(location: str, version: int) -> str:
    """The URI of the commit file of ``version`` of the table at ``location``."""
    return join(location, LOG_FOLDER, f"{version:020d}.json")


def _listed_rows(adds: Sequence[Mapping[str, Any]]) -> int | None:
    """The rows readers see in a checksum's add actions; None when one lacks its row count."""
    rows = 0
    for add in adds:
        stats = json.loads(add["stats"]) if add.get("stats") else {}
        if "numRecords" not in stats:
            return None
        rows += int(stats["numRecords"]) - int((add.get("deletionVector") or {}).get("cardinality") or 0)
    return rows


def _present(add: Mapping[str, Any]) -> dict[str, Any]:
    """A checksum's add action as the reconstructed state spells it: a checksum writes an absent value as null, no tags as {}."""
    return {k: v for k, v in add.items() if v is not None and not (k == "tags" and not v)}


class TableLog:
    """The log of one Delta table."""

    def __init__(self, delta: Delta, location: str, name: str | None = None) -> None:
        self.delta = delta
        self.location = location.rstrip("/")
        self.name = name
        self._jvm = delta.jvm

    @property
    def log_folder(self) -> str:
        return join(self.location, LOG_FOLDER)

    def _log(self) -> Any:
        return self._jvm.delta_log(self.location)

    def _latest(self) -> Any:
        return self._log().update(False, self._jvm.none(), self._jvm.none())

    def _at(self, version: int) -> Any:
        try:
            return self._log().getSnapshotAt(version, self._jvm.none(), self._jvm.none(), False)
        except Exception:
            if not self.exists():
                raise TableFilesMissingError(self.name, self.location) from None
            raise

    def _table_at(self, version: int | None) -> Any:
        """Delta's snapshot of ``version`` (the latest when None) of a table that must be there.

        Delta reads a folder without a log as version -1, which callers take for a table with no version.
        """
        if version is None:
            snap = self._latest()
            if int(snap.version()) >= 0:
                return snap
        elif version >= 0:
            return self._at(version)
        raise TableFilesMissingError(self.name, self.location)

    def snapshot_object(self, version: int | None = None) -> Any:
        """Delta's own ``Snapshot`` of ``version`` (the latest when None), for calls that take one."""
        return self._latest() if version is None else self._at(version)

    def compute_state(self) -> None:
        """Have Delta compute the latest snapshot's state now (its files, txn versions and domain metadata).

        Delta computes it once per snapshot, when something first needs it; a
        commit needs it for the snapshot it starts from, and finds it done.
        """
        self._latest().setTransactions()

    def exists(self) -> bool:
        """Whether a Delta table lives at the location (it has a committed version)."""
        return bool(self._log().tableExists())

    def version(self) -> int:
        """The latest version; -1 when there is no table."""
        return int(self._latest().version())

    def known_version(self) -> int:
        """The version of Delta's latest snapshot in this process, without looking for newer commits; -1 for none."""
        return int(self._log().unsafeVolatileSnapshot().version())

    def snapshot(self, version: int | None = None) -> Snapshot:
        """The table at ``version`` (the latest when None)."""
        snap = self._table_at(version)
        metadata = json.loads(str(snap.metadata().json()))["metaData"]
        protocol = json.loads(str(snap.protocol().json()))["protocol"]
        features = sorted(set(protocol.get("readerFeatures") or []) | set(protocol.get("writerFeatures") or []))
        return Snapshot(
            location=self.location,
            version=int(snap.version()),
            table_id=str(metadata["id"]),
            schema_json=str(metadata["schemaString"]),
            configuration=dict(metadata.get("configuration") or {}),
            description=metadata.get("description"),
            partition_columns=tuple(metadata.get("partitionColumns") or ()),
            min_reader_version=int(protocol["minReaderVersion"]),
            min_writer_version=int(protocol["minWriterVersion"]),
            features=tuple(features),
            **self._file_totals(snap),
        )

    @staticmethod
    def _file_totals(snap: Any) -> dict[str, int]:
        """A snapshot's live files and bytes: from its checksum file when it has one, which needs no Spark job.

        Without one, Delta reconstructs the version's state to count them.
        """
        checksum = snap.checksumOpt()
        if checksum.isDefined():
            return {"num_files": int(checksum.get().numFiles()), "size": int(checksum.get().tableSizeBytes())}
        return {"num_files": int(snap.numOfFiles()), "size": int(snap.sizeInBytes())}

    def latest_counts(self) -> TableCounts:
        """The latest version's rows (as readers see them) and bytes.

        From Delta's checksum file alone when it lists the version's files with
        their row counts (see :meth:`_checksum`): no Spark job. Otherwise the
        bytes come from Delta's snapshot and the rows from a ``COUNT(*)``,
        which Delta answers from the files' statistics, not their data.
        """
        snap = self._latest()
        version = int(snap.version())
        if version < 0:  # no table at the location (its files were deleted)
            return TableCounts(version, 0, 0)
        checksum = self._checksum(snap)
        rows = _listed_rows(checksum["allFiles"]) if checksum is not None and checksum.get("allFiles") is not None else None
        if checksum is not None and rows is not None:
            return TableCounts(version, rows, int(checksum["tableSizeBytes"]))
        (row,) = self.delta.spark.sql(f"SELECT COUNT(*) FROM {sql_name(self.location)} VERSION AS OF {version}").collect()
        return TableCounts(version, int(row[0]), self._file_totals(snap)["size"])

    def listed_frame(self, version: int) -> DataFrame | None:
        """``version``'s rows read from the files its checksum lists, where that beats Delta's own read; else None.

        Delta's own read of a version (``delta.`<folder>` VERSION AS OF n``)
        first reconstructs the version's state to find its files: three Spark
        jobs, paid by the first read after every commit. The checksum of a
        version of at most 50 files already names them with their deletion
        vectors (see :meth:`_checksum`), and Delta reads such a list as it
        reads a change feed's files (``createDataFrame``). Even once it holds a
        version's state, Delta's own read runs a job to filter its files for
        the query; the listed read runs none. It skips no file by its
        statistics, as Delta's does, so it is only taken for a version of at
        most :data:`LISTED_READ_BYTES`.
        """
        from pyspark.sql import DataFrame

        snap = self._at(version)
        checksums = snap.checksumOpt()
        if checksums.isEmpty():
            return None
        checksum = checksums.get()
        files = checksum.allFiles()
        if files.isEmpty() or int(checksum.tableSizeBytes()) > LISTED_READ_BYTES:
            return None
        with self._jvm.active():
            frame = self._log().createDataFrame(snap, files.get(), False, self._jvm.none())
        return DataFrame(frame, self.delta.spark)

    def _checksum(self, snap: Any) -> dict[str, Any] | None:
        """The snapshot's checksum file (``<version>.crc``) as its JSON; None when the version has none.

        Delta writes one beside each commit, with the table's file count and
        size and, for a table of at most 50 files (``allFilesInCrc``), every
        live file's add action (``allFiles``) with its statistics and deletion
        vector: the same actions that reconstructing the version's state gives,
        which takes Spark jobs (``tests/test_delta_log.py`` compares them).
        """
        checksum = snap.checksumOpt()
        if checksum.isEmpty():
            return None
        mapper = self._jvm.cls("org.apache.spark.sql.delta.util.JsonUtils").mapper()
        return dict(json.loads(str(mapper.writeValueAsString(checksum.get()))))

    def schema(self, version: int | None = None) -> StructType:
        """The table's columns at ``version`` (the latest when None).

        Read from the metadata action alone: :meth:`snapshot` also counts the
        files, which for a version without a checksum file makes Delta
        reconstruct the version's state (a Spark job).
        """
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self.metadata_action(version)["schemaString"]))

    def metadata_action(self, version: int | None = None) -> dict[str, Any]:
        """The ``metaData`` action of ``version`` (the latest when None), as Delta's JSON form of it.

        A version's metadata never changes: the Delta object keeps that of each version asked for by number.
        """
        if version is None:
            return dict(json.loads(str(self._table_at(None).metadata().json()))["metaData"])
        key = (self.location, version)
        text = self.delta.metadata_texts.get(key)
        if text is None:
            text = str(self._table_at(version).metadata().json())
            if len(self.delta.metadata_texts) >= METADATA_TEXTS_KEPT:
                self.delta.metadata_texts.pop(next(iter(self.delta.metadata_texts)))
            self.delta.metadata_texts[key] = text
        return dict(json.loads(text)["metaData"])

    def new_table_actions(self, version: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """The ``metaData`` and ``protocol`` actions of ``version``, as Delta's JSON form of them: what a clone starts from."""
        snap = self._at(version)
        metadata = json.loads(str(snap.metadata().json()))["metaData"]
        return dict(metadata), dict(json.loads(str(snap.protocol().json()))["protocol"])

    def configuration(self, version: int | None = None) -> dict[str, str]:
        """The table properties (``metaData.configuration``) of ``version`` (the latest when None)."""
        return dict(self.metadata_action(version).get("configuration") or {})

    def add_actions(self, version: int | None = None) -> list[dict[str, Any]]:
        """The add actions of ``version``'s live files (the latest when None), as Delta's JSON form of them.

        Read from the version's checksum where it lists them (no Spark job),
        else from Delta's reconstruction of the version's state.
        """
        snap = self._table_at(version)
        listed = self._listed(snap)
        if listed is not None:
            return listed
        text = self._jvm.joined(snap.allFiles().toJSON().collectAsList())
        return [json.loads(line) for line in text.splitlines() if line]

    def listed_add_actions(self, version: int) -> list[dict[str, Any]] | None:
        """The add actions of ``version``'s live files if its checksum lists them (see :meth:`_checksum`), else None."""
        return self._listed(self._at(version))

    def _listed(self, snap: Any) -> list[dict[str, Any]] | None:
        checksum = self._checksum(snap)
        if checksum is None or checksum.get("allFiles") is None:
            return None
        return [_present(add) for add in checksum["allFiles"]]

    def files(self, version: int | None = None) -> list[TableFile]:
        """The live data files of ``version`` (the latest when None), read in one pass over Delta's state."""
        return [self.table_file(add) for add in self.add_actions(version)]

    def table_file(self, add: Mapping[str, Any]) -> TableFile:
        """An add action's file and deletion vector, as URIs."""
        stats = json.loads(add["stats"]) if add.get("stats") else {}
        vector = add.get("deletionVector") or None
        return TableFile(
            uri=resolve_log_path(add["path"], self.location),
            size=int(add.get("size") or 0),
            num_records=int(stats.get("numRecords") or 0),
            deletion_vector=deletion_vector_uri(vector, self.location) if vector else None,
            deleted_rows=int(vector.get("cardinality") or 0) if vector else 0,
        )

    def history(self) -> list[Commit]:
        """Every commit, oldest first. Commits never change, so only new ones are read again."""
        snap = self._table_at(None)
        latest = int(snap.version())
        table_id = str(snap.metadata().id())
        cached = self.delta._histories.get(self.location)
        if cached is None or cached.table_id != table_id or (cached.commits and cached.commits[-1].version > latest):
            cached = _History(table_id)
            self.delta._histories[self.location] = cached
        start = cached.commits[-1].version + 1 if cached.commits else 0
        if start <= latest:
            cached.commits.extend(self._commits_from(start, latest))
        return list(cached.commits)

    def commits_after(self, version: int, until: int | None = None) -> list[Commit]:
        """The commits after ``version`` up to ``until`` (the latest when None), oldest first, read without the rest."""
        latest = self.version() if until is None else until
        return self._commits_from(version + 1, latest) if latest > version else []

    def _commits_from(self, start: int, end: int) -> list[Commit]:
        commits = []
        changes = self._log().getChanges(start, self._jvm.none(), False)
        while changes.hasNext():
            pair = changes.next()
            version = int(pair._1())
            if version > end:
                break
            actions = pair._2()
            info: dict[str, Any] = {}
            # Delta writes commitInfo as a commit's first action.
            for index in range(int(actions.size())):
                action = actions.apply(index)
                if str(action.getClass().getSimpleName()) == "CommitInfo":
                    info = json.loads(str(action.json()))["commitInfo"]
                    break
            commits.append(Commit.from_commit_info(version, info, int(info.get("timestamp") or 0)))
        return commits

    def referenced_after(self, version: int) -> dict[str, int]:
        """Files (data and deletion vectors) named by the commits after ``version``.

        Returns:
            Each file's URI mapped to the newest version that reads it: the
            latest version for a file still live, else the one before the
            version that removed it.
        """
        latest = self.version()
        if latest <= version:
            return {}
        from pyspark.sql import functions as F

        paths = [commit_file(self.location, v) for v in range(version + 1, latest + 1)]
        file_action = "struct<path:string,deletionVector:struct<storageType:string,pathOrInlineDv:string>>"
        rows = (
            self.delta.spark.read.schema(f"add {file_action}, remove {file_action}")
            .json(paths)
            .where("add IS NOT NULL OR remove IS NOT NULL")
            .select("add", "remove", F.col("_metadata.file_name").alias("commit"))
            .collect()
        )
        found: dict[str, int] = {}
        # Commit by commit, removes before adds: a file re-added in the commit
        # that removed it (a new deletion vector) is still live.
        for row in sorted(rows, key=lambda r: (r.commit, r.add is not None)):
            committed = int(row.commit.split(".")[0])
            action, reads = (row.add, latest) if row.add is not None else (row.remove, committed - 1)
            found[resolve_log_path(action.path, self.location)] = reads
            vector = action.deletionVector
            if vector is not None:
                dv = deletion_vector_uri(vector.asDict(), self.location)
                if dv is not None:
                    found[dv] = reads
        return found

    def frame(self, version: int | None = None) -> DataFrame:
        """The table's rows at ``version`` (the latest when None), read by Delta."""
        reader = self.delta.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        return reader.load(self.location)


def deletion_vector_uri(descriptor: Mapping[str, Any], table: str) -> str | None:
    """Where a deletion vector descriptor's file is; None for one stored inline in the log."""
    kind = descriptor.get("storageType")
    encoded = str(descriptor.get("pathOrInlineDv") or "")
    if kind == "p":
        return qualified_form(encoded)
    if kind == "u":
        prefix, name = encoded[:-_ENCODED_UUID], encoded[-_ENCODED_UUID:]
        file_name = f"deletion_vector_{_decode_uuid(name)}.bin"
        return join(table, prefix, file_name) if prefix else join(table, file_name)
    return None


def _decode_uuid(text: str) -> uuid.UUID:
    data = b""
    for start in range(0, len(text), 5):
        value = 0
        for char in text[start : start + 5]:
            value = value * 85 + _Z85.index(char)
        data += value.to_bytes(4, "big")
    return uuid.UUID(bytes=data)


def encode_uuid(identifier: uuid.UUID) -> str:
    """A UUID as Delta writes it into a deletion vector descriptor (Z85, 20 characters)."""
    data = identifier.bytes
    text = ""
    for start in range(0, len(data), 4):
        value = int.from_bytes(data[start : start + 4], "big")
        chunk = ""
        for _ in range(5):
            value, digit = divmod(value, 85)
            chunk = _Z85[digit] + chunk
        text += chunk
    return text


def sql_name(location: str) -> str:
    """A path table's name in Delta's SQL: ``delta.`<location>```."""
    return "delta.`" + location.replace("`", "``") + "`"
