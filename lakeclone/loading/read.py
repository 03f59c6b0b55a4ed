"""Reading staged files with Spark and checking every value against the table, as Snowflake's COPY does.

Each file's rows are read as text, each value converted to its column's type
with ``try_cast`` (or parsed as JSON for a VARIANT), and a row that does not
fit gets an error of Snowflake's wording: the first failing column's, with its
character position. The rows are written as they are read, and each file's
counts observed on the way (one pass over the files); only files with errors
are read again, to say where their first error is.

CSV maps fields to columns by position; JSON (one object per line) and
Parquet by column name, case-insensitively (Snowflake's
``MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE``, Databricks' default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeclone.errors import SqlCompilationError
from lakeclone.loading.formats import FileFormat

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructField, StructType

    from lakeclone.storage import Storage

FILE = "__lakeclone_file"
ERROR = "__lakeclone_error"
ROW = "__lakeclone_row"
_BLANK = "__lakeclone_blank"
_CORRUPT = "__lakeclone_corrupt"

# Characters Spark reads as a glob pattern in a path it is given.
_GLOB = frozenset("{}[]*?\\")


@dataclass(frozen=True)
class FileCheck:
    """What reading one file found.

    Attributes:
        uri: the file (qualified).
        rows_parsed: its rows (records).
        errors_seen: rows with an error.
        first_error: the first such row's error, in Snowflake's words.
        first_error_line: that row's line in the file (1-based, header included).
        first_error_character: where the failing field starts in its line (1-based).
        first_error_column_name: the failing column, as ``"TABLE"["COLUMN":n]``.
    """

    uri: str
    rows_parsed: int
    errors_seen: int
    first_error: str | None = None
    first_error_line: int | None = None
    first_error_character: int | None = None
    first_error_column_name: str | None = None


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
        self, spark: SparkSession, paths: dict[str, str], file_format: FileFormat, schema: StructType, table: str
    ) -> None:
        self._spark = spark
        self.paths = paths
        """Each file's path as Spark's ``_metadata.file_path`` spells it (percent-encoded), by qualified URI."""
        self._format = file_format
        self._schema = schema
        self._table = table
        self.frame = _read(spark, list(paths), file_format, schema, table)
        self._cached = False

    def counts_per_file(self) -> dict[str, tuple[int, int]]:
        """Each file's (rows, rows with an error), from a pass over the files: SKIP_FILE's, before it writes."""
        from pyspark.sql import functions as F

        counted = self.frame.groupBy(FILE).agg(F.count_if(~F.col(_BLANK)).alias("rows"), F.count(ERROR).alias("errors"))
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
            frame = frame.where(~F.col(FILE).isin([self.paths[uri] for uri in without_files]))
        uris = [uri for uri in self.paths if uri not in without_files]
        if len(uris) > OBSERVED_FILES:
            frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
            self.frame, self._cached = frame, True
            counted = {
                row[FILE]: (int(row["rows"]), int(row["errors"]))
                for row in frame.groupBy(FILE)
                .agg(F.count_if(~F.col(_BLANK)).alias("rows"), F.count(ERROR).alias("errors"))
                .collect()
            }
            observed = None
        else:
            observation = Observation("lakeclone_copy")
            metrics = [F.lit(0).alias("none")]
            for index, uri in enumerate(uris):
                here = F.col(FILE) == self.paths[uri]
                metrics += [
                    F.count_if(here & ~F.col(_BLANK)).alias(f"rows_{index}"),
                    F.count_if(here & F.col(ERROR).isNotNull()).alias(f"errors_{index}"),
                ]
            frame = frame.observe(observation, *metrics)
            observed = observation
        if abort:
            fails = F.raise_error(F.concat(F.lit(ABORTED), F.col(ERROR)["message"]))
            frame = frame.where(F.when(F.col(ERROR).isNotNull(), fails).otherwise(F.lit(True)))
        else:
            frame = frame.where(F.col(ERROR).isNull())
        rows = frame.where(~F.col(_BLANK)).select(*[F.col(f"`{field.name}`") for field in self._schema.fields])

        def counts() -> dict[str, tuple[int, int]]:
            if observed is None:
                return {uri: counted.get(self.paths[uri], (0, 0)) for uri in uris}
            values = observed.get
            return {uri: (int(values[f"rows_{i}"]), int(values[f"errors_{i}"])) for i, uri in enumerate(uris)}

        return rows, counts

    def first_errors(self, uris: Sequence[str]) -> dict[str, tuple[str, int, int, str | None]]:
        """Each file's first error in file order: (message, line, character, column), reading those files again."""
        from pyspark.sql import functions as F

        if not uris:
            return {}
        paths = {uri: self.paths[uri] for uri in uris}
        # Rows are numbered in the order Spark reads them, which within one file is the file's order.
        frame = _read(self._spark, list(paths), self._format, self._schema, self._table).withColumn(
            ROW, F.monotonically_increasing_id()
        )
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
    spark: SparkSession, storage: Storage, uris: Sequence[str], file_format: FileFormat, schema: StructType, table: str
) -> Reading:
    """The files ``uris`` read with ``file_format`` for a table of ``schema`` (called ``table`` in messages).

    Raises:
        SqlCompilationError: a file's name Spark would read as a pattern.
    """
    for uri in uris:
        if _GLOB.intersection(uri.rsplit("/", 1)[-1]):
            raise SqlCompilationError(
                f"File '{uri}' has a character Spark reads as a pattern in its name "
                f"({''.join(sorted(_GLOB))}); rename it to load it."
            )
    return Reading(spark, {uri: storage.encoded(uri) for uri in uris}, file_format, schema, table)


