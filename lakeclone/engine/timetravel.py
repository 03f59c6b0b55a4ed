"""Time travel: turning ``AT|BEFORE(...)`` and ``VERSION|TIMESTAMP AS OF`` into a table version."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.simplify import simplify

from lakeclone.delta.log import Commit
from lakeclone.errors import SqlCompilationError, StatementNotFoundError, TimeTravelError

VERSION, TIMESTAMP, OFFSET, STATEMENT = "VERSION", "TIMESTAMP", "OFFSET", "STATEMENT"


@dataclass(frozen=True)
class Point:
    """A requested point in a table's history.

    Attributes:
        kind: VERSION, TIMESTAMP, OFFSET or STATEMENT.
        value: the expression given for it.
        before: True for ``BEFORE(...)``: the state just before the point.
    """

    kind: str
    value: exp.Expression
    before: bool = False


def point_of(node: exp.Expression) -> Point | None:
    """The time-travel point written after a table reference, if any."""
    when = node.args.get("when")
    if isinstance(when, exp.HistoricalData):
        return Point(str(when.args["kind"]).upper(), when.expression, when.name.upper() == "BEFORE")
    version = node.args.get("version")
    if isinstance(version, exp.Version):
        return Point(version.name.upper(), version.expression)
    return None


def not_available(name: str) -> TimeTravelError:
    return TimeTravelError(
        f"Time travel data is not available for table {name}. The requested time is either "
        "beyond the allowed time travel period or before the object creation time."
    )


def version_at(
    history: Sequence[Commit],
    moment: dt.datetime,
    *,
    before: bool,
    name: str,
    horizon: dt.datetime,
) -> int:
    """The version current at ``moment`` (just before it, with ``before``)."""
    if moment < horizon:
        raise not_available(name)
    chosen = None
    for commit in history:
        if commit.timestamp < moment or (not before and commit.timestamp == moment):
            chosen = commit.version
    if chosen is None:
        raise not_available(name)
    return chosen


def check_version(
    history: Sequence[Commit], version: int, *, name: str, horizon: dt.datetime
) -> int:
    """``version`` itself, when the table can still serve it."""
    versions = [c.version for c in history]
    if version < versions[0] <= version + 1:
        # BEFORE(VERSION => first): the moment before the table existed.
        raise not_available(name)
    if version not in versions:
        raise TimeTravelError(
            f"Cannot time travel Delta table to version {version}. "
            f"Available versions: [{versions[0]}, {versions[-1]}]."
        )
    later = [c for c in history if c.version == version + 1]
    # A version stays readable while it was current at some moment inside retention.
    if later and later[0].timestamp < horizon:
        raise not_available(name)
    return version


def literal_int(value: exp.Expression, what: str) -> int:
    """An integer constant, possibly negative or computed (``OFFSET => -60*5``)."""
    folded = simplify(value.copy())
    negative = isinstance(folded, exp.Neg)
    inner = folded.this if negative else folded
    if not (isinstance(inner, exp.Literal) and not inner.is_string):
        raise SqlCompilationError(f"{what} must be an integer constant, got {value.sql()}")
    number = Decimal(inner.this)
    if number != number.to_integral_value():
        raise SqlCompilationError(f"{what} must be an integer constant, got {value.sql()}")
    return -int(number) if negative else int(number)


def statement_moment(query: tuple[dt.datetime, dt.datetime | None] | None, query_id: str, *, before: bool) -> dt.datetime:
    """The moment a statement point stands for: its start (BEFORE), or its end (AT)."""
    if query is None:
        raise StatementNotFoundError(query_id)
    started, finished = query
    return started if before or finished is None else finished
