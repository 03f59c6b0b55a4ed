"""DEEP CLONE: copy a snapshot's files into the clone's folder, then commit them as the clone's own.

Open-source Delta has no DEEP CLONE. lakeclone copies the data files and
their deletion vectors through the storage layer (several at a time, never
through memory whole) and commits add actions naming the copies through
Delta's own transaction (:mod:`lakeclone.delta.transaction`). The result is an
ordinary Delta table: its files are its own, and any Delta reader opens it.

Cloning again into the same deep clone (``CREATE OR REPLACE TABLE c DEEP
CLONE s``) is a new version of the clone that copies only what is new.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from lakeclone.delta import transaction
from lakeclone.delta.log import deletion_vector_uri
from lakeclone.storage import join, resolve_log_path

if TYPE_CHECKING:
    from lakeclone.delta.log import Delta
    from lakeclone.storage import Storage


@dataclass(frozen=True)
class DeepCopy:
    """What a deep clone commits, and what it copied to get there."""

    files: tuple[transaction.ClonedFile, ...]
    removes: tuple[Mapping[str, Any], ...]
    copied_files: int
    copied_bytes: int


def plan_copy(
    source: str,
    adds: Sequence[Mapping[str, Any]],
    target: str,
    *,
    present: Sequence[Mapping[str, Any]] = (),
) -> tuple[DeepCopy, list[tuple[str, str]]]:
    """The copies to make and the actions to commit for cloning ``adds`` (the source's live files) into ``target``.

    Args:
        present: the target's live add actions when refreshing a deep clone;
            a file already there with the same deletion vector is kept as it is.

    Returns:
        The commit's contents, and the (source URI, target URI) pairs to copy.
    """
    have = {_key(target, add): add for add in present}
    sizes = {resolve_log_path(add["path"], target): int(add.get("size") or 0) for add in present}
    pairs: list[tuple[str, str]] = []
    copied_bytes = 0
    files: list[transaction.ClonedFile] = []
    wanted: set[tuple[str, str | None]] = set()
    for add in adds:
        data = resolve_log_path(add["path"], source)
        name = posixpath.basename(data)
        target_data = join(target, name)
        vector = add.get("deletionVector")
        vector_uri = deletion_vector_uri(vector, source) if vector else None
        vector_name = posixpath.basename(vector_uri) if vector_uri else None
        key = (name, vector_name)
        wanted.add(key)
        if key in have:
            continue
        if sizes.get(target_data) != int(add.get("size") or 0):
            pairs.append((data, target_data))
            copied_bytes += int(add.get("size") or 0)
        descriptor = None
        if vector is not None and vector_uri is not None and vector_name is not None:
            pairs.append((vector_uri, join(target, vector_name)))
            descriptor = transaction.relative_deletion_vector(vector, vector_name)
        elif vector:
            descriptor = dict(vector)  # stored inline in the log: it travels with the action
        # Delta keeps relative paths in its log URI-encoded.
        files.append(transaction.ClonedFile(add, quote(name, safe="/"), descriptor))
    removes = tuple(add for key, add in have.items() if key not in wanted)
    data_copies = sum(1 for source_uri, _ in pairs if not posixpath.basename(source_uri).startswith("deletion_vector_"))
    return DeepCopy(tuple(files), removes, data_copies, copied_bytes), pairs


def _key(table: str, add: Mapping[str, Any]) -> tuple[str, str | None]:
    vector = add.get("deletionVector")
    vector_uri = deletion_vector_uri(vector, table) if vector else None
    return posixpath.basename(resolve_log_path(add["path"], table)), (posixpath.basename(vector_uri) if vector_uri else None)


def copy_files(delta: Delta, storage: Storage, *, source: str, version: int, target: str, new_table: bool) -> DeepCopy:
    """Copy what a deep clone of ``source`` at ``version`` into ``target`` lacks; returns what to commit.

    The caller registers the removal of a new target folder should anything fail.
    """
    adds = delta.table(source).add_actions(version)
    present = [] if new_table else delta.table(target).add_actions()
    copy, pairs = plan_copy(source, adds, target, present=present)
    storage.mkdirs(target)
    storage.copy(pairs)
    return copy


def metrics(copy: DeepCopy, *, source_size: int, source_files: int) -> dict[str, int]:
    """The CLONE commit's metrics, named as Delta names them for its own clones."""
    return {
        "sourceTableSize": source_size,
        "sourceNumOfFiles": source_files,
        "numCopiedFiles": copy.copied_files,
        "copiedFilesSize": copy.copied_bytes,
        "numRemovedFiles": len(copy.removes),
        "removedFilesSize": sum(int(add.get("size") or 0) for add in copy.removes),
        "numAddedFiles": len(copy.files),
    }


def commit(delta: Delta, copy: DeepCopy, *, source: str, version: int, target: str, new_table: bool) -> int:
    """Commit the copies as one CLONE version of ``target`` (inside the statement's :meth:`UnitOfWork.delta`)."""
    return transaction.commit_clone(
        delta,
        target,
        source=source,
        source_version=version,
        files=copy.files,
        new_table=delta.table(source).new_table_actions(version) if new_table else None,
        removes=copy.removes,
    )
