"""Streams and the CHANGES clause: Snowflake's change data capture on Delta tables.

A stream is a bookmark on a table's versions; reading it returns the net
change since, and only a DML statement that reads it moves the bookmark, when
it commits. A stream on a view has a bookmark on each table the view reads
(:mod:`~lakeclone.streams.view_plan`, :mod:`~lakeclone.streams.lineage`,
:mod:`~lakeclone.streams.view_reader`). Change tracking, staleness, VACUUM's
keep rule and what clones carry of streams live here too.
"""

from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import registry
from lakeclone.streams import binding, clones, consume, lineage, statements, tracking, vacuum, view_plan, view_reader
from lakeclone.vacuum.plan import KEEP_REASONS

registry.RELATIONS.append(binding.bind_stream)
registry.TABLE_CLAUSES["changes"] = binding.bind_changes
registry.TABLE_FUNCTIONS["TABLE_CHANGES"] = registry.TableFunction(binding.bind_table_changes, binding.table_changes_reads)
registry.BEFORE_COMMIT.append(consume.before_commit)
registry.FINISH.append(consume.finish)
registry.RECOVERIES.append(consume.recover)
registry.TRANSACTION_COMMITS.append(consume.commit_consumed)
registry.TRANSACTION_ROLLBACKS.append(consume.forget_consumed)
registry.PARAMETER_HOOKS[tracking.CHANGE_TRACKING] = tracking.on_parameter
registry.CREATE_PROPERTIES[tracking.CHANGE_TRACKING] = tracking.create_properties
registry.schema_object(statements.STREAM)
registry.DESCRIBERS[ObjectKind.STREAM.value] = statements.describe_stream
registry.CLONE_HOOKS.append(clones.clone_streams)
# Before the last rule, which judges files no version ever read.
KEEP_REASONS.insert(len(KEEP_REASONS) - 1, vacuum.stream_offsets)

__all__ = [
    "binding",
    "clones",
    "consume",
    "lineage",
    "statements",
    "tracking",
    "vacuum",
    "view_plan",
    "view_reader",
]
