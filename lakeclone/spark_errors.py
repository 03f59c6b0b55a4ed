"""Turning Spark, Delta and Py4J failures into LakecloneErrors of one line, in Snowflake's or Delta's words."""

from __future__ import annotations

import contextlib
import inspect
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from lakeclone import frame_notes
from lakeclone.errors import (
    SPARK_STOPPED,
    ConcurrentWriteError,
    ExecutionError,
    LakecloneError,
    SetupError,
    SqlCompilationError,
    StatementPosition,
    StorageError,
    public,
    spark_stopped,
)
from lakeclone.progress import watching_frame
from lakeclone.session import session_settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_UNRESOLVED = re.compile(r"UNRESOLVED_(COLUMN|FIELD|MAP_KEY)")

_CONDITION_PREFIX = re.compile(r"\[([A-Z][A-Z0-9_.]*)\]")

# Delta's conflict conditions: another writer committed something this statement depended on.
_CONFLICTS = re.compile(r"DELTA_(CONCURRENT_\w+|METADATA_CHANGED|PROTOCOL_CHANGED)")
_CONFLICT_CLASSES = re.compile(r"\.(Concurrent\w+Exception|MetadataChangedException|ProtocolChangedException)$")

DUPLICATE_MERGE_MATCH = "Duplicate row detected during DML action"

# How Snowflake names a value of each target type it could not read.
_UNRECOGNIZED_VALUE = {"DATE": "Date", "TIMESTAMP": "Timestamp", "TIMESTAMP_NTZ": "Timestamp", "BOOLEAN": "Boolean value"}


def _cast_failure(params: dict[str, str]) -> LakecloneError:
    target = params.get("targetType", "").strip('"').upper()
    kind = _UNRECOGNIZED_VALUE.get(target, "Numeric value")
    return ExecutionError(f"{kind} {params.get('expression', '')} is not recognized")


# Conditions whose message Snowflake words differently.
_SNOWFLAKE_WORDING: dict[str, Callable[[dict[str, str]], LakecloneError]] = {
    "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE": lambda _: ExecutionError(DUPLICATE_MERGE_MATCH),
    "DELTA_NOT_NULL_CONSTRAINT_VIOLATED": lambda p: ExecutionError(
        f"NULL result in a non-nullable column '{p.get('columnName', '').replace('`', '')}'"
    ),
    "AMBIGUOUS_REFERENCE": lambda p: SqlCompilationError(f"ambiguous column name '{p.get('name', '').replace('`', '')}'"),
    "CAST_INVALID_INPUT": _cast_failure,
    "DIVIDE_BY_ZERO": lambda _: ExecutionError("Division by zero"),
    # The user's text parsed as lsql, so Spark failing to parse lakeclone's
    # translation of it is a form lakeclone cannot run, not the user's typo.
    "PARSE_SYNTAX_ERROR": lambda p: SqlCompilationError(
        f"lakeclone cannot run this statement on Spark (Spark's parser stopped at {p.get('error', 'its text')})."
    ),
    "UNRESOLVED_ROUTINE": lambda p: SqlCompilationError(f"Unknown function {p.get('routineName', '').replace('`', '').upper()}"),
}

# Failures of the JVM itself, whose Java names say nothing to a SQL user.
JVM_FAILURES = {
    "java.lang.StackOverflowError": (
        "The statement is too deeply nested for Spark to run; split its expressions into smaller ones."
    ),
    "java.lang.OutOfMemoryError": (
        "Spark ran out of memory running this statement: make its result smaller (filter, aggregate, "
        "LIMIT) or give Spark more memory (spark.driver.memory). If later statements fail too, reconnect."
    ),
}


def jvm_failure(texts: Iterable[str]) -> ExecutionError | None:
    """The plain-words error for a JVM failure named in any of ``texts`` (class names, messages)."""
    for text in texts:
        for name, message in JVM_FAILURES.items():
            if name in text:
                return ExecutionError(message)
    return None


_BUCKET = re.compile(r"s3a://([^/\s'`:]+)")
_UNREACHABLE = re.compile(r"Connect to (\S+) (?:\[[^]]*\] )?failed: ([^(]+?)\s*(?:\(|$)")


def storage_failure(chain: Iterable[tuple[str, str]]) -> LakecloneError | None:
    """The one-line error for a failure of object storage among ``chain``'s (Java class, message) pairs, if any.

    S3A says which bucket and request in a paragraph that ends in the SDK's
    request ids; what the user must fix is one of three things.
    """
    texts = " ".join(f"{name} {message}" for name, message in chain)
    named = _BUCKET.search(texts)
    bucket = named.group(1) if named else None
    where = f"s3a://{bucket}" if bucket else "the object store"
    if "S3AFileSystem not found" in texts:
        return SetupError(
            "This Spark session cannot reach S3: S3A's jars are not on its class path. Run "
            "`python -m lakeclone.jars --with s3` and start the session with "
            "lakeclone.configure_spark(builder, object_storage=True)."
        )
    if "UnknownStoreException" in texts or "NoSuchBucket" in texts:
        return StorageError(f"Bucket '{bucket}' does not exist: create it, or correct the warehouse's or location's URI.")
    if "s3a://" in texts and ("java.nio.file.AccessDeniedException" in texts or "Status Code: 403" in texts):
        return StorageError(
            f"Access to {where} denied (403): check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "AWS_PROFILE, or fs.s3a.access.key) and what they may do there."
        )
    unreachable = _UNREACHABLE.search(texts)
    if unreachable and "s3a://" in texts:
        return StorageError(
            f"Cannot reach the object store at {unreachable.group(1)} ({unreachable.group(2).strip()}): "
            "is the server running, and is AWS_ENDPOINT_URL (or fs.s3a.endpoint) right?"
        )
    return None