def _read(spark: SparkSession, paths: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    readers = {"CSV": _csv, "JSON": _json, "PARQUET": _parquet}
    return readers[file_format.type](spark, paths, file_format, schema, table)


def _csv(spark: SparkSession, uris: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    count = len(schema.fields)
    raw = [f"_c{i}" for i in range(count)]
    read_schema = StructType([StructField(name, StringType()) for name in raw] + [StructField(_CORRUPT, StringType())])
    quote = file_format.enclosed_by or "\u0000"
    reader = (
        spark.read.format("csv")
        .schema(read_schema)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", _CORRUPT)
        .option("sep", file_format.field_delimiter)
        .option("header", "true" if file_format.header_lines else "false")
        .option("quote", quote)
        .option("escape", file_format.escape or (file_format.enclosed_by or "\\"))
        .option("ignoreLeadingWhiteSpace", str(file_format.trim_space).lower())
        .option("ignoreTrailingWhiteSpace", str(file_format.trim_space).lower())
        .option("enforceSchema", "true")
    )
    if not file_format.empty_field_as_null:
        reader = reader.option("nullValue", "\u0000\u0001")
    source = reader.load(uris).select("*", F.col("_metadata.file_path").alias(FILE), F.lit(False).alias(_BLANK))
    values = [_nulled(F.col(name), file_format) for name in raw]
    # Where each field starts in its line, if no field before it is enclosed in quotes.
    starts: list[Column] = []
    offset: Column = F.lit(1)
    for i, name in enumerate(raw):
        starts.append(offset)
        offset = offset + F.coalesce(F.length(F.col(name)), F.lit(0)) + (1 if i < count else 0)
    fields = F.size(F.split(F.col(_CORRUPT), _regex_literal(file_format.field_delimiter)))
    mismatch = F.struct(
        F.format_string(
            "Number of columns in file (%d) does not match that of the corresponding table (%d), "
            "use file format option error_on_column_count_mismatch=false to ignore this error",
            fields,
            F.lit(count),
        ).alias("message"),
        F.lit(1).alias("character"),
        F.lit(None).cast("string").alias("column"),
    )
    malformed = (
        F.when(F.col(_CORRUPT).isNotNull() & (fields != count), mismatch) if file_format.error_on_column_count_mismatch else None
    )
    return _checked(source, values, starts, schema, table, malformed)


def _json(spark: SparkSession, uris: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    from pyspark.sql import functions as F

    lines = spark.read.format("text").load(uris).select("value", F.col("_metadata.file_path").alias(FILE))
    parsed = F.from_json(F.col("value"), "map<string,string>")
    lowered = F.transform_keys(parsed, lambda key, _: F.lower(key))
    values = [_nulled(F.try_element_at(lowered, F.lit(field.name.lower())), file_format) for field in schema.fields]
    starts = [F.lit(1) for _ in schema.fields]
    blank = F.trim(F.col("value")) == ""
    bad = F.struct(
        F.concat(F.lit("Error parsing JSON: "), F.substring(F.col("value"), 1, 80)).alias("message"),
        F.lit(1).alias("character"),
        F.lit(None).cast("string").alias("column"),
    )
    # Blank lines are numbered with the others, for line numbers, but are no rows.
    return _checked(lines.withColumn(_BLANK, blank), values, starts, schema, table, F.when(~blank & parsed.isNull(), bad))


def _parquet(spark: SparkSession, uris: list[str], file_format: FileFormat, schema: StructType, table: str) -> DataFrame:
    from pyspark.sql import functions as F

    source = spark.read.format("parquet").option("mergeSchema", "true").load(uris)
    columns = {name.lower(): name for name in source.columns}
    source = source.select("*", F.col("_metadata.file_path").alias(FILE), F.lit(False).alias(_BLANK))
    values = []
    for field in schema.fields:
        name = columns.get(field.name.lower())
        column = F.col(f"`{name}`") if name is not None else F.lit(None)
        values.append(column if name is not None and source.schema[name].dataType == field.dataType else column.cast("string"))
    return _checked(source, values, [F.lit(1) for _ in schema.fields], schema, table, None)


def _nulled(value: Column, file_format: FileFormat) -> Column:
    from pyspark.sql import functions as F

    if not file_format.null_if:
        return value
    return F.when(value.isin(list(file_format.null_if)), F.lit(None)).otherwise(value)


def _checked(
    source: DataFrame,
    values: Sequence[Column],
    starts: Sequence[Column],
    schema: StructType,
    table: str,
    malformed: Column | None,
) -> DataFrame:
    """The table's columns converted from ``values``, with each row's first error (None when it fits) and its number."""
    from pyspark.sql import functions as F

    converted = [_converted(value, field) for value, field in zip(values, schema.fields, strict=True)]
    errors = [] if malformed is None else [malformed]
    for position, (value, typed, start, field) in enumerate(zip(values, converted, starts, schema.fields, strict=True), 1):
        column = f'"{table}"["{field.name}":{position}]'
        message = _failed(value, typed, field)
        errors.append(
            F.when(
                message.isNotNull(),
                F.struct(message.alias("message"), start.alias("character"), F.lit(column).alias("column")),
            )
        )
    return source.select(
        *[typed.alias(field.name) for typed, field in zip(converted, schema.fields, strict=True)],
        F.col(_BLANK),
        F.col(FILE),
        F.coalesce(*errors).alias(ERROR) if errors else F.lit(None).alias(ERROR),
    )


def _converted(value: Column, field: StructField) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, VariantType

    kind = field.dataType
    if isinstance(kind, VariantType):
        return F.try_parse_json(value)
    if isinstance(kind, StringType):
        return value
    return value.try_cast(kind)


def _failed(value: Column, typed: Column, field: StructField) -> Column:
    """Snowflake's message for a value its column cannot take; None when it can."""
    from pyspark.sql import functions as F

    limit = _length_limit(field)
    checks = F.when(value.isNotNull() & typed.isNull(), F.format_string(_unrecognized(field.dataType), value))
    if limit is not None:
        checks = checks.when(
            F.length(value) > limit, F.format_string(f"User character length limit ({limit}) exceeded by string '%s'", value)
        )
    if not field.nullable:
        checks = checks.when(value.isNull(), F.lit("NULL result in a non-nullable column"))
    return checks


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
