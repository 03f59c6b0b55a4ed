"""``TABLE(INFORMATION_SCHEMA.QUERY_HISTORY())`` and its ``_BY_USER`` and ``_BY_SESSION`` forms, as Snowflake's.

The statements the warehouse's sessions ran, newest first: each one's text,
who ran it as what role, where, its kind, how it ended and how long it took.
A user sees their own statements; a role that is or inherits ACCOUNTADMIN
sees everyone's, as one with MONITOR on Snowflake's warehouses does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.entries import GranteeKind
from lakeclone.engine import registry, results
from lakeclone.engine.arguments import named_arguments
from lakeclone.engine.privileges import ADMINISTRATION, Need, Principal
from lakeclone.errors import SqlCompilationError
from lakeclone.timetravel import literal_int

if TYPE_CHECKING:
    from collections.abc import Iterator

    from lakeclone.catalog.entries import QueryEntry
    from lakeclone.engine.tables import Tables

QUERY_HISTORY_SCHEMA = (
    "QUERY_ID STRING, QUERY_TEXT STRING, DATABASE_NAME STRING, SCHEMA_NAME STRING, QUERY_TYPE STRING, "
    "SESSION_ID STRING, USER_NAME STRING, ROLE_NAME STRING, QUERY_TAG STRING, EXECUTION_STATUS STRING, "
    "ERROR_CODE STRING, ERROR_MESSAGE STRING, START_TIME TIMESTAMP, END_TIME TIMESTAMP, TOTAL_ELAPSED_TIME BIGINT"
)

# Snowflake's defaults and bounds: the last 7 days, 100 rows, at most 10,000.
DEFAULT_RANGE = dt.timedelta(days=7)
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000

_RANGE = ("END_TIME_RANGE_START", "END_TIME_RANGE_END")
_LIMIT = "RESULT_LIMIT"


def query_history(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """``QUERY_HISTORY([END_TIME_RANGE_START => …] [, END_TIME_RANGE_END => …] [, RESULT_LIMIT => n])``."""
    return _history(tables, call, ())


def query_history_by_user(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """``QUERY_HISTORY_BY_USER([USER_NAME => 'u', …])``: one user's statements (the signed-in user's by default)."""
    return _history(tables, call, ("USER_NAME",))


def query_history_by_session(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """``QUERY_HISTORY_BY_SESSION([SESSION_ID => 's', …])``: one session's statements (this session's by default)."""
    return _history(tables, call, ("SESSION_ID",))


def _history(tables: Tables, call: exp.Anonymous, selectors: tuple[str, ...]) -> exp.Expression:
    arguments = _arguments(call, (*selectors, *_RANGE, _LIMIT))
    until = tables.evaluate_timestamp(arguments[_RANGE[1]]) if _RANGE[1] in arguments else tables.now
    since = tables.evaluate_timestamp(arguments[_RANGE[0]]) if _RANGE[0] in arguments else until - DEFAULT_RANGE
    limit = literal_int(arguments[_LIMIT], _LIMIT) if _LIMIT in arguments else DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise SqlCompilationError(f"invalid value [{limit}] for parameter '{_LIMIT}': it must be between 1 and {MAX_LIMIT}.")
    session = tables.session
    if "USER_NAME" in selectors:
        # Another user's statements need what query_history_by_user_needs says.
        user: str | None = _named_user(arguments, call) or session.user
    else:
        authorizer = registry.SLOTS.authorizer
        sees_all = authorizer is None or authorizer.administers(tables.catalog, session.role)
        user = None if sees_all else session.user
    session_id = _text(arguments, "SESSION_ID", call) if "SESSION_ID" in arguments else None
    if "SESSION_ID" in selectors and session_id is None:
        session_id = session.session_id
    entries = tables.catalog.queries.query_history(since, until, limit, user=user, session_id=session_id)
    leases = tables.catalog.sessions
    alive = {sid: sid == session.session_id or leases.is_alive(sid, tables.now) for sid in {e.origin.session_id for e in entries}}
    data = [_row(entry, tables.now, alive[entry.origin.session_id]) for entry in entries]
    return tables.bind_frame(results.rows(tables.spark, QUERY_HISTORY_SCHEMA, data), None)


def query_history_by_user_needs(tables: Tables, call: exp.Anonymous) -> Iterator[Need | None]:
    """Another user's statements are the administrator's to read (ACCOUNTADMIN's, as MONITOR is on Snowflake)."""
    user = _named_user(_arguments(call, ("USER_NAME", *_RANGE, _LIMIT)), call)
    if user is not None and user != tables.session.user:
        yield dataclasses.replace(ADMINISTRATION, denied_on=Principal(GranteeKind.USER, user))


def _named_user(arguments: dict[str, exp.Expression], call: exp.Anonymous) -> str | None:
    return _text(arguments, "USER_NAME", call).upper() if "USER_NAME" in arguments else None


def _row(entry: QueryEntry, now: dt.datetime, session_alive: bool) -> tuple[Any, ...]:
    origin = entry.origin
    if entry.error_message is not None:
        status = "FAILED_WITH_ERROR"
    elif entry.finished_at is not None:
        status = "SUCCESS"
    else:
        # A statement whose session died under it never finishes.
        status = "RUNNING" if session_alive else "FAILED_WITH_INCIDENT"
    end = entry.finished_at or (now if status == "RUNNING" else None)
    elapsed = None if end is None else max(0, round((end - entry.started_at).total_seconds() * 1000))
    return (
        entry.id,
        entry.text,
        origin.database,
        origin.schema,
        origin.query_type,
        origin.session_id,
        origin.user,
        origin.role,
        origin.query_tag,
        status,
        entry.error_code,
        entry.error_message,
        entry.started_at,
        entry.finished_at,
        elapsed,
    )


def _arguments(call: exp.Anonymous, names: tuple[str, ...]) -> dict[str, exp.Expression]:
    """A history function's arguments by name, each a constant."""
    found = named_arguments(call, names)
    for key, value in found.items():
        if value.find(exp.Column, exp.Table, exp.Query, exp.TableFromRows) is not None:
            raise SqlCompilationError(f"{key} must be a constant: {value.sql(dialect='snowflake')}")
    return found


def _text(arguments: dict[str, exp.Expression], name: str, call: exp.Anonymous) -> str:
    value = arguments[name]
    if not (isinstance(value, exp.Literal) and value.is_string):
        raise SqlCompilationError(f"{call.name.upper()}'s {name} must be a string: {value.sql(dialect='snowflake')}")
    return value.name


TABLE_FUNCTIONS = {
    "QUERY_HISTORY": registry.TableFunction(query_history),
    "QUERY_HISTORY_BY_USER": registry.TableFunction(query_history_by_user, needs=query_history_by_user_needs),
    "QUERY_HISTORY_BY_SESSION": registry.TableFunction(query_history_by_session),
}
