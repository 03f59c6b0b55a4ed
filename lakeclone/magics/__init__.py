"""IPython magics for lakeclone: ``%lsql`` and ``%%lsql``.

Example:
    In a notebook::

        %load_ext lakeclone

        %%lsql
        SELECT * FROM orders AT(OFFSET => -60)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.errors import LsqlCellError, show_short_in_ipython
from lakeclone.magics.completion import LSQL_MATCHER, lsql_matcher
from lakeclone.magics.magic import LsqlMagics
from lakeclone.magics.result import LsqlResult

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["LsqlCellError", "LsqlMagics", "LsqlResult", "load_ipython_extension"]


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register the ``%lsql`` magics with ``ipython`` (what ``%load_ext lakeclone`` calls)."""
    ipython.register_magics(LsqlMagics)
    magics = ipython.magics_manager.registry["LsqlMagics"]
    assert isinstance(magics, LsqlMagics)
    matchers = ipython.Completer.custom_matchers
    # %reload_ext registers anew: one lsql matcher, bound to the new magics.
    matchers[:] = [m for m in matchers if getattr(m, "matcher_identifier", None) != LSQL_MATCHER]
    matchers.append(lsql_matcher(magics.completion_lake))
    # A failing lake.sql(...) in a Python cell then reads like a failing %%lsql cell: the message alone.
    show_short_in_ipython()
