"""The features lakeclone runs, each a package that registers itself with the engine on import.

The engine never imports a feature; a Lake loads them all through :func:`load`.
"""

from __future__ import annotations

import importlib

FEATURES = (
    # First: its check runs before every other feature's hooks, so a denied statement changes nothing.
    "lakeclone.access",
    "lakeclone.sequences",
    "lakeclone.constraints",
    "lakeclone.clustering",
    "lakeclone.deletion_vectors",
    "lakeclone.clones",
    "lakeclone.vacuum",
    "lakeclone.views",
    # Before streams: a commit takes its table lock before it records a stream's consumption.
    "lakeclone.transactions",
    # After views: streams on views read views' definitions.
    "lakeclone.streams",
    # After transactions: a channel's commits take table locks like any statement's.
    "lakeclone.channels",
    # After transactions: a COPY's load records settle at COMMIT.
    "lakeclone.loading",
    # After access, views and streams: policies protect what the binder makes of tables, views and streams.
    "lakeclone.policies",
    # After every feature whose objects it lists (their column attributes, table attributes, visibility).
    "lakeclone.information_schema",
)


def load() -> None:
    """Import every feature once, so that it registers its statements and hooks."""
    for name in FEATURES:
        importlib.import_module(name)
