"""CREATE, DROP, ALTER, SHOW and DESCRIBE of masking policies, row access policies and tags, and attaching them.

Privileges are Snowflake's, checked by the access guard before anything
changes: CREATE MASKING POLICY (ROW ACCESS POLICY, TAG) on the schema to
create one; OWNERSHIP of a policy or tag to replace, alter or drop it; to
attach one to a table or view, OWNERSHIP of the object and APPLY on the
policy or tag (its owner holds it), or the account-level APPLY MASKING POLICY
(APPLY ROW ACCESS POLICY, APPLY TAG) alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.access.guard import GUARD, require_definer_reads
from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.names import QualifiedName
from lakeclone.catalog.policies import OBJECT_LEVEL, PolicyEntry, PolicyKind, PolicyReference, TagReference
from lakeclone.dialect import Lsql
from lakeclone.dialect.expressions import (
    AlterColumnPolicy,
    AlterPolicy,
    AlterRowAccessPolicy,
    AlterTags,
    CreatePolicy,
    DropPolicy,
)
from lakeclone.engine import registry, results
from lakeclone.engine.context import SessionContext
from lakeclone.engine.privileges import (
    ACCOUNT_SECURABLE,
    Definer,
    Either,
    Need,
    Privilege,
    Requirement,
    Securable,
    named_schema,
    owned,
    relation,
)
from lakeclone.engine.schema import column_named
from lakeclone.engine.show import matches, scope_schemas
from lakeclone.errors import ObjectExistsError, ObjectNotFoundError, SqlCompilationError
from lakeclone.policies.model import APPLY_ON_ACCOUNT, type_family

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import SchemaEntry
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

_CREATE = {
    PolicyKind.MASKING: Privilege.CREATE_MASKING_POLICY,
    PolicyKind.ROW_ACCESS: Privilege.CREATE_ROW_ACCESS_POLICY,
    PolicyKind.TAG: Privilege.CREATE_TAG,
}
_LABELS = {PolicyKind.MASKING: "Masking policy", PolicyKind.ROW_ACCESS: "Row access policy", PolicyKind.TAG: "Tag"}


def _create_needs(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """USAGE and CREATE <kind> on the schema; OWNERSHIP of the policy or tag OR REPLACE replaces."""
    kind = _kind(expression)
    name = tables.name(expression.this)
    schema = named_schema(tables.catalog, name.database, name.schema)
    if schema is not None:
        yield Need(schema, (Privilege.USAGE,))
        yield Need(schema, (_CREATE[kind],))
    if expression.args.get("replace") and not expression.args.get("exists"):
        yield from owned(tables, expression.this, kind.object_kind)


def _owner_needs(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """OWNERSHIP of the policy or tag dropped or altered; for a tag's masking policies, APPLY on each (or on the account)."""
    yield from owned(tables, expression.this, _kind(expression).object_kind)
    policies = expression.args.get("policies")
    if isinstance(expression, AlterPolicy) and policies and not expression.args.get("unset"):
        applied = [relation(tables, target, (PolicyKind.MASKING.object_kind,)) for target in policies]
        yield Either(
            (Need(ACCOUNT_SECURABLE, (Privilege.APPLY_MASKING_POLICY,)),),
            tuple(Need(securable, (Privilege.APPLY,)) for securable in applied if securable is not None),
        )


def _applied(owner: Securable, kind: PolicyKind, policies: list[Securable | None]) -> Either:
    """Attaching (or taking off) policies or tags.

    It takes APPLY <kind> on the account and seeing the object, or OWNERSHIP of the object and APPLY on each.
    """
    return Either(
        (Need(ACCOUNT_SECURABLE, (APPLY_ON_ACCOUNT[kind],)), Need(owner, ())),
        (Need(owner, (Privilege.OWNERSHIP,)), *(Need(p, (Privilege.APPLY,)) for p in policies if p is not None)),
    )


