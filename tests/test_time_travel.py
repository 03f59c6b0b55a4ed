"""Time travel (AT|BEFORE, VERSION|TIMESTAMP AS OF) and DESCRIBE HISTORY."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from delta_reader import commit_actions, sorted_rows
from warehouse_templates import Build, WarehouseTemplates

import lakeclone

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

STATES = {
    0: [],
    1: [(1, "a"), (2, "b")],
    2: [(1, "a"), (2, "B")],
    3: [(2, "B")],
}


@dataclass
class History:
    lake: lakeclone.Lake
    clock: lakeclone.ManualClock
    query_ids: dict[int, str]  # version -> the id of the statement that committed it
    commit_times: dict[int, dt.datetime]  # version -> commit time (naive UTC, as Spark shows it)
    windows: dict[int, tuple[dt.datetime, dt.datetime]]  # version -> clock before and after its statement


def _four_versions(
    lake: lakeclone.Lake,
) -> tuple[dict[int, str], dict[int, dt.datetime], dict[int, tuple[dt.datetime, dt.datetime]]]:
    clock = lake.clock
    assert isinstance(clock, lakeclone.ManualClock)
    statements = [
        "CREATE TABLE t (id INT, v STRING)",
        "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
        "UPDATE t SET v = 'B' WHERE id = 2",
        "DELETE FROM t WHERE id = 1",
    ]
    query_ids, windows = {}, {}
    for version, statement in enumerate(statements):
        if version:
            clock.advance(minutes=1)
        before = clock.peek()
        lake.sql(statement)
        windows[version] = (before, clock.peek())
        query_ids[version] = lake.last_query_id
    clock.advance(minutes=1)
    commit_times = {r.version: r.timestamp for r in lake.sql("DESCRIBE HISTORY t").collect()}
    return query_ids, commit_times, windows


@pytest.fixture
def hist(
    copy_of: Callable[[Build], lakeclone.Lake], warehouse_templates: WarehouseTemplates, clock: lakeclone.ManualClock
) -> History:
    """Table T at versions 0..3, a minute apart: create, insert, update, delete."""
    lake = copy_of(_four_versions)
    query_ids, commit_times, windows = warehouse_templates.built(_four_versions)
    return History(lake, clock, query_ids, commit_times, windows)


def states(lake: lakeclone.Lake, points: dict[str, str]) -> dict[str, list[tuple]]:
    """The rows of T at several points, in one query: point label -> rows."""
    union = " UNION ALL ".join(f"SELECT '{label}' AS point, id, v FROM t {point}" for label, point in points.items())
    found: dict[str, list[tuple]] = {label: [] for label in points}
    for row in lake.sql(union).collect():
        found[row.POINT].append((row.ID, row.V))
    return {label: sorted_rows(rs) for label, rs in found.items()}


def text(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def error_of(lake: lakeclone.Lake, sql: str) -> str:
    with pytest.raises(lakeclone.LakecloneError) as error:
        lake.sql(sql).collect()
    return str(error.value)


NOT_AVAILABLE = "Time travel data is not available for table T"


def test_at_version_and_version_as_of(hist: History) -> None:
    points = {f"at{v}": f"AT(VERSION => {v})" for v in STATES}
    points.update({f"asof{v}": f"VERSION AS OF {v}" for v in STATES})
    found = states(hist.lake, points)
    for version, expected in STATES.items():
        assert found[f"at{version}"] == expected, version
        assert found[f"asof{version}"] == expected, version


def test_before_version_is_the_previous_version(hist: History) -> None:
    found = states(hist.lake, {f"b{v}": f"BEFORE(VERSION => {v})" for v in (1, 2, 3)})
    assert found == {f"b{v}": STATES[v - 1] for v in (1, 2, 3)}


def test_at_and_before_timestamp(hist: History) -> None:
    times = hist.commit_times
    half_minute = dt.timedelta(seconds=30)
    points = {}
    for version in STATES:
        points[f"exact{version}"] = f"AT(TIMESTAMP => '{text(times[version])}'::TIMESTAMP)"
        points[f"later{version}"] = f"AT(TIMESTAMP => '{text(times[version] + half_minute)}'::TIMESTAMP)"
    for version in (1, 2, 3):
        points[f"before{version}"] = f"BEFORE(TIMESTAMP => '{text(times[version])}'::TIMESTAMP)"
    found = states(hist.lake, points)
    for version, expected in STATES.items():
        assert found[f"exact{version}"] == expected  # AT includes a commit at that very instant
        assert found[f"later{version}"] == expected
    for version in (1, 2, 3):
        assert found[f"before{version}"] == STATES[version - 1]  # BEFORE excludes it


def test_timestamp_as_of(hist: History) -> None:
    moment = hist.commit_times[2] + dt.timedelta(seconds=1)
    found = states(hist.lake, {"two": f"TIMESTAMP AS OF '{text(moment)}'"})
    assert found["two"] == STATES[2]


def test_timestamp_with_a_time_zone(hist: History) -> None:
    # 01:00 in UTC+1 is 00:00 UTC: the instant of version 0 (before any row), not an hour later.
    utc = hist.commit_times[1] + dt.timedelta(seconds=10)
    local = (utc + dt.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S.%f") + " +01:00"
    found = states(hist.lake, {"tz": f"AT(TIMESTAMP => '{local}'::TIMESTAMP_TZ)"})
    assert found["tz"] == STATES[1]


def test_at_offset(hist: History) -> None:
    # The clock stands a minute after version 3; versions are a minute apart.
    found = states(hist.lake, {"o30": "AT(OFFSET => -30)", "o90": "AT(OFFSET => -90)", "o150": "AT(OFFSET => -150)"})
    assert found == {"o30": STATES[3], "o90": STATES[2], "o150": STATES[1]}


def test_at_and_before_statement(hist: History) -> None:
    update = hist.query_ids[2]
    found = states(
        hist.lake,
        {
            "at": f"AT(STATEMENT => '{update}')",
            "before": f"BEFORE(STATEMENT => '{update}')",
            "before_delete": f"BEFORE(STATEMENT => '{hist.query_ids[3]}')",
        },
    )
    assert found == {"at": STATES[2], "before": STATES[1], "before_delete": STATES[2]}


def test_statement_of_a_query_marks_a_point_too(hist: History) -> None:
    lake = hist.lake
    lake.sql("SELECT count(*) FROM t")
    query = lake.last_query_id
    hist.clock.advance(minutes=1)
    lake.sql("INSERT INTO t VALUES (9, 'z')")
    found = states(lake, {"q": f"AT(STATEMENT => '{query}')"})
    assert found["q"] == STATES[3]


def test_last_query_id_is_the_committing_statement_in_history(hist: History) -> None:
    assert len(set(hist.query_ids.values())) == 4
    shown = {r.version: r.queryId for r in hist.lake.sql("DESCRIBE HISTORY t").collect()}
    assert shown == hist.query_ids
    hist.lake.sql("SELECT 1; SELECT 2")
    assert hist.lake.last_query_id not in hist.query_ids.values()


def test_time_travel_in_joins_and_subqueries(hist: History) -> None:
    lake = hist.lake
    joined = lake.sql(
        "SELECT old.id, old.v AS was, new.v AS now FROM t AT(VERSION => 1) old LEFT JOIN t new ON old.id = new.id"
    ).collect()
    assert sorted_rows(joined) == [(1, "a", None), (2, "b", "B")]
    gone = lake.sql("SELECT id FROM t BEFORE(VERSION => 3) old WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.id = old.id)").collect()
    assert sorted_rows(gone) == [(1,)]
    both = lake.sql(
        "WITH old AS (SELECT * FROM t AT(VERSION => 2)) "
        "SELECT (SELECT count(*) FROM old) AS o, (SELECT count(*) FROM t VERSION AS OF 1) AS one, "
        "(SELECT count(*) FROM t) AS n"
    ).collect()
    assert tuple(both[0]) == (2, 2, 1)


def test_time_travel_follows_a_renamed_table(hist: History) -> None:
    lake = hist.lake
    lake.sql("ALTER TABLE t RENAME TO u")
    assert sorted_rows(lake.sql("SELECT id, v FROM u AT(VERSION => 1)").collect()) == STATES[1]
    assert NOT_AVAILABLE.replace(" T", " U") in error_of(
        lake, f"SELECT * FROM u AT(TIMESTAMP => '{text(hist.commit_times[0] - dt.timedelta(seconds=1))}'::TIMESTAMP)"
    )


# Errors ------------------------------------------------------------------------------------------------


def test_before_the_table_existed_fails(hist: History) -> None:
    lake = hist.lake
    earlier = text(hist.commit_times[0] - dt.timedelta(seconds=1))
    for point in (
        f"AT(TIMESTAMP => '{earlier}'::TIMESTAMP)",
        f"BEFORE(TIMESTAMP => '{text(hist.commit_times[0])}'::TIMESTAMP)",
        "AT(OFFSET => -86400)",
        f"BEFORE(STATEMENT => '{hist.query_ids[0]}')",
    ):
        message = error_of(lake, f"SELECT * FROM t {point}")
        assert message.startswith(NOT_AVAILABLE), point


def test_past_the_retention_period_fails(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    v1_time = clock.peek()
    lake.sql("ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 1")
    clock.advance(days=2)
    lake.sql("INSERT INTO t VALUES (2)")
    # Version 0 stopped being current two days ago: beyond the one-day retention.
    assert error_of(lake, "SELECT * FROM t AT(VERSION => 0)").startswith(NOT_AVAILABLE)
    assert error_of(lake, f"SELECT * FROM t AT(TIMESTAMP => '{text(v1_time + dt.timedelta(seconds=1))}'::TIMESTAMP)").startswith(
        NOT_AVAILABLE
    )
    # Version 1 was current until just now, so it is still within reach.
    assert sorted_rows(lake.sql("SELECT * FROM t AT(VERSION => 1)").collect()) == [(1,)]
    assert sorted_rows(lake.sql("SELECT * FROM t AT(OFFSET => -3600)").collect()) == [(1,)]


def test_retention_comes_from_the_schema_or_database_too(lake: lakeclone.Lake, clock: lakeclone.ManualClock) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
    clock.advance(days=3)
    lake.sql("SELECT * FROM t AT(VERSION => 1)").collect()  # within the default 7 days
    lake.sql("ALTER DATABASE LAKE SET DATA_RETENTION_TIME_IN_DAYS = 2")
    assert error_of(lake, "SELECT * FROM t AT(VERSION => 1)").startswith(NOT_AVAILABLE)


def test_unknown_statement_id_fails(hist: History) -> None:
    message = error_of(hist.lake, "SELECT * FROM t AT(STATEMENT => '00000000-dead-beef-0000-000000000000')")
    assert message == "Statement 00000000-dead-beef-0000-000000000000 not found"


def test_version_out_of_range_fails(hist: History) -> None:
    message = error_of(hist.lake, "SELECT * FROM t AT(VERSION => 7)")
    assert message == "Cannot time travel Delta table to version 7. Available versions: [0, 3]."
    assert error_of(hist.lake, "SELECT * FROM t VERSION AS OF 4").startswith("Cannot time travel Delta table to version 4")


def test_time_travel_errors_are_typed(hist: History) -> None:
    from lakeclone.errors import StatementNotFoundError, TimeTravelError

    with pytest.raises(TimeTravelError):
        hist.lake.sql("SELECT * FROM t AT(VERSION => 99)")
    with pytest.raises(StatementNotFoundError):
        hist.lake.sql("SELECT * FROM t AT(STATEMENT => 'nope')")


# DESCRIBE HISTORY -------------------------------------------------------------------------------------


def test_describe_history(hist: History) -> None:
    frame = hist.lake.sql("DESCRIBE HISTORY t")
    assert frame.columns == [
        "version",
        "timestamp",
        "userName",
        "operation",
        "operationParameters",
        "readVersion",
        "isBlindAppend",
        "operationMetrics",
        "userMetadata",
        "engineInfo",
        "queryId",
    ]
    commits = frame.collect()
    assert [c.version for c in commits] == [3, 2, 1, 0]  # newest first
    assert [c.operation for c in commits] == ["DELETE", "UPDATE", "WRITE", "CREATE TABLE"]
    assert [c.readVersion for c in commits] == [2, 1, 0, None]
    for commit in commits:
        # The commit time is the Lake's clock, read while the statement ran.
        start, end = hist.windows[commit.version]
        stamp = commit.timestamp.replace(tzinfo=dt.timezone.utc)
        assert start <= stamp < end, commit.version
        assert commit.queryId == hist.query_ids[commit.version]
        assert commit.userName == hist.lake.current_user  # who ran the statement, where Delta leaves it empty
    assert commits[0].operationParameters == {"predicate": "ID = 1"}
    assert commits[0].operationMetrics["numDeletedRows"] == "1"
    assert commits[2].operationParameters == {"mode": "Append", "partitionBy": "[]"}  # Delta's own
    assert commits[2].operationMetrics["numOutputRows"] == "2"


def test_describe_history_limit(hist: History) -> None:
    assert [r.version for r in hist.lake.sql("DESCRIBE HISTORY t LIMIT 2").collect()] == [3, 2]
    assert [r.version for r in hist.lake.sql("DESCRIBE HISTORY t LIMIT 10").collect()] == [3, 2, 1, 0]


def test_commit_files_carry_the_clock_time_and_the_query_id(hist: History) -> None:
    """What lakeclone knows of a commit is in the commit itself: nothing is lost between two stores.

    Delta stamps its commits with the machine's clock; the Lake's clock time and
    the statement's query id travel in commitInfo's userMetadata.
    """
    import json

    (row,) = hist.lake.sql("SHOW TABLES LIKE 'T'").collect()
    for version, (start, end) in hist.windows.items():
        (info,) = [a["commitInfo"] for a in commit_actions(row.location, version) if "commitInfo" in a]
        ours = json.loads(info["userMetadata"])
        assert ours["queryId"] == hist.query_ids[version]
        # The clock's reading while the statement ran, not the machine's.
        clock_time = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=ours["clockTime"])
        assert start <= clock_time < end, version
        assert abs(info["timestamp"] / 1000 - clock_time.timestamp()) > 3600  # the clock stands in 2024


def test_before_the_first_version_is_before_the_table_existed(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE first (id INT)")
    with pytest.raises(lakeclone.LakecloneError, match="Time travel data is not available for table FIRST"):
        lake.sql("SELECT * FROM first BEFORE(VERSION => 0)")
    assert lake.sql("SELECT * FROM first AT(VERSION => 0)").collect() == []


class MicrosecondClock:
    """A legal clock finer than Delta's milliseconds: each reading one microsecond after the last."""

    def __init__(self) -> None:
        self.now = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)

    def __call__(self) -> dt.datetime:
        self.now += dt.timedelta(microseconds=1)
        return self.now


