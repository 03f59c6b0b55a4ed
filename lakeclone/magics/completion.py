"""Tab completion in ``%%lsql`` cells (and after ``%lsql``): keywords, and the names the cell's Lake sees.

IPython asks its matchers for completions in a notebook (through the
kernel) and in a terminal alike; this one answers in lsql cells only, and
then alone, since Python's completions mean nothing there. After a
qualifier (``shop.sales.``) it offers what that qualifier holds; elsewhere
keywords, the databases, the current database's schemas, the current
schema's tables, views and streams, and the columns of the relations the
cell names (``o.`` for ``FROM orders o``). Names come from
:meth:`lakeclone.Lake.names`, as the Lake's role sees them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from IPython.core.completer import CompletionContext, SimpleCompletion, SimpleMatcherResult, context_matcher

from lakeclone.errors import LakecloneError

if TYPE_CHECKING:
    from lakeclone.lake import Lake

_KEYWORD_TEXT = """
    SELECT FROM WHERE GROUP BY ORDER HAVING QUALIFY LIMIT JOIN LEFT RIGHT FULL INNER OUTER CROSS ON USING AS
    AND OR NOT IN IS NULL LIKE ILIKE BETWEEN CASE WHEN THEN ELSE END DISTINCT UNION ALL EXCEPT INTERSECT WITH
    INSERT INTO VALUES OVERWRITE UPDATE SET DELETE MERGE MATCHED CREATE REPLACE TABLE VIEW STREAM SCHEMA
    DATABASE SEQUENCE STAGE CLONE DEEP SHALLOW DROP UNDROP ALTER RENAME TO SHOW DESCRIBE HISTORY DETAIL
    COLUMNS USE ROLE GRANT REVOKE BEGIN COMMIT ROLLBACK TRANSACTION AT BEFORE CHANGES INFORMATION DEFAULT
    APPEND_ONLY TIMESTAMP OFFSET STATEMENT VERSION VACUUM RETAIN HOURS DRY RUN OPTIMIZE RESTORE COPY FILE
    FORMAT PATTERN FILES ON_ERROR EXPLAIN CHANGE_TRACKING COMMENT CLUSTER TRUE FALSE
    METADATA$ACTION METADATA$ISUPDATE METADATA$ROW_ID
"""
KEYWORDS = tuple(sorted(_KEYWORD_TEXT.split()))
"""The lsql keywords completion offers."""

LSQL_MATCHER = "lakeclone.lsql"

_PART = r'(?:"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)'
# What is typed before the cursor: a qualifier of dotted parts, then the part being completed (unquoted).
_TYPED = re.compile(rf"(?P<qualifier>(?:{_PART}\.)*)(?P<partial>[A-Za-z0-9_$]*)$")
_QUALIFIED = rf"{_PART}(?:\.{_PART})*"
# Relations a cell names, and their aliases: FROM orders o, JOIN shop.sales.items AS i, UPDATE t, INTO t.
_NAMED = re.compile(
    rf"\b(?:FROM|JOIN|UPDATE|INTO|TABLE)\s+(?P<name>{_QUALIFIED})(?:\s+(?:AS\s+)?(?P<alias>(?!{'|'.join(KEYWORDS)}\b)[A-Za-z_][A-Za-z0-9_$]*))?",
    re.IGNORECASE,
)
_LAKE_OPTION = re.compile(r"--lake[ =](?P<name>\S+)")
_PLAIN = re.compile(r"[A-Z_][A-Z0-9_$]*")


def lsql_matcher(lake_of: Callable[[str | None], Lake | None]) -> Callable[[CompletionContext], SimpleMatcherResult]:
    """IPython's matcher for lsql; ``lake_of`` gives a cell's Lake, from its ``--lake`` option's variable (or None)."""

    @context_matcher(identifier=LSQL_MATCHER)
    def match(context: CompletionContext) -> SimpleMatcherResult:
        found = _lsql_text(context)
        if found is None:
            return _result([], "", suppress=False)
        option, cell, sql = found
        typed = _TYPED.search(sql)
        assert typed is not None  # it matches the empty string at the end
        partial = typed["partial"]
        qualifier = tuple(_normalized(part) for part in _parts(typed["qualifier"]))
        names = _names(lake_of(option), qualifier, cell)
        if not qualifier:
            names = [*names, *KEYWORDS]
        lower = partial.islower()
        completions = []
        for name in dict.fromkeys(names):
            if name.upper().startswith(partial.upper()):
                text = name.lower() if lower and _PLAIN.fullmatch(name) else _spelled(name)
                completions.append(SimpleCompletion(text, type="lsql"))
        return _result(completions, partial, suppress=True)

    return cast("Callable[[CompletionContext], SimpleMatcherResult]", match)


def _result(completions: list[SimpleCompletion], fragment: str, *, suppress: bool) -> SimpleMatcherResult:
    """A matcher's answer: names before keywords, as listed; alone in an lsql cell, where Python's mean nothing."""
    return {
        "completions": completions,
        "matched_fragment": fragment,
        "suppress": suppress,
        "do_not_suppress": set(),
        "ordered": True,
    }


def _lsql_text(context: CompletionContext) -> tuple[str | None, str, str] | None:
    """The ``--lake`` option, the lsql text, and its part before the cursor, if the cursor is in lsql; else None."""
    lines = context.full_text.split("\n")
    if lines[0].lstrip().startswith("%%lsql"):
        if context.cursor_line == 0:
            return None  # the magic's options
        option = _LAKE_OPTION.search(lines[0])
        before = "\n".join([*lines[1 : context.cursor_line], context.text_until_cursor])
        return (option["name"] if option else None), "\n".join(lines[1:]), before
    line = context.line_with_cursor.lstrip()
    if line.startswith("%lsql ") and context.text_until_cursor.lstrip().startswith("%lsql "):
        option = _LAKE_OPTION.search(line)
        return (option["name"] if option else None), line[len("%lsql ") :], context.text_until_cursor.lstrip()[len("%lsql ") :]
    return None


def _names(lake: Lake | None, qualifier: tuple[str, ...], sql: str) -> list[str]:
    """The names that may follow ``qualifier`` in a cell of ``sql``; an alias's relation's columns after ``alias.``."""
    if lake is None:
        return []
    aliases = {m["alias"].upper(): m["name"] for m in _NAMED.finditer(sql) if m["alias"]}
    try:
        if len(qualifier) == 1 and qualifier[0] in aliases:
            qualifier = tuple(_normalized(part) for part in _parts(aliases[qualifier[0]] + "."))
        names = [n.name for n in lake.names(*qualifier)]
        if not qualifier:
            for named in dict.fromkeys(m["name"] for m in _NAMED.finditer(sql)):
                parts = tuple(_normalized(part) for part in _parts(named + "."))
                names += [n.name for n in lake.names(*parts) if n.kind == "COLUMN"]
    except LakecloneError:
        return []  # a completion is a hint: a name that does not resolve offers nothing
    return names


def _parts(qualifier: str) -> list[str]:
    """``a."b c".`` as its parts ``a``, ``"b c"``."""
    return re.findall(_PART, qualifier)


def _normalized(part: str) -> str:
    """A name part as SQL reads it: a quoted part as written, an unquoted one in upper case."""
    if part.startswith('"'):
        return part[1:-1].replace('""', '"')
    return part.upper()


def _spelled(name: str) -> str:
    """A name as a statement writes it: quoted unless SQL reads it back the same unquoted."""
    return name if _PLAIN.fullmatch(name) else '"' + name.replace('"', '""') + '"'
