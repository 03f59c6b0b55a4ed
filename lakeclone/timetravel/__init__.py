"""Time travel: turning ``AT|BEFORE(...)`` and ``VERSION|TIMESTAMP AS OF`` into a version of a table.

A point names a version directly, a moment by the Lake's clock (TIMESTAMP,
OFFSET) or a statement. A statement is found through its own commits (the
query id lakeclone writes into each commit) and, for a table it did not
write, through the warehouse's tick order: every statement start and every
commit takes the next tick, so "before statement S" is exact however fine or
coarse the clock is.

Retention is one rule, :func:`readable`: a version can be read while it was
current at some moment inside the table's retention window.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import Enum

from sqlglot import exp
from sqlglot.optimizer.simplify import simplify

from lakeclone.delta.commits import Commit
from lakeclone.errors import SqlCompilationError, StatementNotFoundError, TimeTravelError

# Integers in a statement (versions, offsets, hours) are bounded before they
# are converted: int() of a literal like 1e999999 takes time quadratic in its exponent.
MAX_DIGITS = 18


class PointKind(str, Enum):
    VERSION = "VERSION"
    TIMESTAMP = "TIMESTAMP"
    OFFSET = "OFFSET"
    STATEMENT = "STATEMENT"


@dataclass(frozen=True)
class Point:
    """A requested point in a table's history.

    Attributes:
        kind: what ``value`` names.
        value: the expression given for it.
        before: ``BEFORE(...)``: the state just before the point.
    """

    kind: PointKind
    value: exp.Expression
    before: bool = False


@dataclass(frozen=True)
class StatementMark:
    """Where a statement stands in the warehouse's order: the ticks it started and finished at, and its clock times."""

    query_id: str
    started_tick: int
    finished_tick: int | None
    started_at: dt.datetime
    finished_at: dt.datetime | None


def point_of(node: exp.Expression) -> Point | None:
    """The time-travel point written after a table reference, if any."""
    when = node.args.get("when")
    if isinstance(when, exp.HistoricalData):
        kind = str(when.args["kind"]).upper()
        if kind not in PointKind.__members__:
            raise SqlCompilationError(f"invalid time travel point {kind}")
        return Point(PointKind(kind), when.expression, when.name.upper() == "BEFORE")
    version = node.args.get("version")
    if isinstance(version, exp.Version):
        kind = version.name.upper()
        if kind not in PointKind.__members__:
            raise SqlCompilationError(f"invalid time travel point {kind}")
        return Point(PointKind(kind), version.expression)
    return None


def not_available(name: str) -> TimeTravelError:
    return TimeTravelError(
        f"Time travel data is not available for table {name}. The requested time is either "
        "beyond the allowed time travel period or before the object creation time."
    )


def readable(history: Sequence[Commit], version: int, horizon: dt.datetime) -> bool:
    """Whether ``version`` was current at some moment at or after ``horizon`` (the retention rule)."""
    later = [c for c in history if c.version == version + 1]
    return not later or later[0].timestamp >= horizon


def version_at(history: Sequence[Commit], moment: dt.datetime, *, before: bool, name: str, horizon: dt.datetime) -> int:
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


def check_version(history: Sequence[Commit], version: int, *, name: str, horizon: dt.datetime) -> int:
    """``version`` itself, when the table can still serve it."""
    versions = [c.version for c in history]
    if version < versions[0] <= version + 1:
        # BEFORE(VERSION => first): the moment before the table existed.
        raise not_available(name)
    if version not in versions:
        raise TimeTravelError(
            f"Cannot time travel Delta table to version {version}. Available versions: [{versions[0]}, {versions[-1]}]."
        )
    if not readable(history, version, horizon):
        raise not_available(name)
    return version


def version_at_statement(history: Sequence[Commit], mark: StatementMark, *, before: bool, name: str, horizon: dt.datetime) -> int:
    """The version a statement point names.

    On a table the statement wrote, BEFORE is the version before its first
    commit there and AT its last. On any other table, it is the newest
    version committed before the statement started (BEFORE) or finished (AT),
    in the warehouse's tick order; a commit another engine made, which has no
    tick, is placed by its time instead.
    """
    own = [c.version for c in history if c.query_id == mark.query_id]
    if own:
        version = own[0] - 1 if before else own[-1]
        if version < history[0].version:
            raise not_available(name)
        return check_version(history, version, name=name, horizon=horizon)
    tick = mark.started_tick if before or mark.finished_tick is None else mark.finished_tick
    moment = mark.started_at if before or mark.finished_at is None else mark.finished_at
    earlier = [c.version for c in history if (c.lakeclone.tick < tick if c.lakeclone is not None else c.timestamp < moment)]
    if not earlier:
        raise not_available(name)
    return check_version(history, max(earlier), name=name, horizon=horizon)


def literal_int(value: exp.Expression, what: str) -> int:
    """An integer constant, possibly negative or computed (``OFFSET => -60*5``), of at most 18 digits."""
    folded = simplify(value.copy())
    negative = isinstance(folded, exp.Neg)
    inner = folded.this if negative else folded
    if not (isinstance(inner, exp.Literal) and not inner.is_string):
        raise SqlCompilationError(f"{what} must be an integer constant, got {value.sql()}")
    try:
        number = Decimal(inner.this)
    except InvalidOperation:
        raise SqlCompilationError(f"{what} must be an integer constant, got {value.sql()}") from None
    if not number.is_finite() or number.adjusted() >= MAX_DIGITS:
        raise SqlCompilationError(f"{what} is out of range: {value.sql()}")
    if number != number.to_integral_value():
        raise SqlCompilationError(f"{what} must be an integer constant, got {value.sql()}")
    return -int(number) if negative else int(number)


def statement_not_found(query_id: str) -> StatementNotFoundError:
    return StatementNotFoundError(query_id)
