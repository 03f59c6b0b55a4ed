"""Access control: users, roles, grants and ownership, checked on every statement.

Privileges are enforced by lakeclone's API; someone who can read the
warehouse's files directly bypasses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.access import statements
from lakeclone.access.guard import GUARD, Guard
from lakeclone.access.ownership import record_created
from lakeclone.catalog.access import ACCOUNTADMIN, ADMINISTRATOR, PUBLIC
from lakeclone.engine import registry
from lakeclone.errors import ObjectNotFoundError

if TYPE_CHECKING:
    from lakeclone.engine.executor import Executor

__all__ = ["GUARD", "Guard"]


def _sign_in(executor: Executor) -> None:
    """Check the user ``connect()`` named and pick the session's role: the one named, else the default."""
    context = executor.context
    catalog = executor.catalog
    catalog.access.own_unowned_containers()
    if not catalog.access.user_exists(context.user):
        raise ObjectNotFoundError(context.user, "User")
    if executor.lake.role is None and context.user != ADMINISTRATOR:
        context.role = PUBLIC
    elif executor.lake.role is not None or context.role != ACCOUNTADMIN:
        statements.use_role(catalog, context.user, context.role)


registry.SLOTS.authorizer = GUARD
registry.FINISH.append(record_created)
registry.SESSION_STARTS.append(_sign_in)
