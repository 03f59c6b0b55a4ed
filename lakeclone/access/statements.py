"""Users, roles and grants: CREATE|DROP USER|ROLE, GRANT|REVOKE, USE ROLE, SHOW ROLES|USERS|GRANTS."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.access.guard import GUARD
from lakeclone.access.privileges import APPLICABLE, privilege
from lakeclone.catalog.access import ACCOUNTADMIN, PUBLIC, FutureGrant, Grant
from lakeclone.catalog.entries import GranteeKind, ObjectKind
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.catalog.policies import POLICY_KINDS, PolicyEntry
from lakeclone.dialect.expressions import CreatePrincipal, DropPrincipal, GrantPrivileges, GrantRole, ShowGrants
from lakeclone.engine import registry, results
from lakeclone.engine.privileges import (
    ACCOUNT_SECURABLE,
    ADMINISTRATION,
    RELATIONS,
    Grantable,
    Need,
    Privilege,
    Securable,
    database_securable,
    named_schema,
    relation,
    role_securable,
)
from lakeclone.errors import ObjectExistsError, ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import SchemaObjectEntry
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

GRANTS_SCHEMA = (
    "created_on TIMESTAMP, privilege STRING, granted_on STRING, name STRING, "
    "granted_to STRING, grantee_name STRING, grant_option STRING, granted_by STRING"
)
FUTURE_GRANTS_SCHEMA = "privilege STRING, grant_on STRING, name STRING, grant_to STRING, grantee_name STRING, grant_option STRING"


def _roles(execution: Execution) -> set[str]:
    return GUARD.roles(execution.catalog, execution.session.role)


def _name(identifier: exp.Expression) -> str:
    return identifier.name


def _require_role(execution: Execution, name: str) -> None:
    if not execution.catalog.access.role_exists(name):
        raise ObjectNotFoundError(name, "Role")


def _role_owned(tables: Tables, role: str) -> Need | None:
    """Managing a role (granting it, dropping it) needs its ownership, as Snowflake has it."""
    if not tables.catalog.access.role_exists(role):
        return None  # the statement says it does not exist
    securable = role_securable(role)
    return Need(securable, (Privilege.OWNERSHIP,), denied_on=securable)


def _principal_needs(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """Creating users and roles, and dropping users, is the administrator's; dropping a role is its owner's."""
    kind, name = GranteeKind(expression.text("kind")), _name(expression.this)
    if isinstance(expression, CreatePrincipal):
        yield ADMINISTRATION
    elif kind is GranteeKind.ROLE:
        yield _role_owned(tables, name)
    elif tables.catalog.access.user_exists(name):
        yield ADMINISTRATION


def _grant_type(expression: exp.Expression) -> str:
    return "REVOKE" if expression.args.get("revoke") else "GRANT"


def _grant_role_needs(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """Granting or revoking a role is its owner's."""
    yield _role_owned(tables, _name(expression.this))


@registry.statement(CreatePrincipal, bind=_principal_needs, query_type="CREATE")
def create_principal(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind, name = GranteeKind(expression.text("kind")), _name(expression.this)
    catalog = execution.catalog
    with execution.work.records():
        if _principal_exists(execution, kind, name):
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name} already exists, statement succeeded.")
            if not expression.args.get("replace") or name in (ACCOUNTADMIN, PUBLIC):
                raise ObjectExistsError(name, kind.value.capitalize())
            _drop_principal(execution, kind, name)
        if kind is GranteeKind.USER:
            catalog.access.create_user(name, execution.now())
        else:
            catalog.access.create_role(name, execution.session.role, execution.now())
    return results.status(execution.spark, f"{kind.value.capitalize()} {name} successfully created.")


def _principal_exists(execution: Execution, kind: GranteeKind, name: str) -> bool:
    return execution.catalog.access.user_exists(name) if kind is GranteeKind.USER else execution.catalog.access.role_exists(name)


def _drop_principal(execution: Execution, kind: GranteeKind, name: str) -> None:
    (execution.catalog.access.drop_user if kind is GranteeKind.USER else execution.catalog.access.drop_role)(name)


