"""COPY INTO <table>: files from a stage or a URI, loaded in one Delta commit, each file once.

Snowflake's rules, on Delta:

- The files are listed (``FILES``, ``PATTERN``), read with the stage's file
  format (or the COPY's, which replaces it), and every value is checked against the
  table (:mod:`lakeclone.loading.read`). ``ON_ERROR`` decides what a bad row
  costs: the statement (``ABORT_STATEMENT``, the default), its file
  (``SKIP_FILE``) or itself (``CONTINUE``).
- A column list (``COPY INTO t (a, b)``) loads those columns (the others get
  their defaults, else NULL); a query over the files (``FROM (SELECT $1, $3::DATE
  FROM @s)``) computes them (:mod:`lakeclone.loading.transform`).
- The rows are one Delta append, so streams see them as INSERTs.
- **Load metadata.** Each file loaded into a table is remembered with its
  MD5 checksum for :data:`LOAD_HISTORY_DAYS` days by the Lake's clock; a COPY
  skips a file whose path and checksum it holds, unless ``FORCE = TRUE``. The
  record is pending from before the Delta commit until the statement (or its
  transaction) finishes, in the same catalog transaction that records the
  statement; a session that dies in between leaves it pending, and whoever
  finds it resolves it from the table's log: the commit is there (the files
  were loaded) or it is not (the record goes). So a COPY killed anywhere and
  run again loads each file exactly once.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.stages import LoadedFile
from lakeclone.delta import statements
from lakeclone.engine import registry, results
from lakeclone.engine.compiler import check_table_clauses
from lakeclone.engine.objects import external_location, value_of
from lakeclone.engine.privileges import ACCOUNT_SECURABLE, Need, Privilege, file_reads, named_formats, relation, stage_usage
from lakeclone.engine.schema import conform
from lakeclone.errors import ExecutionError, InternalError, LakecloneError, SqlCompilationError
from lakeclone.loading import formats, read
from lakeclone.loading.stages import Location, checksums, compile_pattern, named_format, stage_location
from lakeclone.loading.transform import Transformation, transformation_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.context import OpenTransaction
    from lakeclone.engine.executor import Execution, Executor
    from lakeclone.engine.tables import Tables
    from lakeclone.storage import FileInfo

LOG = logging.getLogger(__name__)

LOAD_HISTORY_DAYS = 64
"""How long a COPY remembers that it loaded a file into a table (Snowflake's load metadata)."""

ON_ERROR = ("ABORT_STATEMENT", "CONTINUE", "SKIP_FILE")

RESULT_SCHEMA = (
    "file STRING, status STRING, rows_parsed BIGINT, rows_loaded BIGINT, error_limit BIGINT, errors_seen BIGINT, "
    "first_error STRING, first_error_line BIGINT, first_error_character BIGINT, first_error_column_name STRING"
)

_SNOWFLAKE_PARAMETERS = ("FILES", "PATTERN", "FILE_FORMAT", "ON_ERROR", "FORCE", "PURGE", "MATCH_BY_COLUMN_NAME")
_DATABRICKS_PARAMETERS = ("FILEFORMAT", "FORMAT_OPTIONS", "COPY_OPTIONS")


@dataclass(frozen=True)
class CopyOptions:
    """What a COPY INTO statement asks for.

    Attributes:
        location: where the files are.
        files: the FILES list (paths below the location), or None for every file there.
        pattern: PATTERN, matched against each file's path below the stage's URL (or the URI given).
        file_format: how to read them.
        on_error: ``ABORT_STATEMENT``, ``CONTINUE`` or ``SKIP_FILE``.
        force: load files the load history holds, again.
        purge: remove the files loaded once the load has committed.
        transformation: the query the files' rows are loaded through, if any.
    """

    location: Location
    files: tuple[str, ...] | None
    pattern: re.Pattern[str] | None
    file_format: formats.FileFormat
    on_error: str
    force: bool
    purge: bool
    transformation: Transformation | None


def copy_needs(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """INSERT on the table loaded; USAGE on the stage read, or, for a location given as text, what a stage's URL needs."""
    target = _target(expression)
    securable = relation(tables, target, (ObjectKind.TABLE,)) if isinstance(target, exp.Table) else None
    yield Need(securable, (Privilege.INSERT,)) if securable else None
    for source in expression.args.get("files") or []:
        if isinstance(source, exp.Subquery):
            yield from file_reads(tables, source)  # a transformation: the stage (and file format) it reads
            continue
        node = source.this if isinstance(source, exp.Table) else source
        if isinstance(node, exp.Var) and node.name.startswith("@"):
            yield from stage_usage(tables, node.name)
        else:
            yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_EXTERNAL_TABLE,))
    yield from named_formats(tables, expression)


