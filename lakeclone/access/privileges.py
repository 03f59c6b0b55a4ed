"""Privileges: their Snowflake and Unity Catalog spellings, and which ones a statement's need accepts."""

from __future__ import annotations

from lakeclone.engine.privileges import Privilege
from lakeclone.errors import SqlCompilationError

# Unity Catalog's names for Snowflake's.
_SPELLINGS = {
    "USE CATALOG": Privilege.USAGE,
    "USE SCHEMA": Privilege.USAGE,
    "ALL PRIVILEGES": Privilege.ALL,
}

# What each kind of object can be granted; OWNERSHIP and ALL go with every kind.
APPLICABLE: dict[str, frozenset[Privilege]] = {
    "ACCOUNT": frozenset(
        {
            Privilege.CREATE_DATABASE,
            Privilege.CREATE_EXTERNAL_TABLE,
            Privilege.APPLY_MASKING_POLICY,
            Privilege.APPLY_ROW_ACCESS_POLICY,
            Privilege.APPLY_TAG,
        }
    ),
    "DATABASE": frozenset({Privilege.USAGE, Privilege.CREATE_SCHEMA}),
    "SCHEMA": frozenset(
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
    "TABLE": frozenset(
        {
            Privilege.SELECT,
            Privilege.INSERT,
            Privilege.UPDATE,
            Privilege.DELETE,
            Privilege.TRUNCATE,
            Privilege.MODIFY,
        }
    ),
    "VIEW": frozenset({Privilege.SELECT}),
    "STREAM": frozenset({Privilege.SELECT}),
    "SEQUENCE": frozenset({Privilege.USAGE}),
    "STAGE": frozenset({Privilege.USAGE}),
    "FILE FORMAT": frozenset({Privilege.USAGE}),
    "MASKING POLICY": frozenset({Privilege.APPLY}),
    "ROW ACCESS POLICY": frozenset({Privilege.APPLY}),
    "TAG": frozenset({Privilege.APPLY}),
}

# Unity Catalog's MODIFY stands for every write on a table.
WRITES = frozenset({Privilege.INSERT, Privilege.UPDATE, Privilege.DELETE, Privilege.TRUNCATE})


def privilege(text: str, kind: str) -> Privilege:
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
    owns_account = named is Privilege.OWNERSHIP and kind == "ACCOUNT"
    if owns_account or (named not in (Privilege.OWNERSHIP, Privilege.ALL) and named not in APPLICABLE[kind]):
        raise SqlCompilationError(f"Invalid privilege {named.value} for {kind.lower()}.")
    return named


def satisfies(held: Privilege, needed: Privilege) -> bool:
    """Whether holding ``held`` on an object grants ``needed`` on it (OWNERSHIP is checked apart)."""
    if held in (needed, Privilege.ALL):
        return needed is not Privilege.OWNERSHIP
    return held is Privilege.MODIFY and needed in WRITES
