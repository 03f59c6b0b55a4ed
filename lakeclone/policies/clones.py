"""Policies and tags travel with clones, as Snowflake's cloning considerations have it.

A cloned table keeps its source's policy and tag references. A schema or
database clone also copies the policies and tags stored in each cloned
schema; a cloned table whose policy or tag lived in a schema cloned by the
same statement then points at the clone's copy, while one that lived in
another schema keeps pointing at the original. A copied tag carries the
masking policies of its source, remapped the same way: so tag-based masking
in a cloned schema uses the clone's own tag and policy when all three lived
there, and the originals when the tag and policy were in another schema.
Clones at a past point take the references as they are now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.catalog.policies import PolicyKind, PolicyReference, TagReference

if TYPE_CHECKING:
    from lakeclone.engine.registry import CloneEvent


def clone_policies(event: CloneEvent) -> None:
    """Registered in CLONE_HOOKS: copy the cloned schemas' policies and tags, then each cloned object's references."""
    catalog = event.catalog
    copied: dict[str, str] = {}
    for source, target in event.schemas:
        for kind in PolicyKind:
            for policy in catalog.policies.in_schema(source, kind):
                if not event.existed(policy.created_at):
                    continue
                clone = catalog.policies.create_policy(
                    target,
                    policy.name,
                    kind,
                    signature=policy.signature,
                    return_type=policy.return_type,
                    body=policy.body,
                    allowed_values=policy.allowed_values,
                    comment=policy.comment,
                    now=event.now,
                )
                catalog.access.set_owner(kind.object_kind, clone.id, catalog.access.owner(kind.object_kind, policy.id))
                copied[policy.id] = clone.id
    for source_id, clone_id in copied.items():
        for policy_id in catalog.policies.tag_policies(source_id):
            catalog.policies.set_tag_policy(clone_id, copied.get(policy_id, policy_id))
    pairs = [*event.tables, *event.remapped.get("view", {}).items()]
    for source_id, clone_id in pairs:
        for reference in catalog.policies.policy_references(source_id):
            catalog.policies.attach_policy(
                PolicyReference(
                    copied.get(reference.policy_id, reference.policy_id),
                    reference.object_kind,
                    clone_id,
                    reference.column,
                    reference.using,
                )
            )
        for tag in catalog.policies.tag_references(source_id):
            catalog.policies.set_tag(
                TagReference(copied.get(tag.tag_id, tag.tag_id), tag.object_kind, clone_id, tag.column, tag.value)
            )
    event.remapped["policy"] = copied
