"""The one place lakeclone talks to delta-spark: reading logs and snapshots, and every kind of commit."""

from lakeclone.delta.commits import Commit, CommitMetadata, committing
from lakeclone.delta.log import Delta, Snapshot, TableFile, TableLog, sql_name

__all__ = ["Commit", "CommitMetadata", "Delta", "Snapshot", "TableFile", "TableLog", "committing", "sql_name"]
