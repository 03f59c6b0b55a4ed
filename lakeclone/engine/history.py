"""What the query history records of a statement beyond its text: its kind, and how it failed."""

from __future__ import annotations

from sqlglot import exp

from lakeclone.engine import registry
from lakeclone.errors import LakecloneError

UNKNOWN = "UNKNOWN"


def query_type(expression: exp.Expression | None) -> str:
    """Snowflake's QUERY_TYPE for a statement, as its kind is registered; ``UNKNOWN`` for unparsed text and unstated work."""
    if expression is None:
        return UNKNOWN
    statement = registry.STATEMENTS.get(type(expression))
    if statement is None:
        return UNKNOWN
    kind = statement.query_type
    return kind if isinstance(kind, str) else kind(expression)


def failure(error: BaseException) -> tuple[str | None, str]:
    """What the history records of a statement's failure: (Snowflake's error code, where it has one; the message)."""
    if isinstance(error, LakecloneError):
        return error.code, str(error)
    if isinstance(error, KeyboardInterrupt):
        return "000604", "SQL execution canceled"
    return None, f"{type(error).__name__}: {error}"
