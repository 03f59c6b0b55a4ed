"""Loading files with SQL: stages, named file formats, LIST and COPY INTO with Snowflake's load metadata."""

from sqlglot import exp

from lakeclone.engine import registry
from lakeclone.loading import copy, file_formats, query, stages

registry.STATEMENTS[exp.Copy] = registry.Statement(copy.copy_needs, copy.copy_into, "COPY")
registry.FINISH.append(copy.finish)
registry.TRANSACTION_COMMITS.append(copy.commit_loads)
registry.TRANSACTION_ROLLBACKS.append(copy.forget_loads)
registry.RECOVERIES.append(copy.recover)

__all__ = ["copy", "file_formats", "query", "stages"]
