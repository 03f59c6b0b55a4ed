"""Background compaction of the small files channels write, with Delta's auto compaction settings.

Every flush of a channel is one small Delta append, so a table fed by
channels gathers small files fast. A streaming client compacts such a table
in its background flusher thread once it holds at least ``minNumFiles``
small files (counting them is a Spark job, so the client counts only after
that many of its own flushes since it last counted): Delta's own OPTIMIZE, as one commit whose actions are all
``dataChange=false``, run as a unit of work under the same table locks as
statements. The rows, their row ids, every channel's txn version and offset
token are the same before and after; streams see no change; time travel to
any earlier version reads the files that version had.

The settings are Delta's auto compaction ones, read the way Delta reads them
(``hooks/AutoCompact.scala``), except for the default:

* ``spark.databricks.delta.autoCompact.enabled`` in the Lake's Spark session,
  when set, wins (``false`` turns compaction off everywhere);
* then the table property ``delta.autoOptimize.autoCompact``;
* if neither is set, a table channels write is compacted (Delta's default is
  off: it has no channels writing a small file per second);
* ``spark.databricks.delta.autoCompact.minNumFiles`` (default 50) small files
  make a compaction due, where small means under
  ``spark.databricks.delta.autoCompact.minFileSize`` (default: half of
  ``spark.databricks.delta.autoCompact.maxFileSize``, 128 MiB).

Delta's own post-commit auto compaction is off in a client's Spark session,
so that a flush never waits for a compaction: this module does it after.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

AUTO_COMPACT_PROPERTY = "delta.autoOptimize.autoCompact"
ENABLED_CONF = "spark.databricks.delta.autoCompact.enabled"
MIN_NUM_FILES_CONF = "spark.databricks.delta.autoCompact.minNumFiles"
MAX_FILE_SIZE_CONF = "spark.databricks.delta.autoCompact.maxFileSize"
MIN_FILE_SIZE_CONF = "spark.databricks.delta.autoCompact.minFileSize"

DEFAULT_MIN_NUM_FILES = 50
DEFAULT_MAX_FILE_SIZE = 128 * 1024 * 1024

# Delta's values for "on" (AutoCompactType.Enabled.configValueStrings) and "off".
_ON = frozenset({"true", "auto", "legacy"})
_OFF = "false"


@dataclass(frozen=True)
class CompactionPolicy:
    """When a channel table is compacted.

    Attributes:
        enabled: whether it is compacted at all.
        min_num_files: how many small files make a compaction due.
        small_file_size: files under this many bytes are small.

    Example:
        >>> policy = CompactionPolicy(enabled=True, min_num_files=3, small_file_size=1024)
        >>> policy.due([10, 20, 4096]), policy.due([10, 20, 30])
        (False, True)
    """

    enabled: bool
    min_num_files: int
    small_file_size: int

    @classmethod
    def read(cls, spark: SparkSession, properties: Mapping[str, str]) -> CompactionPolicy:
        """The policy for a table with these Delta table properties, under the Spark session's settings.

        Raises:
            ValueError: a setting is not one Delta accepts.
        """
        session = spark.conf.get(ENABLED_CONF, None)
        table = properties.get(AUTO_COMPACT_PROPERTY)
        setting = session if session is not None else table
        enabled = True if setting is None else _flag(setting)
        max_size = int(spark.conf.get(MAX_FILE_SIZE_CONF, None) or DEFAULT_MAX_FILE_SIZE)
        min_size = spark.conf.get(MIN_FILE_SIZE_CONF, None)
        return cls(
            enabled=enabled,
            min_num_files=int(spark.conf.get(MIN_NUM_FILES_CONF, None) or DEFAULT_MIN_NUM_FILES),
            small_file_size=int(min_size) if min_size else max_size // 2,
        )

    def due(self, file_sizes: Iterable[int]) -> bool:
        """Whether a table whose live files have these sizes should be compacted now."""
        return self.enabled and sum(1 for size in file_sizes if size < self.small_file_size) >= self.min_num_files


def _flag(value: str) -> bool:
    text = value.strip().lower()
    if text in _ON:
        return True
    if text == _OFF:
        return False
    raise ValueError(f"{AUTO_COMPACT_PROPERTY} needs to be one of: {', '.join(sorted(_ON))}, {_OFF} (not '{value}').")
