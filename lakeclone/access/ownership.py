"""What a statement that creates objects records: their owner, future grants, and the grants clones carry.

The creator's current role owns what it creates. A table created in a schema
gets the schema's future grants. ``CREATE TABLE … CLONE … COPY GRANTS`` copies
every grant of its source but OWNERSHIP; without COPY GRANTS a clone gets
none. A schema or database clone's child tables carry their source children's
grants; the cloned container does not inherit its source's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.access import Grant
from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.dialect.expressions import CreateStream
from lakeclone.engine.privileges import relation

if TYPE_CHECKING:
    from lakeclone.catalog.entries import SchemaEntry
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution


def record_created(execution: Execution) -> None:
    """Registered in FINISH: runs inside the catalog transaction that records the statement as finished."""
    expression = execution.expression
    if isinstance(expression, CreateStream):
        _own(execution, expression.this, ObjectKind.STREAM)
        return
    if not isinstance(expression, exp.Create):
        return
    kind = ObjectKind.named(expression.args.get("kind"))
    target = expression.this.this if isinstance(expression.this, exp.Schema) else expression.this
    catalog = execution.catalog
    role = execution.session.role
    clone = expression.args.get("clone")
    if kind in (ObjectKind.TABLE, ObjectKind.VIEW, ObjectKind.SEQUENCE, ObjectKind.STAGE, ObjectKind.FILE_FORMAT):
        created = _own(execution, target, kind)
        if created is not None and kind is ObjectKind.TABLE and clone is not None and expression.find(exp.CopyGrantsProperty):
            source = relation(execution.tables, clone.this, (ObjectKind.TABLE,))
            if source is not None:
                _copy_grants(catalog, source.id, created)
    elif kind is ObjectKind.SCHEMA:
        database, name = schema_name(target, database=execution.session.database)
        schema = catalog.objects.schema(database, name)
        if schema is not None and not catalog.access.has_owner(ObjectKind.SCHEMA, schema.id):
            catalog.access.set_owner(ObjectKind.SCHEMA, schema.id, role)
            if clone is not None:
                _own_children(catalog, schema, role)
    elif kind is ObjectKind.DATABASE:
        entry = catalog.objects.database(database_name(target))
        if entry is not None and not catalog.access.has_owner(ObjectKind.DATABASE, entry.id):
            catalog.access.set_owner(ObjectKind.DATABASE, entry.id, role)
            for schema in catalog.objects.schemas(entry):
                catalog.access.set_owner(ObjectKind.SCHEMA, schema.id, role)
                if clone is not None:
                    _own_children(catalog, schema, role)


def _own(execution: Execution, target: exp.Table, kind: ObjectKind) -> str | None:
    """Make the current role the owner of the object just created; give it its schema's future grants."""
    created = relation(execution.tables, target, (kind,))
    catalog = execution.catalog
    if created is None or catalog.access.has_owner(kind, created.id):
        return None  # nothing was created: CREATE … IF NOT EXISTS found it there
    catalog.access.set_owner(kind, created.id, execution.session.role)
    schema = created.containers[0]
    database = schema.containers[0] if schema.containers else None
    containers = [(ObjectKind.SCHEMA, schema.id)] + ([(ObjectKind.DATABASE, database.id)] if database else [])
    for container_kind, container_id in containers:
        for future in catalog.access.future_grants(container_kind, container_id):
            if future.object_kind == kind:
                catalog.access.grant(Grant(kind, created.id, future.privilege, future.role, future.grant_option, "FUTURE"))
    return created.id


def _copy_grants(catalog: Catalog, source_id: str, clone_id: str) -> None:
    for grant in catalog.access.grants_on(ObjectKind.TABLE, source_id):
        catalog.access.grant(Grant(ObjectKind.TABLE, clone_id, grant.privilege, grant.role, grant.grant_option, grant.granted_by))


def _own_children(catalog: Catalog, schema: SchemaEntry, role: str) -> None:
    """A cloned schema's tables: owned by the cloning role, each with the grants of the table it was cloned from."""
    for table in catalog.objects.tables(schema):
        catalog.access.set_owner(ObjectKind.TABLE, table.id, role)
        if table.source_id is not None:
            _copy_grants(catalog, table.source_id, table.id)
