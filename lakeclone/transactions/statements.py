"""The transaction statements: BEGIN / START TRANSACTION, COMMIT, ROLLBACK, SHOW TRANSACTIONS.

Snowflake's rules: a DDL statement inside a transaction commits it first and
then runs on its own; queries, DML, SHOW, DESCRIBE and USE run inside it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.dialect.expressions import DescribeDetail, DescribeHistory, SessionParameters, ShowParameters
from lakeclone.engine import needs, registry, results
from lakeclone.errors import NoTransactionError, SqlCompilationError
from lakeclone.transactions import lifecycle

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution, Executor

# What runs inside an open transaction; any other statement commits it first.
TRANSACTIONAL: tuple[type, ...] = (
    exp.Query,
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Copy,  # COPY INTO a table is DML
    exp.ListStage,
    exp.Show,
    ShowParameters,
    exp.Describe,
    DescribeDetail,
    DescribeHistory,
    exp.Use,
    SessionParameters,  # a session's settings define no object: not DDL
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
)


def _name(expression: exp.Expression) -> str | None:
    for mode in expression.args.get("modes") or []:
        match = re.fullmatch(r"NAME\s+(\S+)", str(mode), flags=re.IGNORECASE)
        if match:
            return match.group(1).upper()
    return None


@registry.statement(exp.Transaction, bind=needs.nothing, query_type="BEGIN_TRANSACTION")
def begin(execution: Execution) -> DataFrame:
    """``BEGIN [TRANSACTION | WORK] [NAME n]`` or ``START TRANSACTION [NAME n]``."""
    open_transaction = execution.session.transaction
    if open_transaction is not None:
        raise SqlCompilationError(
            f"Transaction '{open_transaction.id}' is already open in this session; COMMIT or ROLLBACK it first."
        )
    transaction = lifecycle.begin(execution.executor, _name(execution.expression), recording=execution.work.records)
    return results.status(execution.spark, f"Transaction {transaction.id} started.")


@registry.statement(exp.Commit, bind=needs.nothing, query_type="COMMIT")
def commit(execution: Execution) -> DataFrame:
    if execution.session.transaction is None:
        raise NoTransactionError("There is no transaction to commit: run BEGIN first.")
    lifecycle.commit(execution.executor, recording=execution.work.records)
    return results.status(execution.spark, "Statement executed successfully.")


@registry.statement(exp.Rollback, bind=needs.nothing, query_type="ROLLBACK")
def rollback(execution: Execution) -> DataFrame:
    transaction = execution.session.transaction
    if transaction is None:
        raise NoTransactionError("There is no transaction to roll back: run BEGIN first.")
    lifecycle.roll_back(execution.executor, transaction.id, execution.query_id, recording=execution.work.records)
    execution.session.transaction = None
    return results.status(execution.spark, "Statement executed successfully.")


def commit_before_ddl(executor: Executor, expression: exp.Expression) -> bool:
    """Snowflake's rule: DDL commits the open transaction and then runs as a transaction of its own."""
    if executor.context.transaction is None or isinstance(expression, TRANSACTIONAL):
        return False
    lifecycle.commit(executor)
    return True


def show_transactions(execution: Execution, pattern: re.Pattern[str] | None) -> DataFrame:
    """``SHOW TRANSACTIONS``: the warehouse's open transactions."""
    rows = [
        (t.id, t.name, t.session_id, "running", t.started_at)
        for t in execution.catalog.transactions.open_transactions()
        if pattern is None or pattern.fullmatch(t.name or "")
    ]
    return results.rows(execution.spark, "id STRING, name STRING, session STRING, state STRING, started_on TIMESTAMP", rows)
