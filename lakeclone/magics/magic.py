"""The ``%lsql`` line magic and ``%%lsql`` cell magic."""

from __future__ import annotations

import time
from collections import ChainMap
from typing import Any

from IPython.core.magic import (
    Magics,
    line_cell_magic,
    magics_class,
    needs_local_scope,
    no_var_expand,
)
from IPython.core.magic_arguments import argument, magic_arguments
from traitlets import Int

import lakeclone.lake
from lakeclone.errors import LakecloneError, LsqlCellError
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

    @no_var_expand  # IPython's $var/{var} expansion would corrupt $$strings$$ and {{ident}}.
    @needs_local_scope
    @magic_arguments()
    @argument("-o", "--out", metavar="NAME", help="Also store the result in the variable NAME.")
    @argument(
        "--lake",
        metavar="NAME",
        help="Run on the Lake in the variable NAME instead of the latest lakeclone.connect().",
    )
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
            started = time.perf_counter()
            frame = lake.sql(command.sql)
            result = LsqlResult.fetch(
                frame,
                started=started,
                max_rows=self.max_rows,
                display_limit=self.display_limit,
                query_id=lake.last_query_id,
                statements=command.statements,
            )
        except LakecloneError as error:
            raise LsqlCellError(str(error)) from error
        if command.out is not None:
            self._user_namespace[command.out] = result
        return result

    @property
    def _user_namespace(self) -> dict[str, Any]:
        """The notebook's variables (IPython registers a magic with its shell, so there is one)."""
        if self.shell is None:
            raise LsqlCellError("%%lsql runs in an IPython shell.")
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    @staticmethod
    def _lake(name: str | None, namespace: ChainMap[str, Any]) -> lakeclone.lake.Lake:
        if name is None:
            return lakeclone.lake.latest() or lakeclone.lake.connect()
        try:
            lake = namespace[name]
        except KeyError:
            raise LakecloneError(f"--lake {name}: no Python variable {name!r} is defined.") from None
        if not isinstance(lake, lakeclone.lake.Lake):
            raise LakecloneError(f"--lake {name}: {name!r} is a {type(lake).__name__}, not a lakeclone Lake.")
        return lake