def _column_policy_needs(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """APPLY for the masking policy set on a column, and for the one it replaces or UNSET takes off.

    Taking a policy off needs APPLY on it, as attaching it did: owning the
    object is not enough (a clone's owner does not own the policies its
    source passed on).
    """
    owner = _altered_object(tables, expression)
    if owner is None:
        return
    column = expression.args["column"]
    replaced = [
        _attached_securable(tables, reference.policy_id)
        for reference in tables.catalog.policies.policy_references(owner.id)
        if reference.column != OBJECT_LEVEL and column_named([reference.column], column) is not None
    ]
    policy = expression.args.get("policy")
    set_policy = [relation(tables, policy, (PolicyKind.MASKING.object_kind,))] if policy is not None else []
    yield _applied(owner, PolicyKind.MASKING, [*set_policy, *replaced])


def _row_access_needs(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """APPLY for the row access policy added or dropped."""
    owner = _altered_object(tables, expression)
    if owner is not None:
        policy = relation(tables, expression.args["policy"], (PolicyKind.ROW_ACCESS.object_kind,))
        yield _applied(owner, PolicyKind.ROW_ACCESS, [policy])


def _tag_needs(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """APPLY for each tag set or unset."""
    owner = _altered_object(tables, expression)
    if owner is not None:
        targets = [item if expression.args.get("unset") else item.this for item in expression.expressions]
        yield _applied(owner, PolicyKind.TAG, [relation(tables, target, (PolicyKind.TAG.object_kind,)) for target in targets])


def _attached_securable(tables: Tables, policy_id: str) -> Securable:
    """The securable of an attached masking policy, by id."""
    policy = tables.catalog.policies.policy_by_id(policy_id)
    assert policy is not None  # a policy is not dropped while it is attached
    reference = exp.table_(policy.name, db=policy.schema, catalog=policy.database, quoted=True)
    securable = relation(tables, reference, (policy.kind.object_kind,))
    assert securable is not None
    return securable


def _schema(execution: Execution, name: QualifiedName) -> SchemaEntry:
    schema = execution.catalog.objects.schema(name.database, name.schema)
    if schema is None:
        raise ObjectNotFoundError(f"{name.database}.{name.schema}", "Schema")
    return schema


def _find(execution: Execution, target: exp.Table, kind: PolicyKind) -> tuple[PolicyEntry | None, Securable | None]:
    name = execution.tables.name(target)
    policy = execution.catalog.policies.policy(name.database, name.schema, name.name, kind)
    securable = relation(execution.tables, target, (kind.object_kind,)) if policy is not None else None
    return policy, securable


def _found(execution: Execution, target: exp.Table, kind: PolicyKind) -> tuple[PolicyEntry, Securable]:
    policy, securable = _find(execution, target, kind)
    if policy is None or securable is None:
        raise ObjectNotFoundError(str(execution.tables.name(target)), _LABELS[kind])
    return policy, securable


def _kind(expression: exp.Expression) -> PolicyKind:
    return PolicyKind(expression.text("kind"))


def _attached(execution: Execution, policy: PolicyEntry) -> bool:
    catalog = execution.catalog
    return bool(catalog.policies.references_to_policy(policy.id) or catalog.policies.tags_with_policy(policy.id))


@registry.statement(CreatePolicy, bind=_create_needs, query_type="CREATE")
def create_policy(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = _kind(expression)
    catalog = execution.catalog
    name = execution.tables.name(expression.this)
    schema = _schema(execution, name)
    existing, _ = _find(execution, expression.this, kind)
    if existing is not None:
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
        if not expression.args.get("replace"):
            raise ObjectExistsError(name.name)
        if kind is not PolicyKind.TAG and _attached(execution, existing):
            raise SqlCompilationError(
                f"Policy {name.name} cannot be dropped/replaced as it is associated with one or more entities."
            )
    arguments, returns, body = _definition(expression, kind)
    if kind is not PolicyKind.TAG:
        _require_body_reads(execution, str(name), name, execution.session.role, kind, expression.args["body"])
    allowed = expression.args.get("allowed_values")
    comment = expression.args.get("comment")
    with execution.work.records():
        if existing is not None:
            catalog.policies.drop_policy(existing)
        created = catalog.policies.create_policy(
            schema,
            name.name,
            kind,
            signature=arguments,
            return_type=returns,
            body=body,
            allowed_values=[value.name for value in allowed] if allowed else None,
            comment=comment.name if comment is not None else None,
            now=execution.now(),
        )
        catalog.access.set_owner(kind.object_kind, created.id, execution.session.role)
    return results.status(execution.spark, f"{_LABELS[kind]} {name.name} successfully created.")


def _require_body_reads(
    execution: Execution, label: str, name: QualifiedName, owner: str, kind: PolicyKind, body: exp.Expression
) -> None:
    """Raise unless ``owner`` may read every relation a policy's body reads, its names resolved in the policy's schema."""
    scope = execution.tables.nested(SessionContext(name.database, name.schema), label)
    require_definer_reads(scope, body, Definer(label, owner, kind.value.lower()))


def _definition(expression: exp.Expression, kind: PolicyKind) -> tuple[list[tuple[str, str]], str | None, str | None]:
    """A policy's arguments (name, type), return type and body text, as stored; nothing for a tag."""
    if kind is PolicyKind.TAG:
        return [], None, None
    arguments = [(column.name, column.args["kind"].sql(dialect=Lsql)) for column in expression.expressions]
    if not arguments:
        raise SqlCompilationError("A policy takes at least one argument.")
    if len({name.upper() for name, _ in arguments}) != len(arguments):
        raise SqlCompilationError("A policy's arguments must have distinct names.")
    returns = expression.args["returns"].sql(dialect=Lsql)
    if kind is PolicyKind.ROW_ACCESS and type_family(returns) != "boolean":
        raise SqlCompilationError("A row access policy must return BOOLEAN.")
    if kind is PolicyKind.MASKING and type_family(returns) != type_family(arguments[0][1]):
        raise SqlCompilationError(
            f"The return type {returns} of masking policy must match the type {arguments[0][1]} of its first argument."
        )
    return arguments, returns, expression.args["body"].sql(dialect=Lsql)


@registry.statement(DropPolicy, bind=_owner_needs, query_type="DROP")
def drop_policy(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = _kind(expression)
    policy, securable = _find(execution, expression.this, kind)
    name = execution.tables.name(expression.this)
    if policy is None or securable is None:
        if expression.args.get("exists"):
            return results.status(execution.spark, f"Drop statement executed successfully ({name.name} already dropped).")
        raise ObjectNotFoundError(str(name), _LABELS[kind])
    if kind is not PolicyKind.TAG and _attached(execution, policy):
        raise SqlCompilationError(
            f"Policy {policy.name} cannot be dropped/replaced as it is associated with one or more entities."
        )
    with execution.work.records():
        execution.catalog.policies.drop_policy(policy)
    return results.status(execution.spark, f"{policy.name} successfully dropped.")


@registry.statement(AlterPolicy, bind=_owner_needs, query_type="ALTER")
def alter_policy(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = _kind(expression)
    policy, securable = _find(execution, expression.this, kind)
    if policy is None or securable is None:
        if expression.args.get("exists"):
            return results.status(execution.spark, "Statement executed successfully.")
        raise ObjectNotFoundError(str(execution.tables.name(expression.this)), _LABELS[kind])
    catalog = execution.catalog
    policies = expression.args.get("policies")
    if policies:
        masking = [_found(execution, target, PolicyKind.MASKING) for target in policies]
        if not expression.args.get("unset"):
            _require_tag_policies_fit(execution, policy, [found for found, _ in masking])
        with execution.work.records():
            for found, _ in masking:
                if expression.args.get("unset"):
                    catalog.policies.unset_tag_policy(policy.id, found.id)
                else:
                    catalog.policies.set_tag_policy(policy.id, found.id)
    elif expression.args.get("body") is not None:
        where = QualifiedName(policy.database, policy.schema, policy.name)
        owner = catalog.access.owner(kind.object_kind, policy.id)
        _require_body_reads(execution, policy.qualified, where, owner, kind, expression.args["body"])
        with execution.work.records():
            catalog.policies.set_policy_body(policy, expression.args["body"].sql(dialect=Lsql))
    else:
        comment = expression.args.get("comment")
        with execution.work.records():
            catalog.policies.set_policy_comment(policy, comment.name if comment is not None else None)
    return results.status(execution.spark, "Statement executed successfully.")


def _require_tag_policies_fit(execution: Execution, tag: PolicyEntry, adding: list[PolicyEntry]) -> None:
    """A tag carries at most one masking policy per data type (Snowflake's rule)."""
    catalog = execution.catalog
    families: dict[str, str] = {}
    for policy_id in catalog.policies.tag_policies(tag.id):
        present = catalog.policies.policy_by_id(policy_id)
        if present is not None and present.signature:
            families[type_family(present.signature[0][1])] = present.name
    for policy in adding:
        family = type_family(policy.signature[0][1])
        if families.get(family, policy.name) != policy.name:
            raise SqlCompilationError(
                f"Tag {tag.name} already has a masking policy for data type {policy.signature[0][1]}: "
                f"{families[family]}. A tag can have only one masking policy per data type."
            )
        families[family] = policy.name


# Attaching policies and tags to tables and views ------------------------------------------


def _altered_kind(expression: exp.Expression) -> ObjectKind:
    """The kind of object (a table or a view) an ALTER that sets or unsets a policy or tag names."""
    return ObjectKind(expression.text("kind").upper())


def _altered_object(tables: Tables, expression: exp.Expression) -> Securable | None:
    """The table or view an ALTER that sets or unsets a policy or tag names, as the binder resolves it; None if none."""
    return relation(tables, expression.this, (_altered_kind(expression),))


def _object(execution: Execution, expression: exp.Expression) -> tuple[Securable, list[tuple[str, str]]]:
    """The table or view an ALTER names, and its columns (name, Spark type)."""
    securable = _altered_object(execution.tables, expression)
    if securable is None:
        kind = _altered_kind(expression)
        raise ObjectNotFoundError(str(execution.tables.name(expression.this)), kind.value.capitalize())
    return securable, _columns_of(execution, securable)


def _columns_of(execution: Execution, securable: Securable) -> list[tuple[str, str]]:
    catalog = execution.catalog
    if securable.kind is ObjectKind.TABLE:
        entry = catalog.objects.table_by_id(securable.id)
        assert entry is not None
        schema = execution.tables.log(entry).schema()
    else:
        from lakeclone.engine.compiler import spark_sql

        view = catalog.views.view_by_id(securable.id)
        assert view is not None
        reference = exp.table_(view.name, db=view.schema, catalog=view.database, quoted=True)
        schema = execution.spark.sql(spark_sql(exp.select("*").from_(reference).limit(0), execution.tables)).schema
    return [(field.name, field.dataType.simpleString()) for field in schema.fields]


def _column_named(columns: list[tuple[str, str]], identifier: exp.Expression, owner: Securable) -> tuple[str, str]:
    found = column_named([name for name, _ in columns], identifier)
    if found is not None:
        return found, dict(columns)[found]
    raise SqlCompilationError(f"invalid identifier '{identifier.name}' in {owner.kind.lower()} {owner.name}")


@registry.statement(AlterColumnPolicy, bind=_column_policy_needs, query_type="ALTER")
def alter_column_policy(execution: Execution) -> DataFrame:
    """``ALTER TABLE|VIEW t MODIFY COLUMN c SET MASKING POLICY p [USING (c, cond…)] [FORCE]`` or ``UNSET``."""
    expression = execution.expression
    owner, columns = _object(execution, expression)
    column, column_type = _column_named(columns, expression.args["column"], owner)
    catalog = execution.catalog
    present = [r for r in catalog.policies.policy_references(owner.id) if r.column == column]
    if expression.args.get("unset"):
        with execution.work.records():
            for reference in present:
                catalog.policies.detach_policy(reference)
        return results.status(execution.spark, "Statement executed successfully.")
    policy, _ = _found(execution, expression.args["policy"], PolicyKind.MASKING)
    using = [_column_named(columns, c, owner) for c in expression.args.get("using") or []] or [(column, column_type)]
    if using[0][0] != column:
        raise SqlCompilationError(f"The first column of USING must be the column the policy masks, {column}, not {using[0][0]}.")
    if len(using) != len(policy.signature):
        raise SqlCompilationError(
            f"Masking policy {policy.name} takes {len(policy.signature)} arguments; "
            f"{len(using)} column{'s' if len(using) != 1 else ''} given."
        )
    for (argument, declared), (name, actual) in zip(policy.signature, using, strict=True):
        if type_family(declared) != type_family(actual):
            raise SqlCompilationError(
                f"Policy type mismatch: argument {argument} of masking policy {policy.name} is {declared}, "
                f"but column {name} is {actual.upper()}."
            )
    if present and not expression.args.get("force"):
        raise SqlCompilationError(
            "Specified column already attached to another masking policy. A column cannot be attached to multiple "
            "masking policies. Please drop the current association in order to attach a new masking policy."
        )
    with execution.work.records():
        for reference in present:
            catalog.policies.detach_policy(reference)
        catalog.policies.attach_policy(PolicyReference(policy.id, owner.kind, owner.id, column, tuple(n for n, _ in using)))
    return results.status(execution.spark, "Statement executed successfully.")


@registry.statement(AlterRowAccessPolicy, bind=_row_access_needs, query_type="ALTER")
def alter_row_access_policy(execution: Execution) -> DataFrame:
    """``ALTER TABLE|VIEW t ADD ROW ACCESS POLICY r ON (col…)`` or ``DROP ROW ACCESS POLICY r``."""
    expression = execution.expression
    owner, columns = _object(execution, expression)
    policy, _ = _found(execution, expression.args["policy"], PolicyKind.ROW_ACCESS)
    catalog = execution.catalog
    present = [r for r in catalog.policies.policy_references(owner.id) if r.column == OBJECT_LEVEL]
    if expression.args.get("drop"):
        attached = [r for r in present if r.policy_id == policy.id]
        if not attached:
            raise SqlCompilationError(f"Row access policy {policy.name} is not attached to {owner.name}.")
        with execution.work.records():
            catalog.policies.detach_policy(attached[0])
        return results.status(execution.spark, "Statement executed successfully.")
    if present:
        current = catalog.policies.policy_by_id(present[0].policy_id)
        raise SqlCompilationError(
            f"Object {owner.name} already has a row access policy: {current.name if current else present[0].policy_id}. "
            "Only one row access policy can be attached to an object."
        )
    on = [_column_named(columns, c, owner) for c in expression.expressions]
    if len(on) != len(policy.signature):
        raise SqlCompilationError(
            f"Row access policy {policy.name} takes {len(policy.signature)} arguments; {len(on)} columns given."
        )
    for (argument, declared), (name, actual) in zip(policy.signature, on, strict=True):
        if type_family(declared) != type_family(actual):
            raise SqlCompilationError(
                f"Policy type mismatch: argument {argument} of row access policy {policy.name} is {declared}, "
                f"but column {name} is {actual.upper()}."
            )
    with execution.work.records():
        catalog.policies.attach_policy(PolicyReference(policy.id, owner.kind, owner.id, OBJECT_LEVEL, tuple(n for n, _ in on)))
    return results.status(execution.spark, "Statement executed successfully.")


@registry.statement(AlterTags, bind=_tag_needs, query_type="ALTER")
def alter_tags(execution: Execution) -> DataFrame:
    """``ALTER TABLE|VIEW t [MODIFY COLUMN c] SET TAG tag = 'v', …`` or ``UNSET TAG tag, …``."""
    expression = execution.expression
    owner, columns = _object(execution, expression)
    column_identifier = expression.args.get("column")
    column = _column_named(columns, column_identifier, owner)[0] if column_identifier is not None else OBJECT_LEVEL
    unset = bool(expression.args.get("unset"))
    settings: list[tuple[PolicyEntry, Securable, str]] = []
    for item in expression.expressions:
        target, value = (item, None) if unset else (item.this, item.expression.name)
        tag, securable = _found(execution, target, PolicyKind.TAG)
        if value is not None and tag.allowed_values is not None and value not in tag.allowed_values:
            raise SqlCompilationError(
                f"Tag {tag.name} has allowed values {', '.join(repr(v) for v in tag.allowed_values)}; '{value}' is not one."
            )
        settings.append((tag, securable, value or ""))
    catalog = execution.catalog
    with execution.work.records():
        for tag, _, value in settings:
            if unset:
                catalog.policies.unset_tag(tag.id, owner.id, column)
            else:
                catalog.policies.set_tag(TagReference(tag.id, owner.kind, owner.id, column, value))
    return results.status(execution.spark, "Statement executed successfully.")


# SHOW and DESCRIBE ------------------------------------------------------------------------

POLICIES_SCHEMA = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, kind STRING, owner STRING, comment STRING"
)
TAGS_SCHEMA = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, owner STRING, comment STRING, "
    "allowed_values STRING"
)


def _show(kind: PolicyKind) -> registry.ShowHandler:
    def show(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
        catalog = execution.catalog
        roles = GUARD.roles(catalog, execution.session.role)
        data: list[tuple[object, ...]] = []
        for schema in scope_schemas(execution):
            for policy in catalog.policies.in_schema(schema, kind):
                securable = Securable(kind.object_kind, policy.id, policy.qualified)
                if not matches(like, policy.name) or not GUARD.sees(catalog, roles, securable):
                    continue
                owner = catalog.access.owner(kind.object_kind, policy.id)
                if kind is PolicyKind.TAG:
                    allowed = policy.allowed_values
                    data.append(
                        (
                            policy.created_at,
                            policy.name,
                            policy.database,
                            policy.schema,
                            owner,
                            policy.comment or "",
                            None if allowed is None else "[" + ",".join(f'"{v}"' for v in allowed) + "]",
                        )
                    )
                else:
                    data.append(
                        (
                            policy.created_at,
                            policy.name,
                            policy.database,
                            policy.schema,
                            kind.value.replace(" ", "_"),
                            owner,
                            policy.comment or "",
                        )
                    )
        return results.rows(execution.spark, TAGS_SCHEMA if kind is PolicyKind.TAG else POLICIES_SCHEMA, data)

    return show


def _describe(kind: PolicyKind) -> registry.Handler:
    def describe(execution: Execution) -> DataFrame:
        policy, _ = _found(execution, execution.expression.this, kind)
        if kind is PolicyKind.TAG:
            allowed = None if policy.allowed_values is None else ", ".join(policy.allowed_values)
            return results.rows(
                execution.spark,
                "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, allowed_values STRING, "
                "comment STRING",
                [(policy.created_at, policy.name, policy.database, policy.schema, allowed, policy.comment)],
            )
        signature = "(" + ", ".join(f"{name} {kind_}" for name, kind_ in policy.signature) + ")"
        return results.rows(
            execution.spark,
            "created_on TIMESTAMP, name STRING, signature STRING, return_type STRING, body STRING",
            [(policy.created_at, policy.name, signature, policy.return_type, policy.body)],
        )

    return describe


registry.SHOWS["MASKING POLICIES"] = _show(PolicyKind.MASKING)
registry.SHOWS["ROW ACCESS POLICIES"] = _show(PolicyKind.ROW_ACCESS)
registry.SHOWS["TAGS"] = _show(PolicyKind.TAG)
for _kind_ in PolicyKind:
    registry.DESCRIBERS[_kind_.value] = _describe(_kind_)
