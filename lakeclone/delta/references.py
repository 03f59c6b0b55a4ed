"""Which data files a table still needs: those of its current version and of every version inside retention."""

from __future__ import annotations

import datetime as dt
import json
import os

from lakeclone.delta.log import DeltaLog
from lakeclone.delta.paths import resolve


def referenced_files(log: DeltaLog, horizon: dt.datetime | None) -> dict[str, int]:
    """Files some version current at or after ``horizon`` references.

    Args:
        log: the table's log.
        horizon: the oldest moment time travel must still serve; None for the
            current version alone.

    Returns:
        Each file's local path, mapped to the newest version that references it.
    """
    history = log.history()
    latest = history[-1].version
    current = {f.local_path: latest for f in log.snapshot(latest).files}
    if horizon is None:
        return current
    # The version current at the horizon, and everything committed after it.
    at_horizon = max((c.version for c in history if c.timestamp <= horizon), default=history[0].version)
    if at_horizon == latest:
        return current
    files = {f.local_path: at_horizon for f in log.snapshot(at_horizon).files}
    for version in range(at_horizon + 1, latest + 1):
        for path in _added(log, version):
            files[path] = version
    files.update(current)
    return files


def _added(log: DeltaLog, version: int) -> list[str]:
    """The files one commit adds, read from its JSON commit file."""
    commit = os.path.join(log.location, "_delta_log", f"{version:020d}.json")
    if not os.path.exists(commit):
        return [f.local_path for f in log.snapshot(version).files]
    added = []
    with open(commit, encoding="utf-8") as lines:
        for line in lines:
            action = json.loads(line)
            if "add" in action:
                added.append(resolve(action["add"]["path"], log.location))
    return added
