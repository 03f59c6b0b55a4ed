"""What the query history records of a statement beyond its text: its kind, and how it failed."""

from __future__ import annotations

import re

from sqlglot import exp

from lakeclone.errors import LakecloneError

# Snowflake's QUERY_TYPE of sqlglot's statements (CREATE and ALTER depend on what they make or change).
_TYPES: dict[type[exp.Expression], str] = {
    exp.Select: "SELECT",
    exp.Union: "SELECT",
    exp.Except: "SELECT",
    exp.Intersect: "SELECT",
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.Copy: "COPY",
    exp.Drop: "DROP",
    exp.Describe: "DESCRIBE",
    exp.Show: "SHOW",
    exp.Use: "USE",
    exp.Transaction: "BEGIN_TRANSACTION",
    exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK",
}

# lsql's own statements, by the first word of their class's name (ShowGrants, DescribeHistory, AlterTags, …).
_VERBS = {
    "Show": "SHOW",
    "List": "LIST_FILES",
    "Describe": "DESCRIBE",
    "Drop": "DROP",
    "Undrop": "UNDROP",
    "Alter": "ALTER",
    "Unset": "ALTER",
    "Session": "ALTER_SESSION",
    "Vacuum": "VACUUM",
    "Optimize": "OPTIMIZE",
    "Restore": "RESTORE",
}

UNKNOWN = "UNKNOWN"


def query_type(expression: exp.Expression | None) -> str:
    """Snowflake's QUERY_TYPE for a statement (``CREATE_TABLE_AS_SELECT``, ``GRANT``, …); ``UNKNOWN`` for unparsed text."""
    if expression is None:
        return UNKNOWN
    if isinstance(expression, exp.Create):
        kind = expression.kind or ""
        if kind == "TABLE":
            return "CREATE_TABLE_AS_SELECT" if isinstance(expression.expression, exp.Query) else "CREATE_TABLE"
        return "CREATE_VIEW" if kind == "VIEW" else "CREATE"
    if isinstance(expression, exp.Alter):
        return "ALTER_TABLE" if (expression.args.get("kind") or "").upper() == "TABLE" else "ALTER"
    for statement, name in _TYPES.items():
        if isinstance(expression, statement):
            return name
    words = re.findall(r"[A-Z][a-z]*", type(expression).__name__)
    if words[:1] == ["Grant"]:
        return "REVOKE" if expression.args.get("revoke") else "GRANT"
    if words[:1] == ["Create"]:
        return f"CREATE_{words[1].upper()}" if words[1:] == ["Stream"] else "CREATE"
    if words[:1] == ["Set"]:
        return "ALTER"
    return _VERBS.get(words[0], UNKNOWN) if words else UNKNOWN


def failure(error: BaseException) -> tuple[str | None, str]:
    """What the history records of a statement's failure: (Snowflake's error code, where it has one; the message)."""
    if isinstance(error, LakecloneError):
        return error.code, str(error)
    if isinstance(error, KeyboardInterrupt):
        return "000604", "SQL execution canceled"
    return None, f"{type(error).__name__}: {error}"
