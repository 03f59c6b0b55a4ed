"""Clones: zero-copy and deep clones of tables, schemas and databases, and their lineage."""

from lakeclone.clones import create, lineage

__all__ = ["create", "lineage"]
