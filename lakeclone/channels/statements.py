"""``SHOW CHANNELS [LIKE …] [IN TABLE t | SCHEMA s | DATABASE d]``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.channels import log as channel_log
from lakeclone.channels.client import expire
from lakeclone.engine import results
from lakeclone.engine.show import matches, scope_schemas

if TYPE_CHECKING:
    import re

    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import ChannelEntry, TableEntry
    from lakeclone.engine.executor import Execution

COLUMNS = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, table_name STRING, "
    "client_name STRING, offset_token STRING, last_committed_on TIMESTAMP, rows_inserted BIGINT, "
    "rows_in_error BIGINT, status STRING, last_error STRING, pending_since TIMESTAMP"
)
"""``pending_since``: when the oldest row the channel's client holds uncommitted was inserted, as the client
recorded it at its last commit or failed flush (NULL: none). A channel's lag is its age."""


def _tables(execution: Execution) -> list[TableEntry]:
    expression = execution.expression
    scope = expression.args.get("scope")
    if isinstance(scope, exp.Table) and ObjectKind.named(expression.args.get("scope_kind")) is ObjectKind.TABLE:
        return [execution.tables.entry(scope)]
    return [table for schema in scope_schemas(execution) for table in execution.catalog.objects.tables(schema)]


def _row(execution: Execution, table: TableEntry, channel: ChannelEntry) -> tuple[Any, ...]:
    with execution.work.records():
        channel = expire(execution.catalog, channel, execution.now())
    # The token as the table's log says it: the catalog's copy may trail a process that died after its commit.
    log = execution.delta.table(table.location)
    version = channel_log.txn_version(log, channel.app_id)
    token = channel_log.token_at(log, channel, version)
    if version != channel.txn_version:
        with execution.work.records():
            execution.catalog.channels.cache_channel_token(channel.id, channel.app_id, version if version >= 0 else None, token)
    return (
        channel.created_at,
        channel.name,
        table.database,
        table.schema,
        table.name,
        channel.client,
        token,
        channel.last_committed_at,
        channel.rows_inserted,
        channel.rows_in_error,
        "ERROR" if channel.last_error else "ACTIVE",
        channel.last_error,
        channel.pending_since,
    )


def show_channels(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """Each channel of the tables in scope: its token (from the table's log), rows and last commit."""
    data = [
        _row(execution, table, channel)
        for table in _tables(execution)
        for channel in execution.catalog.channels.channels_of(table.id)
        if matches(like, channel.name)
    ]
    return results.rows(execution.spark, COLUMNS, data)
