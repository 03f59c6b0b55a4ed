"""Users, roles, the grants of roles and of privileges, future grants and ownership.

Objects are named by kind (an :class:`ObjectKind`; the account's id is ``""``)
and id, so a grant follows its object through renames and a clone's objects
have grants of their own. An object with no ownership row belongs to
ACCOUNTADMIN.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from lakeclone.catalog.db import Store, timestamp_text
from lakeclone.catalog.entries import GranteeKind, ObjectKind

ADMINISTRATOR = "ADMIN"
ACCOUNTADMIN = "ACCOUNTADMIN"
SYSADMIN = "SYSADMIN"
PUBLIC = "PUBLIC"
ACCOUNT_ID = ""
"""The account's id: where CREATE DATABASE and CREATE EXTERNAL TABLE are granted (its kind: ``ObjectKind.ACCOUNT``)."""


@dataclass(frozen=True)
class Grant:
    """A privilege on one object, held by a role."""

    object_kind: ObjectKind
    object_id: str
    privilege: str
    role: str
    grant_option: bool
    granted_by: str


@dataclass(frozen=True)
class FutureGrant:
    """A privilege every object of ``object_kind`` created in a container from now on gets."""

    container_kind: ObjectKind
    container_id: str
    object_kind: ObjectKind
    privilege: str
    role: str
    grant_option: bool


@dataclass(frozen=True)
class RoleGrant:
    """A role granted to a user or to another role."""

    role: str
    grantee_kind: GranteeKind
    grantee: str
    granted_by: str


