"""Paths in add actions: relative to the table, or absolute URIs (how shallow clones point at files).

delta-rs percent-encodes the paths it is given when it writes them to the log,
and hands them back encoded, so lakeclone gives it plain paths (adds and
removes alike) and decodes what it reads exactly once. It resolves paths
itself before giving file lists to Spark: delta-rs's reader would not
follow absolute URIs.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse


def location_uri(location: str | os.PathLike[str]) -> str:
    """The ``file://`` URI of a local table folder, with a trailing slash."""
    return Path(location).resolve().as_uri() + "/"


def resolve(path: str, location: str | os.PathLike[str]) -> str:
    """The local file an add action's path names."""
    if "://" in path or path.startswith("file:"):
        return os.path.normpath(unquote(urlparse(path).path))
    return os.path.normpath(os.path.join(os.fspath(location), unquote(path)))


def relative(file: str | os.PathLike[str], location: str | os.PathLike[str]) -> str:
    """The add-action path of a file under the table's folder, relative and not yet URI-encoded."""
    rel = os.path.relpath(os.fspath(file), os.fspath(location))
    return rel.replace(os.sep, "/")


def absolute(file: str | os.PathLike[str]) -> str:
    """The add-action path that points at a file wherever it lives, not yet URI-encoded."""
    return "file://" + os.path.abspath(os.fspath(file))


def spark_file_key(spark_path: str) -> str:
    """A file path as Spark's ``_metadata.file_path`` reports it, made comparable with :func:`resolve`."""
    return os.path.normpath(unquote(urlparse(spark_path).path))
