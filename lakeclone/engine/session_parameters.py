"""Session parameters: what ``ALTER SESSION SET`` (or ``SET``) changes for one Lake's statements, as in Snowflake.

A session parameter lasts as long as its Lake and concerns it alone, whoever
else shares its SparkSession: a Spark setting one asks for is set while the
Lake's statements run and while their results are read, then put back.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.dialect import expressions as lx
from lakeclone.engine import needs, registry, results
from lakeclone.errors import InvalidParameterError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution, Executor

LOCK_TIMEOUT, QUERY_TAG, TIMEZONE = "LOCK_TIMEOUT", "QUERY_TAG", "TIMEZONE"
# Delta's own switch for VACUUM's retention check, by the name Delta's users set it with.
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
SPARK_TIME_ZONE = "spark.sql.session.timeZone"

# Snowflake's longest query tag.
MAX_QUERY_TAG = 2000
# Snowflake's LOCK_TIMEOUT default: 12 hours.
DEFAULT_LOCK_TIMEOUT = 43200


@dataclass(frozen=True)
class SessionParameter:
    """A parameter a session sets.

    Attributes:
        key: its name, as SHOW PARAMETERS lists it.
        type: NUMBER, STRING or BOOLEAN.
        description: what it does.
        value_of: a SET's literal as the parameter's value, or InvalidParameterError.
        default: its value when the session has not set it.
    """

    key: str
    type: str
    description: str
    value_of: Callable[[SessionParameter, exp.Expression], str]
    default: Callable[[Executor], str]


def _invalid(parameter: SessionParameter, literal: exp.Expression) -> InvalidParameterError:
    return InvalidParameterError(f"invalid value [{literal.sql(dialect='snowflake')}] for parameter '{parameter.key}'")


def _seconds(parameter: SessionParameter, literal: exp.Expression) -> str:
    if not (isinstance(literal, exp.Literal) and not literal.is_string and literal.this.isdigit()):
        raise _invalid(parameter, literal)
    return str(int(literal.this))


def _tag(parameter: SessionParameter, literal: exp.Expression) -> str:
    if not (isinstance(literal, exp.Literal) and literal.is_string) or len(literal.this) > MAX_QUERY_TAG:
        raise _invalid(parameter, literal)
    return str(literal.this)


def _zone(parameter: SessionParameter, literal: exp.Expression) -> str:
    if not (isinstance(literal, exp.Literal) and literal.is_string):
        raise _invalid(parameter, literal)
    try:
        zoneinfo.ZoneInfo(literal.this)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        raise _invalid(parameter, literal) from None
    return str(literal.this)


def _boolean(parameter: SessionParameter, literal: exp.Expression) -> str:
    if isinstance(literal, exp.Boolean):
        return "true" if literal.this else "false"
    if isinstance(literal, exp.Literal) and literal.is_string and literal.this.lower() in ("true", "false"):
        return str(literal.this.lower())
    raise _invalid(parameter, literal)


def _spark_retention_check(executor: Executor) -> str:
    setting = executor.lake.spark.conf.get(RETENTION_CHECK, "true") or "true"
    return "false" if setting.lower() == "false" else "true"


PARAMETERS: dict[str, SessionParameter] = {
    p.key.upper(): p
    for p in (
        SessionParameter(
            LOCK_TIMEOUT,
            "NUMBER",
            "seconds a statement waits for a table another session's transaction holds",
            _seconds,
            lambda executor: str(DEFAULT_LOCK_TIMEOUT),
        ),
        SessionParameter(
            QUERY_TAG,
            "STRING",
            "a tag recorded with each statement and on each commit it makes",
            _tag,
            lambda executor: "",
        ),
        SessionParameter(
            TIMEZONE,
            "STRING",
            "the time zone of the session's timestamps",
            _zone,
            lambda executor: executor.default_time_zone,
        ),
        SessionParameter(
            RETENTION_CHECK,
            "BOOLEAN",
            "whether VACUUM refuses to keep less history than the table's retention",
            _boolean,
            _spark_retention_check,
        ),
    )
}


def value(executor: Executor, key: str) -> str:
    """A session parameter's value: what the session set, else its default."""
    found = executor.context.parameters.get(key.upper())
    return found if found is not None else PARAMETERS[key.upper()].default(executor)


def set_value(executor: Executor, key: str, number: float) -> None:
    """Set a NUMBER parameter from Python (``lake.lock_timeout = 0.5``)."""
    if number < 0:
        raise InvalidParameterError(f"invalid value [{number}] for parameter '{key}'")
    executor.context.parameters[key.upper()] = str(int(number)) if float(number).is_integer() else repr(float(number))


def spark_settings(executor: Executor) -> dict[str, str]:
    """The Spark settings the session's parameters ask for while its statements run and their results are read."""
    zone = executor.context.parameters.get(TIMEZONE)
    return {SPARK_TIME_ZONE: zone} if zone is not None else {}


def _parameter(name: exp.Expression) -> SessionParameter:
    parameter = PARAMETERS.get(name.name.upper())
    if parameter is None:
        known = ", ".join(p.key for p in PARAMETERS.values())
        raise InvalidParameterError(
            f"invalid parameter '{name.name}': a session sets {known} (lakeclone has no session variables)"
        )
    return parameter


@registry.statement(lx.SessionParameters, bind=needs.nothing, query_type="ALTER_SESSION")
def set_parameters(execution: Execution) -> DataFrame:
    """``ALTER SESSION SET K = v, …``, ``SET K = v`` and ``ALTER SESSION UNSET K, …``: all or none of them."""
    expression = execution.expression
    executor = execution.executor
    if expression.args.get("unset"):
        changes: dict[str, str | None] = {_parameter(name).key.upper(): None for name in expression.expressions}
    else:
        changes = {}
        for setting in expression.expressions:
            parameter = _parameter(setting.this)
            changes[parameter.key.upper()] = parameter.value_of(parameter, setting.args["value"])
    for key, text in changes.items():
        if text is None:
            executor.context.parameters.pop(key, None)
        else:
            executor.context.parameters[key] = text
    return results.status(execution.spark, "Statement executed successfully.")


def show(execution: Execution, like: Callable[[str], bool]) -> DataFrame:
    """``SHOW PARAMETERS [LIKE …] [IN SESSION]``: each session parameter, its value, its default and where it was set."""
    executor = execution.executor
    data = [
        (
            parameter.key,
            value(executor, key),
            parameter.default(executor),
            "SESSION" if key in executor.context.parameters else "",
            parameter.description,
            parameter.type,
        )
        for key, parameter in PARAMETERS.items()
        if like(parameter.key)
    ]
    return results.rows(
        execution.spark,
        "key STRING, value STRING, default STRING, level STRING, description STRING, type STRING",
        data,
    )
