"""The object parameters lakeclone knows, their defaults, and where they may be set.

Retention follows Delta Lake's defaults (7 days, the window VACUUM also
protects) rather than Snowflake's 1 day, so that a Delta user's VACUUM and a
Snowflake user's UNDROP agree about what can still be recovered.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from lakeclone.catalog.db import Store
from lakeclone.catalog.entries import ObjectKind, TableEntry
from lakeclone.errors import InvalidParameterError

DATABASE, SCHEMA, TABLE, VIEW = ObjectKind.DATABASE, ObjectKind.SCHEMA, ObjectKind.TABLE, ObjectKind.VIEW
LEVELS = (DATABASE, SCHEMA, TABLE)
RETENTION = "DATA_RETENTION_TIME_IN_DAYS"


@dataclass(frozen=True)
class Parameter:
    """One parameter.

    Attributes:
        key: its name, upper case.
        default: the value when set nowhere, as shown by SHOW PARAMETERS.
        type: ``NUMBER``, ``BOOLEAN`` or ``STRING``.
        description: the text SHOW PARAMETERS shows.
        levels: the object kinds it may be set on.
        inherited: whether a value set on a database or schema applies below it.
        bounds: inclusive limits for a NUMBER.
    """

    key: str
    default: str
    type: str
    description: str
    levels: tuple[ObjectKind, ...] = LEVELS
    inherited: bool = True
    bounds: tuple[int, int] = (0, 0)

    def normalize(self, value: object) -> str:
        """The stored text of a value, or InvalidParameterError."""
        if self.type == "NUMBER":
            text = str(value).strip()
            # Bounded before conversion: int() of a huge literal costs time quadratic in its length.
            if len(text) > 20:
                raise InvalidParameterError(f"invalid value [{value}] for parameter '{self.key}'")
            try:
                number = int(text)
            except ValueError:
                raise InvalidParameterError(f"invalid value [{value}] for parameter '{self.key}'") from None
            low, high = self.bounds
            if not low <= number <= high:
                raise InvalidParameterError(
                    f"invalid value [{value}] for parameter '{self.key}': must be between {low} and {high}"
                )
            return str(number)
        if self.type == "BOOLEAN":
            text = str(value).strip().upper()
            if text not in ("TRUE", "FALSE"):
                raise InvalidParameterError(f"invalid value [{value}] for parameter '{self.key}'")
            return text.lower()
        return str(value)


PARAMETERS: dict[str, Parameter] = {
    p.key: p
    for p in (
        Parameter(
            "DATA_RETENTION_TIME_IN_DAYS",
            "7",
            "NUMBER",
            "number of days to retain the old version of deleted/updated data",
            bounds=(0, 90),
        ),
        Parameter(
            "MAX_DATA_EXTENSION_TIME_IN_DAYS",
            "14",
            "NUMBER",
            "Maximum number of days to extend data retention beyond the retention period to prevent a stream becoming stale.",
            bounds=(0, 90),
        ),
        Parameter(
            "CHANGE_TRACKING",
            "false",
            "BOOLEAN",
            "whether change tracking is enabled on the table or view",
            levels=(TABLE, VIEW),
            inherited=False,
        ),
        Parameter(
            "ENABLE_DELETION_VECTORS",
            "false",
            "BOOLEAN",
            "whether DELETE, UPDATE and MERGE mark rows in deletion vectors instead of rewriting data files",
            levels=(TABLE,),
            inherited=False,
        ),
        Parameter(
            "COMMENT",
            "",
            "STRING",
            "a comment on the object",
            levels=(*LEVELS, VIEW),
            inherited=False,
        ),
    )
}


def lookup(key: str, level: ObjectKind) -> Parameter:
    """The parameter named ``key``, checked to be settable on a ``level`` object."""
    parameter = PARAMETERS.get(key.upper())
    if parameter is None:
        raise InvalidParameterError(f"invalid property '{key}' for '{level.value}'")
    if level not in parameter.levels:
        raise InvalidParameterError(f"invalid property '{key}' for '{level.value}'")
    return parameter


# Well under SQLite's limit on a statement's variables (999 before 3.32).
_IDS_PER_QUERY = 500


class ParameterStore(Store):
    """Parameter values set on databases, schemas and tables, by object id."""

    def of(self, object_id: str) -> dict[str, str]:
        rows = self._db.execute("SELECT key, value FROM parameters WHERE object_id = ?", (object_id,)).fetchall()
        return {r["key"]: r["value"] for r in rows}

    def set_parameter(self, object_id: str, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO parameters (object_id, key, value) VALUES (?, ?, ?) "
            "ON CONFLICT (object_id, key) DO UPDATE SET value = excluded.value",
            (object_id, key, value),
        )

    def unset_parameter(self, object_id: str, key: str) -> None:
        self._db.execute("DELETE FROM parameters WHERE object_id = ? AND key = ?", (object_id, key))

    def parameter_chain(self, table: TableEntry) -> list[tuple[ObjectKind, str]]:
        """The objects a table's parameters are looked up on, innermost first: the table, its schema, its database.

        The chain is followed by id, so it works for dropped tables too.
        """
        row = self._db.execute("SELECT id, database_id FROM schemas WHERE id = ?", (table.schema_id,)).fetchone()
        return [(TABLE, table.id), (SCHEMA, row["id"]), (DATABASE, row["database_id"])]

    def effective(self, key: str, chain: list[tuple[ObjectKind, str]]) -> tuple[str, ObjectKind | None]:
        """A parameter's value along a chain of objects, innermost first, and the level it was set on (None: the default)."""
        parameter = PARAMETERS[key]
        for level, object_id in chain if parameter.inherited else chain[:1]:
            value = self.of(object_id).get(key)
            if value is not None:
                return value, level
        return parameter.default, None

    def parameter(self, table: TableEntry, key: str) -> tuple[str, ObjectKind | None]:
        """A table parameter's value and the level it comes from (None for the default)."""
        return self.effective(key, self.parameter_chain(table))

    def table_parameters(self, tables: Sequence[TableEntry]) -> dict[str, dict[str, str]]:
        """Every parameter's value for each of ``tables``, by table id, read together (SHOW TABLES lists many).

        As :meth:`parameter` finds each: set on the table, else (if inherited)
        on its schema or its database, else the default.
        """
        schema_ids = sorted({table.schema_id for table in tables})
        database_of = {
            row["id"]: row["database_id"] for row in self._rows_with_ids("SELECT id, database_id FROM schemas", "id", schema_ids)
        }
        object_ids = sorted({table.id for table in tables} | set(database_of) | set(database_of.values()))
        set_on: dict[str, dict[str, str]] = {}
        for row in self._rows_with_ids("SELECT object_id, key, value FROM parameters", "object_id", object_ids):
            set_on.setdefault(row["object_id"], {})[row["key"]] = row["value"]
        found = {}
        for table in tables:
            chain = (table.id, table.schema_id, database_of[table.schema_id])
            found[table.id] = {
                key: next(
                    (set_on[i][key] for i in (chain if parameter.inherited else chain[:1]) if key in set_on.get(i, {})),
                    parameter.default,
                )
                for key, parameter in PARAMETERS.items()
            }
        return found

    def _rows_with_ids(self, select: str, column: str, ids: Sequence[str]) -> list[sqlite3.Row]:
        """The rows of ``select`` whose ``column`` is one of ``ids``, asked in batches SQLite's variable limit allows."""
        found: list[sqlite3.Row] = []
        for start in range(0, len(ids), _IDS_PER_QUERY):
            batch = ids[start : start + _IDS_PER_QUERY]
            marks = ", ".join("?" * len(batch))
            found.extend(self._db.execute(f"{select} WHERE {column} IN ({marks})", batch).fetchall())
        return found

    def retention(self, table: TableEntry) -> dt.timedelta:
        """How long a table's old versions (and, once dropped, the table itself) are kept."""
        return dt.timedelta(days=int(self.parameter(table, RETENTION)[0]))

    def undroppable(self, table: TableEntry, stopped: dt.datetime, now: dt.datetime) -> bool:
        """Whether a table that stopped being live at ``stopped`` (it, its schema or its database
        was dropped) is still inside its UNDROP window at ``now``; the purge deletes it once not."""
        return now <= stopped + self.retention(table)

    def retention_of(self, chain: list[tuple[ObjectKind, str]]) -> dt.timedelta:
        """The retention of any object, given its chain (a dropped schema's or database's UNDROP window)."""
        return dt.timedelta(days=int(self.effective(RETENTION, chain)[0]))
