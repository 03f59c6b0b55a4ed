"""Parsing of ``%lsql`` / ``%%lsql`` invocations, kept apart from running them.

A command is the magic's options plus the SQL text with notebook variables
substituted in. Substitution is by value, never by pasting Python text:

* ``:name`` becomes the Python variable ``name`` as a quoted SQL literal.
* ``{{name}}`` becomes the Python variable ``name``, which must be a string
  holding a (possibly dotted) SQL identifier.

Neither is touched inside string literals, quoted identifiers or comments, and
``:`` is left alone in ``::`` casts and in semi-structured paths such as
``v:field`` or ``"col":field`` (anything but a space or operator before it).
The text is read by the lsql dialect's own tokenizer, so what the magic takes
for a string, a comment or the end of a statement, the dialect does too.
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
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from lakeclone.dialect import Lsql
from lakeclone.errors import LakecloneError

__all__ = ["LsqlCommand", "interpolate", "sql_literal"]

_IDENTIFIER = re.compile(r"[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*")

# The name of a :param or {{param}}: a plain word as it is written.
_NAME = re.compile(r"[A-Za-z_]\w*")

# A character right before ':' that makes it a path (v:field, "col":f, arr[0]:f, f(v):g, {'k':v}), not a parameter.
_PATH_BEFORE_COLON = frozenset("$])\"':")

# Leading "-o NAME" / "--out=NAME" / "--each" tokens of a line magic; the SQL
# starts after them. Every option but the flag --each takes a value, so the
# first token not starting with a letter option ends the options (SQL comments
# need "-- " with a space).
_LEADING_OPTION = re.compile(r"\s*(?:--each(?=\s|$)|--?[A-Za-z][\w-]*(?:=|\s+)\S+)")


@dataclass(frozen=True)
class LsqlCommand:
    """One ``%lsql`` line or ``%%lsql`` cell, parsed.

    Attributes:
        sql: the statements to run, variables substituted.
        out: the notebook variable to store the result in (``-o``), if any.
        lake: the notebook variable holding the Lake to use (``--lake``), if any.
        statements: how many ``;``-separated statements ``sql`` holds (empty ones
            left out, as the dialect leaves them out).
        each: whether the cell shows each statement's result (``--each``), not only the last one's.

    Example:
        >>> from lakeclone.magics.magic import LsqlMagics
        >>> who = "O'Brien"
        >>> command = LsqlCommand.parse(
        ...     "-o people", "SELECT * FROM people WHERE name = :who",
        ...     magic=LsqlMagics.lsql, namespace={"who": who})
        >>> command.out, command.sql, command.statements
        ('people', "SELECT * FROM people WHERE name = 'O''Brien'", 1)
    """

    sql: str
    out: str | None
    lake: str | None
    statements: int = 1
    each: bool = False

    def statement_texts(self) -> list[str]:
        """The text of each statement ``sql`` holds, as the dialect splits them (comments between them left out).

        Example:
            >>> LsqlCommand("SELECT ';' AS s; -- next\\nSELECT 2;", None, None, 2).statement_texts()
            ["SELECT ';' AS s", 'SELECT 2']
        """
        tokens = _tokens(self.sql)
        if tokens is None:
            return [self.sql]
        texts: list[str] = []
        first: Token | None = None
        last: Token | None = None
        for token in [*tokens, None]:
            if token is None or token.token_type is TokenType.SEMICOLON:
                if first is not None and last is not None:
                    texts.append(self.sql[first.start : last.end + 1])
                first = None
            else:
                first, last = first or token, token
        return texts

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
        tokens = _tokens(sql)
        return cls(
            sql=_substituted(sql, tokens, namespace),
            out=args.out,
            lake=args.lake,
            statements=_statement_count(tokens),
            each=args.each,
        )


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
    return _substituted(sql, _tokens(sql), namespace)


def _tokens(sql: str) -> list[Token] | None:
    """The dialect's tokens of ``sql`` (comments are no tokens); None for text it cannot read.

    Text the tokenizer refuses (an unterminated string) is left as it is: the
    statement then fails with the dialect's own syntax error.
    """
    try:
        return Lsql().tokenize(sql)
    except TokenError:
        return None


def _statement_count(tokens: list[Token] | None) -> int:
    """How many non-empty statements the ``;`` tokens separate."""
    if tokens is None:
        return 1
    count, empty = 0, True
    for token in tokens:
        if token.token_type is TokenType.SEMICOLON:
            count += not empty
            empty = True
        else:
            empty = False
    return count + (not empty)


def _substituted(sql: str, tokens: list[Token] | None, namespace: Mapping[str, Any]) -> str:
    """``sql`` with each ``:name`` and ``{{name}}`` among ``tokens`` replaced, from the last to the first."""
    if tokens is None:
        return sql
    replacements: list[tuple[int, int, str]] = []  # (start, end exclusive, text)
    position = 0
    while position < len(tokens):
        found = _parameter(sql, tokens, position, namespace) or _identifier(sql, tokens, position, namespace)
        if found is None:
            position += 1
            continue
        replacement, used = found
        replacements.append(replacement)
        position += used
    for start, end, text in reversed(replacements):
        sql = sql[:start] + text + sql[end:]
    return sql


def _written(sql: str, token: Token) -> str:
    return sql[token.start : token.end + 1]


def _adjacent(first: Token, second: Token) -> bool:
    return second.start == first.end + 1


def _parameter(
    sql: str, tokens: list[Token], position: int, namespace: Mapping[str, Any]
) -> tuple[tuple[int, int, str], int] | None:
    """``:name`` at ``position`` (a colon, a plain word right after it, no path before it): the variable as a literal."""
    colon = tokens[position]
    if colon.token_type is not TokenType.COLON or position + 1 == len(tokens):
        return None
    word = tokens[position + 1]
    name = _written(sql, word)
    if not _adjacent(colon, word) or not _NAME.fullmatch(name):
        return None
    before = sql[colon.start - 1] if colon.start else " "
    if before.isalnum() or before == "_" or before in _PATH_BEFORE_COLON:
        return None
    return (colon.start, word.end + 1, sql_literal(_lookup(namespace, name, f":{name}"), name=name)), 2


def _identifier(
    sql: str, tokens: list[Token], position: int, namespace: Mapping[str, Any]
) -> tuple[tuple[int, int, str], int] | None:
    """``{{ name }}`` at ``position``: the variable ``name``, which must hold a (dotted) SQL identifier."""
    window = tokens[position : position + 5]
    braces = [token.token_type for token in window[:2] + window[3:]]
    if braces != [TokenType.L_BRACE, TokenType.L_BRACE, TokenType.R_BRACE, TokenType.R_BRACE]:
        return None
    if not (_adjacent(window[0], window[1]) and _adjacent(window[3], window[4])):
        return None
    name = _written(sql, window[2])
    if not _NAME.fullmatch(name):
        return None
    value = _lookup(namespace, name, f"{{{{{name}}}}}")
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        raise LakecloneError(
            f"Cannot substitute {{{{{name}}}}}: {value!r} is not a SQL identifier "
            "(letters, digits, _ and $, optionally dotted as db.schema.table)."
        )
    return (window[0].start, window[4].end + 1, value), 5


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
