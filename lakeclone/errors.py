"""The errors lakeclone raises.

Every failure a user can cause surfaces as a :class:`LakecloneError`. Where
Snowflake or Delta Lake documents a message for the same situation, the
message is theirs, so that users recognise it and search engines find it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import ClassVar, ParamSpec, TypeVar

__all__ = [
    "CatalogBusyError",
    "CatalogVersionError",
    "ChannelInsertError",
    "ChannelInvalidError",
    "ChannelOpenError",
    "ConcurrentWriteError",
    "DataNotAvailableError",
    "ExecutionError",
    "InsertError",
    "InsufficientPrivilegesError",
    "InternalError",
    "InvalidLocationError",
    "InvalidParameterError",
    "LakecloneError",
    "LockTimeoutError",
    "LsqlCellError",
    "NoTransactionError",
    "ObjectExistsError",
    "ObjectNotFoundError",
    "SetupError",
    "SqlCompilationError",
    "SqlSyntaxError",
    "StaleStreamError",
    "StatementNotFoundError",
    "StatementPosition",
    "StorageError",
    "StreamBusyError",
    "TableFilesMissingError",
    "TimeTravelError",
    "UnsupportedStatementError",
    "WidgetError",
]

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class StatementPosition:
    """Which statement of a several-statement text failed.

    Attributes:
        number: 1-based position of the statement in the text.
        count: how many statements the text has.
        sql: the statement's text.
    """

    number: int
    count: int
    sql: str

    # Long statements are cut here; the position already says which one it is.
    SHOWN_CHARACTERS = 80

    def __str__(self) -> str:
        text = re.sub(r"\s+", " ", self.sql).strip()
        if len(text) > self.SHOWN_CHARACTERS:
            text = text[: self.SHOWN_CHARACTERS - 1] + "…"
        return f"(in statement {self.number} of {self.count}: {text})"


class LakecloneError(Exception):
    """Base class of every error lakeclone raises.

    Attributes:
        statement: for a failure in a text of several statements, which one failed.
        internal_traceback: where inside lakeclone the error arose. The public
            API raises it with a traceback that starts at the caller's call
            (see :func:`public`); the frames cut are kept here, for
            ``pdb.post_mortem(error.internal_traceback)`` and logs.
    """

    statement: StatementPosition | None = None
    internal_traceback: TracebackType | None = None
    # Snowflake's error code for the error, where it has one: the query history's ERROR_CODE.
    code: ClassVar[str | None] = None
    # Whether IPython shows these errors as their message alone: one switch for the process (the extension loads once).
    short_in_ipython: ClassVar[bool] = False

    def __str__(self) -> str:
        message = super().__str__()
        return message if self.statement is None else f"{message}\n{self.statement}"

    def _render_traceback_(self) -> list[str]:
        """How IPython shows the error: its message alone after ``%load_ext lakeclone``, else its traceback.

        Raising here is how IPython is told to show the traceback. ``%debug``
        works either way: IPython keeps the error and its traceback.
        """
        if not LakecloneError.short_in_ipython:
            raise NotImplementedError("IPython shows the whole traceback")
        return f"{type(self).__name__}: {self}".splitlines()


def show_short_in_ipython() -> None:
    """Have IPython show a LakecloneError as its message, without the traceback (what ``%load_ext lakeclone`` does)."""
    LakecloneError.short_in_ipython = True


def public(function: Callable[P, R]) -> Callable[P, R]:
    """Mark ``function`` as part of lakeclone's public API: a LakecloneError leaves it without lakeclone's own frames.

    A failure is one message the caller should read, not a screen of
    lakeclone's internals (the executor, context managers, Spark's error
    translation): the traceback shows the caller's frames and this one.
    """

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except LakecloneError as error:
            if error.internal_traceback is None:
                error.internal_traceback = error.__traceback__
            raise error.with_traceback(None)  # noqa: B904 (the error itself, re-raised: its cause stays as it was)

    return call


class SqlCompilationError(LakecloneError):
    """A statement that cannot be compiled: bad syntax, unknown objects, bad options.

    The message starts with ``SQL compilation error:`` as Snowflake's does.
    """

    prefix = "SQL compilation error:\n"

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(self.prefix + detail)


class SqlSyntaxError(SqlCompilationError):
    """The text is not valid lsql.

    Args:
        line: 1-based line of the offending token.
        position: 0-based column of the offending token, as Snowflake reports it.
        token: the offending token's text.
    """

    code = "001003"

    def __init__(self, line: int, position: int, token: str) -> None:
        self.line = line
        self.position = position
        self.token = token
        super().__init__(f"syntax error line {line} at position {position} unexpected '{token}'.")


class UnsupportedStatementError(SqlCompilationError):
    """Valid SQL that lakeclone does not run."""

    def __init__(self, statement: str) -> None:
        super().__init__(f"Unsupported statement: {statement}")


class ObjectNotFoundError(SqlCompilationError):
    """An object does not exist (or the current role may not see it)."""

    code = "002003"

    def __init__(self, name: str, kind: str = "Object") -> None:
        self.name = name
        super().__init__(f"{kind} '{name}' does not exist or not authorized.")


class InsufficientPrivilegesError(SqlCompilationError):
    """The current role sees an object but lacks the privilege a statement needs on it."""

    code = "003001"
    prefix = "SQL access control error:\n"

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"Insufficient privileges to operate on {kind.lower()} '{name}'")

    # Who was denied, once ran_as has named them.
    denied: tuple[str, str] | None = None

    def ran_as(self, user: str, role: str) -> None:
        """Name who was denied: ``… as user BOB, role ANALYST`` (a session's identity is easy to lose track of).

        Only the first call names them: an error raised by a nested call passes through two places that know.
        """
        if self.denied is None and len(self.args) == 1:
            self.denied = (user, role)
            self.args = (f"{self.args[0]} as user {user}, role {role}",)


class ObjectExistsError(SqlCompilationError):
    """``CREATE`` of a name that is taken, without ``OR REPLACE`` or ``IF NOT EXISTS``."""

    def __init__(self, name: str, kind: str = "Object") -> None:
        self.name = name
        super().__init__(f"{kind} '{name}' already exists.")


class InvalidParameterError(SqlCompilationError):
    """A parameter name or value that lakeclone does not accept."""


class TimeTravelError(LakecloneError):
    """A time-travel point outside what the table can serve."""


class StatementNotFoundError(TimeTravelError):
    """``STATEMENT => 'id'`` names no statement lakeclone has run."""

    def __init__(self, query_id: str) -> None:
        super().__init__(f"Statement {query_id} not found")


class DataNotAvailableError(TimeTravelError):
    """The files behind a point in time have been removed; ``why`` says by what, where that is known."""

    def __init__(self, why: str = "") -> None:
        super().__init__(f"Data is not available. {why}".strip())


class ExecutionError(LakecloneError):
    """A statement failed while running: a bad cast, a division by zero, a duplicate merge match."""


class TableFilesMissingError(ExecutionError):
    """A table's Delta log is gone from its folder: its files were deleted outside lakeclone."""

    def __init__(self, name: str | None, location: str) -> None:
        table = f"Table {name}" if name else "The table"
        super().__init__(
            f"{table} has no files: its Delta log is gone from {location} (deleted outside lakeclone). "
            "DROP TABLE removes it from the catalog."
        )


class StorageError(ExecutionError):
    """Object storage refused a request or could not be reached: a missing bucket, wrong credentials, a server that is down."""


class ConcurrentWriteError(LakecloneError):
    """Another writer changed the files this statement was rewriting.

    Attributes:
        retryable: the only commits this statement lost to were blind appends
            (INSERTs), which conflict with nothing at Delta's WriteSerializable
            isolation: running the statement again is running it after them.
    """

    retryable: bool = False


class SetupError(LakecloneError):
    """The machine lacks something lakeclone needs, such as Java 17."""


class InvalidLocationError(SqlCompilationError):
    """A LOCATION lakeclone will not use: relative, unusable, or overlapping the warehouse or another table."""


class InternalError(LakecloneError):
    """A failure lakeclone did not foresee: a bug in lakeclone, said in one line.

    Attributes:
        original: the exception it stands for, for whoever debugs it (also
            logged with its traceback on the ``lakeclone`` logger at DEBUG level).
    """

    def __init__(self, original: BaseException) -> None:
        lines = str(original).strip().splitlines()
        detail = f"{type(original).__name__}: {lines[0]}" if lines else type(original).__name__
        super().__init__(f"Internal error in lakeclone ({detail}); please report it.")
        self.original = original


class StaleStreamError(SqlCompilationError):
    """A stream whose offset its source no longer keeps: it must be recreated."""


class StreamBusyError(LakecloneError):
    """Another session's statement kept consuming the stream longer than lakeclone waits."""


class NoTransactionError(SqlCompilationError):
    """COMMIT or ROLLBACK with no transaction open in the session."""


class LockTimeoutError(LakecloneError):
    """Another session's transaction held a table longer than the statement's LOCK_TIMEOUT."""


class CatalogBusyError(LakecloneError):
    """Another process held the catalog longer than lakeclone waits."""


class CatalogVersionError(LakecloneError):
    """The catalog was written by a newer lakeclone."""


@dataclass(frozen=True)
class InsertError:
    """One error of a channel insert: the row (its index in the batch), the column, and what went wrong.

    Attributes:
        row_index: the row's position in the rows passed to the call, from 0.
        column: the column's name, or None for an error of the whole row.
        message: what went wrong, as Snowflake words it where it has words.
        offset_token: the token passed with the batch, if any.
    """

    row_index: int
    column: str | None
    message: str
    offset_token: str | None = None

    def __str__(self) -> str:
        where = f"column {self.column}" if self.column else "the row"
        return f"Row {self.row_index}, {where}: {self.message}"


class ChannelInvalidError(LakecloneError):
    """The channel handle was invalidated (reopened elsewhere, its table dropped) or closed; its unflushed rows are gone."""


class ChannelInsertError(LakecloneError):
    """An ON_ERROR = ABORT batch had a row that failed: nothing of the batch was loaded.

    Attributes:
        errors: the error that stopped the batch.
    """

    def __init__(self, errors: Sequence[InsertError]) -> None:
        super().__init__(f"The batch was rejected (ON_ERROR = ABORT): {errors[0]}")
        self.errors = tuple(errors)


class ChannelOpenError(LakecloneError):
    """A table channels cannot write."""


class WidgetError(LakecloneError):
    """A widget cannot show its table; IPython shows just this one-line message.

    Raised ``from None``: the internal error it replaces (and Spark's stack
    under it) is not chained, so a typo in a table name costs one line, not
    a screen of traceback.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class LsqlCellError(LakecloneError):
    """A statement in a ``%%lsql`` cell failed; IPython shows just the message.

    The cell still counts as failed, so "Run all" stops and nbval reports it.
    The original error is the ``__cause__``, for ``%debug``.
    """

    def _render_traceback_(self) -> list[str]:
        return str(self).splitlines()


SPARK_STOPPED = (
    "Spark has stopped: its JVM is gone (it ran out of memory, or was killed), so this Lake can run nothing more. "
    "Call lakeclone.connect() again for a new session (with a new SparkSession if you passed your own)."
)


def spark_stopped(error: BaseException) -> bool:
    """Whether ``error`` says the JVM behind the session is gone: Py4J cannot reach its gateway."""
    return isinstance(error, ConnectionError) or type(error).__name__ == "Py4JNetworkError"


@contextlib.contextmanager
def internal_errors() -> Iterator[None]:
    """Turn any exception but a LakecloneError (or an interrupt) raised in the block into an :class:`InternalError`.

    Raises:
        ExecutionError: the JVM stopped (:data:`SPARK_STOPPED`), which is no bug of lakeclone's.
        InternalError: anything else.
    """
    try:
        yield
    except LakecloneError:
        raise
    except Exception as error:
        if spark_stopped(error):
            raise ExecutionError(SPARK_STOPPED) from None
        logging.getLogger("lakeclone").debug("internal error", exc_info=True)
        raise InternalError(error) from None
