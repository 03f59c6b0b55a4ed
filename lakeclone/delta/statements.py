"""Writing Delta tables through delta-spark: CREATE, CTAS, appends and overwrites, UPDATE, DELETE, MERGE, OPTIMIZE, CLONE.

Each function is one Delta commit made by Delta's own engine (SQL on a path
table, or a DataFrame write). The caller compiles the user's expressions to
Spark SQL and, through :func:`lakeclone.delta.commits.committing`, puts
lakeclone's metadata into the commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lakeclone.delta.log import sql_name
from lakeclone.session import session_setting

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

# Every table lakeclone creates: history Delta never cleans up by itself.
# Row tracking is not here: it costs every commit three Spark jobs, so a table
# gets it only when its change tracking starts (lakeclone.streams.tracking), as
# Snowflake tracks changes only from then. Nor are deletion vectors: they cost a
# small UPDATE or DELETE five jobs more and make a table unreadable to readers
# without the feature (delta-rs), so a table has them only when asked
# (lakeclone.deletion_vectors). lakeclone promises time travel for up to
# DATA_RETENTION_TIME_IN_DAYS (at most 90 days) plus a stream's
# MAX_DATA_EXTENSION_TIME_IN_DAYS (at most 90 more); its own VACUUM decides
# what goes, so Delta's retention settings are set beyond both.
TABLE_PROPERTIES: Mapping[str, str] = {
    "delta.enableExpiredLogCleanup": "false",
    "delta.logRetentionDuration": "interval 180 days",
    "delta.deletedFileRetentionDuration": "interval 180 days",
}

# Delta lists a small version's files in its checksum, and computes a new table's
# first list from the files of the empty "version -1" before it, by a Spark job
# (0.1 s, more than the rest of an empty CREATE). With this off for the commit,
# a version that has no files gets a checksum listing none all the same.
_ALL_FILES_IN_CHECKSUM = "spark.databricks.delta.allFilesInCrc.enabled"


def quoted(name: str) -> str:
    """A Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def string_literal(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _properties(properties: Mapping[str, str]) -> str:
    return ", ".join(f"{string_literal(k)} = {string_literal(v)}" for k, v in properties.items())


def create_table(
    spark: SparkSession,
    location: str,
    schema: StructType,
    *,
    comment: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> None:
    """``CREATE TABLE`` with columns: version 0 of a new, empty table, with ``properties`` beside lakeclone's own."""
    from delta.tables import DeltaTable

    builder = DeltaTable.create(spark).location(location).addColumns(schema)
    for key, value in {**TABLE_PROPERTIES, **(properties or {})}.items():
        builder = builder.property(key, value)
    if comment:
        builder = builder.comment(comment)
    with session_setting(spark, _ALL_FILES_IN_CHECKSUM, "false"):
        builder.execute()


def create_table_as(
    spark: SparkSession,
    location: str,
    view: str,
    *,
    comment: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> None:
    """``CREATE TABLE ... AS SELECT`` from a temporary view: the table and its rows in one commit."""
    described = f" COMMENT {string_literal(comment)}" if comment else ""
    spark.sql(
        f"CREATE TABLE {sql_name(location)} USING delta{described} "
        f"TBLPROPERTIES ({_properties({**TABLE_PROPERTIES, **(properties or {})})}) AS SELECT * FROM {quoted(view)}"
    )


def set_properties(spark: SparkSession, location: str, properties: Mapping[str, str]) -> None:
    """``ALTER TABLE ... SET TBLPROPERTIES``: one metadata commit."""
    spark.sql(f"ALTER TABLE {sql_name(location)} SET TBLPROPERTIES ({_properties(properties)})")


def write(frame: DataFrame, location: str, *, overwrite: bool = False) -> None:
    """Append ``frame``'s rows to the table (replace them all, with ``overwrite``)."""
    frame.write.format("delta").mode("overwrite" if overwrite else "append").save(location)


def update(spark: SparkSession, location: str, alias: str, assignments: Mapping[str, str], condition: str | None) -> int:
    """``UPDATE``: the number of rows updated. Values and condition are Spark SQL over ``alias``."""
    settings = ", ".join(f"{quoted(column)} = {value}" for column, value in assignments.items())
    where = f" WHERE {condition}" if condition else ""
    (row,) = spark.sql(f"UPDATE {sql_name(location)} AS {quoted(alias)} SET {settings}{where}").collect()
    return int(row[0])


def delete(spark: SparkSession, location: str, alias: str, condition: str | None) -> int:
    """``DELETE``: the number of rows deleted."""
    where = f" WHERE {condition}" if condition else ""
    (row,) = spark.sql(f"DELETE FROM {sql_name(location)} AS {quoted(alias)}{where}").collect()
    return int(row[0])


@dataclass(frozen=True)
class MergeClause:
    """One ``WHEN`` clause of a MERGE, its parts already Spark SQL.

    Attributes:
        matched: WHEN MATCHED (True) or WHEN NOT MATCHED (False).
        condition: the clause's ``AND`` condition, if any.
        action: ``UPDATE``, ``DELETE`` or ``INSERT``.
        values: target column -> value, for UPDATE SET and INSERT.
    """

    matched: bool
    condition: str | None
    action: str
    values: Mapping[str, str]

    def sql(self) -> str:
        when = "WHEN MATCHED" if self.matched else "WHEN NOT MATCHED"
        if self.condition:
            when += f" AND {self.condition}"
        if self.action == "DELETE":
            return f"{when} THEN DELETE"
        if self.action == "UPDATE":
            settings = ", ".join(f"{quoted(c)} = {v}" for c, v in self.values.items())
            return f"{when} THEN UPDATE SET {settings}"
        columns = ", ".join(quoted(c) for c in self.values)
        return f"{when} THEN INSERT ({columns}) VALUES ({', '.join(self.values.values())})"


@dataclass(frozen=True)
class MergeCounts:
    inserted: int
    updated: int
    deleted: int


@dataclass(frozen=True)
class Merge:
    """A ``MERGE INTO`` on a path table, its parts already Spark SQL.

    Attributes:
        location: the target table.
        alias: the target's alias, which ``on`` and the clauses use.
        source: a Spark SQL query in parentheses, or a table or view name.
        source_alias: the source's alias.
        on: the join condition.
        clauses: the WHEN clauses, in order.
    """

    location: str
    alias: str
    source: str
    source_alias: str
    on: str
    clauses: tuple[MergeClause, ...]

    def without_idle_matches(self) -> Merge | None:
        """This MERGE without the source rows that join a target row but meet no WHEN MATCHED condition.

        Snowflake counts a target row as matched twice only when two source rows
        would both change it; Delta counts every source row its ON joins. A source
        row that joins a target row and meets no WHEN MATCHED condition changes
        nothing (and no WHEN NOT MATCHED clause can take it), so leaving it out
        changes no result and brings Delta's check to Snowflake's rule.

        Returns:
            None when a WHEN MATCHED clause has no condition (every joined row acts) or there is none.
        """
        conditions = [clause.condition for clause in self.clauses if clause.matched]
        if not conditions or any(condition is None for condition in conditions):
            return None
        target = f"{sql_name(self.location)} AS {quoted(self.alias)}"
        source = quoted(self.source_alias)
        acts = " OR ".join(f"({condition})" for condition in conditions)
        kept = (
            f"(SELECT {source}.* FROM {self.source} AS {source} "
            f"WHERE NOT EXISTS (SELECT 1 FROM {target} WHERE {self.on}) "
            f"OR EXISTS (SELECT 1 FROM {target} WHERE ({self.on}) AND ({acts})))"
        )
        return replace(self, source=kept)

    def sql(self) -> str:
        whens = " ".join(clause.sql() for clause in self.clauses)
        return (
            f"MERGE INTO {sql_name(self.location)} AS {quoted(self.alias)} "
            f"USING {self.source} AS {quoted(self.source_alias)} ON {self.on} {whens}"
        )


def merge(spark: SparkSession, statement: Merge) -> MergeCounts:
    """Run a MERGE: rows inserted, updated and deleted."""
    (row,) = spark.sql(statement.sql()).collect()
    values = row.asDict()
    return MergeCounts(
        int(values.get("num_inserted_rows") or 0),
        int(values.get("num_updated_rows") or 0),
        int(values.get("num_deleted_rows") or 0),
    )


def optimize(spark: SparkSession, location: str, zorder_by: Sequence[str] = ()) -> DataFrame:
    """``OPTIMIZE [ZORDER BY (...)]``: Delta's one-row result (path, metrics), already run."""
    zorder = f" ZORDER BY ({', '.join(quoted(c) for c in zorder_by)})" if zorder_by else ""
    result = spark.sql(f"OPTIMIZE {sql_name(location)}{zorder}")
    # The command has run; its result is held on the driver, with Delta's schema
    # (the metrics hold nulls, which schema inference could not type).
    return spark.createDataFrame(result.collect(), schema=result.schema)


def shallow_clone(spark: SparkSession, target: str, source: str, version: int) -> None:
    """``CREATE TABLE target SHALLOW CLONE source VERSION AS OF n``: a new table reading the source's files."""
    spark.sql(f"CREATE TABLE {sql_name(target)} SHALLOW CLONE {sql_name(source)} VERSION AS OF {int(version)}").collect()


def restore(spark: SparkSession, location: str, version: int) -> dict[str, int]:
    """``RESTORE TABLE … TO VERSION AS OF n``: one commit bringing back version ``n``'s files; returns Delta's metrics.

    Deletion vectors and row ids come back with the files, so the rows are
    the very rows of version ``n``, ids included.
    """
    (row,) = spark.sql(f"RESTORE TABLE {sql_name(location)} TO VERSION AS OF {int(version)}").collect()
    return {name: int(value or 0) for name, value in row.asDict().items()}
