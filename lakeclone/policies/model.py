"""What protects an object: its masking policies by column (direct or through tags) and its row access policy."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.policies import OBJECT_LEVEL, PolicyEntry, PolicyKind
from lakeclone.dialect import Lsql
from lakeclone.engine.privileges import Privilege

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from lakeclone.catalog.store import Catalog

# The account-level privilege that lets a role set any policy (or tag) of a kind, without APPLY on it.
APPLY_ON_ACCOUNT = {
    PolicyKind.MASKING: Privilege.APPLY_MASKING_POLICY,
    PolicyKind.ROW_ACCESS: Privilege.APPLY_ROW_ACCESS_POLICY,
    PolicyKind.TAG: Privilege.APPLY_TAG,
}


@dataclass(frozen=True)
class Mask:
    """A masking policy applied to one column, the columns its arguments read, and the tag it came through, if any."""

    policy: PolicyEntry
    using: tuple[str, ...]
    tag: PolicyEntry | None = None


@dataclass(frozen=True)
class RowFilter:
    """A row access policy on an object and the columns its arguments read."""

    policy: PolicyEntry
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Protection:
    """Everything that protects one table or view: masks by column name, and its row access policy."""

    masks: Mapping[str, Mask]
    row_filter: RowFilter | None
    tags: Mapping[str, Mapping[str, str]]
    """Tag values by column ('' for the object): tag's qualified name -> value."""

    def __bool__(self) -> bool:
        return bool(self.masks) or self.row_filter is not None


@functools.lru_cache(maxsize=256)
def type_family(text: str) -> str:
    """A type's family, as Snowflake matches a policy's argument to a column: all strings alike, all exact numbers alike.

    ``text`` is a Spark type (``decimal(10,2)``, ``int``) or a type as a policy declares it (``VARCHAR``, ``NUMBER``).
    """
    try:
        spark = exp.DataType.build(text, dialect=Lsql).sql(dialect="spark").lower()
    except Exception:  # sqlglot raises several kinds on a type it cannot read; the text is then its own family
        spark = text.lower()
    base = spark.split("(")[0].strip()
    if base in ("string", "varchar", "char", "text"):
        return "string"
    if base in ("tinyint", "smallint", "int", "integer", "bigint", "decimal", "numeric", "byte", "short", "long"):
        return "number"
    if base in ("float", "double", "real"):
        return "float"
    if base.startswith("timestamp"):
        return "timestamp"
    return base


def column_types(schema_fields: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Column name (upper) -> its type family."""
    return {name.upper(): type_family(kind) for name, kind in schema_fields}


def protection(catalog: Catalog, object_id: str, types: Mapping[str, str] | None = None) -> Protection:
    """What protects ``object_id``; ``types`` (column upper -> type family) picks tag-based policies by type.

    A column's own masking policy wins over one that comes through a tag; a
    tag on the column wins over the same tag set on the object. Without
    ``types``, tag-based policies apply only where a tag carries exactly one.
    """
    masks: dict[str, Mask] = {}
    row_filter: RowFilter | None = None
    for reference in catalog.policies.policy_references(object_id):
        policy = catalog.policies.policy_by_id(reference.policy_id)
        if policy is None:
            continue
        if reference.column == OBJECT_LEVEL:
            row_filter = RowFilter(policy, reference.using)
        else:
            masks[reference.column.upper()] = Mask(policy, reference.using)
    tags: dict[str, dict[str, str]] = {}
    object_tags: list[tuple[str, PolicyEntry]] = []
    column_tags: dict[str, list[PolicyEntry]] = {}
    for tag_reference in catalog.policies.tag_references(object_id):
        tag = catalog.policies.policy_by_id(tag_reference.tag_id)
        if tag is None:
            continue
        tags.setdefault(tag_reference.column, {})[tag.qualified] = tag_reference.value
        if tag_reference.column == OBJECT_LEVEL:
            object_tags.append((tag_reference.value, tag))
        else:
            column_tags.setdefault(tag_reference.column.upper(), []).append(tag)
    if types is not None:
        for column, family in types.items():
            if column in masks:
                continue
            candidates = [*column_tags.get(column, []), *(tag for _, tag in object_tags)]
            for tag in candidates:
                policy = _tag_policy(catalog, tag, family)
                if policy is not None:
                    masks[column] = Mask(policy, (column,), tag)
                    break
    return Protection(masks, row_filter, tags)


def _tag_policy(catalog: Catalog, tag: PolicyEntry, family: str) -> PolicyEntry | None:
    """The masking policy ``tag`` carries for columns of ``family``: one per type (Snowflake's rule)."""
    for policy_id in catalog.policies.tag_policies(tag.id):
        policy = catalog.policies.policy_by_id(policy_id)
        if policy is not None and policy.signature and type_family(policy.signature[0][1]) == family:
            return policy
    return None
