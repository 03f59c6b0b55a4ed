"""Transactions: BEGIN … COMMIT | ROLLBACK over Delta tables, which have none of their own.

A transaction's writes are Delta commits made under a table lock in the
catalog; other sessions read each locked table's version from before the
transaction until COMMIT ends the locks in one SQLite transaction. ROLLBACK,
and the recovery of a transaction whose session died, restore the tables.
Streams read inside a transaction stop where it began (repeatable read).
"""

from lakeclone.engine import registry
from lakeclone.transactions import lifecycle, locks, statements

registry.BEFORE_STATEMENT.append(statements.commit_before_ddl)
registry.BEFORE_COMMIT.append(locks.lock_target)
registry.FINISH.append(locks.release)
registry.RECOVERIES.append(lifecycle.recover)
registry.SHOWS["TRANSACTIONS"] = statements.show_transactions

__all__ = ["lifecycle", "locks", "statements"]
