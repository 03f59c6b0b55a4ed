"""Session parameters: ALTER SESSION SET | UNSET, SET, SHOW PARAMETERS IN SESSION, and what each one changes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import lakeclone
from lakeclone.errors import InvalidParameterError

pytestmark = pytest.mark.spark

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
NOON_UTC = "TIMESTAMP '2024-01-01 12:00:00 UTC'"


def session_parameters(lake: lakeclone.Lake, like: str = "%") -> dict[str, tuple[str, str, str]]:
    """SHOW PARAMETERS IN SESSION as {key: (value, default, level)}."""
    return {r.key: (r.value, r.default, r.level) for r in lake.sql(f"SHOW PARAMETERS LIKE '{like}' IN SESSION").collect()}


def test_show_parameters_lists_the_session_parameters_with_their_defaults(lake: lakeclone.Lake) -> None:
    shown = session_parameters(lake)
    assert shown == {
        "LOCK_TIMEOUT": ("43200", "43200", ""),
        "QUERY_TAG": ("", "", ""),
        "TIMEZONE": ("UTC", "UTC", ""),  # the Spark session's, until the session names another
        RETENTION_CHECK: ("true", "true", ""),
    }
    # Without IN, as in Snowflake, SHOW PARAMETERS lists the session's.
    assert {r.key for r in lake.sql("SHOW PARAMETERS").collect()} == set(shown)


def test_lock_timeout_is_the_lakes_own_set_in_sql_or_python(lake: lakeclone.Lake) -> None:
    lake.sql("ALTER SESSION SET LOCK_TIMEOUT = 5")
    assert lake.lock_timeout == 5.0
    assert session_parameters(lake, "LOCK%") == {"LOCK_TIMEOUT": ("5", "43200", "SESSION")}
    lake.lock_timeout = 0.5
    assert session_parameters(lake, "lock%")["LOCK_TIMEOUT"] == ("0.5", "43200", "SESSION")
    lake.sql("ALTER SESSION UNSET LOCK_TIMEOUT")
    assert lake.lock_timeout == 43200.0
    assert session_parameters(lake, "LOCK%")["LOCK_TIMEOUT"][2] == ""


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("ALTER SESSION SET LOCK_TIMEOUT = -1", "invalid value [-1] for parameter 'LOCK_TIMEOUT'"),
        ("ALTER SESSION SET LOCK_TIMEOUT = 'soon'", "invalid value ['soon'] for parameter 'LOCK_TIMEOUT'"),
        ("ALTER SESSION SET TIMEZONE = 'Mars/Olympus_Mons'", "invalid value ['Mars/Olympus_Mons'] for parameter 'TIMEZONE'"),
        ("ALTER SESSION SET QUERY_TAG = 1", "invalid value [1] for parameter 'QUERY_TAG'"),
        (f"ALTER SESSION SET QUERY_TAG = '{'x' * 2001}'", "for parameter 'QUERY_TAG'"),
        (f"SET {RETENTION_CHECK} = 'maybe'", f"invalid value ['maybe'] for parameter '{RETENTION_CHECK}'"),
        ("SET x = 1", "invalid parameter 'X': a session sets LOCK_TIMEOUT, QUERY_TAG, TIMEZONE, "),
        ("ALTER SESSION UNSET DATA_RETENTION_TIME_IN_DAYS", "(lakeclone has no session variables)"),
    ],
)
def test_a_bad_setting_is_refused_and_changes_nothing(lake: lakeclone.Lake, statement: str, message: str) -> None:
    lake.sql("ALTER SESSION SET QUERY_TAG = 'before'")
    before = session_parameters(lake)
    with pytest.raises(InvalidParameterError) as error:
        # One good setting beside the bad one: a statement sets all of them or none.
        lake.sql(statement.replace("SET ", "SET LOCK_TIMEOUT = 7, ", 1) if "UNSET" not in statement else statement)
    assert message in str(error.value)
    assert session_parameters(lake) == before


def test_setting_a_session_parameter_leaves_the_open_transaction_open(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT); BEGIN; INSERT INTO t VALUES (1)")
    lake.sql("ALTER SESSION SET QUERY_TAG = 'inside'")  # no object defined: not DDL, no implicit COMMIT
    assert len(lake.sql("SHOW TRANSACTIONS").collect()) == 1
    lake.sql("ROLLBACK")
    assert lake.sql("SELECT * FROM t").collect() == []


def test_query_tag_is_recorded_with_each_statement_and_on_its_commits(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE t (id INT)")
    lake.sql("ALTER SESSION SET QUERY_TAG = 'nightly load'")
    lake.sql("INSERT INTO t VALUES (1)")
    query = lake._executor.catalog.queries.query(lake._executor.last_query_id or "")
    assert query is not None and query.origin.query_tag == "nightly load"
    lake.sql("ALTER SESSION UNSET QUERY_TAG")
    lake.sql("INSERT INTO t VALUES (2)")
    history = lake.sql("DESCRIBE HISTORY t").collect()
    # DESCRIBE HISTORY shows it where Delta's users see theirs (spark.databricks.delta.commitInfo.userMetadata).
    assert {r.version: r.userMetadata for r in history} == {0: None, 1: "nightly load", 2: None}


def test_time_zone_is_the_sessions_own_while_its_statements_run_and_their_results_are_read(
    lake: lakeclone.Lake, tmp_path: Path, spark: SparkSession
) -> None:
    other = lakeclone.connect(tmp_path / "other", spark=spark)
    lake.sql("ALTER SESSION SET TIMEZONE = 'America/New_York'")
    assert session_parameters(lake, "TIMEZONE")["TIMEZONE"] == ("America/New_York", "UTC", "SESSION")
    text = lake.sql(f"SELECT CAST({NOON_UTC} AS STRING) AS s")
    shown = lake.sql(f"SELECT {NOON_UTC} AS ts")
    # Another Lake on the same SparkSession keeps its own zone, before and after.
    assert other.sql(f"SELECT CAST({NOON_UTC} AS STRING) AS s").first().S == "2024-01-01 12:00:00"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert text.first().S == "2024-01-01 07:00:00"
    assert shown.toPandas()["TS"][0].to_pydatetime() == dt.datetime(2024, 1, 1, 7)
    lake.sql("ALTER SESSION UNSET TIMEZONE")
    assert lake.sql(f"SELECT CAST({NOON_UTC} AS STRING) AS s").first().S == "2024-01-01 12:00:00"


def test_vacuum_retention_check_is_a_session_parameter_and_a_dry_run_plans_at_any_retention(
    lake: lakeclone.Lake, tmp_path: Path, spark: SparkSession
) -> None:
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1); DELETE FROM t")
    assert [r.action for r in lake.sql("VACUUM t RETAIN 0 HOURS DRY RUN").collect()] == ["DELETE"]
    with pytest.raises(lakeclone.LakecloneError) as refused:
        lake.sql("VACUUM t RETAIN 0 HOURS")
    assert str(refused.value) == (
        "VACUUM T RETAIN 0 HOURS would delete files inside the table's retention of 168 hours, which a running "
        f"writer may still need; if none is, allow it with ALTER SESSION SET {RETENTION_CHECK} = FALSE."
    )
    other = lakeclone.connect(lake.warehouse, spark=spark)
    lake.sql(f"SET {RETENTION_CHECK} = false")
    assert session_parameters(lake, "spark%")[RETENTION_CHECK] == ("false", "true", "SESSION")
    with pytest.raises(lakeclone.LakecloneError, match="would delete files inside the table's retention"):
        other.sql("VACUUM t RETAIN 0 HOURS")  # another session keeps the check
    assert lake.sql("VACUUM t RETAIN 0 HOURS").first()["number of files deleted"] == 1