def test_statements_are_exact_with_a_clock_finer_than_a_millisecond(tmp_path: Path, spark: SparkSession) -> None:
    """Many statements commit within one millisecond: STATEMENT points follow the statements, not the times."""
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=MicrosecondClock())
    lake.sql("CREATE TABLE t (id INT); CREATE TABLE other (id INT)")
    inserts, others = [], []
    for i in range(1, 7):
        lake.sql(f"INSERT INTO t VALUES ({i})")
        inserts.append(lake.last_query_id)
        lake.sql(f"INSERT INTO other VALUES ({i})")  # a statement that does not write t
        others.append(lake.last_query_id)
    points = {}
    for i, (insert, other) in enumerate(zip(inserts, others, strict=True), start=1):
        points[f"before_insert_{i}"] = f"BEFORE(STATEMENT => '{insert}')"
        points[f"at_insert_{i}"] = f"AT(STATEMENT => '{insert}')"
        points[f"before_other_{i}"] = f"BEFORE(STATEMENT => '{other}')"
    union = " UNION ALL ".join(f"SELECT '{label}' AS point, id FROM t {point}" for label, point in points.items())
    found: dict[str, set[int]] = {label: set() for label in points}
    for row in lake.sql(union).collect():
        found[row.POINT].add(row.ID)
    expected = {}
    for i in range(1, 7):
        expected[f"before_insert_{i}"] = set(range(1, i))
        expected[f"at_insert_{i}"] = set(range(1, i + 1))
        expected[f"before_other_{i}"] = set(range(1, i + 1))
    assert found == expected
    # Every commit fell within one millisecond, the resolution of Delta's commit times.
    times = [r.timestamp for r in lake.sql("DESCRIBE HISTORY t").collect()]
    assert max(times) - min(times) < dt.timedelta(milliseconds=1)


