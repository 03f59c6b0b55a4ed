"""SHOW and DESCRIBE: the catalog and the Delta log, as Snowflake and Delta present them."""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.names import schema_name
from lakeclone.dialect import expressions as lx
from lakeclone.engine import needs, registry, results, session_parameters
from lakeclone.engine.objects import require_database
from lakeclone.engine.schema import type_text
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError, UnsupportedStatementError
from lakeclone.timetravel import literal_int

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.store import Catalog, SchemaEntry
    from lakeclone.engine.executor import Execution

# What SHOW TABLES and DESCRIBE DETAIL say when no feature supplies an attribute.
TABLE_ATTRIBUTE_DEFAULTS: Mapping[str, Any] = {
    "cluster_by": "",
    "automatic_clustering": "OFF",
    "clusteringColumns": [],
}


def like_pattern(pattern: exp.Expression | None) -> re.Pattern[str] | None:
    """SQL LIKE as a regular expression; Snowflake's SHOW ... LIKE ignores case."""
    if pattern is None:
        return None
    text = pattern.name
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in text)
    return re.compile(f"^{regex}$", re.IGNORECASE | re.DOTALL)


def matches(pattern: re.Pattern[str] | None, name: str) -> bool:
    return pattern is None or bool(pattern.match(name))


def scope_schemas(execution: Execution) -> list[SchemaEntry]:
    """The schemas a SHOW's ``IN SCHEMA s`` / ``IN DATABASE d`` names; else the current database's."""
    catalog = execution.catalog
    expression = execution.expression
    scope = expression.args.get("scope")
    if isinstance(scope, exp.Table) and ObjectKind.named(expression.args.get("scope_kind")) is ObjectKind.DATABASE:
        return catalog.objects.schemas(require_database(execution, scope.name))
    if isinstance(scope, exp.Table):
        database, name = schema_name(scope, database=execution.session.database)
        schema = catalog.objects.schema(database, name)
        if schema is None:
            raise ObjectNotFoundError(f"{database}.{name}", "Schema")
        return [schema]
    current = catalog.objects.database(execution.session.database or "")
    return catalog.objects.schemas(current) if current else []


def table_attributes(catalog: Catalog, table_id: str) -> dict[str, Any]:
    """What features say about a table (its clustering key, ...), over the engine's defaults."""
    attributes = dict(TABLE_ATTRIBUTE_DEFAULTS)
    for supplier in registry.TABLE_ATTRIBUTES:
        attributes.update(supplier(catalog, table_id))
    return attributes


# The clauses of SHOW that show() applies to every listing, and those a listing reads itself.
_SHOW_CLAUSES = {"this", "like", "scope", "scope_kind", "terse", "starts_with", "limit", "from_"}
_SHOW_HISTORY = {"TABLES"}

# The columns SHOW TERSE keeps, as Snowflake's TERSE output has them.
_TERSE_COLUMNS = ("created_on", "name", "kind", "database_name", "schema_name")


@registry.statement(exp.Show, bind=needs.show, query_type="SHOW")
def show(execution: Execution) -> DataFrame:
    """``SHOW [TERSE] what [HISTORY] [LIKE …] [IN …] [STARTS WITH '…'] [LIMIT n [FROM '…']]``."""
    expression = execution.expression
    what = expression.name.upper()
    shows = {"DATABASES": _databases, "SCHEMAS": _schemas, "TABLES": _tables, **registry.SHOWS}
    shows.update({record.plural: functools.partial(_objects, record) for record in registry.SCHEMA_OBJECTS.values()})
    if what not in shows:
        raise UnsupportedStatementError(execution.sql)
    for key, value in expression.args.items():
        if value and key not in _SHOW_CLAUSES and not (key == "history" and what in _SHOW_HISTORY):
            raise SqlCompilationError(f"SHOW {what} does not support {key.upper()} in lakeclone.")
    listing = shows[what](execution, like_pattern(expression.args.get("like")))
    return _narrowed(execution, _visible(execution, what, listing))


