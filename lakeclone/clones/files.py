"""The two ways a clone gets its files: by reference (zero-copy) or by copy (deep)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from lakeclone.delta.log import DataFile, epoch_ms
from lakeclone.delta.paths import absolute, relative

# Copying is I/O bound; a few threads keep the disk busy without swamping two cores.
COPY_THREADS = 8


def referenced(files: Iterable[DataFile]) -> list[DataFile]:
    """Add actions that point at the files where they live, by absolute URI.

    A file that the source itself references from elsewhere is pointed at
    directly, so references stay one hop deep however long a chain of clones is.
    """
    return [
        DataFile(
            path=absolute(f.local_path),
            local_path=f.local_path,
            size=f.size,
            num_records=f.num_records,
            stats=f.stats,
            modification_time=f.modification_time,
        )
        for f in files
    ]


def copied(
    files: Sequence[DataFile], location: str, *, now: dt.datetime, present: Iterable[DataFile] = ()
) -> tuple[list[DataFile], int, int]:
    """Copy files into ``location``; files already ``present`` there (same name, same size) are reused.

    Returns:
        The add actions for all of ``files``, now under ``location``, and how many
        files and bytes were actually copied.
    """
    os.makedirs(location, exist_ok=True)
    have = {os.path.basename(f.local_path): f for f in present}
    results: list[DataFile] = []
    to_copy: list[tuple[str, str]] = []
    copied_bytes = 0
    for file in files:
        name = os.path.basename(file.local_path)
        target = os.path.join(location, name)
        existing = have.get(name)
        if existing is None or existing.size != file.size:
            to_copy.append((file.local_path, target))
            copied_bytes += file.size
        results.append(
            DataFile(
                path=relative(target, location),
                local_path=target,
                size=file.size,
                num_records=file.num_records,
                stats=file.stats,
                modification_time=epoch_ms(now),
            )
        )
    stamp = now.timestamp()

    def copy(pair: tuple[str, str]) -> None:
        shutil.copyfile(*pair)
        os.utime(pair[1], (stamp, stamp))

    with ThreadPoolExecutor(COPY_THREADS) as pool:
        list(pool.map(copy, to_copy))
    return results, len(to_copy), copied_bytes
