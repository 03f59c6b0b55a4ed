"""The ``%lsql`` line magic and ``%%lsql`` cell magic."""

from __future__ import annotations

import time
from collections import ChainMap
from collections.abc import Mapping
from typing import Any

from IPython.core.magic import (
    Magics,
    line_cell_magic,
    line_magic,
    magics_class,
    needs_local_scope,
    no_var_expand,
)
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display
from traitlets import Int

import lakeclone.lake
from lakeclone.errors import LakecloneError, LsqlCellError, StatementPosition
from lakeclone.magics.command import LsqlCommand
from lakeclone.magics.result import LsqlResult

__all__ = ["LsqlMagics"]


@magics_class
class LsqlMagics(Magics):  # Magics is a traitlets Configurable: %config LsqlMagics works.
    """Run lsql from notebook cells.

    Example:
        In a notebook::

            %load_ext lakeclone
            %config LsqlMagics.display_limit = 20

            %%lsql -o recent
            SELECT * FROM orders WHERE placed_at > :since
    """

    display_limit = Int(10, min=1, config=True, help="Rows shown in a cell's output table.")
    max_rows = Int(
        10_000,
        min=1,
        config=True,
        help="Rows fetched into a cell's DataFrame at most; use lake.sql(...) for more.",
    )
    # The Lake cells run on: bound by the first cell (or %lsql_use), so that who they run as never changes silently.
    _bound: lakeclone.lake.Lake | None = None

    @no_var_expand  # IPython's $var/{var} expansion would corrupt $$strings$$ and {{ident}}.
    @needs_local_scope
    @magic_arguments()
    @argument("-o", "--out", metavar="NAME", help="Also store the result in the variable NAME.")
    @argument(
        "--lake",
        metavar="NAME",
        help="Run this cell on the Lake in the variable NAME instead of the cells' own (see %lsql_use).",
    )
    @argument("--each", action="store_true", help="Show each statement's result, not only the last one's.")
    @line_cell_magic
    def lsql(self, line: str, cell: str | None = None, local_ns: dict[str, Any] | None = None) -> LsqlResult:
        """Run lsql statements; the value is the last statement's result as a DataFrame.

        ``:name`` substitutes the Python variable ``name`` as a SQL literal and
        ``{{name}}`` as an identifier. The line form takes options, then SQL::

            %lsql -o n SELECT COUNT(*) FROM orders WHERE region = :region
        """
        namespace = ChainMap(local_ns or {}, self._user_namespace)
        try:
            command = LsqlCommand.parse(line, cell, magic=self.lsql, namespace=namespace)
            lake = self._lake(command.lake, namespace)
            if command.each and command.statements > 1:
                result = self._run_each(lake, command)
            else:
                result = self._fetch(lake, command.sql, time.perf_counter(), statements=command.statements)
        except LakecloneError as error:
            raise LsqlCellError(str(error)) from error
        if command.out is not None:
            self._user_namespace[command.out] = result
        return result

    def _fetch(self, lake: lakeclone.lake.Lake, sql: str, started: float, *, statements: int = 1) -> LsqlResult:
        return LsqlResult.fetch(
            lake.sql(sql),
            started=started,
            max_rows=self.max_rows,
            display_limit=self.display_limit,
            query_id=lake.last_query_id,
            statements=statements,
            ran_as=f"user {lake.current_user}, role {lake.current_role}",
        )

    def _run_each(self, lake: lakeclone.lake.Lake, command: LsqlCommand) -> LsqlResult:
        """Run the statements one by one, showing each result but the last, which is the cell's value.

        A failure stops the cell where it happens, named as ``lake.sql`` names it; the results before it stay shown.
        """
        texts = command.statement_texts()
        result = None
        for number, text in enumerate(texts, start=1):
            if result is not None:
                display(result)
            try:
                result = self._fetch(lake, text, time.perf_counter())
            except LakecloneError as error:
                error.statement = StatementPosition(number, len(texts), text)
                raise
            result.position = (number, len(texts))
        assert result is not None  # a cell of several statements ran at least one
        return result

    @property
    def _user_namespace(self) -> dict[str, Any]:
        """The notebook's variables (IPython registers a magic with its shell, so there is one)."""
        if self.shell is None:
            raise LsqlCellError("%%lsql runs in an IPython shell.")
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    @line_magic
    def lsql_use(self, line: str) -> None:
        """``%lsql_use bob``: later ``%%lsql`` cells run on the Lake in the variable ``bob``.

        Until then they run on the Lake the first cell ran on: a later
        ``lakeclone.connect(user=…)`` makes a Lake for Python code, and does not
        change who the cells run as.
        """
        name = line.strip()
        try:
            self._bound = self._named_lake(name, self._user_namespace, option="%lsql_use")
        except LakecloneError as error:
            raise LsqlCellError(str(error)) from error

    def completion_lake(self, name: str | None) -> lakeclone.lake.Lake | None:
        """The Lake a cell would run on (``name``: its ``--lake`` variable's), for completion; None if there is none yet.

        Completing never connects: before the first cell there may be no Lake.
        """
        if name is not None:
            lake = self._user_namespace.get(name)
            return lake if isinstance(lake, lakeclone.lake.Lake) else None
        return self._bound or lakeclone.lake.latest()

    def _lake(self, name: str | None, namespace: ChainMap[str, Any]) -> lakeclone.lake.Lake:
        """The Lake a cell runs on: ``--lake``'s for that cell, else the one the cells are bound to."""
        if name is not None:
            return self._named_lake(name, namespace, option="--lake")
        if self._bound is None:
            self._bound = lakeclone.lake.latest() or lakeclone.lake.connect()
        return self._bound

    @staticmethod
    def _named_lake(name: str, namespace: Mapping[str, Any], *, option: str) -> lakeclone.lake.Lake:
        if not name:
            raise LakecloneError(f"{option} needs the name of a variable holding a Lake.")
        try:
            lake = namespace[name]
        except KeyError:
            raise LakecloneError(f"{option} {name}: no Python variable {name!r} is defined.") from None
        if not isinstance(lake, lakeclone.lake.Lake):
            raise LakecloneError(f"{option} {name}: {name!r} is a {type(lake).__name__}, not a lakeclone Lake.")
        return lake