def _objects(record: registry.SchemaObject, execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW <plural> [LIKE 'p'] [IN {SCHEMA s | DATABASE d}]`` of a kind a feature owns: its record's row for each."""
    data = [
        record.row(execution, entry)
        for schema in scope_schemas(execution)
        for entry in execution.catalog.schema_objects.in_schema(record.kind, schema)
        if matches(like, entry.name)
    ]
    return results.rows(execution.spark, record.columns, data)


def _visible(execution: Execution, what: str, frame: DataFrame) -> DataFrame:
    """A listing without the objects the current role may not see."""
    from pyspark.sql import functions as F

    authorizer = registry.SLOTS.authorizer
    visible = authorizer.visible(execution.catalog, execution.session.role, what) if authorizer is not None else None
    if visible is None:
        return frame
    columns, keys = visible
    separator = "\x00"
    allowed = [separator.join(key) for key in keys]
    return frame.where(F.concat_ws(separator, *[F.col(c) for c in columns]).isin(allowed))


def _narrowed(execution: Execution, frame: DataFrame) -> DataFrame:
    """A listing after SHOW's STARTS WITH, LIMIT … FROM and TERSE, which Snowflake applies to every SHOW.

    ``STARTS WITH`` and ``FROM`` compare names case-sensitively; ``LIMIT n FROM 'x'``
    lists the first n names from 'x' on, in name order, so that pages follow on.
    """
    from pyspark.sql import functions as F

    expression = execution.expression
    # sqlglot leaves an absent clause None or False.
    starts_with = expression.args.get("starts_with") or None
    limit = expression.args.get("limit") or None
    start = expression.args.get("from_") or None
    if (starts_with is not None or start is not None) and "name" not in frame.columns:
        raise SqlCompilationError(f"SHOW {expression.name.upper()} does not support STARTS WITH or FROM.")
    if starts_with is not None:
        frame = frame.where(F.col("name").startswith(starts_with.name))
    if start is not None and limit is None:
        raise SqlCompilationError("SHOW … FROM needs LIMIT: LIMIT <rows> FROM '<name>'.")
    if limit is not None:
        count = literal_int(limit.expression, "LIMIT")
        if count < 0:
            raise SqlCompilationError(f"LIMIT must not be negative, got {count}")
        if start is not None:
            frame = frame.where(F.col("name") >= start.name)
        order = [c for c in ("name", "database_name", "schema_name") if c in frame.columns]
        frame = (frame.orderBy(*order) if order else frame).limit(count)
    if expression.args.get("terse"):
        frame = frame.select(*[c for c in _TERSE_COLUMNS if c in frame.columns])
    return frame


def _databases(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    catalog = execution.catalog
    data = [
        (
            d.created_at,
            d.name,
            "Y" if d.name == execution.session.database else "N",
            catalog.parameters.of(d.id).get("COMMENT", ""),
            int(catalog.parameters.effective(params.RETENTION, [(ObjectKind.DATABASE, d.id)])[0]),
        )
        for d in catalog.objects.databases()
        if matches(like, d.name)
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
    databases = [require_database(execution, database_name)] if database_name else catalog.objects.databases()
    data = []
    for database in databases:
        for schema in catalog.objects.schemas(database):
            if matches(like, schema.name):
                is_current = (database.name, schema.name) == (execution.session.database, execution.session.schema)
                data.append(
                    (
                        schema.created_at,
                        schema.name,
                        database.name,
                        "Y" if is_current else "N",
                        catalog.parameters.of(schema.id).get("COMMENT", ""),
                    )
                )
    return results.rows(
        execution.spark,
        "created_on TIMESTAMP, name STRING, database_name STRING, is_current STRING, comment STRING",
        data,
    )


def _tables(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    catalog = execution.catalog
    history = bool(execution.expression.args.get("history"))
    tables = [
        table
        for schema in scope_schemas(execution)
        for table in catalog.objects.tables(schema, dropped=history)
        if matches(like, table.name)
    ]
    # From Delta's checksum files, each counted once per version: no Spark job for tables of few files.
    counts = execution.delta.latest_counts([table.location for table in tables])
    parameters = catalog.parameters.table_parameters(tables)
    data = []
    for table in tables:
        settings = parameters[table.id]
        attributes = table_attributes(catalog, table.id)
        data.append(
            (
                table.created_at,
                table.name,
                table.database,
                table.schema,
                "TABLE",
                settings["COMMENT"],
                attributes["cluster_by"],
                counts[table.location].rows,
                counts[table.location].size,
                int(settings[params.RETENTION]),
                attributes["automatic_clustering"],
                "ON" if settings["CHANGE_TRACKING"] == "true" else "OFF",
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


@registry.statement(lx.ShowParameters, bind=needs.show_parameters, query_type="SHOW")
def parameters(execution: Execution) -> DataFrame:
    """SHOW PARAMETERS [LIKE ...] [IN SESSION | IN TABLE|SCHEMA|DATABASE x]: each with its value and where it was set."""
    expression = execution.expression
    kind = ObjectKind.named(expression.args.get("kind"))
    target = expression.this
    catalog = execution.catalog
    like = like_pattern(expression.args.get("like"))
    if kind is ObjectKind.TABLE:
        table = execution.tables.entry(target)
        chain = catalog.parameters.parameter_chain(table)
    elif kind is ObjectKind.SCHEMA:
        database_name, name = schema_name(target, database=execution.session.database)
        schema = catalog.objects.schema(database_name, name)
        if schema is None:
            raise ObjectNotFoundError(f"{database_name}.{name}", "Schema")
        chain = [(ObjectKind.SCHEMA, schema.id), (ObjectKind.DATABASE, schema.database_id)]
    elif kind is ObjectKind.DATABASE:
        database = catalog.objects.database(target.name)
        if database is None:
            raise ObjectNotFoundError(target.name, "Database")
        chain = [(ObjectKind.DATABASE, database.id)]
    else:  # IN SESSION, or no IN at all, as in Snowflake
        return session_parameters.show(execution, lambda key: matches(like, key))
    data = []
    for parameter in params.PARAMETERS.values():
        if kind not in parameter.levels or not matches(like, parameter.key):
            continue
        value, level = catalog.parameters.effective(parameter.key, chain)
        data.append(
            (parameter.key, value, parameter.default, level.value if level else "", parameter.description, parameter.type)
        )
    return results.rows(
        execution.spark,
        "key STRING, value STRING, default STRING, level STRING, description STRING, type STRING",
        data,
    )


@registry.statement(exp.Describe, bind=needs.describe, query_type="DESCRIBE")
def describe(execution: Execution) -> DataFrame:
    """DESCRIBE [TABLE] t, or a feature's kind (DESCRIBE VIEW v, DESCRIBE STREAM s)."""
    kind = str(execution.expression.args.get("kind") or "TABLE").upper()
    describers = {"TABLE": _describe_table, **registry.DESCRIBERS}
    if kind not in describers:
        raise UnsupportedStatementError(execution.sql)
    return describers[kind](execution)


def _describe_table(execution: Execution) -> DataFrame:
    expression = execution.expression
    entry = execution.tables.entry(expression.this)
    schema = execution.tables.log(entry).schema()
    attributes: dict[str, dict[str, str | None]] = {}
    for supplier in registry.COLUMN_ATTRIBUTES:
        for column, values in supplier(execution.catalog, entry.id).items():
            attributes.setdefault(column, {}).update(values)
    data = []
    for field in schema.fields:
        extra = attributes.get(field.name.upper(), {})
        data.append(
            (
                field.name,
                type_text(field),
                "COLUMN",
                "Y" if field.nullable else "N",
                extra.get("default"),
                extra.get("primary key", "N"),
                extra.get("unique key", "N"),
                field.metadata.get("comment"),
            )
        )
    return results.rows(
        execution.spark,
        "name STRING, type STRING, kind STRING, `null?` STRING, default STRING, "
        "`primary key` STRING, `unique key` STRING, comment STRING",
        data,
    )


@registry.statement(lx.DescribeHistory, bind=needs.read_history, query_type="DESCRIBE")
def history(execution: Execution) -> DataFrame:
    """DESCRIBE HISTORY t: Delta's columns, newest first, with the Lake clock's commit times and lakeclone's query id.

    A DML commit's ``operationParameters`` hold its predicate with literal
    values (``SSN = 'SSN-444'``): on a table with policies they are shown to
    its owner only, since they may be values a mask or row policy hides.
    """
    expression = execution.expression
    entry = execution.tables.entry(expression.this)
    commits = list(reversed(execution.tables.history(entry)))
    authorizer = registry.SLOTS.authorizer
    parameters_hidden = (
        authorizer is not None
        and execution.catalog.policies.has_policies(entry.id)
        and not authorizer.owns_table(execution.executor, entry.id)
    )
    limit = expression.args.get("limit")
    if limit is not None:
        commits = commits[: max(literal_int(limit, "LIMIT"), 0)]
    # Delta's userName is empty in a Spark session: lakeclone's user who ran the commit's statement stands there.
    users = execution.catalog.queries.query_users([c.query_id for c in commits if c.query_id])
    data = [
        (
            c.version,
            _utc(c.timestamp),
            users.get(c.query_id) if c.query_id else None,
            c.operation,
            None if parameters_hidden else dict(c.parameters),
            c.read_version,
            c.is_blind_append,
            dict(c.metrics),
            c.user_metadata,
            c.engine_info,
            c.query_id,
        )
        for c in commits
    ]
    return results.rows(
        execution.spark,
        "version BIGINT, timestamp TIMESTAMP, userName STRING, operation STRING, "
        "operationParameters MAP<STRING, STRING>, readVersion BIGINT, isBlindAppend BOOLEAN, "
        "operationMetrics MAP<STRING, STRING>, userMetadata STRING, engineInfo STRING, queryId STRING",
        data,
    )


@registry.statement(lx.DescribeDetail, bind=needs.read_history, query_type="DESCRIBE")
def detail(execution: Execution) -> DataFrame:
    """DESCRIBE DETAIL t: Delta's one-row summary of the current version."""
    entry = execution.tables.entry(execution.expression.this)
    log = execution.tables.log(entry)
    snapshot = log.snapshot()
    last = log.history()[-1]
    data = [
        (
            "delta",
            snapshot.table_id,
            entry.qualified,
            execution.catalog.parameters.of(entry.id).get("COMMENT") or snapshot.description,
            entry.location,
            _utc(entry.created_at),
            _utc(last.timestamp),
            list(snapshot.partition_columns),
            list(table_attributes(execution.catalog, entry.id)["clusteringColumns"]),
            snapshot.num_files,
            snapshot.size,
            dict(snapshot.configuration),
            snapshot.min_reader_version,
            snapshot.min_writer_version,
            list(snapshot.features),
            entry.kind.value,
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
