"""Queries over files: Snowflake's ``SELECT $1 FROM @s/path (FILE_FORMAT => 'f', PATTERN => '…')``, Databricks' ``read_files``.

In a query over a stage, a CSV file's fields are ``$1``, ``$2`` … as text
(a field a line lacks is NULL), and a JSON line or a Parquet row is one
VARIANT, ``$1`` (its fields ``$1:name``). The metadata columns Snowflake
documents are there when the query names them: ``METADATA$FILENAME`` (the
path below the stage's URL), ``METADATA$FILE_ROW_NUMBER``,
``METADATA$FILE_CONTENT_KEY`` (the file's MD5), ``METADATA$FILE_LAST_MODIFIED``
and ``METADATA$START_SCAN_TIME``. The files are read with the stage's file
format unless the query names one.

``read_files('<uri>', format => 'csv', header => true)`` reads the files at a
URI as Databricks does: the columns named by the CSV header (else ``_c0`` …)
or the JSON keys, their types inferred. A URI, like a stage's URL, may not
lie in the warehouse or in any table's folder.

Neither may be read from a view's or a policy's query: those are read with
their owner's rights on every use, and a file has none to check.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.engine import registry
from lakeclone.engine.compiler import positional_columns
from lakeclone.engine.objects import external_location, value_of
from lakeclone.errors import ExecutionError, SqlCompilationError
from lakeclone.loading.formats import FileFormat
from lakeclone.loading.read import BLANK, FILE, check_file_names, csv_reader, literal, nulled
from lakeclone.loading.stages import Location, checksums, compile_pattern, named_format, stage_location

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.tables import Tables
    from lakeclone.storage import FileInfo

FILENAME = "METADATA$FILENAME"
FILE_ROW_NUMBER = "METADATA$FILE_ROW_NUMBER"
FILE_CONTENT_KEY = "METADATA$FILE_CONTENT_KEY"
FILE_LAST_MODIFIED = "METADATA$FILE_LAST_MODIFIED"
START_SCAN_TIME = "METADATA$START_SCAN_TIME"
METADATA_COLUMNS = (FILENAME, FILE_ROW_NUMBER, FILE_CONTENT_KEY, FILE_LAST_MODIFIED, START_SCAN_TIME)

# What a reference to staged files may carry besides its stage and path.
_STAGED_ARGS = {"this", "alias", "format", "pattern", "joins", "laterals", "pivots", "sample"}

_ORDER = "__lakeclone_order"

MALFORMED = "__lakeclone_malformed"
"""In a COPY's transformation, a record's error before any of its values: a JSON line that does not parse (else NULL)."""

# read_files' options (Databricks' names, matched whatever their case), as the Spark reader option each sets.
_READ_FILES_OPTIONS = {
    "header": "header",
    "sep": "sep",
    "delimiter": "sep",
    "nullvalue": "nullValue",
    "quote": "quote",
    "escape": "escape",
    "multiline": "multiLine",
    "pathglobfilter": "pathGlobFilter",
    "filenamepattern": "pathGlobFilter",
    "recursivefilelookup": "recursiveFileLookup",
    "infercolumntypes": "inferSchema",
}
_READ_FILES_FORMATS = ("csv", "json", "parquet")

# Characters Spark reads as a glob pattern in a path it is given: a pattern could reach into the warehouse.
_GLOB = frozenset("{}[]*?\\")


def bind_staged_files(tables: Tables, table: exp.Table) -> exp.Expression:
    """``@stage[/path] [(FILE_FORMAT => 'f', PATTERN => '<regex>')]`` bound to the rows of the files there.

    Raises:
        SqlCompilationError: a view or policy reads it, a clause other than
            FILE_FORMAT and PATTERN, a column past ``$1`` of JSON or Parquet.
        ObjectNotFoundError: no such stage or file format (or the role may not see it).
    """
    _refuse_in_definitions(tables, table.name)
    for key, value in table.args.items():
        if value and key not in _STAGED_ARGS:
            raise SqlCompilationError(
                f"{key.upper()} on staged files is not supported by lakeclone; they take (FILE_FORMAT => …, PATTERN => …)."
            )
    location = stage_location(tables, table.name)
    named = table.args.get("format")
    file_format = named_format(tables, named) if named is not None else location.file_format
    pattern = table.args.get("pattern")
    regex = compile_pattern(value_of(pattern)) if pattern is not None else None
    files = sorted(
        (f for f in tables.storage.files_at(location.uri) if regex is None or regex.fullmatch(location.relative(f.uri))),
        key=lambda f: f.uri,
    )
    check_file_names([f.uri for f in files])
    statement = table.root()
    fields, metadata = columns_read(statement, file_format)
    if file_format.type == "CSV" and any(_selects_all(star) for star in statement.find_all(exp.Star)):
        raise SqlCompilationError(
            f"SELECT * cannot tell how many fields {table.name}'s files have: name the fields of a CSV file: SELECT $1, $2 …"
        )
    frame = staged_frame(tables, location, files, file_format, fields, metadata)
    return tables.bind_frame(frame, table.args.get("alias"))


def columns_read(statement: exp.Expr, file_format: FileFormat) -> tuple[int, list[str]]:
    """How many fields a statement reads of each record (``$1`` … ``$n``), and which ``METADATA$`` columns.

    Raises:
        SqlCompilationError: a field past ``$1`` of a JSON or Parquet file, whose record is one value.
    """
    fields = max((int(node.this.name) for node in positional_columns(statement)), default=1)
    if fields > 1 and file_format.type != "CSV":
        raise SqlCompilationError(
            f"A {file_format.type} file has one column, $1, each record as an OBJECT: read its fields as $1:name, not ${fields}."
        )
    named = {column.name.upper() for column in statement.find_all(exp.Column)}
    return fields, [column for column in METADATA_COLUMNS if column in named]


def _selects_all(star: exp.Star) -> bool:
    """Whether ``star`` is a select list's ``*`` or ``t.*`` (not COUNT(*)'s)."""
    parent = star.parent
    if isinstance(parent, exp.Column):
        parent = parent.parent
    return isinstance(parent, exp.Select)


def _refuse_in_definitions(tables: Tables, what: str) -> None:
    if tables.relations:
        raise SqlCompilationError(
            f"{tables.relations[-1]} cannot read files ({what}): a view's or a policy's query reads tables, views and streams."
        )


def staged_frame(
    tables: Tables,
    location: Location,
    files: list[FileInfo],
    file_format: FileFormat,
    fields: int,
    metadata: list[str],
    *,
    loading: bool = False,
) -> DataFrame:
    """The rows of ``files`` as ``$1`` … ``$fields`` (``$1`` alone for JSON and Parquet), with the ``metadata`` columns.

    For a COPY's transformation (``loading``) each row also carries its
    file's path (``FILE``), whether its line is blank (``BLANK``: it is no
    row, but counts for line numbers) and, where a query fails on a JSON line
    that does not parse, that error (:data:`MALFORMED`).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    spark = tables.spark
    uris = [f.uri for f in files]
    blank, malformed = "false", "CAST(NULL AS STRING)"
    if file_format.type == "CSV":
        schema = StructType([StructField(f"_c{i}", StringType()) for i in range(fields)])
        values = [f"{nulled(f'`_c{i}`', file_format)} AS `${i + 1}`" for i in range(fields)]
        source = csv_reader(spark, file_format, schema).load(uris) if uris else spark.createDataFrame([], schema)
    elif file_format.type == "JSON":
        parsed = "try_parse_json(value)"
        message = "concat('Error parsing JSON: ', substring(value, 1, 80))"
        lines = spark.read.format("text").load(uris) if uris else spark.createDataFrame([], "value STRING")
        if loading:
            values = [f"{parsed} AS `$1`"]
            blank = "trim(value) = ''"
            malformed = f"CASE WHEN NOT ({blank}) AND {parsed} IS NULL THEN {message} END"
            source = lines
        else:
            values = [f"CASE WHEN {parsed} IS NULL THEN raise_error({message}) ELSE {parsed} END AS `$1`"]
            source = lines.where("trim(value) != ''")
    else:
        values = ["to_variant_object(struct(*)) AS `$1`"]
        source = spark.read.format("parquet").option("mergeSchema", "true").load(uris) if uris else spark.range(0).drop("id")
    if loading:
        values += [f"{blank} AS {BLANK}", f"{malformed} AS {MALFORMED}"]
    if not metadata and not loading:
        return source.selectExpr(*values)
    source = source.selectExpr("*", f"{'_metadata.file_path' if uris else 'CAST(NULL AS STRING)'} AS {FILE}")
    if FILE_ROW_NUMBER in metadata:
        # Within one file, Spark reads and numbers rows in the file's order.
        source = source.withColumn(_ORDER, F.monotonically_increasing_id())
    sums = checksums(tables.storage, uris) if FILE_CONTENT_KEY in metadata else {}
    # Each file by the name Spark's _metadata.file_path gives it (percent-encoded).
    described = ", ".join(
        f"{literal(tables.storage.encoded(f.uri))}, named_struct('name', {literal(location.relative(f.uri))}, "
        f"'key', {literal(sums.get(f.uri, ''))}, 'modified', TIMESTAMP_NTZ {literal(_utc_text(f.modified_ms))})"
        for f in files
    )
    file = (
        f"element_at(map({described}), {FILE})"
        if files
        else "CAST(NULL AS STRUCT<name: STRING, key: STRING, modified: TIMESTAMP_NTZ>)"
    )
    started = tables.now.astimezone(dt.timezone.utc).isoformat()
    columns = {
        FILENAME: f"{file}.name",
        FILE_ROW_NUMBER: f"row_number() OVER (PARTITION BY {FILE} ORDER BY {_ORDER})",
        FILE_CONTENT_KEY: f"{file}.key",
        FILE_LAST_MODIFIED: f"{file}.modified",
        START_SCAN_TIME: f"CAST({literal(started)} AS TIMESTAMP)",
    }
    return source.selectExpr(*values, *[f"{columns[name]} AS `{name}`" for name in metadata], *([FILE] if loading else []))


