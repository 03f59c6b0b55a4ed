"""Parsing of ``%lsql`` / ``%%lsql`` invocations, kept apart from running them.

A command is the magic's options plus the SQL text with notebook variables
substituted in. Substitution is by value, never by pasting Python text:

* ``:name`` becomes the Python variable ``name`` as a quoted SQL literal.
* ``{{name}}`` becomes the Python variable ``name``, which must be a string
  holding a (possibly dotted) SQL identifier.

Neither is touched inside string literals, quoted identifiers or comments, and
``:`` is left alone in ``::`` casts and in semi-structured paths such as
``v:field`` or ``"col":field`` (anything but a space or operator before it).
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from IPython.core.magic_arguments import parse_argstring

from lakeclone.errors import LakecloneError

__all__ = ["LsqlCommand", "interpolate", "sql_literal"]

_SQL = re.compile(
    r"""
      (?P<skip>
          '(?:[^'\\]|\\.|'')*'?        # string literal ('' and \ escapes; may run to the end)
        | "(?:[^"]|"")*"?              # quoted identifier
        | \$\$.*?(?:\$\$|\Z)           # dollar-quoted string
        | (?:--|//)[^\r\n]*            # line comments (Snowflake also takes //), ended by \r as the dialect ends them
        | /\*.*?(?:\*/|\Z)             # block comment
        | ::                           # cast
      )
    | (?<![\w$\])"':]):(?P<param>[A-Za-z_]\w*)
    | \{\{\s*(?P<ident>[A-Za-z_]\w*)\s*\}\}
    """,
    re.VERBOSE | re.DOTALL,
)

_IDENTIFIER = re.compile(r"[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*")

# Leading "-o NAME" / "--out=NAME" tokens of a line magic; the SQL starts after
# them. Every option takes a value, so the first token not starting with a
# letter option ends the options (SQL comments need "-- " with a space).
_LEADING_OPTION = re.compile(r"\s*--?[A-Za-z][\w-]*(?:=|\s+)\S+")


@dataclass(frozen=True)
class LsqlCommand:
    """One ``%lsql`` line or ``%%lsql`` cell, parsed.

    Attributes:
        sql: the statements to run, variables substituted.
        out: the notebook variable to store the result in (``-o``), if any.
        lake: the notebook variable holding the Lake to use (``--lake``), if any.

    Example:
        >>> from lakeclone.magics.magic import LsqlMagics
        >>> who = "O'Brien"
        >>> command = LsqlCommand.parse(
        ...     "-o people", "SELECT * FROM people WHERE name = :who",
        ...     magic=LsqlMagics.lsql, namespace={"who": who})
        >>> command.out, command.sql
        ('people', "SELECT * FROM people WHERE name = 'O''Brien'")
    """

    sql: str
    out: str | None
    lake: str | None

    @classmethod
    def parse(
        cls,
        line: str,
        cell: str | None,
        *,
        magic: Callable[..., Any],
        namespace: Mapping[str, Any],
    ) -> LsqlCommand:
        """Split options from SQL and substitute variables.

        Args:
            line: the text after ``%lsql`` / ``%%lsql``. For a line magic it is
                options followed by SQL; for a cell magic, options only.
            cell: the cell body of a cell magic, ``None`` for a line magic.
            magic: the magic function whose ``@magic_arguments`` define the options.
            namespace: where ``:name`` and ``{{name}}`` are looked up.

        Raises:
            UsageError: unknown or malformed options (IPython shows it briefly).
            LakecloneError: no SQL, an unknown variable, or a value with no SQL form.
        """
        if cell is None:
            options, sql = _split_options(line)
        else:
            options, sql = line, cell
        args = parse_argstring(magic, options)
        if not sql.strip():
            raise LakecloneError("%lsql: there is no SQL to run.")
        for name in (args.out, args.lake):
            if name is not None and not name.isidentifier():
                raise LakecloneError(f"%lsql: {name!r} is not a Python variable name.")
        return cls(sql=interpolate(sql, namespace), out=args.out, lake=args.lake)


def _split_options(line: str) -> tuple[str, str]:
    end = 0
    while match := _LEADING_OPTION.match(line, end):
        end = match.end()
    return line[:end], line[end:].lstrip()


def interpolate(sql: str, namespace: Mapping[str, Any]) -> str:
    """Substitute ``:name`` literals and ``{{name}}`` identifiers from ``namespace``.

    Example:
        >>> interpolate("SELECT :n, x::INT, 'a :n' FROM {{t}} -- :n", {"n": 3, "t": "db.s.t"})
        "SELECT 3, x::INT, 'a :n' FROM db.s.t -- :n"
    """

    def substitute(match: re.Match[str]) -> str:
        if match["skip"] is not None:
            return match["skip"]
        if match["param"] is not None:
            name = match["param"]
            return sql_literal(_lookup(namespace, name, f":{name}"), name=name)
        name = match["ident"]
        value = _lookup(namespace, name, f"{{{{{name}}}}}")
        if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
            raise LakecloneError(
                f"Cannot substitute {{{{{name}}}}}: {value!r} is not a SQL identifier "
                "(letters, digits, _ and $, optionally dotted as db.schema.table)."
            )
        return value

    return _SQL.sub(substitute, sql)


def _lookup(namespace: Mapping[str, Any], name: str, placeholder: str) -> Any:
    try:
        return namespace[name]
    except KeyError:
        raise LakecloneError(f"Cannot substitute {placeholder}: no Python variable {name!r} is defined.") from None


def sql_literal(value: Any, *, name: str = "value") -> str:
    """The SQL literal for a Python value.

    Args:
        value: a str, int, float, bool, None, datetime or date.
        name: the variable's name, for the error message.

    Returns:
        The literal. Aware datetimes are converted to UTC and keep their offset.

    Raises:
        LakecloneError: for any other type, and for NaN or infinite floats.

    Example:
        >>> sql_literal("it's")
        "'it''s'"
        >>> sql_literal(dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc))
        "TIMESTAMP '2024-01-01 12:00:00+00:00'"
    """
    # bool before numbers: True is an int too.
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        # Snowflake strings take backslash escapes, so a backslash is doubled too.
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise LakecloneError(f"Cannot substitute :{name}: {number} has no SQL literal.")
        return repr(number)
    # datetime before date: a datetime is a date too.
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    raise LakecloneError(
        f"Cannot substitute :{name}: a {type(value).__name__} is not a SQL literal; "
        "use a str, int, float, bool, None, datetime or date."
    )
