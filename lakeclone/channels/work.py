"""The statements a streaming client runs: open a channel, flush it, compact its table, record its errors.

No SQL text states them: a client builds one as an expression and runs it
with :meth:`lakeclone.Lake.run_statement`, so each is bound, checked against
the client's role and run as one unit of work like any statement. Each names
the channel's table as ``this`` (what it needs INSERT on, as Snowpipe
Streaming needs of a channel's role) and carries the client's side of the
work (its rows, its channel) as ``work``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import registry
from lakeclone.engine.privileges import Need, Privilege, relation

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from lakeclone.catalog.entries import ChannelEntry, TableEntry
    from lakeclone.channels.convert import RowConverter
    from lakeclone.engine.tables import Tables


class ChannelStatement(exp.Expression):
    """A streaming client's statement on the table ``this``, with the client's side of it as ``work``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "work": True}


class OpenChannel(ChannelStatement):
    """Open (or take over) a channel: ``work`` is an :class:`Opening`."""


class FlushChannel(ChannelStatement):
    """Commit a channel's buffered rows and token: ``work`` is the client's flush of them."""


class CompactChannelTable(ChannelStatement):
    """Compact the small files a table's channels wrote: ``work`` is the table's entry."""


class RecordChannelErrors(ChannelStatement):
    """Record rows a channel rejected, or a background flush's failure: ``work`` is :class:`ChannelErrors`."""


@dataclass
class Opening:
    """What opening a channel asks for, and (once run) what it opened."""

    channel: str
    client: str
    table: TableEntry | None = None
    schema: StructType | None = None
    converter: RowConverter | None = None
    entry: ChannelEntry | None = None
    version: int = -1
    token: str | None = None


@dataclass(frozen=True)
class ChannelErrors:
    """Rows of a channel rejected (none for a flush's failure), and the last error's message.

    A failed flush's rows wait for the next: ``pending_since`` is when the oldest of them was inserted.
    """

    channel_id: str
    rows: int
    message: str
    pending_since: dt.datetime | None = None


def table_of(entry: TableEntry) -> exp.Table:
    """A reference to ``entry`` by its qualified name, as a channel statement's ``this``."""
    return exp.table_(
        exp.to_identifier(entry.name, quoted=True),
        db=exp.to_identifier(entry.schema, quoted=True),
        catalog=exp.to_identifier(entry.database, quoted=True),
    )


def insert_into_table(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """INSERT on the channel's table (OWNERSHIP serves too), with USAGE on its schema and database.

    A table dropped since the channel opened needs nothing: the statement finds it gone and invalidates the channel.
    """
    target = relation(tables, expression.this, (ObjectKind.TABLE,))
    yield Need(target, (Privilege.INSERT,)) if target else None


def register(kind: type[ChannelStatement], query_type: str) -> Callable[[registry.Handler], registry.Handler]:
    """Register a channel statement's handler, needing INSERT on its table."""
    return registry.statement(kind, bind=insert_into_table, query_type=query_type)