def copy_into(execution: Execution) -> DataFrame:
    """``COPY INTO t FROM @stage[/path] | '<uri>' [FILES = (…)] [PATTERN = '…'] [FILE_FORMAT = (…)] [ON_ERROR = …] …``.

    Also ``FORCE = TRUE``, ``PURGE = TRUE``, and Databricks' ``FILEFORMAT = …
    FORMAT_OPTIONS (…) COPY_OPTIONS ('force' = 'true')``.
    """
    from pyspark.sql.types import StructType

    expression = execution.expression
    assert isinstance(expression, exp.Copy)
    options = copy_options(execution, expression)
    target = _target(expression)
    assert isinstance(target, exp.Table)  # into a location is an unload, which copy_options refused
    check_table_clauses(target)
    tables = execution.tables
    entry = tables.entry(target)
    schema = tables.log(entry).schema(tables.current_version(entry))
    names = _loaded_columns(expression, schema, options.transformation)
    loaded_schema = StructType([schema[name] for name in names]) if names is not None else schema
    storage = execution.storage
    candidates = _listed(execution, options)
    sums = checksums(storage, list(candidates))
    holder = _holder(execution)
    to_load = _claim(execution, entry, sums, holder, force=options.force)
    if not to_load:
        return results.status(execution.spark, "Copy executed with 0 files processed.")
    transformation = options.transformation
    transformed = (
        transformation.rows(tables, options.location, candidates, options.file_format) if transformation is not None else None
    )
    files = read.reading(execution.spark, storage, to_load, options.file_format, loaded_schema, entry.name, transformed)
    try:
        report, loaded = _load(execution, entry, schema, names, files, options, holder)
    finally:
        files.release()
    if options.purge:
        _purge(execution, loaded)
    return results.rows(execution.spark, RESULT_SCHEMA, report)


def _target(expression: exp.Expression) -> exp.Expression:
    """What a COPY loads into, without its column list: a table (a location, for an unload)."""
    target: exp.Expression = expression.this
    inner: exp.Expression = target.this if isinstance(target, exp.Schema) else target
    return inner


def _loaded_columns(expression: exp.Copy, schema: StructType, transformation: Transformation | None) -> list[str] | None:
    """The columns a COPY loads, as the table names them, in the order its values come; None: every column.

    Raises:
        SqlCompilationError: a column the table does not have, or a transformation giving more or fewer values.
    """
    listed = expression.this.expressions if isinstance(expression.this, exp.Schema) else None
    names = None
    if listed is not None:
        by_name = {name.upper(): name for name in schema.fieldNames()}
        names = []
        for column in listed:
            name = by_name.get(column.name.upper())
            if name is None:
                raise SqlCompilationError(f"invalid identifier '{column.name.upper()}'")
            names.append(name)
    expected = len(names) if names is not None else len(schema.fields)
    if transformation is not None and transformation.width != expected:
        raise SqlCompilationError(
            f"Insert value list does not match column list expecting {expected} but got {transformation.width}"
        )
    return names


