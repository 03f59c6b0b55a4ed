"""Three-part names, resolved against the session's current database and schema."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from lakeclone.errors import SqlCompilationError


@dataclass(frozen=True)
class QualifiedName:
    """``DATABASE.SCHEMA.TABLE``, as Snowflake prints it in messages."""

    database: str
    schema: str
    name: str

    def __str__(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


def table_name(table: exp.Table, *, database: str | None, schema: str | None) -> QualifiedName:
    """Resolve a table reference: ``t``, ``s.t`` or ``d.s.t``.

    Raises:
        SqlCompilationError: when a part is missing and the session has no current one.
    """
    db = table.catalog or database
    sch = table.db or schema
    if not db:
        raise SqlCompilationError(
            "Cannot perform operation. This session does not have a current database. "
            "Call 'USE DATABASE', or use a qualified name."
        )
    if not sch:
        raise SqlCompilationError(
            "Cannot perform operation. This session does not have a current schema. Call 'USE SCHEMA', or use a qualified name."
        )
    return QualifiedName(db, sch, table.name)


def schema_name(table: exp.Table, *, database: str | None) -> tuple[str, str]:
    """Resolve a schema reference, ``s`` or ``d.s``.

    sqlglot parses it as a table, in one of two shapes: ``Table(this=S, db=D)``
    (USE, SHOW, lsql's own statements) or ``Table(db=S, catalog=D)`` (CREATE,
    DROP and UNDROP SCHEMA).
    """
    if not table.name:
        table = exp.Table(this=table.args.get("db"), db=table.args.get("catalog"))
    if table.catalog:
        raise SqlCompilationError(f"invalid schema name '{table.sql(dialect='snowflake')}'")
    db = table.db or database
    if not db:
        raise SqlCompilationError(
            "Cannot perform operation. This session does not have a current database. "
            "Call 'USE DATABASE', or use a qualified name."
        )
    return db, table.name


def database_name(table: exp.Table) -> str:
    """A database reference's name: ``Table(this=D)``, or ``Table(db=D)`` from UNDROP DATABASE."""
    return table.name or table.db