@registry.statement(DropPrincipal, bind=_principal_needs, query_type="DROP")
def drop_principal(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind, name = GranteeKind(expression.text("kind")), _name(expression.this)
    if not _principal_exists(execution, kind, name):
        if expression.args.get("exists"):
            return results.status(execution.spark, f"Drop statement executed successfully ({name} already dropped).")
        raise ObjectNotFoundError(name, kind.value.capitalize())
    if kind is GranteeKind.USER:
        if name == execution.session.user:
            raise SqlCompilationError(f"User '{name}' is signed in to this session and cannot be dropped.")
    else:
        if name in (ACCOUNTADMIN, "SYSADMIN", PUBLIC):
            raise SqlCompilationError(f"Role '{name}' is a system role and cannot be dropped.")
        if name == execution.session.role:
            raise SqlCompilationError(f"Role '{name}' is the session's current role and cannot be dropped.")
    with execution.work.records():
        _drop_principal(execution, kind, name)
    return results.status(execution.spark, f"{name} successfully dropped.")


@registry.statement(GrantRole, bind=_grant_role_needs, query_type=_grant_type)
def grant_role(execution: Execution) -> DataFrame:
    expression = execution.expression
    role, kind, grantee = _name(expression.this), GranteeKind(expression.text("kind")), _name(expression.args["to"])
    catalog = execution.catalog
    _require_role(execution, role)
    if kind is GranteeKind.USER and not catalog.access.user_exists(grantee):
        raise ObjectNotFoundError(grantee, "User")
    if kind is GranteeKind.ROLE:
        _require_role(execution, grantee)
    with execution.work.records():
        if expression.args.get("revoke"):
            catalog.access.revoke_role(role, kind, grantee)
        else:
            if kind is GranteeKind.ROLE and role in GUARD.roles(catalog, role) and grantee in GUARD.roles(catalog, role):
                raise SqlCompilationError(f"Granting role '{role}' to role '{grantee}' would make a cycle.")
            catalog.access.grant_role(role, kind, grantee, execution.session.role)
    return results.status(execution.spark, "Statement executed successfully.")


def _use_role(execution: Execution) -> DataFrame:
    role = execution.expression.this.name
    use_role(execution.catalog, execution.session.user, role)
    execution.session.role = role
    return results.status(execution.spark, "Statement executed successfully.")


def user_roles(catalog: object, user: str) -> set[str]:
    """Every role ``user`` may use: those granted to the user, what they inherit, and PUBLIC."""
    from lakeclone.catalog.store import Catalog

    assert isinstance(catalog, Catalog)
    found = {PUBLIC}
    for grant in catalog.access.role_grants(grantee_kind=GranteeKind.USER, grantee=user):
        found |= GUARD.roles(catalog, grant.role)
    return found


def use_role(catalog: object, user: str, role: str) -> None:
    """Raise unless ``user`` may take ``role``."""
    from lakeclone.catalog.store import Catalog

    assert isinstance(catalog, Catalog)
    if not catalog.access.role_exists(role) or role not in user_roles(catalog, user):
        raise ObjectNotFoundError(role, "Role")


def _granted_kind(text: str) -> ObjectKind:
    """The kind of object a grant's words name; SqlCompilationError for one lakeclone grants nothing on."""
    kind = ObjectKind.named(text)
    if kind not in APPLICABLE:
        raise SqlCompilationError(f"Privileges on a {text} are not supported by lakeclone.")
    return kind


def _securable(tables: Tables, kind_text: str, target: exp.Table | None) -> Securable:
    """The object a grant names (its kind as the statement spells it); ObjectNotFoundError when it does not exist."""
    catalog = tables.catalog
    found: Securable | None
    kind = _granted_kind(kind_text)
    if kind is ObjectKind.ACCOUNT:
        return ACCOUNT_SECURABLE
    assert target is not None
    if kind is ObjectKind.DATABASE:
        found = database_securable(catalog, database_name(target))
        label = database_name(target)
    elif kind is ObjectKind.SCHEMA:
        database, schema = schema_name(target, database=tables.session.database)
        found, label = named_schema(catalog, database, schema), f"{database}.{schema}"
    else:
        found = relation(tables, target, (kind,))
        label = str(tables.name(target))
    if found is None:
        raise ObjectNotFoundError(label, kind.value.capitalize())
    return found


def _targets(tables: Tables, expression: exp.Expression) -> list[Securable]:
    """The objects a GRANT … ON names: one, or every object of a kind in a container (ON ALL …)."""
    kind = expression.text("kind")
    if expression.text("scope") != "ALL":
        return [_securable(tables, kind, expression.this)]
    container = _securable(tables, expression.text("container"), expression.this)
    catalog = tables.catalog
    schemas = (
        [catalog.objects.schema_by_id(container.id)]
        if container.kind is ObjectKind.SCHEMA
        else catalog.objects.schemas(catalog.objects.database(container.name))  # type: ignore[arg-type]
    )
    found: list[Securable] = []
    object_kind = ObjectKind.named(kind)
    if object_kind not in RELATIONS:
        raise SqlCompilationError(f"GRANT … ON ALL {kind}S is not supported by lakeclone.")
    for schema in schemas:
        assert schema is not None
        for entry in catalog.schema_objects.in_schema(object_kind, schema):
            reference = exp.table_(entry.name, db=schema.name, catalog=schema.database)
            securable = relation(tables, reference, (object_kind,))
            if securable is not None:
                found.append(securable)
    return found


def _grant_needs(tables: Tables, expression: exp.Expression) -> Iterator[Grantable]:
    """That the role may grant each privilege on each object named: future grants in a schema or database take owning it."""
    if not tables.catalog.access.role_exists(_name(expression.args["to"])):
        return  # the statement says the grantee does not exist
    kind = _granted_kind(expression.text("kind"))
    privileges = [privilege(p.name, kind) for p in expression.expressions]
    if expression.text("scope") == "FUTURE":
        yield Grantable(_securable(tables, expression.text("container"), expression.this), Privilege.OWNERSHIP)
        return
    for target in _targets(tables, expression):
        for named in privileges:
            yield Grantable(target, named)


def _show_grants_needs(tables: Tables, expression: exp.Expression) -> Iterator[Need]:
    """SHOW GRANTS ON an object needs to see it (and to use its schema and database).

    Who sees a schema's future grants, a user's or a role's grants is what
    the statement may show, decided where it lists them.
    """
    if expression.args.get("future") or expression.text("to") or ObjectKind.named(expression.text("on")) is ObjectKind.ACCOUNT:
        return
    yield Need(_securable(tables, expression.text("on"), expression.this), ())


@registry.statement(GrantPrivileges, bind=_grant_needs, query_type=_grant_type)
def grant_privileges(execution: Execution) -> DataFrame:
    expression = execution.expression
    catalog = execution.catalog
    kind = _granted_kind(expression.text("kind"))
    role = _name(expression.args["to"])
    _require_role(execution, role)
    revoke = bool(expression.args.get("revoke"))
    option = bool(expression.args.get("grant_option"))
    privileges = [privilege(p.name, kind) for p in expression.expressions]
    if expression.text("scope") == "FUTURE":
        return _future(execution, privileges, role, revoke=revoke, option=option)
    targets = _targets(execution.tables, expression)
    with execution.work.records():
        for target in targets:
            for named in privileges:
                if named is Privilege.OWNERSHIP:
                    if revoke:
                        raise SqlCompilationError("OWNERSHIP cannot be revoked; GRANT OWNERSHIP to another role instead.")
                    _transfer(execution, target, role, copy=bool(expression.args.get("copy_grants")))
                elif revoke:
                    for each in _expanded(named, target.kind):
                        catalog.access.revoke(target.kind, target.id, each.value, role, option_only=option)
                else:
                    catalog.access.grant(Grant(target.kind, target.id, named.value, role, option, execution.session.role))
    return results.status(execution.spark, "Statement executed successfully.")


def _expanded(named: Privilege, kind: ObjectKind) -> list[Privilege]:
    """What REVOKE of ``named`` removes: ALL revokes each privilege too."""
    return [named, *sorted(APPLICABLE[kind])] if named is Privilege.ALL else [named]


def _transfer(execution: Execution, target: Securable, role: str, *, copy: bool) -> None:
    """GRANT OWNERSHIP: the new owner; without COPY CURRENT GRANTS the object's grants go (Snowflake's rule)."""
    catalog = execution.catalog
    if not copy:
        catalog.access.revoke_all_on(target.kind, target.id)
    catalog.access.set_owner(target.kind, target.id, role)


def _future(execution: Execution, privileges: list[Privilege], role: str, *, revoke: bool, option: bool) -> DataFrame:
    expression = execution.expression
    container = _securable(execution.tables, expression.text("container"), expression.this)
    kind = _granted_kind(expression.text("kind"))
    catalog = execution.catalog
    with execution.work.records():
        for named in privileges:
            future = FutureGrant(container.kind, container.id, kind, named.value, role, option)
            if revoke:
                catalog.access.remove_future_grant(future)
            else:
                catalog.access.add_future_grant(future)
    return results.status(execution.spark, "Statement executed successfully.")


@registry.statement(ShowGrants, bind=_show_grants_needs, query_type="SHOW")
def show_grants(execution: Execution) -> DataFrame:
    expression = execution.expression
    catalog = execution.catalog
    roles = _roles(execution)
    if expression.args.get("future"):
        container = _securable(execution.tables, "SCHEMA", expression.this)
        if not GUARD.sees(catalog, roles, container):
            raise ObjectNotFoundError(container.name, "Schema")
        future = [
            (
                g.privilege,
                g.object_kind.value,
                f"{container.name}.<{g.object_kind.value}>",
                GranteeKind.ROLE.value,
                g.role,
                str(g.grant_option).lower(),
            )
            for g in catalog.access.future_grants(container.kind, container.id)
        ]
        return results.rows(execution.spark, FUTURE_GRANTS_SCHEMA, future)
    if expression.text("to"):
        name = _name(expression.this)
        if GranteeKind(expression.text("to")) is GranteeKind.USER:
            # A user's role grants are shown to that user and to an administrator only.
            if not catalog.access.user_exists(name) or (ACCOUNTADMIN not in roles and name != execution.session.user):
                raise ObjectNotFoundError(name, "User")
            data: list[tuple[object, ...]] = [
                (None, None, None, g.role, g.grantee_kind.value, name, None, g.granted_by)
                for g in catalog.access.role_grants(grantee_kind=GranteeKind.USER, grantee=name)
            ]
            return results.rows(execution.spark, GRANTS_SCHEMA, data)
        _require_role(execution, name)
        if not _knows_role(roles, name, execution.catalog.access.role_owner(name)):
            raise ObjectNotFoundError(name, "Role")
        rows = [
            (
                None,
                g.privilege,
                g.object_kind.value,
                _object_name(execution, g.object_kind, g.object_id),
                GranteeKind.ROLE.value,
                g.role,
                str(g.grant_option).lower(),
                g.granted_by,
            )
            for g in catalog.access.grants_to([name])
        ]
        rows += [
            (None, "USAGE", ObjectKind.ROLE.value, g.role, g.grantee_kind.value, name, "false", g.granted_by)
            for g in catalog.access.role_grants(grantee_kind=GranteeKind.ROLE, grantee=name)
        ]
        return results.rows(execution.spark, GRANTS_SCHEMA, rows)
    target = _securable(execution.tables, expression.text("on"), expression.this)
    owner = catalog.access.owner(target.kind, target.id)
    data = [(None, "OWNERSHIP", target.kind.value, target.name, GranteeKind.ROLE.value, owner, "true", owner)]
    data += [
        (
            None,
            g.privilege,
            target.kind.value,
            target.name,
            GranteeKind.ROLE.value,
            g.role,
            str(g.grant_option).lower(),
            g.granted_by,
        )
        for g in catalog.access.grants_on(target.kind, target.id)
    ]
    return results.rows(execution.spark, GRANTS_SCHEMA, data)


def _object_name(execution: Execution, kind: ObjectKind, object_id: str) -> str:
    catalog = execution.catalog
    if kind is ObjectKind.ACCOUNT:
        return "ACCOUNT"
    if kind is ObjectKind.DATABASE:
        entry = next((d for d in catalog.objects.databases() if d.id == object_id), None)
        return entry.name if entry else object_id
    if kind is ObjectKind.SCHEMA:
        schema = catalog.objects.schema_by_id(object_id)
        return schema.qualified if schema else object_id
    named: SchemaObjectEntry | PolicyEntry | None
    named = catalog.policies.policy_by_id(object_id) if kind in POLICY_KINDS else catalog.schema_objects.by_id(kind, object_id)
    return named.qualified if named else object_id


def _knows_role(roles: set[str], role: str, owner: str | None) -> bool:
    """Whether ``roles`` may list ``role`` (owned by ``owner``) and its grants: it is in their hierarchy, or theirs."""
    return ACCOUNTADMIN in roles or role in roles or owner in roles


def _show_roles(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """SHOW ROLES: every role to an administrator; to any other role, those in its hierarchy and those it owns."""
    roles = _roles(execution)
    data = [
        (created, name, owner)
        for name, owner, created in execution.catalog.access.roles()
        if (like is None or like.fullmatch(name)) and _knows_role(roles, name, owner)
    ]
    return results.rows(execution.spark, "created_on TIMESTAMP, name STRING, owner STRING", data)


def _show_users(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """SHOW USERS: every user to an administrator; to anyone else, only the signed-in user."""
    administrator = ACCOUNTADMIN in _roles(execution)
    data = [
        (created, name)
        for name, created in execution.catalog.access.users()
        if (like is None or like.fullmatch(name)) and (administrator or name == execution.session.user)
    ]
    return results.rows(execution.spark, "created_on TIMESTAMP, name STRING", data)


registry.SHOWS["ROLES"] = _show_roles
registry.SHOWS["USERS"] = _show_users
registry.USES["ROLE"] = _use_role