# Conditions that only wrap the failure that matters (a task's, a file's).
_WRAPPERS = {"TASK_WRITE_FAILED", "FAILED_READ_FILE", "FAILED_EXECUTE_UDF"}


@contextlib.contextmanager
def spark_errors() -> Iterator[None]:
    """Turn Spark, Delta and Py4J failures raised inside the block into LakecloneErrors.

    Only the first line of a message is kept: the rest is a query plan or a
    JVM trace, which says nothing to a SQL user.
    """
    from py4j.protocol import Py4JError
    from pyspark.errors import AnalysisException, PySparkException

    try:
        yield
    except LakecloneError:
        raise
    except PySparkException as error:
        raise _translate(error, compile_time=isinstance(error, AnalysisException)) from None
    except Py4JError as error:
        if spark_stopped(error):
            raise ExecutionError(SPARK_STOPPED) from None
        raise _java_error(error) from None
    except ConnectionError:
        raise ExecutionError(SPARK_STOPPED) from None


def _translate(error: Exception, *, compile_time: bool) -> LakecloneError:
    # A failure inside a task arrives wrapped; the innermost known condition is the one to report.
    chain = list(_causes(error))
    failure = jvm_failure(message for _, _, message in chain) or storage_failure(("", m) for _, _, m in chain)
    if failure is not None:
        return failure
    for condition, params, message in reversed(chain):
        if _UNRESOLVED.match(condition) and "objectName" in params:
            return SqlCompilationError(f"invalid identifier '{params['objectName'].replace('`', '')}'")
        if condition in _SNOWFLAKE_WORDING:
            return _SNOWFLAKE_WORDING[condition](params)
        if _CONFLICTS.match(condition):
            return conflict(message)
    condition, _, message = next((c for c in chain if c[0] not in _WRAPPERS), chain[-1])
    if compile_time:
        return SqlCompilationError(first_line(message))
    return ExecutionError(first_line(message))


def _causes(error: Exception) -> Iterator[tuple[str, dict[str, str], str]]:
    """(condition, parameters, message) of an error and each error that caused it, outermost first."""
    seen = 0
    current: object | None = error
    while current is not None and seen < 10:
        seen += 1
        try:
            condition = getattr(current, "getCondition", lambda: None)() or ""
            params = dict(getattr(current, "getMessageParameters", lambda: None)() or {})
        except Exception:
            condition, params = "", {}
        # The captured description: Spark's getMessage() fails for conditions only Delta registers.
        message = getattr(current, "_desc", None) or str(current)
        if not condition:
            # delta-spark's own exception classes (its conflicts among them) carry
            # their condition only as the message's "[CONDITION] " prefix.
            prefix = _CONDITION_PREFIX.match(message)
            condition = prefix.group(1) if prefix else ""
        yield condition, params, message
        current = getattr(current, "_cause", None)


def conflict(message: str) -> ConcurrentWriteError:
    """A lost commit race, without Delta's advice on isolation levels and its documentation links."""
    text = first_line(message)
    text = re.sub(r"^\w+Exception:\s*", "", text)
    text = re.sub(r"\s*(Refer to|Please refer to|Conflicting commit).*$", "", text)
    return ConcurrentWriteError(f"Transaction conflict: {text}")


def _java_error(error: Exception) -> LakecloneError:
    """A failure PySpark could not convert: walk the Java exception and its causes ourselves."""
    from py4j.protocol import Py4JNetworkError

    if isinstance(error, Py4JNetworkError):
        return ExecutionError(
            "Lost the connection to Spark's JVM (it ran out of memory, crashed or was stopped): "
            "restart the Python process or kernel to start a new one."
        )
    java = getattr(error, "java_exception", None)
    if java is None:
        return jvm_failure([str(error)]) or ExecutionError(first_line(str(error)))
    try:
        chain = list(_java_causes(java))
    except Exception:
        return jvm_failure([str(error)]) or ExecutionError(first_line(str(error)))
    failure: LakecloneError | None = jvm_failure(text for name, _, _, message in chain for text in (name, message))
    failure = failure or storage_failure((name, message) for name, _, _, message in chain)
    if failure is not None:
        return failure
    for name, condition, params, message in reversed(chain):
        if condition in _SNOWFLAKE_WORDING:
            return _SNOWFLAKE_WORDING[condition](params)
        if _CONFLICTS.match(condition) or _CONFLICT_CLASSES.search(name):
            return conflict(message)
    _, _, _, message = next((c for c in chain if c[1] not in _WRAPPERS), chain[-1])
    return ExecutionError(first_line(message))


