"""SHOW and DESCRIBE: the catalog and the Delta log, as Snowflake and Delta present them."""

from __future__ import annotations

import datetime as dt

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.names import schema_name
from lakeclone.delta.log import DeltaLog
from lakeclone.engine import clustering, constraints, results, sequences
from lakeclone.engine.tables import spark_schema
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError, UnsupportedStatementError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution


def _like(pattern: exp.Expression | None) -> re.Pattern[str] | None:
    """SQL LIKE as a regular expression; Snowflake's SHOW ... LIKE ignores case."""
    if pattern is None:
        return None
    text = pattern.name
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in text)
    return re.compile(f"^{regex}$", re.IGNORECASE | re.DOTALL)


def _matches(pattern: re.Pattern[str] | None, name: str) -> bool:
    return pattern is None or bool(pattern.match(name))


def show(execution: Execution) -> DataFrame:
    expression = execution.expression
    what = expression.name.upper()
    shows = {
        "DATABASES": _databases,
        "SCHEMAS": _schemas,
        "TABLES": _tables,
        "SEQUENCES": sequences.show_sequences,
        "PRIMARY KEYS": constraints.show_primary_keys,
        "IMPORTED KEYS": constraints.show_imported_keys,
    }
    if what not in shows:
        raise UnsupportedStatementError(execution.sql)
    return shows[what](execution, _like(expression.args.get("like")))