def copy_options(execution: Execution, expression: exp.Copy) -> CopyOptions:
    """Read a COPY INTO statement's source and parameters, Snowflake's or Databricks' spelling.

    Raises:
        SqlCompilationError: an unload, credentials, a parameter lakeclone does not read, a transformation it cannot run.
    """
    if not expression.args.get("kind"):
        raise SqlCompilationError(
            "COPY INTO a location (unloading) is not supported by lakeclone; COPY INTO a table loads files."
        )
    credentials = expression.args.get("credentials")
    if credentials is not None and any(credentials.args.values()):
        raise SqlCompilationError(
            "COPY … CREDENTIALS is not supported by lakeclone: storage credentials come from Spark's Hadoop configuration."
        )
    sources = expression.args.get("files") or []
    if len(sources) != 1:
        raise SqlCompilationError("COPY INTO reads from one stage or location.")
    transformation = transformation_of(expression)
    location = _location(execution, transformation.source if transformation is not None else sources[0])
    parameters = {str(p.name).upper(): p for p in expression.args.get("params") or []}
    databricks = any(name in parameters for name in _DATABRICKS_PARAMETERS)
    known = _SNOWFLAKE_PARAMETERS + (_DATABRICKS_PARAMETERS if databricks else ())
    for name in parameters:
        if name not in known:
            raise SqlCompilationError(f"COPY option {name} is not supported by lakeclone; it reads {', '.join(known)}.")
    file_format = location.file_format
    force = purge = False
    if databricks:
        file_type = parameters.get("FILEFORMAT")
        if file_type is None:
            raise SqlCompilationError("COPY INTO … FORMAT_OPTIONS needs FILEFORMAT = CSV | JSON | PARQUET.")
        options_node = parameters.get("FORMAT_OPTIONS")
        file_format = formats.from_databricks(value_of(file_type.expression), options_node.expressions if options_node else [])
        force = _databricks_force(parameters.get("COPY_OPTIONS"))
    if "FILE_FORMAT" in parameters:
        # The statement's options replace the stage's, not combine with them (Snowflake's rule).
        file_format = formats.from_properties(
            formats.FileFormat(), parameters["FILE_FORMAT"].expressions, named=lambda name: named_format(execution.tables, name)
        )
    if transformation is not None and transformation.source.args.get("format") is not None:
        file_format = named_format(execution.tables, transformation.source.args["format"])
    matching = parameters.get("MATCH_BY_COLUMN_NAME")
    if matching is not None and (value_of(matching.expression).upper() != "CASE_INSENSITIVE" or file_format.type == "CSV"):
        raise SqlCompilationError(
            "lakeclone loads CSV by position and JSON and Parquet by column name, case-insensitively: "
            "MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE, for JSON and PARQUET only."
        )
    on_error = "ABORT_STATEMENT"
    if "ON_ERROR" in parameters:
        on_error = value_of(parameters["ON_ERROR"].expression).upper()
        if on_error not in ON_ERROR:
            raise SqlCompilationError(f"ON_ERROR = {on_error} is not supported by lakeclone; it takes {', '.join(ON_ERROR)}.")
    if "FORCE" in parameters:
        force = _flag(parameters["FORCE"], "FORCE")
    if "PURGE" in parameters:
        purge = _flag(parameters["PURGE"], "PURGE")
    files = None
    if "FILES" in parameters:
        listed = parameters["FILES"].expression
        items = listed.expressions if isinstance(listed, exp.Tuple) else [listed]
        files = tuple(value_of(item).strip("/") for item in items)
    pattern = None
    if "PATTERN" in parameters:
        text = value_of(parameters["PATTERN"].expression)
        # Databricks' PATTERN is a glob; Snowflake's a regular expression.
        pattern = _glob(text) if databricks else compile_pattern(text)
    staged_pattern = transformation.source.args.get("pattern") if transformation is not None else None
    if staged_pattern is not None:
        if pattern is not None:
            raise SqlCompilationError("A COPY takes one PATTERN: give it as the COPY's option or on the stage, not both.")
        pattern = compile_pattern(value_of(staged_pattern))
    return CopyOptions(location, files, pattern, file_format, on_error, force, purge, transformation)


def _location(execution: Execution, source: exp.Expression) -> Location:
    node = source.this if isinstance(source, exp.Table) else source
    if isinstance(node, exp.Var) and node.name.startswith("@"):
        return stage_location(execution.tables, node.name)
    if isinstance(node, exp.Literal) and node.is_string:
        uri = external_location(execution.tables, node.name, what="a location files are loaded from")
        return Location(uri, uri, None, formats.FileFormat())
    raise SqlCompilationError(
        "COPY INTO reads files from a stage (@s/path) or a location ('s3a://…'), or loads a query over a stage's files."
    )


def _glob(text: str) -> re.Pattern[str]:
    """A Hadoop glob as a regular expression: ``*`` and ``?`` stay within a folder; ``{a,b}`` and ``[…]`` as Hadoop reads them."""
    parts: list[str] = []
    depth = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char == "*":
            parts.append("[^/]*")
        elif char == "?":
            parts.append("[^/]")
        elif char == "[":
            end = text.find("]", index + 1)
            if end < 0:
                raise SqlCompilationError(f"Invalid glob pattern '{text}': a '[' is never closed.")
            body = text[index + 1 : end]
            parts.append("[" + ("^" + body[1:] if body.startswith("^") else re.escape(body).replace("\\-", "-")) + "]")
            index = end
        elif char == "{":
            depth += 1
            parts.append("(?:")
        elif char == "}" and depth:
            depth -= 1
            parts.append(")")
        elif char == "," and depth:
            parts.append("|")
        elif char == "\\" and index + 1 < len(text):
            index += 1
            parts.append(re.escape(text[index]))
        else:
            parts.append(re.escape(char))
        index += 1
    if depth:
        raise SqlCompilationError(f"Invalid glob pattern '{text}': a '{{' is never closed.")
    return re.compile("".join(parts))