def _java_causes(java: Any) -> Iterator[tuple[str, str, dict[str, str], str]]:
    """(class, condition, parameters, message) of a Java exception and its causes, outermost first."""
    seen = 0
    while java is not None and seen < 10:
        seen += 1
        name = str(java.getClass().getName())
        condition, params = "", {}
        if hasattr(java, "getCondition"):
            try:
                condition = str(java.getCondition() or "")
                params = {str(k): str(v) for k, v in dict(java.getMessageParameters() or {}).items()}
            except Exception:
                condition, params = "", {}
        yield name, condition, params, str(java.getMessage() or java.toString())
        java = java.getCause()


def first_line(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else "Spark failed"
    # Spark appends "SQLSTATE: xxxxx" and query positions that refer to the
    # transpiled Spark SQL, not to the user's text.
    text = re.sub(r"\s*SQLSTATE: \w+.*$", "", text)
    # Spark's error-class prefix ("[DIVIDE_BY_ZERO] ...") is noise next to the message itself.
    return re.sub(r"^\[[A-Z_.]+\]\s*", "", text)


# The actions that run a frame's query, and so are where a lazy failure (a bad
# cast, a division by zero) finally surfaces.
ACTIONS = ("collect", "count", "first", "head", "isEmpty", "show", "take", "tail", "toArrow", "toLocalIterator", "toPandas")

ARROW_FAILURE_WARNING = "toPandas attempted Arrow optimization.*has reached the error below"

_checked_classes: dict[type, type] = {}

# The note (see lakeclone.frame_notes) naming the statement of its text that made a frame.
_POSITION = "statement"


def located(frame: DataFrame, position: StatementPosition) -> DataFrame:
    """``frame``, its later failures naming the statement of a several-statement text that made it."""
    return frame_notes.note(frame, _POSITION, position)


def checked(frame: DataFrame, *, like: DataFrame | None = None) -> DataFrame:
    """``frame``, with its actions raising LakecloneErrors instead of Spark's errors.

    Spark runs a query only when an action asks for rows, after ``lake.sql``
    has returned; this carries lakeclone's error translation over to that moment.
    A frame derived from it (``limit``, ``filter``, ``join``…) is checked too and
    carries its notes (its statement's position, its Lake's progress setting);
    pass ``like`` to give a frame built otherwise the notes of another.
    """
    if like is not None:
        frame_notes.carry(frame, like)
    base = type(frame)
    if base in _checked_classes.values():
        return frame
    cls = _checked_classes.get(base)
    if cls is None:
        methods = {name: _derived(getattr(base, name)) for name in dir(base) if _transformation(base, name)}
        methods.update({name: _checked_action(base, name) for name in ACTIONS})
        cls = type(f"Checked{base.__name__}", (base,), methods)
        _checked_classes[base] = cls
    frame.__class__ = cls
    return frame


# The note naming the Spark settings a frame's actions run with: its Lake's session parameters'.
_SETTINGS = "spark_settings"


def with_settings(frame: DataFrame, settings: Mapping[str, str]) -> DataFrame:
    """``frame``, its actions (and those of frames derived from it) run with the Spark ``settings``."""
    return frame_notes.note(frame, _SETTINGS, dict(settings)) if settings else frame


def _transformation(base: type, name: str) -> bool:
    """Whether ``base.name`` is a public method other than an action (what it returns is checked when a frame)."""
    return not name.startswith("_") and name not in ACTIONS and inspect.isfunction(getattr(base, name, None))


def _derived(method: Callable[..., object]) -> Callable[..., object]:
    def derive(self: DataFrame, *args: object, **kwargs: object) -> object:
        from pyspark.sql import DataFrame

        with spark_errors():
            result = method(self, *args, **kwargs)
        return checked(result, like=self) if isinstance(result, DataFrame) and result is not self else result

    derive.__name__ = method.__name__
    derive.__doc__ = method.__doc__
    return public(derive)


def _checked_action(base: type, name: str) -> Callable[..., object]:
    action = getattr(base, name)

    def run(self: DataFrame, *args: object, **kwargs: object) -> object:
        try:
            settings = frame_notes.noted(self, _SETTINGS) or {}
            with spark_errors(), watching_frame(self), session_settings(self.sparkSession, settings), warnings.catch_warnings():
                # toPandas repeats a failure as a warning before raising it.
                warnings.filterwarnings("ignore", message=ARROW_FAILURE_WARNING)
                return action(self, *args, **kwargs)
        except LakecloneError as error:
            if error.statement is None:
                error.statement = frame_notes.noted(self, _POSITION)
            raise

    run.__name__ = name
    run.__doc__ = action.__doc__
    return public(run)
