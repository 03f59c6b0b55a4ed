"""Session state: what a Snowflake worksheet keeps between statements."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeclone.catalog.access import ACCOUNTADMIN, ADMINISTRATOR

if TYPE_CHECKING:
    from lakeclone.catalog.entries import StreamEntry
    from lakeclone.engine.tables import StreamRead


@dataclass
class OpenTransaction:
    """The session's open transaction (BEGIN … COMMIT or ROLLBACK).

    Attributes:
        id: its id, which its catalog records and locks carry.
        name: the name BEGIN NAME gave it, if any.
        started_at: when BEGIN ran, by the Lake's clock.
        stream_points: per table, the version committed when the transaction began:
            where every query of a stream inside it stops (repeatable read).
        streams: each stream as the transaction first read it: later reads start
            from the same offsets, whoever moves them meanwhile.
        consumed: the streams a DML statement inside it consumed, moved at COMMIT.
    """

    id: str
    name: str | None
    started_at: dt.datetime
    stream_points: dict[str, int] = field(default_factory=dict)
    streams: dict[str, StreamEntry] = field(default_factory=dict)
    consumed: dict[str, StreamRead] = field(default_factory=dict)


@dataclass
class SessionContext:
    """The current database and schema that unqualified names resolve in, the open transaction, who is signed in.

    Attributes:
        user: the signed-in user; the administrator unless ``connect(user=…)`` named another.
        role: the current role (``USE ROLE``), whose privileges every statement is checked against.
        parameters: the session parameters ``ALTER SESSION SET`` set, by upper-cased key
            (see :mod:`lakeclone.engine.session_parameters`).
        session_id: the session's id on its warehouse (its lock's), which its statements are recorded with.
    """

    database: str | None
    schema: str | None
    transaction: OpenTransaction | None = None
    user: str = ADMINISTRATOR
    role: str = ACCOUNTADMIN
    parameters: dict[str, str] = field(default_factory=dict)
    session_id: str = ""
