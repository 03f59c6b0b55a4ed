"""Masking policies, row access policies and tags, compiled into every query that reads what they protect.

Policies are enforced by lakeclone's API, like privileges: someone who reads
the warehouse's files directly sees the raw data.
"""

from __future__ import annotations

from lakeclone.engine import registry
from lakeclone.policies import clones, references, statements
from lakeclone.policies.enforce import protect, target_filter
from lakeclone.policies.model import Protection, protection

__all__ = ["Protection", "protection", "statements"]

registry.PROTECTORS.append(protect)
registry.TARGET_FILTERS.append(target_filter)
registry.CLONE_HOOKS.append(clones.clone_policies)
registry.TABLE_FUNCTIONS.update(references.TABLE_FUNCTIONS)