class AccessStore(Store):
    """The access-control part of the catalog."""

    def user_exists(self, name: str) -> bool:
        return self._db.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone() is not None

    def role_exists(self, name: str) -> bool:
        return self._db.execute("SELECT 1 FROM roles WHERE name = ?", (name,)).fetchone() is not None

    def users(self) -> list[tuple[str, dt.datetime]]:
        from lakeclone.catalog.db import parse_timestamp

        rows = self._db.execute("SELECT name, created_at FROM users ORDER BY name").fetchall()
        return [(r["name"], parse_timestamp(r["created_at"])) for r in rows]

    def roles(self) -> list[tuple[str, str, dt.datetime]]:
        """Every role: (name, owner, created_at)."""
        from lakeclone.catalog.db import parse_timestamp

        rows = self._db.execute("SELECT name, owner, created_at FROM roles ORDER BY name").fetchall()
        return [(r["name"], r["owner"], parse_timestamp(r["created_at"])) for r in rows]

    def role_owner(self, name: str) -> str | None:
        row = self._db.execute("SELECT owner FROM roles WHERE name = ?", (name,)).fetchone()
        return str(row["owner"]) if row else None

    def create_user(self, name: str, now: dt.datetime) -> None:
        self._db.execute("INSERT INTO users (name, created_at) VALUES (?, ?)", (name, timestamp_text(now)))

    def drop_user(self, name: str) -> None:
        self._db.execute("DELETE FROM role_grants WHERE grantee_kind = ? AND grantee = ?", (GranteeKind.USER.value, name))
        self._db.execute("DELETE FROM users WHERE name = ?", (name,))

    def create_role(self, name: str, owner: str, now: dt.datetime) -> None:
        self._db.execute("INSERT INTO roles (name, owner, created_at) VALUES (?, ?, ?)", (name, owner, timestamp_text(now)))

    def drop_role(self, name: str) -> None:
        """Drop a role with its grants; what it owned passes to the role that owned it (Snowflake's rule)."""
        owner = self.role_owner(name) or ACCOUNTADMIN
        self._db.execute("UPDATE ownership SET role = ? WHERE role = ?", (owner, name))
        self._db.execute("UPDATE roles SET owner = ? WHERE owner = ?", (owner, name))
        self._db.execute(
            "DELETE FROM role_grants WHERE role = ? OR (grantee_kind = ? AND grantee = ?)", (name, GranteeKind.ROLE.value, name)
        )
        self._db.execute("DELETE FROM grants WHERE role = ?", (name,))
        self._db.execute("DELETE FROM future_grants WHERE role = ?", (name,))
        self._db.execute("DELETE FROM roles WHERE name = ?", (name,))

    def grant_role(self, role: str, grantee_kind: GranteeKind, grantee: str, granted_by: str) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO role_grants (role, grantee_kind, grantee, granted_by) VALUES (?, ?, ?, ?)",
            (role, grantee_kind.value, grantee, granted_by),
        )

    def revoke_role(self, role: str, grantee_kind: GranteeKind, grantee: str) -> None:
        self._db.execute(
            "DELETE FROM role_grants WHERE role = ? AND grantee_kind = ? AND grantee = ?", (role, grantee_kind.value, grantee)
        )

    def role_grants(self, *, grantee_kind: GranteeKind | None = None, grantee: str | None = None) -> list[RoleGrant]:
        sql, args = "SELECT * FROM role_grants WHERE 1 = 1", list[str]()
        if grantee_kind is not None:
            sql, args = sql + " AND grantee_kind = ?", [*args, grantee_kind.value]
        if grantee is not None:
            sql, args = sql + " AND grantee = ?", [*args, grantee]
        rows = self._db.execute(sql + " ORDER BY role, grantee", args).fetchall()
        return [RoleGrant(r["role"], GranteeKind(r["grantee_kind"]), r["grantee"], r["granted_by"]) for r in rows]

    def roles_granted_to_role(self, role: str) -> list[str]:
        rows = self._db.execute(
            "SELECT role FROM role_grants WHERE grantee_kind = ? AND grantee = ?", (GranteeKind.ROLE.value, role)
        ).fetchall()
        return [r["role"] for r in rows]

    def grant(self, grant: Grant) -> None:
        """Record a grant; granting again with the grant option adds the option, never removes it."""
        self._db.execute(
            "INSERT INTO grants (object_kind, object_id, privilege, role, grant_option, granted_by) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (object_kind, object_id, privilege, role) "
            "DO UPDATE SET grant_option = MAX(grant_option, excluded.grant_option)",
            (grant.object_kind, grant.object_id, grant.privilege, grant.role, int(grant.grant_option), grant.granted_by),
        )

    def revoke(self, object_kind: ObjectKind, object_id: str, privilege: str, role: str, *, option_only: bool) -> None:
        key = (object_kind, object_id, privilege, role)
        where = " WHERE object_kind = ? AND object_id = ? AND privilege = ? AND role = ?"
        if option_only:
            self._db.execute("UPDATE grants SET grant_option = 0" + where, key)
        else:
            self._db.execute("DELETE FROM grants" + where, key)

    def grants_on(self, object_kind: ObjectKind, object_id: str) -> list[Grant]:
        rows = self._db.execute(
            "SELECT * FROM grants WHERE object_kind = ? AND object_id = ? ORDER BY privilege, role",
            (object_kind, object_id),
        ).fetchall()
        return [_grant(r) for r in rows]

    def grants_to(self, roles: Iterable[str]) -> list[Grant]:
        names = list(roles)
        marks = ", ".join("?" for _ in names)
        rows = self._db.execute(
            f"SELECT * FROM grants WHERE role IN ({marks}) ORDER BY object_kind, object_id, privilege", names
        ).fetchall()
        return [_grant(r) for r in rows]

    def revoke_all_on(self, object_kind: ObjectKind, object_id: str) -> None:
        self._db.execute("DELETE FROM grants WHERE object_kind = ? AND object_id = ?", (object_kind, object_id))

    def add_future_grant(self, grant: FutureGrant) -> None:
        self._db.execute(
            "INSERT INTO future_grants (container_kind, container_id, object_kind, privilege, role, grant_option) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET grant_option = MAX(grant_option, excluded.grant_option)",
            (
                grant.container_kind,
                grant.container_id,
                grant.object_kind,
                grant.privilege,
                grant.role,
                int(grant.grant_option),
            ),
        )

    def remove_future_grant(self, grant: FutureGrant) -> None:
        self._db.execute(
            "DELETE FROM future_grants WHERE container_kind = ? AND container_id = ? AND object_kind = ? "
            "AND privilege = ? AND role = ?",
            (grant.container_kind, grant.container_id, grant.object_kind, grant.privilege, grant.role),
        )

    def future_grants(self, container_kind: ObjectKind, container_id: str) -> list[FutureGrant]:
        rows = self._db.execute(
            "SELECT * FROM future_grants WHERE container_kind = ? AND container_id = ? ORDER BY object_kind, privilege, role",
            (container_kind, container_id),
        ).fetchall()
        return [
            FutureGrant(
                ObjectKind(r["container_kind"]),
                r["container_id"],
                ObjectKind(r["object_kind"]),
                r["privilege"],
                r["role"],
                bool(r["grant_option"]),
            )
            for r in rows
        ]

    def owner(self, object_kind: ObjectKind, object_id: str) -> str:
        row = self._db.execute(
            "SELECT role FROM ownership WHERE object_kind = ? AND object_id = ?", (object_kind, object_id)
        ).fetchone()
        return str(row["role"]) if row else ACCOUNTADMIN

    def has_owner(self, object_kind: ObjectKind, object_id: str) -> bool:
        """Whether the object's owner is recorded (an object created before its statement finished is)."""
        row = self._db.execute(
            "SELECT 1 FROM ownership WHERE object_kind = ? AND object_id = ?", (object_kind, object_id)
        ).fetchone()
        return row is not None

    def own_unowned_containers(self) -> None:
        """Record ACCOUNTADMIN as the owner of databases and schemas no statement created (the default database).

        One transaction of its own, run as a session starts.
        """
        with self.transaction():
            for kind, table in ((ObjectKind.DATABASE, "databases"), (ObjectKind.SCHEMA, "schemas")):
                self._db.execute(
                    f"INSERT INTO ownership (object_kind, object_id, role) SELECT ?, id, ? FROM {table} "
                    "WHERE id NOT IN (SELECT object_id FROM ownership WHERE object_kind = ?)",
                    (kind, ACCOUNTADMIN, kind),
                )

    def set_owner(self, object_kind: ObjectKind, object_id: str, role: str) -> None:
        self._db.execute(
            "INSERT INTO ownership (object_kind, object_id, role) VALUES (?, ?, ?) "
            "ON CONFLICT (object_kind, object_id) DO UPDATE SET role = excluded.role",
            (object_kind, object_id, role),
        )


def _grant(row: sqlite3.Row) -> Grant:
    return Grant(
        ObjectKind(row["object_kind"]),
        row["object_id"],
        row["privilege"],
        row["role"],
        bool(row["grant_option"]),
        row["granted_by"],
    )