def _flag(parameter: exp.Expression, name: str) -> bool:
    text = value_of(parameter.expression).upper()
    if text not in ("TRUE", "FALSE"):
        raise SqlCompilationError(f"{name} takes TRUE or FALSE.")
    return text == "TRUE"


def _databricks_force(options: exp.Expression | None) -> bool:
    force = False
    for prop in options.expressions if options is not None else []:
        key = prop.this.name.lower() if isinstance(prop, exp.Property) and prop.this is not None else ""
        if key != "force":
            raise SqlCompilationError(f"COPY_OPTIONS '{key}' is not supported by lakeclone; it reads 'force'.")
        force = value_of(prop.args["value"]).lower() == "true"
    return force


def _listed(execution: Execution, options: CopyOptions) -> dict[str, FileInfo]:
    """The files the COPY names, by URI, in path order."""
    location = options.location
    storage = execution.storage
    if options.files is not None:
        uris = [f"{location.uri.rstrip('/')}/{name}" for name in options.files]
        present = {f.uri: f for uri in uris for f in storage.files_at(uri) if f.uri == uri}
        missing = [uri for uri in uris if uri not in present]
        if missing:
            raise ExecutionError(
                f"Remote file '{missing[0]}' was not found: it does not exist, or the stage's URL or the path is wrong."
            )
    else:
        present = {f.uri: f for f in storage.files_at(location.uri)}
    pattern = options.pattern
    return {uri: present[uri] for uri in sorted(present) if pattern is None or pattern.fullmatch(location.relative(uri))}


def _holder(execution: Execution) -> str:
    """Whose the load records are: the open transaction's (settled at COMMIT), else the statement's."""
    transaction = execution.session.transaction
    return transaction.id if transaction is not None else execution.query_id


def _claim(execution: Execution, entry: TableEntry, checksums: dict[str, str], holder: str, *, force: bool) -> list[str]:
    """The files to load (all, with FORCE; else those the load history does not hold), recorded as pending.

    The check and the record are one catalog transaction: two sessions copying
    the same file at once load it once.
    """
    catalog = execution.catalog
    now = execution.now()
    with execution.work.durable():
        resolve_abandoned(catalog, execution.executor, entry.id)
        history = [] if force else catalog.stages.loaded_files(entry.id, checksums, now - dt.timedelta(days=LOAD_HISTORY_DAYS))
        held = {(load.uri, load.checksum) for load in history}
        chosen = [uri for uri, checksum in checksums.items() if (uri, checksum) not in held]
        session_id = execution.executor.session.id
        catalog.stages.record_loads(
            LoadedFile(entry.id, uri, checksums[uri], 0, now, holder, session_id, pending=True) for uri in chosen
        )
    if chosen:
        execution.work.compensate("release the files claimed", lambda: _release(execution, holder, chosen))
    return chosen


def _release(execution: Execution, holder: str, uris: list[str]) -> None:
    """The statement failed: its claims go, unless its rows landed (it failed after its Delta commit)."""
    catalog = execution.catalog
    with execution.work.durable():
        if not execution.work.commits:
            catalog.stages.forget_loads(holder, uris)
        elif execution.session.transaction is None:
            catalog.stages.settle_loads(holder, execution.now())
        # Inside a transaction the loads stay its own: COMMIT keeps them, ROLLBACK forgets them.


