"""A channel's commits in its table's Delta log: the source of truth for its offset token.

Each commit a channel makes carries Delta's ``txn`` action for the channel's
appId, with a version one more than its last (written by Delta's transaction
as its streaming sink writes one, :func:`lakeclone.delta.transaction.commit_txn`);
the offset token rides in the same commit's ``commitInfo.userMetadata``
(lakeclone's operation parameters).
The snapshot's txn version for the appId says which commit was the channel's
last, and that commit says its token. Delta skips a write whose txnVersion is
not above the snapshot's, and fails one that races a commit of the same appId
(``ConcurrentTransactionException``), so of two handles writing the same
version at most one lands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.delta import transaction

if TYPE_CHECKING:
    from lakeclone.catalog.entries import ChannelEntry
    from lakeclone.delta.log import TableLog

CHANNEL = "channel"
APP_ID = "channelAppId"
TXN_VERSION = "channelTxnVersion"
OFFSET_TOKEN = "offsetToken"
OPENED = "channelOpened"


def txn_version(log: TableLog, app_id: str) -> int:
    """The txn version the table's latest snapshot holds for ``app_id``; -1 when it has none.

    Read from the version's checksum file where Delta wrote them (see
    :func:`lakeclone.delta.transaction.app_version`).
    """
    return transaction.app_version(log.snapshot_object(), app_id)


def token_at(log: TableLog, entry: ChannelEntry, version: int) -> str | None:
    """The offset token the channel's commit with txn version ``version`` carried (None for -1 or no token)."""
    if version < 0:
        return None
    if entry.txn_version == version:
        return entry.offset_token
    for commit in reversed(log.history()):
        parameters = commit.lakeclone.parameters if commit.lakeclone else {}
        if parameters.get(APP_ID) == entry.app_id and parameters.get(TXN_VERSION) == str(version):
            return parameters.get(OFFSET_TOKEN)
    return None


def parameters(entry: ChannelEntry, version: int, token: str | None, *, opened: bool = False) -> dict[str, object]:
    """What a channel commit records beside Delta's own operation parameters."""
    found: dict[str, object] = {CHANNEL: entry.name, APP_ID: entry.app_id, TXN_VERSION: version}
    if token is not None:
        found[OFFSET_TOKEN] = token
    if opened:
        found[OPENED] = "true"
    return found
