"""Which sessions on a warehouse are alive: each holds a lock on a file of its own for as long as it runs.

A statement that crashes between its Delta commit and its catalog record
leaves a record of what it was doing (a stream it was consuming). Another
session may resolve such a record only once its owner is gone: the owner's
lock file is then unlocked, since the operating system releases a process's
locks when it dies, however it dies (``kill -9`` included). The catalog lives
on the driver's local disk, so every session of a warehouse shares one machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from pathlib import Path

SESSIONS = "sessions"


class SessionLock:
    """This session's lock: held from creation until :meth:`release` or the process's end.

    Attributes:
        id: the session's id, which records it leaves behind name.
    """

    def __init__(self, warehouse: Path) -> None:
        self.id = uuid.uuid4().hex
        self._folder = warehouse / SESSIONS
        self._folder.mkdir(parents=True, exist_ok=True)
        self._path = self._folder / f"{self.id}.lock"
        self._fd: int | None = os.open(self._path, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            with contextlib.suppress(FileNotFoundError):
                self._path.unlink()

    def __del__(self) -> None:
        self.release()


def is_alive(warehouse: Path, session_id: str) -> bool:
    """Whether the session ``session_id`` still runs (in this process or another)."""
    path = warehouse / SESSIONS / f"{session_id}.lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        # A second open file description conflicts with the holder's lock even in the same process.
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return False
