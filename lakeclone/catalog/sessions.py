"""Which sessions on a warehouse are alive: each holds a lease in the catalog, renewed while it runs.

A statement that crashes between its Delta commit and its catalog record
leaves a record of what it was doing (a stream it was consuming, a table it
held locked). Another session may resolve such a record only once its owner
is gone, so every session, when it starts, records a lease: the machine and
process it runs in, and when the lease expires. A thread of the process
renews its sessions' leases while they run (every :data:`RENEW_SECONDS`, by
each session's clock), and a session that ends deletes its lease.

A session is alive while its lease is there and:

- in this process, it has not ended (closed, or dropped by Python);
- in another process on this machine, that process still runs: whatever
  killed it (``kill -9`` included), the answer is immediate;
- on another machine, its lease has not expired by the asking session's
  clock: a machine that died, or lost its network, is recognised within
  :data:`LEASE_SECONDS` of its last renewal.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lakeclone.catalog.db import Store, parse_timestamp, timestamp_text

if TYPE_CHECKING:
    from lakeclone.catalog.store import Catalog

LEASE_SECONDS = 60.0
RENEW_SECONDS = 15.0


@dataclasses.dataclass(frozen=True)
class ProcessIdentity:
    """A process, told apart from any other that ever ran: its machine (host name and boot), pid and start time.

    The start time (Linux's, in clock ticks since boot; empty where the
    system does not say) tells a process from a later one given the same pid.
    """

    host: str
    pid: int
    started: str


@functools.cache
def _host() -> str:
    boot = Path("/proc/sys/kernel/random/boot_id")
    return f"{socket.gethostname()}/{boot.read_text().strip() if boot.exists() else ''}"


def _started(pid: int) -> str | None:
    """When the process ``pid`` started ("" where the system does not say), or None if no such process runs."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.joinpath("self").exists():
        try:
            # The command name (field 2) is in parentheses and may hold spaces: count fields after it.
            return stat.read_text().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # it runs, as another user
    return ""


def this_process() -> ProcessIdentity:
    pid = os.getpid()
    return ProcessIdentity(_host(), pid, _started(pid) or "")


def runs(process: ProcessIdentity) -> bool:
    """Whether ``process``, on this machine, still runs."""
    started = _started(process.pid)
    return started is not None and started == process.started


@dataclasses.dataclass(frozen=True)
class Lease:
    """A session's lease, as the catalog records it."""

    session_id: str
    process: ProcessIdentity
    started_at: dt.datetime
    expires_at: dt.datetime


class SessionStore(Store):
    """Sessions' leases."""

    def begin(self, lease: Lease) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT INTO session_leases (id, host, pid, process_started, started_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    lease.session_id,
                    lease.process.host,
                    lease.process.pid,
                    lease.process.started,
                    timestamp_text(lease.started_at),
                    timestamp_text(lease.expires_at),
                ),
            )

    def renew(self, session_id: str, expires_at: dt.datetime) -> bool:
        """Move a lease's expiry; False if the lease is gone (its session ended)."""
        with self.transaction():
            renewed = self._db.execute(
                "UPDATE session_leases SET expires_at = ? WHERE id = ?", (timestamp_text(expires_at), session_id)
            )
            return renewed.rowcount > 0

    def end(self, session_id: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM session_leases WHERE id = ?", (session_id,))

    def lease(self, session_id: str) -> Lease | None:
        row = self._db.execute("SELECT * FROM session_leases WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        process = ProcessIdentity(row["host"], row["pid"], row["process_started"])
        return Lease(session_id, process, parse_timestamp(row["started_at"]), parse_timestamp(row["expires_at"]))

    def dead(self, now: dt.datetime) -> list[str]:
        """The sessions whose leases are left though they no longer run (see :meth:`is_alive`)."""
        ids = [str(r[0]) for r in self._db.execute("SELECT id FROM session_leases").fetchall()]
        return [session_id for session_id in ids if not self.is_alive(session_id, now)]

    def is_alive(self, session_id: str, now: dt.datetime) -> bool:
        """Whether the session ``session_id`` still runs, in this process or any other, on any machine (see the module)."""
        lease = self.lease(session_id)
        if lease is None:
            return False
        if lease.process == this_process():
            return session_id in _LIVE
        if lease.process.host == _host():
            return runs(lease.process)
        return lease.expires_at > now


class SessionLease:
    """This session's lease: taken when it starts, renewed by the process's renewer, given up by :meth:`release`.

    Attributes:
        id: the session's id, which records it leaves behind name.
    """

    def __init__(self, catalog: Catalog, clock: Callable[[], dt.datetime]) -> None:
        self.id = uuid.uuid4().hex
        self._catalog_path = catalog.path
        self._clock = clock
        now = clock()
        catalog.sessions.begin(Lease(self.id, this_process(), now, self.expiry(now)))
        self._released = False
        _LIVE[self.id] = self
        _RENEWER.watch(self)

    def expiry(self, now: dt.datetime) -> dt.datetime:
        return now + dt.timedelta(seconds=LEASE_SECONDS)

    def release(self, catalog: Catalog) -> None:
        """End the session: its lease is deleted, and every session sees it gone."""
        if not self._released:
            self._released = True
            _LIVE.pop(self.id, None)
            catalog.sessions.end(self.id)


# The sessions of this process that have not ended, by id.
_LIVE: weakref.WeakValueDictionary[str, SessionLease] = weakref.WeakValueDictionary()


class _Renewer:
    """The process's thread renewing its sessions' leases, on connections of its own.

    A session dropped by Python without being closed has its lease deleted
    here, at the next round.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Weakly: a session Python drops must not be kept by its renewal.
        self._watched: dict[str, tuple[weakref.ref[SessionLease], Path]] = {}
        self._thread: threading.Thread | None = None
        self._pid = 0

    def watch(self, lease: SessionLease) -> None:
        with self._lock:
            self._watched[lease.id] = (weakref.ref(lease), lease._catalog_path)
            if self._thread is None or self._pid != os.getpid():  # a forked child has no thread of its parent's
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="lakeclone-session-leases", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(RENEW_SECONDS)
            self.renew_all()

    def renew_all(self) -> None:
        """One round: renew each running session's lease; delete those of sessions Python dropped."""
        from lakeclone.catalog.store import Catalog

        with self._lock:
            watched = list(self._watched.items())
        for session_id, (reference, path) in watched:
            lease = reference()
            ended = lease is None or lease._released
            try:
                catalog = Catalog(path, create=False)
            except Exception:
                if not path.exists():  # the warehouse is gone
                    self._forget(session_id)
                continue  # else busy: the next round tries again
            try:
                if ended:
                    catalog.sessions.end(session_id)
                    self._forget(session_id)
                elif lease is not None and not catalog.sessions.renew(session_id, lease.expiry(lease._clock())):
                    self._forget(session_id)
            except Exception:
                continue  # a busy catalog: the next round tries again
            finally:
                catalog.close()

    def _forget(self, session_id: str) -> None:
        with self._lock:
            self._watched.pop(session_id, None)


_RENEWER = _Renewer()
