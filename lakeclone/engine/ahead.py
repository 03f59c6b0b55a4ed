"""Delta state computed ahead: after a statement returns, the state of the tables it wrote, while the user thinks.

Delta computes a snapshot's state (its files, transaction versions and domain
metadata) once, the first time something needs it. After a commit, the next
statement on the table needs the new version's: a query's scan, an UPDATE's,
a tracked table's INSERT reading the row-id high-water mark (three Spark jobs).
In a notebook a person reads a result before running the next cell, so one
background thread computes that state then, as channels do after a flush. It
never holds up a statement (a statement that needs a state being computed
just finds it sooner), ignores failures (the statement that needs the state
computes it and reports them), and touches only tables a statement wrote.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lakeclone.delta.log import Delta

LOG = logging.getLogger(__name__)


class StateAhead:
    """One Lake's background thread computing the state of tables its statements wrote."""

    def __init__(self, delta: Delta) -> None:
        self._delta = delta
        self._pending: dict[str, None] = {}  # table locations, in the order written
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._busy = False

    def after_statement(self, locations: Iterable[str]) -> None:
        """Compute the latest state of each table at ``locations`` soon, in the background."""
        with self._lock:
            for location in locations:
                self._pending[location] = None
            if not self._pending:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lakeclone-state-ahead", daemon=True)
                self._thread.start()
            self._wake.notify()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is pending or being computed; whether that happened within ``timeout`` seconds."""
        with self._lock:
            return self._wake.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                self._busy = False
                self._wake.notify_all()
                self._wake.wait_for(lambda: bool(self._pending))
                location = next(iter(self._pending))
                del self._pending[location]
                self._busy = True
            try:
                self._delta.table(location).compute_state()
            except Exception as error:  # only a head start: the next statement computes it and reports failures
                LOG.debug("computing the state of %s ahead of its next statement failed: %s", location, error)
