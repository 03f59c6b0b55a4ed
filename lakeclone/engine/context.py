"""Session state: what a Snowflake worksheet keeps between statements."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SessionContext:
    """The current database and schema that unqualified names resolve in."""

    database: str | None
    schema: str | None