def _load(
    execution: Execution,
    entry: TableEntry,
    schema: StructType,
    names: list[str] | None,
    files: read.Reading,
    options: CopyOptions,
    holder: str,
) -> tuple[list[tuple[object, ...]], list[str]]:
    """Write the files' rows as ON_ERROR says, in one Delta commit: (the result rows, the files loaded).

    ``names`` are the table's columns the rows fill (None: all of them); the others get their defaults, else NULL.

    Raises:
        ExecutionError: ON_ERROR = ABORT_STATEMENT and a row has an error: Snowflake's message, with file, line and column.
    """
    on_error = options.on_error
    catalog = execution.catalog
    skipped: list[str] = []
    counted: dict[str, tuple[int, int]] = {}
    if on_error == "SKIP_FILE":
        counted = files.counts_per_file()
        skipped = [uri for uri, (_, errors) in counted.items() if errors]
        with execution.work.durable():
            catalog.stages.forget_loads(holder, skipped)
    rows, counts = files.rows(abort=on_error == "ABORT_STATEMENT", without_files=skipped)
    parameters = {"source": options.location.uri, "files": len(files.paths) - len(skipped)}
    try:
        if names is not None and registry.SLOTS.insert_defaults is not None:
            rows, names = registry.SLOTS.insert_defaults(execution, entry, schema, rows, names)
        with execution.work.delta(target=entry.location, parameters=parameters):
            statements.write(conform(rows, schema, names), entry.location)
    except LakecloneError as error:
        if read.ABORTED not in str(error):
            raise
        raise _first_error(files, options) from None
    for hook in registry.AFTER_DML:
        hook(execution, entry)
    counted.update(counts())
    firsts = files.first_errors([uri for uri in files.paths if counted[uri][1]])
    report: list[tuple[object, ...]] = []
    loaded: list[str] = []
    # Durable at once, as the claims are: what the landed Delta commit loaded stays counted whatever follows.
    with execution.work.durable():
        for uri in files.paths:
            parsed, errors = counted[uri]
            rows_loaded = 0 if uri in skipped else parsed - errors
            status = "LOADED" if not errors else "PARTIALLY_LOADED" if rows_loaded else "LOAD_FAILED"
            if status == "LOAD_FAILED":
                catalog.stages.forget_loads(holder, [uri])
            else:
                catalog.stages.count_load(holder, uri, rows_loaded)
                loaded.append(uri)
            message, line, character, column = firsts.get(uri, (None, None, None, None))
            error_limit = parsed if on_error == "CONTINUE" else 1
            report.append((uri, status, parsed, rows_loaded, error_limit, errors, message, line, character, column))
    return report, loaded


def _first_error(files: read.Reading, options: CopyOptions) -> ExecutionError:
    """ABORT_STATEMENT's error: the first bad row of the first file that has one, as Snowflake words it."""
    for uri, (message, line, character, column) in files.first_errors(list(files.paths)).items():
        return ExecutionError(
            f"{message}\n  File '{uri}', line {line}, character {character}\n"
            f"  Row {line - options.file_format.header_lines}{', column ' + column if column else ''}\n"
            "  If you would like to continue loading when an error is encountered, use other values such as "
            "'SKIP_FILE' or 'CONTINUE' for the ON_ERROR option."
        )
    raise InternalError(AssertionError("a row failed the load, yet reading the files again finds no error"))


def _purge(execution: Execution, uris: list[str]) -> None:
    """PURGE = TRUE: remove the files loaded; a file that cannot be removed is logged, as Snowflake leaves it."""
    for uri in uris:
        try:
            execution.storage.delete(uri)
        except Exception as error:
            LOG.warning("could not purge %s after loading it: %s", uri, str(error).splitlines()[0])


def finish(execution: Execution) -> None:
    """Registered in FINISH: the statement's load records become history (a transaction's wait for COMMIT)."""
    if isinstance(execution.expression, exp.Copy) and execution.session.transaction is None:
        execution.catalog.stages.settle_loads(execution.query_id, execution.now())


def commit_loads(catalog: Catalog, transaction: OpenTransaction, now: dt.datetime) -> None:
    """Registered in TRANSACTION_COMMITS: the transaction's loads become history."""
    catalog.stages.settle_loads(transaction.id, now)


def forget_loads(catalog: Catalog, transaction_id: str) -> None:
    """Registered in TRANSACTION_ROLLBACKS: the transaction's loads did not happen."""
    catalog.stages.forget_loads(transaction_id)


def resolve_abandoned(catalog: Catalog, executor: Executor, table_id: str | None = None) -> None:
    """Settle or forget the pending loads of sessions that died: settled if the table's log holds their commit.

    Runs inside the caller's catalog transaction.
    """
    pending = [load for load in catalog.stages.pending_loads() if table_id is None or load.table_id == table_id]
    landed: dict[str, bool] = {}
    for load in pending:
        if catalog.sessions.is_alive(load.session_id, executor.lake.now()):
            continue
        if load.holder not in landed:
            table = catalog.objects.table_by_id(load.table_id)
            log = executor.delta.table(table.location) if table is not None and table.dropped_at is None else None
            landed[load.holder] = log is not None and log.exists() and any(c.query_id == load.holder for c in log.history())
        if landed[load.holder]:
            catalog.stages.settle_loads(load.holder, executor.lake.now())
        else:
            catalog.stages.forget_loads(load.holder)


def recover(executor: Executor) -> None:
    """Registered in RECOVERIES: on ``connect()``, resolve what dead sessions' COPYs left, and forget expired history."""
    catalog = executor.catalog
    with catalog.recovering():
        resolve_abandoned(catalog, executor)
        catalog.stages.expire_loads(executor.lake.now() - dt.timedelta(days=LOAD_HISTORY_DAYS))
