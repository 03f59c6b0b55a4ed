"""VACUUM that never breaks a clone, and the purge of dropped tables."""

from lakeclone.engine import registry
from lakeclone.vacuum import plan, purge, statement

registry.PURGES.append(purge.purge_after_statement)

__all__ = ["plan", "purge", "statement"]
