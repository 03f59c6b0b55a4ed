"""Change tracking: from which version of a table its changes can be read.

Turning tracking on (``ALTER TABLE t SET CHANGE_TRACKING = TRUE``, the
same on a view reading the table, or the first stream on either) turns on
Delta's change data feed (so Delta's own ``table_changes`` works too) and row
tracking, which a table has only from then on: Delta upgrades the table's
protocol, numbers the rows already there in its log (no data file is
rewritten), then sets the properties, each a commit. ``CREATE TABLE …
CHANGE_TRACKING = TRUE`` creates the table with both instead. The catalog
records the version tracking started at; changes after it can be read, and a
stream or CHANGES query reaching back before it cannot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone import views
from lakeclone.catalog.entries import ObjectKind
from lakeclone.delta import statements
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from lakeclone.catalog.entries import TableEntry, TrackingInterval
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution

CHANGE_TRACKING = "CHANGE_TRACKING"
CHANGE_DATA_FEED = "delta.enableChangeDataFeed"
ROW_TRACKING = "delta.enableRowTracking"


def current(catalog: Catalog, table_id: str) -> TrackingInterval | None:
    """The open tracking interval of a table: None when its changes are not being tracked now."""
    return next((i for i in catalog.streams.tracking(table_id) if i.until_version is None), None)


def start(execution: Execution, entry: TableEntry) -> int:
    """Track ``entry``'s changes from now on, if they are not tracked yet; the version tracking started at."""
    interval = current(execution.catalog, entry.id)
    if interval is not None:
        return interval.since_version
    log = execution.tables.log(entry)
    configuration = log.configuration()
    properties = {key: "true" for key in (CHANGE_DATA_FEED, ROW_TRACKING) if configuration.get(key) != "true"}
    if properties:
        with execution.work.delta(target=entry.location):
            statements.set_properties(execution.spark, entry.location, properties)
        version = _own_commit(execution, entry)
    else:
        # Created with them (CREATE TABLE … CHANGE_TRACKING = TRUE): changes are tracked from now on.
        version = log.version()
    with execution.work.records():
        execution.catalog.streams.start_tracking(entry.id, version)
        execution.catalog.parameters.set_parameter(entry.id, CHANGE_TRACKING, "true")
    return version


def stop(execution: Execution, entry: TableEntry) -> None:
    """Stop tracking ``entry``'s changes: streams reaching back before now can no longer be read."""
    if current(execution.catalog, entry.id) is None:
        return
    with execution.work.delta(target=entry.location):
        statements.set_properties(execution.spark, entry.location, {CHANGE_DATA_FEED: "false"})
    with execution.work.records():
        execution.catalog.streams.stop_tracking(entry.id, _own_commit(execution, entry))


def _own_commit(execution: Execution, entry: TableEntry) -> int:
    """The version of the commit this statement just made to ``entry``."""
    history = execution.tables.log(entry).history()
    return max(c.version for c in history if c.query_id == execution.query_id)


def create_properties(value: str) -> dict[str, str]:
    """The Delta properties ``CREATE TABLE … CHANGE_TRACKING = <value>`` creates a table with."""
    return {CHANGE_DATA_FEED: "true", ROW_TRACKING: "true"} if value == "true" else {}


def on_parameter(execution: Execution, kind: ObjectKind, object_id: str, value: str | None) -> None:
    """``ALTER TABLE|VIEW x SET|UNSET CHANGE_TRACKING``: start or stop tracking as the new value says.

    On a view, TRUE also starts tracking on every table it reads (through the
    views it reads too), as Snowflake does for the owner of both; FALSE
    changes only the view's own setting, since its tables may be tracked for
    their own streams.
    """
    if kind is ObjectKind.VIEW:
        view = execution.catalog.views.view_by_id(object_id)
        if value == "true" and view is not None:
            for table in views.base_tables(execution.tables, view):
                start(execution, table)
        return
    if kind is not ObjectKind.TABLE:
        return
    entry = execution.catalog.objects.table_by_id(object_id)
    if entry is None:
        return
    if value == "true":
        start(execution, entry)
    else:
        stop(execution, entry)


def require_tracked(catalog: Catalog, entry: TableEntry, first: int, last: int, *, even_none: bool = False) -> None:
    """Refuse to read the changes after version ``first`` up to ``last`` unless tracking covers them all.

    Args:
        even_none: refuse an empty interval (``first == last``) too unless
            tracking was on at ``first``, as Snowflake's CHANGES clause does; a
            stream with nothing new to read has nothing to refuse.

    Raises:
        SqlCompilationError: as Snowflake words it, naming the table.
    """
    if first > last or (first == last and not even_none):
        return
    if not any(interval.covers(first, last) for interval in catalog.streams.tracking(entry.id)):
        raise not_tracked(entry.name)


def not_tracked(name: str) -> SqlCompilationError:
    return SqlCompilationError(
        f"Change tracking is not enabled or has been missing for the time range requested on table '{name}'."
    )
