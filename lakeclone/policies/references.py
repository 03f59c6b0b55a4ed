"""INFORMATION_SCHEMA.POLICY_REFERENCES and TAG_REFERENCES: an object's policies and tags, with Snowflake's columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.access.guard import GUARD
from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.names import QualifiedName
from lakeclone.catalog.policies import OBJECT_LEVEL, PolicyEntry, PolicyKind
from lakeclone.dialect import table_reference
from lakeclone.engine import registry, results
from lakeclone.engine.arguments import named_arguments
from lakeclone.engine.compiler import spark_sql
from lakeclone.engine.privileges import (
    ACCOUNT_SECURABLE,
    Either,
    Need,
    Privilege,
    Requirement,
    Securable,
    named_schema,
    relation,
)
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError
from lakeclone.policies.model import APPLY_ON_ACCOUNT, column_types, protection

if TYPE_CHECKING:
    from collections.abc import Iterator

    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.tables import Tables

POLICY_REFERENCES_SCHEMA = (
    "POLICY_DB STRING, POLICY_SCHEMA STRING, POLICY_NAME STRING, POLICY_KIND STRING, REF_DATABASE_NAME STRING, "
    "REF_SCHEMA_NAME STRING, REF_ENTITY_NAME STRING, REF_ENTITY_DOMAIN STRING, REF_COLUMN_NAME STRING, "
    "REF_ARG_COLUMN_NAMES STRING, TAG_DATABASE STRING, TAG_SCHEMA STRING, TAG_NAME STRING, POLICY_STATUS STRING"
)
TAG_REFERENCES_SCHEMA = (
    "TAG_DATABASE STRING, TAG_SCHEMA STRING, TAG_NAME STRING, TAG_VALUE STRING, LEVEL STRING, OBJECT_DATABASE STRING, "
    "OBJECT_SCHEMA STRING, OBJECT_NAME STRING, DOMAIN STRING, COLUMN_NAME STRING"
)


def _arguments(call: exp.Anonymous, names: tuple[str, ...]) -> dict[str, str]:
    """A table function's string arguments, named (``NAME => 'x'``) or by position."""
    found: dict[str, str] = {}
    for key, value in named_arguments(call, names).items():
        if not (isinstance(value, exp.Literal) and value.is_string):
            raise SqlCompilationError(
                f"{call.name.upper()} takes string arguments {', '.join(n + ' =>' for n in names)}; got {key}."
            )
        found[key] = value.name
    return found


_DOMAINS = {
    "TABLE": (ObjectKind.TABLE, ObjectKind.VIEW),
    "VIEW": (ObjectKind.VIEW,),
    "COLUMN": (ObjectKind.TABLE, ObjectKind.VIEW),
}


def _entity_securable(tables: Tables, name: str, domain: str) -> tuple[Securable | None, QualifiedName]:
    """The table or view ``name`` names in ``domain`` (None where it names none), and its qualified name."""
    kinds = _DOMAINS.get(domain.upper())
    if kinds is None:
        raise SqlCompilationError(f"Invalid value '{domain}' for the entity's domain: TABLE, VIEW or COLUMN.")
    reference = table_reference(name)
    return relation(tables, reference, kinds), tables.name(reference)


def _entity(tables: Tables, name: str, domain: str) -> tuple[str, ObjectKind, QualifiedName]:
    """(id, kind) of the table or view ``name`` names, and its qualified name."""
    securable, qualified = _entity_securable(tables, name, domain)
    if securable is None:
        raise ObjectNotFoundError(str(qualified))
    return securable.id, securable.kind, qualified


def _entity_need(tables: Tables, name: str, domain: str) -> Need | None:
    """That the role sees the table or view whose policies or tags are listed."""
    securable, _ = _entity_securable(tables, name, domain)
    return Need(securable, ()) if securable is not None else None


