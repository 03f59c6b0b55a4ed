"""File formats: the options that say how to read a file, as Snowflake's FILE_FORMAT and Databricks' FORMAT_OPTIONS give them.

A stage may name defaults (``CREATE STAGE … FILE_FORMAT = (…)``); a COPY's own
``FILE_FORMAT`` replaces them all, as in Snowflake (options are not combined
across levels). Only what lakeclone reads as Snowflake
documents is accepted: any other option is refused by name, never ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from sqlglot import exp

from lakeclone.errors import SqlCompilationError

TYPES = ("CSV", "JSON", "PARQUET")

# Snowflake's option names, each with how its value is read.
_TEXT_OPTIONS = ("TYPE", "FIELD_DELIMITER", "RECORD_DELIMITER", "FIELD_OPTIONALLY_ENCLOSED_BY", "ESCAPE", "COMPRESSION")
_NUMBER_OPTIONS = ("SKIP_HEADER",)
_FLAG_OPTIONS = ("EMPTY_FIELD_AS_NULL", "ERROR_ON_COLUMN_COUNT_MISMATCH", "TRIM_SPACE")
_LIST_OPTIONS = ("NULL_IF",)
OPTIONS = (*_TEXT_OPTIONS, *_NUMBER_OPTIONS, *_FLAG_OPTIONS, *_LIST_OPTIONS)

# Databricks' FORMAT_OPTIONS (Spark's reader options), as the Snowflake option each stands for.
_DATABRICKS_OPTIONS = {"HEADER": "SKIP_HEADER", "SEP": "FIELD_DELIMITER", "DELIMITER": "FIELD_DELIMITER", "NULLVALUE": "NULL_IF"}


@dataclass(frozen=True)
class FileFormat:
    """How files are read.

    Attributes:
        type: ``CSV``, ``JSON`` or ``PARQUET``.
        skip_header: CSV header lines to skip at the start of each file (0 or 1).
        field_delimiter: the CSV field separator (one character).
        enclosed_by: the character that may enclose a CSV field; None for none (Snowflake's default).
        escape: the character that escapes the enclosing character inside an enclosed field; None for none.
        null_if: strings read as NULL.
        empty_field_as_null: whether an empty CSV field is NULL (else an empty string).
        error_on_column_count_mismatch: whether a CSV record with another number of fields than the table has columns is an error.
        trim_space: whether spaces around CSV fields are removed.
    """

    type: str = "CSV"
    skip_header: int = 0
    field_delimiter: str = ","
    enclosed_by: str | None = None
    escape: str | None = None
    null_if: tuple[str, ...] = ("\\N",)
    empty_field_as_null: bool = True
    error_on_column_count_mismatch: bool = True
    trim_space: bool = False

    @property
    def header_lines(self) -> int:
        """The lines at the start of each file that are no rows (SKIP_HEADER is CSV's only)."""
        return self.skip_header if self.type == "CSV" else 0

    def options(self) -> dict[str, str]:
        """The options as stored in the catalog and shown by DESCRIBE STAGE (Snowflake's names and spellings)."""
        return {
            "TYPE": self.type,
            "SKIP_HEADER": str(self.skip_header),
            "FIELD_DELIMITER": self.field_delimiter,
            "FIELD_OPTIONALLY_ENCLOSED_BY": self.enclosed_by or "NONE",
            "ESCAPE": self.escape or "NONE",
            "NULL_IF": json.dumps(list(self.null_if)),
            "EMPTY_FIELD_AS_NULL": str(self.empty_field_as_null).lower(),
            "ERROR_ON_COLUMN_COUNT_MISMATCH": str(self.error_on_column_count_mismatch).lower(),
            "TRIM_SPACE": str(self.trim_space).lower(),
        }


def stored(options: Mapping[str, str]) -> FileFormat:
    """A file format from the options a stage stores (written by :meth:`FileFormat.options`)."""
    values: dict[str, object] = dict(options)
    if "NULL_IF" in values:
        values["NULL_IF"] = tuple(json.loads(str(values["NULL_IF"])))
    return _applied(FileFormat(), values)


def format_name(properties: list[exp.Expression]) -> exp.Expression | None:
    """The value of ``FORMAT_NAME = …`` among a ``FILE_FORMAT = (…)``'s options, if it names a file format.

    Raises:
        SqlCompilationError: FORMAT_NAME beside other options (Snowflake takes one or the other).
    """
    named = [p for p in properties if isinstance(p, exp.Property) and p.this is not None and p.name.upper() == "FORMAT_NAME"]
    if named and len(properties) > 1:
        raise SqlCompilationError("FILE_FORMAT takes FORMAT_NAME or the options of a file format, not both.")
    return named[0].args.get("value") if named else None


def from_properties(
    base: FileFormat, properties: list[exp.Expression], *, named: Callable[[exp.Expression], FileFormat] | None = None
) -> FileFormat:
    """``base`` with the options of a ``FILE_FORMAT = (…)`` (or a ``CREATE FILE FORMAT``'s) applied.

    Args:
        base: the format the options change.
        properties: the options.
        named: the file format ``FORMAT_NAME = …`` names, where one may be named.

    Raises:
        SqlCompilationError: an option lakeclone does not read, or a value it cannot take.
    """
    reference = format_name(properties)
    if reference is not None:
        if named is None:
            raise SqlCompilationError("FORMAT_NAME names a file format in a COPY or a stage's FILE_FORMAT only.")
        return named(reference)
    values: dict[str, object] = {}
    for prop in properties:
        if isinstance(prop, exp.SchemaCommentProperty):
            continue  # CREATE FILE FORMAT's COMMENT, read by its statement
        if not isinstance(prop, exp.Property) or prop.this is None:
            raise SqlCompilationError(f"invalid file format option {prop.sql(dialect='snowflake')}")
        name = prop.name.upper()
        values[name] = _value(name, prop.args.get("value"))
    return _applied(base, values)


def from_databricks(file_type: str, options: list[exp.Expression]) -> FileFormat:
    """The format of Databricks' ``FILEFORMAT = CSV FORMAT_OPTIONS ('header' = 'true', …)``; no header unless asked, as there."""
    values: dict[str, object] = {"TYPE": file_type.upper(), "NULL_IF": ()}
    for prop in options:
        if isinstance(prop, exp.SequenceProperties) and not any(prop.args.values()):
            continue  # sqlglot reads the comma between two options as an empty node
        key = prop.this.name.upper() if isinstance(prop, exp.Property) and prop.this is not None else ""
        if key not in _DATABRICKS_OPTIONS:
            raise SqlCompilationError(
                f"FORMAT_OPTIONS '{key.lower()}' is not supported by lakeclone; it reads "
                f"{', '.join(k.lower() for k in _DATABRICKS_OPTIONS)}."
            )
        text = _text(prop.args.get("value"))
        name = _DATABRICKS_OPTIONS[key]
        if name == "SKIP_HEADER":
            values[name] = 1 if _flag(key, text) else 0
        elif name == "NULL_IF":
            values[name] = (text,)
        else:
            values[name] = text
    return _applied(FileFormat(), values)


def _applied(base: FileFormat, values: Mapping[str, object]) -> FileFormat:
    fields: dict[str, object] = {}
    for name, value in values.items():
        if name not in OPTIONS:
            raise SqlCompilationError(f"File format option {name} is not supported by lakeclone; it reads {', '.join(OPTIONS)}.")
        if name == "TYPE":
            text = str(value).upper()
            if text not in TYPES:
                raise SqlCompilationError(
                    f"File format TYPE = {text} is not supported by lakeclone; it reads {', '.join(TYPES)}."
                )
            fields["type"] = text
        elif name == "SKIP_HEADER":
            skip = int(str(value))
            if skip not in (0, 1):
                raise SqlCompilationError("SKIP_HEADER takes 0 or 1 in lakeclone (Spark skips one header line per file).")
            fields["skip_header"] = skip
        elif name == "FIELD_DELIMITER":
            fields["field_delimiter"] = _character(name, str(value))
        elif name == "FIELD_OPTIONALLY_ENCLOSED_BY":
            fields["enclosed_by"] = None if str(value).upper() == "NONE" else _character(name, str(value))
        elif name == "ESCAPE":
            fields["escape"] = None if str(value).upper() == "NONE" else _character(name, str(value))
        elif name == "RECORD_DELIMITER":
            if str(value) not in ("\n", "\\n"):
                raise SqlCompilationError("RECORD_DELIMITER takes only '\\n' in lakeclone.")
        elif name == "COMPRESSION":
            if str(value).upper() not in ("AUTO", "GZIP", "NONE"):
                raise SqlCompilationError("COMPRESSION takes AUTO, GZIP or NONE in lakeclone (gzip is found by the .gz suffix).")
        elif name == "NULL_IF":
            fields["null_if"] = tuple(value) if isinstance(value, tuple) else (str(value),)
        else:
            fields[name.lower()] = value if isinstance(value, bool) else _flag(name, str(value))
    return replace(base, **fields)  # type: ignore[arg-type]


def _value(name: str, node: exp.Expression | None) -> object:
    if name in _LIST_OPTIONS:
        items = node.expressions if isinstance(node, exp.Tuple) else [node.this if isinstance(node, exp.Paren) else node]
        return tuple(_text(item) for item in items)
    text = _text(node)
    if name in _FLAG_OPTIONS:
        return _flag(name, text)
    if name in _NUMBER_OPTIONS and not text.isdigit():
        raise SqlCompilationError(f"{name} takes a whole number, not '{text}'.")
    return text


def _text(node: exp.Expression | None) -> str:
    if isinstance(node, exp.Literal):
        return str(node.this)
    if isinstance(node, (exp.Var, exp.Identifier, exp.Column, exp.Boolean)):
        return node.sql(dialect="snowflake") if isinstance(node, exp.Boolean) else node.name
    raise SqlCompilationError(f"invalid file format value {node.sql(dialect='snowflake') if node else 'NULL'}")


def _flag(name: str, text: str) -> bool:
    if text.upper() in ("TRUE", "YES", "1"):
        return True
    if text.upper() in ("FALSE", "NO", "0"):
        return False
    raise SqlCompilationError(f"{name} takes TRUE or FALSE, not '{text}'.")


def _character(name: str, text: str) -> str:
    unescaped = {"\\t": "\t", "\\n": "\n", "\\\\": "\\"}.get(text, text)
    if len(unescaped) != 1:
        raise SqlCompilationError(f"{name} takes one character in lakeclone, not '{text}'.")
    return unescaped