def _databases(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    catalog = execution.catalog
    data = [
        (
            d.created_at,
            d.name,
            "Y" if d.name == execution.session.database else "N",
            catalog.parameters(d.id).get("COMMENT", ""),
            int(catalog.parameters(d.id).get("DATA_RETENTION_TIME_IN_DAYS", params.PARAMETERS["DATA_RETENTION_TIME_IN_DAYS"].default)),
        )
        for d in catalog.databases()
        if _matches(like, d.name)
    ]
    return results.rows(
        execution.spark,
        "created_on TIMESTAMP, name STRING, is_current STRING, comment STRING, retention_time BIGINT",
        data,
    )


def _schemas(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    catalog = execution.catalog
    scope = execution.expression.args.get("scope")
    database_name = scope.name if isinstance(scope, exp.Table) else execution.session.database
    databases = [catalog.database(database_name)] if database_name else catalog.databases()
    if databases == [None]:
        raise ObjectNotFoundError(str(database_name), "Database")
    data = []
    for database in databases:
        assert database is not None
        for schema in catalog.schemas(database):
            if _matches(like, schema.name):
                is_current = (database.name, schema.name) == (execution.session.database, execution.session.schema)
                data.append(
                    (schema.created_at, schema.name, database.name, "Y" if is_current else "N",
                     catalog.parameters(schema.id).get("COMMENT", ""))
                )
    return results.rows(
        execution.spark,
        "created_on TIMESTAMP, name STRING, database_name STRING, is_current STRING, comment STRING",
        data,
    )


def _tables(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    catalog = execution.catalog
    expression = execution.expression
    scope = expression.args.get("scope")
    scope_kind = str(expression.args.get("scope_kind") or "").upper()
    if isinstance(scope, exp.Table) and scope_kind == "DATABASE":
        database = catalog.database(scope.name)
        if database is None:
            raise ObjectNotFoundError(scope.name, "Database")
        schemas = catalog.schemas(database)
    elif isinstance(scope, exp.Table):
        database_name, name = schema_name(scope, database=execution.session.database)
        schema = catalog.schema(database_name, name)
        if schema is None:
            raise ObjectNotFoundError(f"{database_name}.{name}", "Schema")
        schemas = [schema]
    else:
        database = catalog.database(execution.session.database or "")
        schemas = catalog.schemas(database) if database else []
    data = []
    history = bool(expression.args.get("history"))
    for schema in schemas:
        for table in catalog.tables(schema, dropped=history):
            if not _matches(like, table.name):
                continue
            snapshot = DeltaLog(table.location).snapshot()
            settings = catalog.parameters(table.id)
            cluster_by, automatic_clustering = clustering.cluster_by(catalog, table.id)
            data.append(
                (
                    table.created_at,
                    table.name,
                    table.database,
                    table.schema,
                    "TABLE",
                    settings.get("COMMENT", ""),
                    cluster_by,
                    snapshot.num_records,
                    snapshot.size,
                    int(execution.tables.retention_days(table)),
                    automatic_clustering,
                    "ON" if settings.get("CHANGE_TRACKING") == "true" else "OFF",
                    "Y" if not table.managed else "N",
                    table.location,
                    table.dropped_at,
                )
            )
    return results.rows(
        execution.spark,
        "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, kind STRING, "
        "comment STRING, cluster_by STRING, rows BIGINT, bytes BIGINT, retention_time BIGINT, "
        "automatic_clustering STRING, change_tracking STRING, is_external STRING, location STRING, "
        "dropped_on TIMESTAMP",
        data,
    )


def parameters(execution: Execution) -> DataFrame:
    """SHOW PARAMETERS [LIKE ...] IN TABLE|SCHEMA|DATABASE x: each with its value and where it was set."""
    expression = execution.expression
    kind = str(expression.args.get("kind") or "").upper()
    target = expression.this
    catalog = execution.catalog
    if kind == params.TABLE:
        table = execution.tables.entry(target)
        schema = catalog.schema(table.database, table.schema)
        database = catalog.database(table.database)
        chain = [(params.TABLE, table.id), (params.SCHEMA, schema.id if schema else ""), (params.DATABASE, database.id if database else "")]
    elif kind == params.SCHEMA:
        database_name, name = schema_name(target, database=execution.session.database)
        schema = catalog.schema(database_name, name)
        if schema is None:
            raise ObjectNotFoundError(f"{database_name}.{name}", "Schema")
        chain = [(params.SCHEMA, schema.id), (params.DATABASE, schema.database_id)]
    elif kind == params.DATABASE:
        database = catalog.database(target.name)
        if database is None:
            raise ObjectNotFoundError(target.name, "Database")
        chain = [(params.DATABASE, database.id)]
    else:
        raise SqlCompilationError("SHOW PARAMETERS needs IN TABLE, IN SCHEMA or IN DATABASE.")
    like = _like(expression.args.get("like"))
    settings = [(level, catalog.parameters(object_id)) for level, object_id in chain]
    data = []
    for parameter in params.PARAMETERS.values():
        if kind not in parameter.levels or not _matches(like, parameter.key):
            continue
        value, level = parameter.default, ""
        candidates = settings if parameter.inherited else settings[:1]
        for candidate_level, values in candidates:
            if parameter.key in values:
                value, level = values[parameter.key], candidate_level
                break
        data.append((parameter.key, value, parameter.default, level, parameter.description, parameter.type))
    return results.rows(
        execution.spark,
        "key STRING, value STRING, default STRING, level STRING, description STRING, type STRING",
        data,
    )


def describe_table(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = str(expression.args.get("kind") or "TABLE").upper()
    if kind != "TABLE":
        raise UnsupportedStatementError(execution.sql)
    entry = execution.tables.entry(expression.this)
    schema = spark_schema(DeltaLog(entry.location).snapshot())
    defaults = sequences.defaults_by_column(execution.catalog, entry.id)
    primary, unique = constraints.key_columns(execution.catalog, entry.id)
    data = [
        (
            f.name,
            f.dataType.simpleString().upper(),
            "COLUMN",
            "Y" if f.nullable else "N",
            sequences.describe_default(execution.catalog, defaults.get(f.name.upper())),
            "Y" if f.name.upper() in primary else "N",
            "Y" if f.name.upper() in unique else "N",
            f.metadata.get("comment"),
        )
        for f in schema.fields
    ]
    return results.rows(
        execution.spark,
        "name STRING, type STRING, kind STRING, `null?` STRING, default STRING, "
        "`primary key` STRING, `unique key` STRING, comment STRING",
        data,
    )


def history(execution: Execution) -> DataFrame:
    """DESCRIBE HISTORY t: Delta's columns, newest first, plus the lakeclone query id."""
    expression = execution.expression
    entry = execution.tables.entry(expression.this)
    commits = list(reversed(DeltaLog(entry.location).history()))
    limit = expression.args.get("limit")
    if limit is not None:
        commits = commits[: int(limit.name)]
    data = [
        (
            c.version,
            _utc(c.timestamp),
            None,
            c.operation,
            dict(c.parameters),
            c.read_version,
            c.is_blind_append,
            dict(c.metrics),
            c.engine_info,
            c.query_id,
        )
        for c in commits
    ]
    return results.rows(
        execution.spark,
        "version BIGINT, timestamp TIMESTAMP, userName STRING, operation STRING, "
        "operationParameters MAP<STRING, STRING>, readVersion BIGINT, isBlindAppend BOOLEAN, "
        "operationMetrics MAP<STRING, STRING>, engineInfo STRING, queryId STRING",
        data,
    )


def detail(execution: Execution) -> DataFrame:
    """DESCRIBE DETAIL t: Delta's one-row summary of the current version."""
    entry = execution.tables.entry(execution.expression.this)
    log = DeltaLog(entry.location)
    snapshot = log.snapshot()
    metadata = snapshot.table.metadata()
    protocol = snapshot.table.protocol()
    last = log.history()[-1]
    features = sorted(set(protocol.reader_features or []) | set(protocol.writer_features or []))
    data = [
        (
            "delta",
            metadata.id,
            entry.qualified,
            execution.catalog.parameters(entry.id).get("COMMENT") or metadata.description,
            log.uri,
            _utc(entry.created_at),
            _utc(last.timestamp),
            list(metadata.partition_columns),
            clustering.clustering_columns(execution.catalog, entry.id),
            len(snapshot.files),
            snapshot.size,
            dict(metadata.configuration),
            protocol.min_reader_version,
            protocol.min_writer_version,
            features,
            entry.kind,
        )
    ]
    return results.rows(
        execution.spark,
        "format STRING, id STRING, name STRING, description STRING, location STRING, "
        "createdAt TIMESTAMP, lastModified TIMESTAMP, partitionColumns ARRAY<STRING>, "
        "clusteringColumns ARRAY<STRING>, numFiles BIGINT, sizeInBytes BIGINT, "
        "properties MAP<STRING, STRING>, minReaderVersion INT, minWriterVersion INT, "
        "tableFeatures ARRAY<STRING>, kind STRING",
        data,
    )


def _utc(moment: dt.datetime) -> dt.datetime:
    """An aware datetime: PySpark would read a naive one in the Python process's local zone."""
    return moment.astimezone(dt.timezone.utc)