def policy_references(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """``POLICY_REFERENCES(REF_ENTITY_NAME => 't', REF_ENTITY_DOMAIN => 'table')`` or ``(POLICY_NAME => 'p')``.

    An object's listing includes the masking policies its columns get through tags (TAG_* columns set).
    """
    arguments = _arguments(call, ("REF_ENTITY_NAME", "REF_ENTITY_DOMAIN", "POLICY_NAME"))
    catalog = tables.catalog
    rows: list[tuple[object, ...]] = []
    if "POLICY_NAME" in arguments:
        qualified = tables.name(table_reference(arguments["POLICY_NAME"]))
        named = _policy(catalog, qualified)
        if named is None:
            raise ObjectNotFoundError(str(qualified), "Policy")
        policy = named[0]
        roles = GUARD.roles(catalog, tables.session.role)
        for reference in catalog.policies.references_to_policy(policy.id):
            entry = catalog.objects.table_by_id(reference.object_id) or catalog.views.view_by_id(reference.object_id)
            if entry is None or entry.dropped_at is not None:
                continue
            owner = QualifiedName(entry.database, entry.schema, entry.name)
            if not GUARD.sees(catalog, roles, Securable(reference.object_kind, entry.id, str(owner))):
                continue  # an object the role holds no privilege on does not exist for it
            rows.append(_row(policy, owner, reference.object_kind, reference.column, reference.using, None))
    else:
        if "REF_ENTITY_NAME" not in arguments or "REF_ENTITY_DOMAIN" not in arguments:
            raise SqlCompilationError("POLICY_REFERENCES needs REF_ENTITY_NAME and REF_ENTITY_DOMAIN, or POLICY_NAME.")
        object_id, kind, owner = _entity(tables, arguments["REF_ENTITY_NAME"], arguments["REF_ENTITY_DOMAIN"])
        columns = _columns(tables, kind, object_id)
        found = protection(catalog, object_id, column_types(columns))
        names = {name.upper(): name for name, _ in columns}
        if found.row_filter is not None:
            rows.append(_row(found.row_filter.policy, owner, kind, OBJECT_LEVEL, found.row_filter.columns, None))
        for column, mask in sorted(found.masks.items()):
            rows.append(_row(mask.policy, owner, kind, names.get(column, column), mask.using, mask.tag))
    return tables.bind_frame(results.rows(tables.spark, POLICY_REFERENCES_SCHEMA, rows), None)


def policy_references_needs(tables: Tables, call: exp.Anonymous) -> Iterator[Requirement | None]:
    """That the role sees the table or view whose policies are listed, or may list where the policy named is set.

    A role may list where a policy is set if it may set the policy: it holds a
    privilege on it (its owner, or APPLY) with USAGE on its schema, or APPLY
    MASKING POLICY (APPLY ROW ACCESS POLICY) on the account. To any other role
    a policy it may not list reads like a missing one.
    """
    arguments = _arguments(call, ("REF_ENTITY_NAME", "REF_ENTITY_DOMAIN", "POLICY_NAME"))
    if "POLICY_NAME" not in arguments:
        if "REF_ENTITY_NAME" in arguments and "REF_ENTITY_DOMAIN" in arguments:
            yield _entity_need(tables, arguments["REF_ENTITY_NAME"], arguments["REF_ENTITY_DOMAIN"])
        return
    catalog = tables.catalog
    qualified = tables.name(table_reference(arguments["POLICY_NAME"]))
    schema = named_schema(catalog, qualified.database, qualified.schema)
    if schema is None:
        yield None
        return
    yield Need(schema, (Privilege.USAGE,))  # first: a schema the role may not use hides whether the policy is there
    found = _policy(catalog, qualified)
    if found is None:
        yield None
        return
    policy, kind = found
    securable = Securable(kind.object_kind, policy.id, str(qualified), (schema,))
    on_account = Need(ACCOUNT_SECURABLE, (APPLY_ON_ACCOUNT[kind],))
    yield Either((on_account,), (Need(securable, (), unseen_as="Policy"),))


def _policy(catalog: Catalog, qualified: QualifiedName) -> tuple[PolicyEntry, PolicyKind] | None:
    """The masking or row access policy ``qualified`` names, and its kind."""
    for kind in (PolicyKind.MASKING, PolicyKind.ROW_ACCESS):
        policy = catalog.policies.policy(qualified.database, qualified.schema, qualified.name, kind)
        if policy is not None:
            return policy, kind
    return None


def _row(
    policy: PolicyEntry,
    owner: QualifiedName,
    kind: str,
    column: str,
    using: tuple[str, ...],
    tag: PolicyEntry | None,
) -> tuple[object, ...]:
    read = using if column == OBJECT_LEVEL else using[1:]
    return (
        policy.database,
        policy.schema,
        policy.name,
        policy.kind.value.replace(" ", "_"),
        owner.database,
        owner.schema,
        owner.name,
        kind,
        column or None,
        "[" + ",".join(f'"{c}"' for c in read) + "]" if read else None,
        tag.database if tag else None,
        tag.schema if tag else None,
        tag.name if tag else None,
        "ACTIVE",
    )


def _columns(tables: Tables, kind: ObjectKind, object_id: str) -> list[tuple[str, str]]:
    catalog = tables.catalog
    if kind is ObjectKind.TABLE:
        entry = catalog.objects.table_by_id(object_id)
        assert entry is not None
        fields = tables.log(entry).schema().fields
    else:
        view = catalog.views.view_by_id(object_id)
        assert view is not None
        reference = exp.table_(view.name, db=view.schema, catalog=view.database, quoted=True)
        fields = tables.spark.sql(spark_sql(exp.select("*").from_(reference).limit(0), tables)).schema.fields
    return [(field.name, field.dataType.simpleString()) for field in fields]


def _tagged(call: exp.Anonymous) -> tuple[str, str, str | None]:
    """What ``TAG_REFERENCES('t', 'table')`` (``'t.c', 'column'``) names: the table or view, its domain, the column."""
    arguments = _arguments(call, ("OBJECT_NAME", "OBJECT_DOMAIN"))
    if len(arguments) != 2:
        raise SqlCompilationError("TAG_REFERENCES takes an object's name and its domain: TAG_REFERENCES('t', 'table').")
    name, domain = arguments["OBJECT_NAME"], arguments["OBJECT_DOMAIN"].upper()
    if domain == "COLUMN":
        owner, _, column = name.rpartition(".")
        return owner, "TABLE", column
    return name, domain, None


def tag_references_needs(tables: Tables, call: exp.Anonymous) -> Iterator[Requirement | None]:
    """That the role sees the table or view whose tags are listed."""
    name, domain, _ = _tagged(call)
    yield _entity_need(tables, name, domain)


def tag_references(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """``TAG_REFERENCES('t', 'table')``: the tags set on a table or view (``'t.c', 'column'``: on a column)."""
    name, domain, column = _tagged(call)
    object_id, kind, owner = _entity(tables, name, domain)
    catalog = tables.catalog
    rows: list[tuple[object, ...]] = []
    for reference in catalog.policies.tag_references(object_id):
        if column is not None and reference.column.upper() != column.upper():
            continue
        tag = catalog.policies.policy_by_id(reference.tag_id)
        if tag is None:
            continue
        level = "COLUMN" if reference.column else kind
        rows.append(
            (
                tag.database,
                tag.schema,
                tag.name,
                reference.value,
                level,
                owner.database,
                owner.schema,
                owner.name,
                "COLUMN" if reference.column else kind,
                reference.column or None,
            )
        )
    return tables.bind_frame(results.rows(tables.spark, TAG_REFERENCES_SCHEMA, rows), None)


TABLE_FUNCTIONS = {
    "POLICY_REFERENCES": registry.TableFunction(policy_references, needs=policy_references_needs),
    "TAG_REFERENCES": registry.TableFunction(tag_references, needs=tag_references_needs),
}