def _utc_text(epoch_ms: int) -> str:
    return dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")


def bind_read_files(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """Databricks' ``read_files('<uri>' [, option => value …])``: the files at a URI, read by Spark with types inferred.

    Raises:
        SqlCompilationError: no URI, an option lakeclone does not read, a format it cannot tell.
        InvalidLocationError: the URI lies in the warehouse or in a table's folder.
        ExecutionError: there are no files at the URI.
    """
    _refuse_in_definitions(tables, "read_files")
    arguments = call.expressions
    if not arguments or not (isinstance(arguments[0], exp.Literal) and arguments[0].is_string):
        raise SqlCompilationError("read_files takes the URI of a file or folder first: read_files('s3a://bucket/path/', …).")
    text = arguments[0].name
    if _GLOB.intersection(text):
        raise SqlCompilationError(
            f"read_files reads the file or folder a URI names, without patterns ({''.join(sorted(_GLOB))}): "
            "choose files with pathGlobFilter => '*.csv'."
        )
    uri = external_location(tables, text, what="a location files are read from")
    options: dict[str, str] = {}
    file_type: str | None = None
    schema: str | None = None
    for argument in arguments[1:]:
        if not isinstance(argument, (exp.Kwarg, exp.PropertyEQ)):
            raise SqlCompilationError("read_files takes its options by name: read_files('…', format => 'csv', header => true).")
        key, value = argument.this.name.lower(), value_of(argument.expression)
        if key == "format":
            file_type = value.lower()
        elif key == "schema":
            schema = value
        elif key in _READ_FILES_OPTIONS:
            options[_READ_FILES_OPTIONS[key]] = value.lower() if value.lower() in ("true", "false") else value
        else:
            raise SqlCompilationError(
                f"read_files option '{argument.this.name}' is not supported by lakeclone; it reads "
                f"format, schema, {', '.join(sorted(_READ_FILES_OPTIONS))}."
            )
    files = tables.storage.files_at(uri)
    if not files:
        raise ExecutionError(f"read_files found no files at '{text}'.")
    file_type = file_type or _format_of(files)
    if file_type not in _READ_FILES_FORMATS:
        raise SqlCompilationError(f"read_files reads format => 'csv', 'json' or 'parquet', not '{file_type}'.")
    if file_type == "csv" and schema is None:
        options.setdefault("inferSchema", "true")
    reader = tables.spark.read.format(file_type).options(**options)
    if schema is not None:
        reader = reader.schema(schema)
    return tables.bind_frame(reader.load(uri), None)


def _format_of(files: list[FileInfo]) -> str:
    """The format every file's extension names (``.csv``, ``.json``, ``.parquet``), else none."""
    extensions = {f.uri.rsplit("/", 1)[-1].rpartition(".")[2].lower() for f in files}
    if len(extensions) == 1 and (extension := extensions.pop()) in _READ_FILES_FORMATS:
        return extension
    raise SqlCompilationError(
        "read_files cannot tell the files' format from their names: give format => 'csv', 'json' or 'parquet'."
    )


registry.SLOTS.staged_files = bind_staged_files
registry.TABLE_FUNCTIONS["READ_FILES"] = registry.TableFunction(bind_read_files, reads_files=True)
