"""Channels: Snowpipe-Streaming-style row ingestion into Delta tables, exactly once by offset token.

A :class:`StreamingClient` (``lake.streaming_client(name)``) opens named
channels on tables; each channel buffers rows with an offset token and commits
them, at least every ``max_client_lag`` by the Lake's clock, as one Delta
append carrying Delta's ``txn`` action and the token (:mod:`~lakeclone.channels.log`).
Reopening a channel anywhere invalidates older handles; ``SHOW CHANNELS``
lists them.
"""

from lakeclone.channels import client, convert, log, statements
from lakeclone.channels.client import (
    Channel,
    ChannelStatus,
    ChannelStatusCode,
    InsertValidationResponse,
    OnError,
    StreamingClient,
)
from lakeclone.engine import registry
from lakeclone.errors import ChannelInsertError, ChannelInvalidError, ChannelOpenError, InsertError

registry.SHOWS["CHANNELS"] = statements.show_channels

__all__ = [
    "Channel",
    "ChannelInsertError",
    "ChannelInvalidError",
    "ChannelOpenError",
    "ChannelStatus",
    "ChannelStatusCode",
    "InsertError",
    "InsertValidationResponse",
    "OnError",
    "StreamingClient",
    "client",
    "convert",
    "log",
    "statements",
]
