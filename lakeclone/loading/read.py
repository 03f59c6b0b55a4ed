"""Reading staged files with Spark and checking every value against the table, as Snowflake's COPY does.

Each file's rows are read as text, each value converted to its column's type
with ``try_cast`` (or parsed as JSON for a VARIANT), and a row that does not
fit gets an error of Snowflake's wording: the first failing column's, with its
character position. The rows are written as they are read, and each file's
counts observed on the way (one pass over the files); only files with errors
are read again, to say where their first error is.

CSV maps fields to columns by position; JSON (one object per line) and
Parquet by column name, case-insensitively (Snowflake's
``MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE``, Databricks' default). A COPY's
transformation (:mod:`lakeclone.loading.transform`) gives each column its
value, of any type, and its own errors instead; they are checked the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeclone.errors import SqlCompilationError
from lakeclone.loading.formats import FileFormat

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.types import DataType, StructField, StructType

    from lakeclone.storage import Storage

FILE = "__lakeclone_file"
ERROR = "__lakeclone_error"
ROW = "__lakeclone_row"
BLANK = "__lakeclone_blank"
_CORRUPT = "__lakeclone_corrupt"
_PARSED = "__lakeclone_parsed"
_NUMBER = "__lakeclone_file_number"

# Characters Spark reads as a glob pattern in a path it is given.
_GLOB = frozenset("{}[]*?\\")


@dataclass(frozen=True)
class Transformed:
    """A COPY transformation's rows (see :mod:`lakeclone.loading.transform`), to be checked against the table.

    Attributes:
        frame: one row per record of the files, with :data:`FILE` and :data:`BLANK`.
        values: each loaded column's value, as SQL over ``frame`` (in the columns' order).
        errors: each value's own error (an explicit cast that failed), as SQL giving a message or NULL
            (None: it has none).
        malformed: the record's error before any value (a JSON line that does not parse), as SQL
            giving a message or NULL (None: it has none).
    """

    frame: DataFrame
    values: Sequence[str]
    errors: Sequence[str | None]
    malformed: str | None


Transformation = Callable[[list[str]], Transformed]
"""A COPY transformation: the files (URIs) read and transformed."""

# Marks the error a row fails the load with under ON_ERROR = ABORT_STATEMENT, to tell it from Spark's own.
ABORTED = "lakeclone: a row does not fit the table: "

# Up to this many files, a load counts each file's rows as it writes them (one pass over the files);
# beyond it, the checked rows are cached, counted, and then written.
OBSERVED_FILES = 256


class Reading:
    """Staged files read for a table: each row converted, with its first error (None when it fits).

    Nothing is read until the rows are written (:meth:`rows`) or counted
    (:meth:`counts_per_file`); :meth:`first_errors` reads the files that
    had errors again, numbering their rows, only to report where.
    """

    def __init__(
        self,
        spark: SparkSession,
        paths: dict[str, str],
        file_format: FileFormat,
        schema: StructType,
        table: str,
        transformation: Transformation | None = None,
    ) -> None:
        self._spark = spark
        self.paths = paths
        """Each file's path as Spark's ``_metadata.file_path`` spells it (percent-encoded), by qualified URI."""
        self._format = file_format
        self._schema = schema
        self._table = table
        self._transformation = transformation
        self.frame = self._read(list(paths))
        self._cached = False

    def _read(self, uris: list[str]) -> DataFrame:
        if self._transformation is None:
            return _read(self._spark, uris, self._format, self._schema, self._table)
        transformed = self._transformation(uris)
        # A transformed value's place in its line is unknown: its error points at the line's start.
        starts = ["1" for _ in transformed.values]
        types = [field.dataType for field in transformed.frame.selectExpr(*transformed.values).schema.fields]
        message = transformed.malformed
        malformed = None if message is None else f"CASE WHEN {message} IS NOT NULL THEN {_error(message, '1', None)} END"
        return _checked(
            transformed.frame,
            transformed.values,
            starts,
            self._schema,
            self._table,
            malformed,
            errors=transformed.errors,
            types=types,
        )

    def counts_per_file(self) -> dict[str, tuple[int, int]]:
        """Each file's (rows, rows with an error), from a pass over the files: SKIP_FILE's, before it writes."""
        from pyspark.sql import functions as F

        counted = self.frame.groupBy(FILE).agg(F.count_if(~F.col(BLANK)).alias("rows"), F.count(ERROR).alias("errors"))
        by_path = {row[FILE]: (int(row["rows"]), int(row["errors"])) for row in counted.collect()}
        return {uri: by_path.get(path, (0, 0)) for uri, path in self.paths.items()}

    def rows(
        self, *, abort: bool, without_files: Sequence[str] = ()
    ) -> tuple[DataFrame, Callable[[], dict[str, tuple[int, int]]]]:
        """The rows to write (the table's columns) and, once written, each file's (rows parsed, rows with an error).

        With ``abort``, the first row with an error fails the write (with
        :data:`ABORTED` and its message), so nothing is committed; else rows
        with an error are left out.
        """
        from pyspark import StorageLevel
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        frame = self.frame
        if without_files:
            frame = frame.where(f"{FILE} NOT IN ({', '.join(literal(self.paths[uri]) for uri in without_files)})")
        uris = [uri for uri in self.paths if uri not in without_files]
        if len(uris) > OBSERVED_FILES:
            frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
            self.frame, self._cached = frame, True
            counted = {
                row[FILE]: (int(row["rows"]), int(row["errors"]))
                for row in frame.groupBy(FILE)
                .agg(F.count_if(~F.col(BLANK)).alias("rows"), F.count(ERROR).alias("errors"))
                .collect()
            }
            observed = None
        else:
            observation = Observation("lakeclone_copy")
            # Each row's file as a number, looked up once, so that counting it per file compares numbers.
            numbers = ", ".join(f"{literal(self.paths[uri])}, {index}" for index, uri in enumerate(uris))
            frame = frame.withColumn(_NUMBER, F.expr(f"element_at(map({numbers}), {FILE})"))
            metrics = [F.expr("0 AS none")]
            for index in range(len(uris)):
                metrics.append(F.expr(f"count_if({_NUMBER} = {index} AND NOT {BLANK}) AS rows_{index}"))
                if not abort:  # a load that aborts on the first bad row has none when it succeeds
                    metrics.append(F.expr(f"count_if({_NUMBER} = {index} AND {ERROR} IS NOT NULL) AS errors_{index}"))
            frame = frame.observe(observation, *metrics)
            observed = observation
        # Under ABORT_STATEMENT the first bad row fails the write, so that nothing is committed.
        keep = f"CASE WHEN {ERROR} IS NULL THEN true ELSE raise_error(concat({literal(ABORTED)}, {ERROR}.message)) END"
        condition = keep if abort else f"{ERROR} IS NULL"
        rows = frame.where(f"{condition} AND NOT {BLANK}").selectExpr(*[f"`{field.name}`" for field in self._schema.fields])

        def counts() -> dict[str, tuple[int, int]]:
            if observed is None:
                return {uri: counted.get(self.paths[uri], (0, 0)) for uri in uris}
            values = observed.get
            return {uri: (int(values[f"rows_{i}"]), int(values.get(f"errors_{i}", 0))) for i, uri in enumerate(uris)}

        return rows, counts

    def first_errors(self, uris: Sequence[str]) -> dict[str, tuple[str, int, int, str | None]]:
        """Each file's first error in file order: (message, line, character, column), reading those files again."""
        from pyspark.sql import functions as F

        if not uris:
            return {}
        paths = {uri: self.paths[uri] for uri in uris}
        # Rows are numbered in the order Spark reads them, which within one file is the file's order.
        frame = self._read(list(paths)).withColumn(ROW, F.monotonically_increasing_id())
        frame = frame.select(FILE, ERROR, ROW)
        firsts = frame.where(F.col(ERROR).isNotNull()).groupBy(FILE).agg(F.min(ROW).alias("first"))
        before = (
            frame.join(F.broadcast(firsts), FILE)
            .groupBy(FILE)
            .agg(
                F.count_if(F.col(ROW) < F.col("first")).alias("before"),
                F.min_by(F.col(ERROR), F.when(F.col(ROW) == F.col("first"), F.col(ROW))).alias("error"),
            )
            .collect()
        )
        found = {row[FILE]: row for row in before}
        reported: dict[str, tuple[str, int, int, str | None]] = {}
        for uri, path in paths.items():
            row = found.get(path)
            if row is not None and row["error"] is not None:
                error = row["error"]
                line = int(row["before"]) + 1 + self._format.header_lines
                reported[uri] = (error["message"], line, int(error["character"]), error["column"])
        return reported

    def release(self) -> None:
        if self._cached:
            self.frame.unpersist()


def reading(
    spark: SparkSession,
    storage: Storage,
    uris: Sequence[str],
    file_format: FileFormat,
    schema: StructType,
    table: str,
    transformation: Transformation | None = None,
) -> Reading:
    """The files ``uris`` read with ``file_format`` (and transformed) for the columns ``schema`` of ``table``.

    Raises:
        SqlCompilationError: a file's name Spark would read as a pattern.
    """
    check_file_names(uris)
    return Reading(spark, {uri: storage.encoded(uri) for uri in uris}, file_format, schema, table, transformation)


def check_file_names(uris: Sequence[str]) -> None:
    """Refuse a file whose name Spark would read as a pattern.

    Raises:
        SqlCompilationError: a file's name has a character of a glob pattern.
    """
    for uri in uris:
        if _GLOB.intersection(uri.rsplit("/", 1)[-1]):
            raise SqlCompilationError(
                f"File '{uri}' has a character Spark reads as a pattern in its name "
                f"({''.join(sorted(_GLOB))}); rename it to read it."
            )


def _read(spark: SparkSession, paths: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    readers = {"CSV": _csv, "JSON": _json, "PARQUET": _parquet}
    return readers[file_format.type](spark, paths, file_format, schema, table)


def csv_reader(spark: SparkSession, file_format: FileFormat, schema: StructType) -> DataFrameReader:
    """Spark's CSV reader for ``file_format``, every field read as the text it is (``schema``'s columns, in order)."""
    reader = (
        spark.read.format("csv")
        .schema(schema)
        .option("mode", "PERMISSIVE")
        .option("sep", file_format.field_delimiter)
        .option("header", "true" if file_format.header_lines else "false")
        .option("quote", file_format.enclosed_by or "\u0000")
        .option("escape", file_format.escape or (file_format.enclosed_by or "\\"))
        .option("ignoreLeadingWhiteSpace", str(file_format.trim_space).lower())
        .option("ignoreTrailingWhiteSpace", str(file_format.trim_space).lower())
        .option("enforceSchema", "true")
    )
    if not file_format.empty_field_as_null:
        reader = reader.option("nullValue", "\u0000\u0001")
    return reader


def _csv(spark: SparkSession, uris: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    from pyspark.sql.types import StringType, StructField, StructType

    count = len(schema.fields)
    raw = [f"_c{i}" for i in range(count)]
    read_schema = StructType([StructField(name, StringType()) for name in raw] + [StructField(_CORRUPT, StringType())])
    reader = csv_reader(spark, file_format, read_schema).option("columnNameOfCorruptRecord", _CORRUPT)
    source = reader.load(uris).selectExpr("*", f"_metadata.file_path AS {FILE}", f"false AS {BLANK}")
    values = [nulled(f"`{name}`", file_format) for name in raw]
    # Where each field starts in its line, if no field before it is enclosed in quotes.
    starts = [" + ".join(["1", *[f"coalesce(length(`{name}`), 0) + 1" for name in raw[:i]]]) for i in range(count)]
    malformed = None
    if file_format.error_on_column_count_mismatch:
        fields = f"size(split(`{_CORRUPT}`, {literal(_regex_literal(file_format.field_delimiter))}))"
        message = (
            f"format_string('Number of columns in file (%d) does not match that of the corresponding table (%d), "
            f"use file format option error_on_column_count_mismatch=false to ignore this error', {fields}, {count})"
        )
        malformed = f"CASE WHEN `{_CORRUPT}` IS NOT NULL AND {fields} != {count} THEN {_error(message, '1', None)} END"
    return _checked(source, values, starts, schema, table, malformed)


def _json(spark: SparkSession, uris: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    # The object's keys in lower case: columns match keys whatever their case.
    parsed = "transform_keys(from_json(value, 'map<string,string>'), (k, v) -> lower(k))"
    lines = (
        spark.read.format("text")
        .load(uris)
        .selectExpr("value", f"_metadata.file_path AS {FILE}", f"trim(value) = '' AS {BLANK}", f"{parsed} AS {_PARSED}")
    )
    values = [nulled(f"try_element_at({_PARSED}, {literal(field.name.lower())})", file_format) for field in schema.fields]
    bad = _error("concat('Error parsing JSON: ', substring(value, 1, 80))", "1", None)
    # Blank lines are numbered with the others, for line numbers, but are no rows.
    malformed = f"CASE WHEN NOT {BLANK} AND {_PARSED} IS NULL THEN {bad} END"
    return _checked(lines, values, ["1" for _ in schema.fields], schema, table, malformed)


def _parquet(spark: SparkSession, uris: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    source = spark.read.format("parquet").option("mergeSchema", "true").load(uris)
    columns = {name.lower(): name for name in source.columns}
    types = {name: source.schema[name].dataType for name in source.columns}
    source = source.selectExpr("*", f"_metadata.file_path AS {FILE}", f"false AS {BLANK}")
    values = []
    for field in schema.fields:
        name = columns.get(field.name.lower())
        if name is None:
            values.append("CAST(NULL AS STRING)")
        else:
            values.append(f"`{name}`" if types[name] == field.dataType else f"CAST(`{name}` AS STRING)")
    return _checked(source, values, ["1" for _ in schema.fields], schema, table, None)


def nulled(value: str, file_format: FileFormat) -> str:
    if not file_format.null_if:
        return value
    return f"CASE WHEN {value} IN ({', '.join(map(literal, file_format.null_if))}) THEN NULL ELSE {value} END"


def _checked(
    source: DataFrame,
    values: Sequence[str],
    starts: Sequence[str],
    schema: StructType,
    table: str,
    malformed: str | None,
    *,
    errors: Sequence[str | None] | None = None,
    types: Sequence[DataType] | None = None,
) -> DataFrame:
    """The table's columns converted from ``values`` (SQL over ``source``), with each row's first error (None when it fits).

    ``values`` are text unless ``types`` gives each one's type (a
    transformation's); ``errors`` gives each value's own error, ahead of its
    conversion's. Built as SQL text, so that the whole projection is one call into the JVM.
    """
    kinds: Sequence[DataType | None] = types if types is not None else [None] * len(values)
    own: Sequence[str | None] = errors if errors is not None else [None] * len(values)
    converted = [_converted(value, field, kind) for value, field, kind in zip(values, schema.fields, kinds, strict=True)]
    found = [] if malformed is None else [malformed]
    checks = zip(values, converted, starts, schema.fields, kinds, own, strict=True)
    for position, (value, typed, start, field, kind, error) in enumerate(checks, 1):
        column = literal(f'"{table}"["{field.name}":{position}]')
        if error is not None:
            found.append(f"CASE WHEN ({error}) IS NOT NULL THEN {_error(error, start, column)} END")
        message = _failed(value, typed, field, kind)
        if message is not None:
            found.append(f"CASE WHEN ({message}) IS NOT NULL THEN {_error(message, start, column)} END")
    first_error = f"coalesce({', '.join(found)})" if len(found) > 1 else found[0] if found else f"CAST(NULL AS {_ERROR_TYPE})"
    return source.selectExpr(
        *[f"{typed} AS `{field.name}`" for typed, field in zip(converted, schema.fields, strict=True)],
        BLANK,
        FILE,
        f"{first_error} AS {ERROR}",
    )


_ERROR_TYPE = "STRUCT<message: STRING, character: INT, column: STRING>"


def _error(message: str, character: str, column: str | None) -> str:
    return (
        f"named_struct('message', {message}, 'character', CAST({character} AS INT), 'column', {column or 'CAST(NULL AS STRING)'})"
    )


def _converted(value: str, field: StructField, kind: DataType | None = None) -> str:
    """``value`` (text, or of type ``kind``) as its column's type; NULL where it cannot be."""
    from pyspark.sql.types import StringType, VariantType

    target = field.dataType
    if kind is not None and kind.simpleString() == target.simpleString():
        return value
    text = kind is None or isinstance(kind, StringType)
    if isinstance(target, VariantType):
        return f"try_parse_json({value})" if text else f"try_cast({value} AS VARIANT)"
    if isinstance(target, StringType):
        return value if text else f"try_cast({value} AS STRING)"
    return f"try_cast({value} AS {target.simpleString()})"


def _failed(value: str, typed: str, field: StructField, kind: DataType | None = None) -> str | None:
    """Snowflake's message for a value its column cannot take, as SQL (NULL when it can); None when every value fits."""
    from pyspark.sql.types import StringType

    shown = value if kind is None or isinstance(kind, StringType) else f"CAST({value} AS STRING)"
    branches = []
    if typed != value:
        branches.append(
            f"WHEN {value} IS NOT NULL AND {typed} IS NULL THEN format_string({literal(_unrecognized(field.dataType))}, {shown})"
        )
    limit = _length_limit(field)
    if limit is not None:
        message = literal(f"User character length limit ({limit}) exceeded by string '%s'")
        branches.append(f"WHEN length({typed}) > {limit} THEN format_string({message}, {typed})")
    if not field.nullable:
        branches.append(f"WHEN {value} IS NULL THEN 'NULL result in a non-nullable column'")
    return f"CASE {' '.join(branches)} END" if branches else None


def literal(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _unrecognized(kind: DataType) -> str:
    from pyspark.sql.types import BooleanType, DateType, NumericType, TimestampNTZType, TimestampType, VariantType

    if isinstance(kind, NumericType):
        return "Numeric value '%s' is not recognized"
    if isinstance(kind, DateType):
        return "Date '%s' is not recognized"
    if isinstance(kind, (TimestampType, TimestampNTZType)):
        return "Timestamp '%s' is not recognized"
    if isinstance(kind, BooleanType):
        return "Boolean value '%s' is not recognized"
    if isinstance(kind, VariantType):
        return "Error parsing JSON: %s"
    return f"Value '%s' cannot be read as {kind.simpleString().upper()}"


def _length_limit(field: StructField) -> int | None:
    """A VARCHAR(n)'s n, from the type Spark keeps in the column's metadata."""
    declared = str(field.metadata.get("__CHAR_VARCHAR_TYPE_STRING", ""))
    if declared.lower().startswith(("varchar(", "char(")):
        return int(declared[declared.index("(") + 1 : -1])
    return None


def _regex_literal(character: str) -> str:
    return "\\" + character if not character.isalnum() else character
