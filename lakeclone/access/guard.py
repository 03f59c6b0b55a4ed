"""The one place lakeclone checks privileges: every statement, and the Python API's table lookups.

Each statement is registered with its bind, which says what it needs on the objects its names hold
(:mod:`lakeclone.engine.needs`); the engine hands those needs to
:class:`Guard`, which checks the session's role against the catalog's grants
and ownership before the statement's handler runs, so a denied statement
writes nothing: no Delta commit, no catalog row, not even the commit of an
open transaction.

A role has the privileges granted to it and to every role granted to it, and
PUBLIC's. ACCOUNTADMIN may do everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.access.privileges import satisfies
from lakeclone.catalog.access import ACCOUNTADMIN, PUBLIC
from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import registry
from lakeclone.engine.compiler import read_references, staged_references, table_function_calls
from lakeclone.engine.privileges import (
    Definer,
    Either,
    Grantable,
    Need,
    Privilege,
    Requirement,
    Securable,
    function_needs,
    reads_of,
    schema_securable,
)
from lakeclone.errors import InsufficientPrivilegesError, ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from lakeclone.catalog.entries import SchemaEntry
    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.executor import Executor
    from lakeclone.engine.tables import Tables


def _with_containers(securable: Securable) -> list[Securable]:
    """``securable`` after the containers that must be usable to reach it, outermost first."""
    ordered: list[Securable] = []
    for container in securable.containers:
        ordered.extend(_with_containers(container))
    return [*ordered, securable]


class Guard:
    """Checks the session's role; registered as the engine's authorizer."""

    def roles(self, catalog: Catalog, role: str) -> set[str]:
        """``role``, every role granted to it (transitively), and PUBLIC."""
        found = {role, PUBLIC}
        pending = [role]
        while pending:
            for granted in catalog.access.roles_granted_to_role(pending.pop()):
                if granted not in found:
                    found.add(granted)
                    pending.append(granted)
        return found

    def statement(self, executor: Executor, needs: Iterable[Requirement | None]) -> None:
        self.check(executor.catalog, executor.context.role, needs)

    def check(self, catalog: Catalog, role: str, needs: Iterable[Requirement | None]) -> None:
        """Raise unless ``role`` holds what ``needs`` asks; they are computed only for a role that is not ACCOUNTADMIN."""
        roles = self.roles(catalog, role)
        if ACCOUNTADMIN in roles:
            return
        for need in needs:
            if need is None:
                continue
            if isinstance(need, Either):
                if not all(self.meets(catalog, roles, each) for each in need.first):
                    for each in need.second:
                        self.require(catalog, roles, each)
            elif isinstance(need, Grantable):
                if not self.grantable(catalog, roles, need.securable, need.privilege):
                    raise InsufficientPrivilegesError(need.securable.kind, need.securable.name)
            elif need.definer is None:
                self.require(catalog, roles, need)
            else:
                self.require_for_view(catalog, need)

    def meets(self, catalog: Catalog, roles: set[str], need: Need) -> bool:
        """Whether ``roles`` have what ``need`` asks (see :meth:`require`)."""
        try:
            self.require(catalog, roles, need)
        except (ObjectNotFoundError, InsufficientPrivilegesError):
            return False
        return True

    def require_for_view(self, catalog: Catalog, need: Need) -> None:
        """Raise unless the owner of the view or policy ``need`` reads through holds what it needs (Snowflake's expansion)."""
        assert need.definer is not None
        owner_roles = self.roles(catalog, need.definer.owner)
        if ACCOUNTADMIN in owner_roles:
            return
        try:
            self.require(catalog, owner_roles, need)
        except SqlCompilationError as error:
            raise SqlCompilationError(f"Failure during expansion of {need.definer.kind} '{need.definer.name}': {error}") from None

    def table(self, executor: Executor, entry: TableEntry, privilege: str) -> None:
        catalog = executor.catalog
        roles = self.roles(catalog, executor.context.role)
        if ACCOUNTADMIN in roles:
            return
        schema = catalog.objects.schema(entry.database, entry.schema)
        assert schema is not None
        securable = Securable(ObjectKind.TABLE, entry.id, entry.name, (schema_securable(catalog, schema),))
        self.require(catalog, roles, Need(securable, (Privilege(privilege),)))

    def owns_table(self, executor: Executor, table_id: str) -> bool:
        catalog = executor.catalog
        return self.owns(catalog, self.roles(catalog, executor.context.role), Securable(ObjectKind.TABLE, table_id, table_id))

    def sees_table(self, executor: Executor, table_id: str) -> bool:
        catalog = executor.catalog
        roles = self.roles(catalog, executor.context.role)
        if ACCOUNTADMIN in roles:
            return True
        entry = catalog.objects.table_by_id(table_id)
        schema = catalog.objects.schema(entry.database, entry.schema) if entry else None
        if entry is None or schema is None:
            return False
        securable = Securable(ObjectKind.TABLE, entry.id, entry.qualified, (schema_securable(catalog, schema),))
        return all(self.holds(catalog, roles, c, Privilege.USAGE) for c in _with_containers(securable)[:-1]) and (
            self.sees(catalog, roles, securable)
        )

    def visible(self, catalog: Catalog, role: str, what: str) -> tuple[tuple[str, ...], set[tuple[str, ...]]] | None:
        """What SHOW lists for ``role``: the objects it sees, in containers it may use."""
        roles = self.roles(catalog, role)
        shown = _shown(what)
        if ACCOUNTADMIN in roles or shown is None:
            return None
        kind, columns = shown
        keys: set[tuple[str, ...]] = set()
        for database in catalog.objects.databases():
            securable = Securable(ObjectKind.DATABASE, database.id, database.name)
            if kind is ObjectKind.DATABASE:
                if self.sees(catalog, roles, securable):
                    keys.add((database.name,))
                continue
            if not self.holds(catalog, roles, securable, Privilege.USAGE):
                continue
            for schema_entry in catalog.objects.schemas(database):
                schema = schema_securable(catalog, schema_entry)
                if kind is ObjectKind.SCHEMA:
                    if self.sees(catalog, roles, schema):
                        keys.add((database.name, schema_entry.name))
                    continue
                if not self.holds(catalog, roles, schema, Privilege.USAGE):
                    continue
                for object_id, name in _objects(catalog, kind, schema_entry):
                    if self.sees(catalog, roles, Securable(kind, object_id, name)):
                        keys.add((database.name, schema_entry.name, name))
        return columns, keys

    def administers(self, catalog: Catalog, role: str) -> bool:
        """Whether ``role`` is or inherits ACCOUNTADMIN."""
        return ACCOUNTADMIN in self.roles(catalog, role)

    def require(self, catalog: Catalog, roles: set[str], need: Need) -> None:
        """Raise unless ``roles`` may reach ``need``'s object and hold one of its privileges."""
        for securable in _with_containers(need.securable)[:-1]:
            if not self.holds(catalog, roles, securable, Privilege.USAGE):
                raise ObjectNotFoundError(securable.name, securable.kind.capitalize())
        target = need.securable
        if need.privileges == (Privilege.USAGE,) and target.kind in (ObjectKind.SCHEMA, ObjectKind.DATABASE):
            # A container the role may not use does not exist for it, whatever else it holds on it.
            if not self.holds(catalog, roles, target, Privilege.USAGE):
                raise ObjectNotFoundError(target.name, target.kind.capitalize())
            return
        seen = target.kind is ObjectKind.ACCOUNT or self.sees(catalog, roles, target)
        if seen and (not need.privileges or any(self.holds(catalog, roles, target, p) for p in need.privileges)):
            return
        if need.denied_on is not None:
            raise InsufficientPrivilegesError(need.denied_on.kind, need.denied_on.name)
        if not seen:
            raise ObjectNotFoundError(target.name, need.unseen_as or _NOT_FOUND_AS.get(target.kind, "Object"))
        raise InsufficientPrivilegesError(target.kind, target.name)

    def owns(self, catalog: Catalog, roles: set[str], securable: Securable) -> bool:
        if ACCOUNTADMIN in roles:
            return True
        owner = (
            catalog.access.role_owner(securable.id)
            if securable.kind is ObjectKind.ROLE
            else catalog.access.owner(securable.kind, securable.id)
        )
        return owner in roles

    def sees(self, catalog: Catalog, roles: set[str], securable: Securable) -> bool:
        """Whether ``roles`` hold any privilege on ``securable``: else it does not exist for them."""
        if self.owns(catalog, roles, securable):
            return True
        return any(grant.role in roles for grant in catalog.access.grants_on(securable.kind, securable.id))

    def holds(self, catalog: Catalog, roles: set[str], securable: Securable, needed: Privilege) -> bool:
        if self.owns(catalog, roles, securable):
            return True
        return any(
            grant.role in roles and satisfies(Privilege(grant.privilege), needed)
            for grant in catalog.access.grants_on(securable.kind, securable.id)
        )

    def grantable(self, catalog: Catalog, roles: set[str], securable: Securable, privilege: Privilege) -> bool:
        """Whether ``roles`` may grant ``privilege`` on ``securable``: they own it or hold it WITH GRANT OPTION."""
        if self.owns(catalog, roles, securable):
            return True
        return privilege is not Privilege.OWNERSHIP and any(
            grant.role in roles and grant.grant_option and satisfies(Privilege(grant.privilege), privilege)
            for grant in catalog.access.grants_on(securable.kind, securable.id)
        )


# What a denial calls an object the role does not see, where not "Object": what the statement calls it when it is missing.
_NOT_FOUND_AS = {
    ObjectKind.STAGE: "Stage",
    ObjectKind.FILE_FORMAT: "File format",
    ObjectKind.MASKING_POLICY: "Masking policy",
    ObjectKind.ROW_ACCESS_POLICY: "Row access policy",
    ObjectKind.TAG: "Tag",
}

# What each SHOW lists beyond the kinds of schema object features register: the kind, and the columns that name it.
_QUALIFIED = ("database_name", "schema_name", "name")
_SHOWN: dict[str, tuple[ObjectKind, tuple[str, ...]]] = {
    "DATABASES": (ObjectKind.DATABASE, ("name",)),
    "SCHEMAS": (ObjectKind.SCHEMA, ("database_name", "name")),
    "TABLES": (ObjectKind.TABLE, _QUALIFIED),
    "PRIMARY KEYS": (ObjectKind.TABLE, ("database_name", "schema_name", "table_name")),
    "IMPORTED KEYS": (ObjectKind.TABLE, ("fk_database_name", "fk_schema_name", "fk_table_name")),
    # A channel is listed to the roles that see its table.
    "CHANNELS": (ObjectKind.TABLE, ("database_name", "schema_name", "table_name")),
}


def _shown(what: str) -> tuple[ObjectKind, tuple[str, ...]] | None:
    """What ``SHOW <what>`` lists, and the columns that name each; None for a listing the role's grants do not filter."""
    if what in _SHOWN:
        return _SHOWN[what]
    kinds = [record.kind for record in registry.SCHEMA_OBJECTS.values() if record.plural == what]
    return (kinds[0], _QUALIFIED) if kinds else None


def _objects(catalog: Catalog, kind: ObjectKind, schema: SchemaEntry) -> list[tuple[str, str]]:
    """(id, name) of a schema's live objects of ``kind``."""
    return [(entry.id, entry.name) for entry in catalog.schema_objects.in_schema(kind, schema)]


GUARD = Guard()


def require_definer_reads(tables: Tables, query: exp.Expr, definer: Definer) -> None:
    """Raise unless ``definer``'s owner may read every relation ``query`` reads: a policy body's mapping table.

    ``tables`` resolves names as the definition does (its own schema). A body
    is read with its owner's rights, at CREATE and at every use, so that a
    policy reads only what its owner could read itself. Files have no owner
    or grants to check: a body reads none.

    Raises:
        SqlCompilationError: the body reads staged files or ``read_files``.
    """
    if staged_references(query) or any(function.reads_files for _, _, function in table_function_calls(query)):
        raise SqlCompilationError(
            f"{definer.name} cannot read files: a view's or a policy's query reads tables, views and streams."
        )
    for need in reads_of(tables, read_references(query), definer):
        if isinstance(need, Need) and need.definer is not None:
            GUARD.require_for_view(tables.catalog, need)
        elif need is not None:  # a table function's own need, in a view the body reads: the session's
            GUARD.check(tables.catalog, tables.session.role, (need,))
    GUARD.check(tables.catalog, tables.session.role, function_needs(tables, query))