def test_before_the_statement_that_created_a_table_fails_on_the_system_clock(tmp_path: Path, spark: SparkSession) -> None:
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)
    for i in range(5):
        lake.sql(f"CREATE TABLE t{i} (id INT)")
        created = lake.last_query_id
        lake.sql(f"INSERT INTO t{i} VALUES (1)")
        message = error_of(lake, f"SELECT * FROM t{i} BEFORE(STATEMENT => '{created}')")
        assert message.startswith(NOT_AVAILABLE)
        assert lake.sql(f"SELECT * FROM t{i} AT(STATEMENT => '{created}')").collect() == []


# RESTORE ---------------------------------------------------------------------------


def test_restore_brings_back_a_versions_rows_in_one_commit_and_keeps_the_history(hist: History) -> None:
    lake = hist.lake
    (result,) = lake.sql("RESTORE TABLE t TO VERSION AS OF 1").collect()
    restored_by = lake.last_query_id
    assert result.num_restored_files >= 1 and result.num_of_files_after_restore >= 1
    assert sorted_rows(lake.sql("SELECT * FROM t").collect()) == STATES[1]
    (latest, *_) = lake.sql("DESCRIBE HISTORY t").collect()
    assert (latest.version, latest.operation, latest.queryId) == (4, "RESTORE", restored_by)
    assert latest.operationParameters["restoredVersion"] == "1"
    # The versions after the one restored are still there to travel to.
    assert states(lake, {"v3": "AT(VERSION => 3)", "now": ""}) == {"v3": STATES[3], "now": STATES[1]}


