"""What lakeclone remembers about a commit, kept inside the commit itself.

Delta stamps each commit with the machine's clock and knows nothing of
lakeclone's statements. lakeclone adds a small JSON document to the commit's
``commitInfo.userMetadata`` (Delta's place for a writer's own metadata): the
statement's query id, the commit's tick (its place in the warehouse's order of
statements and commits) and its time by the Lake's clock. Time travel, retention and ``DESCRIBE HISTORY`` read
them back from the log, so nothing about a commit can be lost between two stores.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeclone.session import session_setting

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
MARKER = "lakeclone"


def from_epoch_ms(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)


@dataclass(frozen=True)
class CommitMetadata:
    """lakeclone's part of a commit.

    Attributes:
        query_id: the statement that made the commit.
        tick: the commit's place in its warehouse's order of statements and
            commits, which holds whatever the clock readings are.
        clock_us: the commit's time by the Lake's clock, in epoch microseconds.
        parameters: operation parameters lakeclone adds to Delta's (shown by DESCRIBE HISTORY).
        metrics: operation metrics lakeclone adds to Delta's.
        query_tag: the QUERY_TAG of the session that made the commit, if any.
    """

    query_id: str
    tick: int
    clock_us: int
    parameters: Mapping[str, str] = field(default_factory=dict)
    metrics: Mapping[str, str] = field(default_factory=dict)
    query_tag: str = ""

    @property
    def clock_time(self) -> dt.datetime:
        return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=self.clock_us)

    def to_json(self) -> str:
        document: dict[str, Any] = {
            MARKER: 1,
            "queryId": self.query_id,
            "tick": self.tick,
            "clockTime": self.clock_us,
        }
        if self.parameters:
            document["operationParameters"] = dict(self.parameters)
        if self.metrics:
            document["operationMetrics"] = dict(self.metrics)
        if self.query_tag:
            document["queryTag"] = self.query_tag
        return json.dumps(document, separators=(",", ":"), sort_keys=True)

    @classmethod
    def parse(cls, text: str | None) -> CommitMetadata | None:
        """lakeclone's metadata from a commit's ``userMetadata``; None for another writer's commit."""
        if not text:
            return None
        try:
            document = json.loads(text)
        except ValueError:
            return None
        if not isinstance(document, dict) or document.get(MARKER) != 1:
            return None
        return cls(
            query_id=str(document.get("queryId", "")),
            tick=int(document.get("tick", 0)),
            clock_us=int(document.get("clockTime", 0)),
            parameters={str(k): str(v) for k, v in (document.get("operationParameters") or {}).items()},
            metrics={str(k): str(v) for k, v in (document.get("operationMetrics") or {}).items()},
            query_tag=str(document.get("queryTag") or ""),
        )


def microseconds(moment: dt.datetime) -> int:
    delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@contextlib.contextmanager
def committing(spark: SparkSession, metadata: CommitMetadata) -> Iterator[None]:
    """Every Delta commit made through ``spark`` inside the block carries ``metadata``.

    Delta reads the session setting ``spark.databricks.delta.commitInfo.userMetadata``
    when it commits, whichever API made the commit (SQL, DataFrame or a transaction).
    """
    with session_setting(spark, USER_METADATA_CONF, metadata.to_json()):
        yield


@dataclass(frozen=True)
class Commit:
    """One entry of a table's history, as Delta wrote it plus lakeclone's metadata.

    ``timestamp`` is the Lake clock's time when lakeclone made the commit, else
    Delta's own commit time.
    """

    version: int
    timestamp: dt.datetime
    delta_timestamp: dt.datetime
    operation: str
    parameters: Mapping[str, str]
    metrics: Mapping[str, str]
    read_version: int | None
    is_blind_append: bool | None
    engine_info: str | None
    user_metadata: str | None
    lakeclone: CommitMetadata | None

    @property
    def query_id(self) -> str | None:
        return self.lakeclone.query_id if self.lakeclone else None

    @classmethod
    def from_commit_info(cls, version: int, info: Mapping[str, Any], delta_ms: int) -> Commit:
        """A history entry from a commit's ``commitInfo`` action; ``delta_ms`` is Delta's commit time."""
        ours = CommitMetadata.parse(info.get("userMetadata"))
        delta_time = from_epoch_ms(delta_ms)
        parameters = {str(k): _text(v) for k, v in (info.get("operationParameters") or {}).items()}
        metrics = {str(k): str(v) for k, v in (info.get("operationMetrics") or {}).items()}
        if ours is not None:
            parameters.update(ours.parameters)
            metrics.update(ours.metrics)
        return cls(
            version=version,
            timestamp=ours.clock_time if ours is not None else delta_time,
            delta_timestamp=delta_time,
            operation=str(info.get("operation") or "UNKNOWN"),
            parameters=parameters,
            metrics=metrics,
            read_version=info.get("readVersion"),
            is_blind_append=info.get("isBlindAppend"),
            engine_info=info.get("engineInfo"),
            # A lakeclone commit's own user metadata is its session's QUERY_TAG, where Delta's users tag theirs.
            user_metadata=info.get("userMetadata") if ours is None else (ours.query_tag or None),
            lakeclone=ours,
        )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
