"""Privileges: their Snowflake and Unity Catalog spellings, and which ones a statement's need accepts."""

from __future__ import annotations

from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine.privileges import Privilege
from lakeclone.errors import SqlCompilationError

# Unity Catalog's names for Snowflake's.
_SPELLINGS = {
    "USE CATALOG": Privilege.USAGE,
    "USE SCHEMA": Privilege.USAGE,
    "ALL PRIVILEGES": Privilege.ALL,
}

# What each kind of object can be granted; OWNERSHIP and ALL go with every kind.
APPLICABLE: dict[ObjectKind, frozenset[Privilege]] = {
    ObjectKind.ACCOUNT: frozenset(
        {
            Privilege.CREATE_DATABASE,
            Privilege.CREATE_EXTERNAL_TABLE,
            Privilege.APPLY_MASKING_POLICY,
            Privilege.APPLY_ROW_ACCESS_POLICY,
            Privilege.APPLY_TAG,
        }
    ),
    ObjectKind.DATABASE: frozenset({Privilege.USAGE, Privilege.CREATE_SCHEMA}),
    ObjectKind.SCHEMA: frozenset(
        {
            Privilege.USAGE,
            Privilege.CREATE_TABLE,
            Privilege.CREATE_VIEW,
            Privilege.CREATE_STREAM,
            Privilege.CREATE_SEQUENCE,
            Privilege.CREATE_STAGE,
            Privilege.CREATE_FILE_FORMAT,
            Privilege.CREATE_MASKING_POLICY,
            Privilege.CREATE_ROW_ACCESS_POLICY,
            Privilege.CREATE_TAG,
            Privilege.MODIFY,
        }
    ),
    ObjectKind.TABLE: frozenset(
        {
            Privilege.SELECT,
            Privilege.INSERT,
            Privilege.UPDATE,
            Privilege.DELETE,
            Privilege.TRUNCATE,
            Privilege.MODIFY,
        }
    ),
    ObjectKind.VIEW: frozenset({Privilege.SELECT}),
    ObjectKind.STREAM: frozenset({Privilege.SELECT}),
    ObjectKind.SEQUENCE: frozenset({Privilege.USAGE}),
    ObjectKind.STAGE: frozenset({Privilege.USAGE}),
    ObjectKind.FILE_FORMAT: frozenset({Privilege.USAGE}),
    ObjectKind.MASKING_POLICY: frozenset({Privilege.APPLY}),
    ObjectKind.ROW_ACCESS_POLICY: frozenset({Privilege.APPLY}),
    ObjectKind.TAG: frozenset({Privilege.APPLY}),
}

# Unity Catalog's MODIFY stands for every write on a table.
WRITES = frozenset({Privilege.INSERT, Privilege.UPDATE, Privilege.DELETE, Privilege.TRUNCATE})


def privilege(text: str, kind: ObjectKind) -> Privilege:
    """The privilege ``text`` names, checked against what ``kind`` can be granted.

    Raises:
        SqlCompilationError: no such privilege, or none on that kind of object.
    """
    words = " ".join(text.upper().split())
    try:
        named = _SPELLINGS.get(words) or Privilege(words)
    except ValueError:
        raise SqlCompilationError(f"Unsupported privilege '{words}'.") from None
    # The account is no object a role can own: its owner is ACCOUNTADMIN, whose rights no grant hands on.
    owns_account = named is Privilege.OWNERSHIP and kind is ObjectKind.ACCOUNT
    if owns_account or (named not in (Privilege.OWNERSHIP, Privilege.ALL) and named not in APPLICABLE[kind]):
        raise SqlCompilationError(f"Invalid privilege {named.value} for {kind.value.lower()}.")
    return named


def satisfies(held: Privilege, needed: Privilege) -> bool:
    """Whether holding ``held`` on an object grants ``needed`` on it (OWNERSHIP is checked apart)."""
    if held in (needed, Privilege.ALL):
        return needed is not Privilege.OWNERSHIP
    return held is Privilege.MODIFY and needed in WRITES