def test_restore_to_a_timestamp_reads_the_lakes_clock(hist: History) -> None:
    lake = hist.lake
    _, after = hist.windows[2]
    lake.sql(f"RESTORE t TIMESTAMP AS OF '{after.isoformat()}'")  # Delta's spelling, TO and TABLE left out
    assert sorted_rows(lake.sql("SELECT * FROM t").collect()) == STATES[2]


@pytest.mark.parametrize(
    ("point", "message"),
    [
        ("VERSION AS OF 9", "Cannot time travel Delta table to version 9. Available versions: [0, 3]."),
        ("TIMESTAMP AS OF '2001-01-01 00:00:00'", "Time travel data is not available for table T."),
    ],
)
def test_restore_to_a_point_time_travel_cannot_reach_fails_and_changes_nothing(hist: History, point: str, message: str) -> None:
    lake = hist.lake
    with pytest.raises(lakeclone.LakecloneError) as error:
        lake.sql(f"RESTORE TABLE t TO {point}")
    assert message in str(error.value)
    assert max(r.version for r in lake.sql("DESCRIBE HISTORY t").collect()) == 3


def test_restore_to_before_change_tracking_was_turned_on_is_refused(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1); ALTER TABLE t SET CHANGE_TRACKING = TRUE")
    lake.sql("CREATE STREAM s ON TABLE t; INSERT INTO t VALUES (2)")
    before = lake.sql("DESCRIBE HISTORY t").collect()
    with pytest.raises(lakeclone.LakecloneError) as error:
        lake.sql("RESTORE TABLE t TO VERSION AS OF 1")
    assert str(error.value).endswith(
        "Cannot restore table T to version 1: change tracking was turned on after it, and the restore would turn it off. "
        "Clone that version instead: CREATE TABLE <name> CLONE T AT(VERSION => 1)."
    )
    assert lake.sql("DESCRIBE HISTORY t").collect() == before
    assert [(r.ID, r["METADATA$ACTION"]) for r in lake.sql("SELECT * FROM s").collect()] == [(2, "INSERT")]


def test_a_stream_sees_what_a_restore_brings_back_and_takes_away(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT, v STRING) CHANGE_TRACKING = TRUE; INSERT INTO t VALUES (1, 'a')")
    lake.sql("CREATE STREAM s ON TABLE t; DELETE FROM t; INSERT INTO t VALUES (2, 'b')")
    lake.sql("CREATE TABLE sink (id INT, v STRING); INSERT INTO sink SELECT id, v FROM s")  # consumed: (2, 'b') added
    lake.sql("RESTORE TABLE t TO VERSION AS OF 1")
    changes = {(r.ID, r.V, r["METADATA$ACTION"]) for r in lake.sql("SELECT * FROM s").collect()}
    assert changes == {(1, "a", "INSERT"), (2, "b", "DELETE")}
