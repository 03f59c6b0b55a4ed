"""The folders running statements write new tables into, so that what a killed statement wrote is found again."""

from __future__ import annotations

from dataclasses import dataclass

from lakeclone.catalog.db import Store


@dataclass(frozen=True)
class PendingFolder:
    """A folder a statement writes a new table into, until the statement's catalog record.

    Attributes:
        location: the folder, qualified.
        query_id: the statement.
        session_id: the session running it (see :mod:`lakeclone.catalog.sessions`).
        made: whether the statement made the folder (else it was there, empty).
    """

    location: str
    query_id: str
    session_id: str
    made: bool


class FolderStore(Store):
    """Pending folders: recorded before a statement writes into one, settled with the statement's record."""

    def pend_folder(self, folder: PendingFolder) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO pending_folders (location, query_id, session_id, made) VALUES (?, ?, ?, ?)",
                (folder.location, folder.query_id, folder.session_id, int(folder.made)),
            )

    def settle_folders(self, query_id: str) -> None:
        """The statement ``query_id`` is recorded (or undone): its folders are no longer pending."""
        with self.transaction():
            self._db.execute("DELETE FROM pending_folders WHERE query_id = ?", (query_id,))

    def pending_folders(self) -> list[PendingFolder]:
        rows = self._db.execute("SELECT location, query_id, session_id, made FROM pending_folders ORDER BY location")
        return [PendingFolder(r["location"], r["query_id"], r["session_id"], bool(r["made"])) for r in rows.fetchall()]

    def forget_pending_folder(self, location: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM pending_folders WHERE location = ?", (location,))

    def holds_table_at(self, location: str) -> bool:
        """Whether any table the catalog records (live or dropped) lives in ``location``."""
        return self._db.execute("SELECT 1 FROM tables WHERE location = ? LIMIT 1", (location,)).fetchone() is not None
