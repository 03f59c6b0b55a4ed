"""lakeclone: clones, time travel and VACUUM on open Delta Lake tables, from a notebook.

Every error is a :class:`LakecloneError`; the kinds a caller may catch
(``LockTimeoutError``, ``ChannelInvalidError``, ``ObjectNotFoundError``…) are
all defined and exported in :mod:`lakeclone.errors`.

Example:
    >>> import lakeclone
    >>> lake = lakeclone.connect()                       # doctest: +SKIP
    >>> lake.sql("CREATE TABLE t (id INT)")              # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.clock import ManualClock, system_clock
from lakeclone.errors import LakecloneError
from lakeclone.lake import Lake, connect
from lakeclone.session import configure_spark

__all__ = ["Lake", "LakecloneError", "ManualClock", "configure_spark", "connect", "system_clock"]

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext lakeclone``: registers ``%lsql`` and ``%%lsql``.

    The magics module (and IPython with it) is imported only here, so that
    ``import lakeclone`` stays light outside notebooks.
    """
    from lakeclone.magics import load_ipython_extension as load

    load(ipython)
