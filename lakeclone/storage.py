"""Files as URIs, through Hadoop's FileSystem: the one way lakeclone lists, copies and deletes table files.

Table data may live wherever Spark can reach (a local folder today, an object
store or HDFS later), so nothing here touches ``os`` or ``shutil``: every call
goes to the FileSystem that Spark's Hadoop configuration gives for the URI's
scheme. Locations are kept in Hadoop's qualified form (``file:/abs/path``),
which is also how Delta writes absolute paths into its log.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from lakeclone.errors import InvalidLocationError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Copying is I/O bound; a few threads keep the storage busy without swamping two cores.
COPY_THREADS = 8


@dataclass(frozen=True)
class FileInfo:
    """A file found under a folder: its qualified URI, size in bytes and modification time (epoch ms, wall clock)."""

    uri: str
    size: int
    modified_ms: int


def join(folder: str, *parts: str) -> str:
    """A URI below ``folder``."""
    return posixpath.join(folder.rstrip("/"), *parts)


def is_within(uri: str, folder: str) -> bool:
    """Whether ``uri`` is ``folder`` itself or lies below it."""
    folder = folder.rstrip("/")
    return uri == folder or uri.startswith(folder + "/")


def relative_to(uri: str, folder: str) -> str:
    """``uri``'s path below ``folder``; ``uri`` itself when it is elsewhere."""
    folder = folder.rstrip("/")
    return uri[len(folder) + 1 :] if uri.startswith(folder + "/") else uri


def resolve_log_path(path: str, table: str) -> str:
    """The qualified URI of a path as a Delta add or remove action writes it.

    Delta writes a file in the table's folder as a relative, URI-encoded path,
    and a file elsewhere (a shallow clone's) as an absolute URI.
    """
    if urlsplit(path).scheme:
        return qualified_form(path)
    return join(table, unquote(path))


def qualified_form(uri: str) -> str:
    """A URI as Hadoop's ``Path.toString()`` writes it: decoded, ``file:/x`` rather than ``file:///x``."""
    parts = urlsplit(uri)
    path = unquote(parts.path)
    if parts.netloc:
        return f"{parts.scheme}://{parts.netloc}{path}"
    return f"{parts.scheme}:{path}"


class Storage:
    """The FileSystems of one SparkSession."""

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        self._jvm: Any = spark._jvm
        self._conf = spark._jsc.hadoopConfiguration()
        self._filesystems: dict[str, Any] = {}

    @functools.cached_property
    def _path_class(self) -> Any:
        # Looked up once: py4j resolves each dotted step of the name with a round trip into the JVM.
        return self._jvm.org.apache.hadoop.fs.Path

    def _path(self, uri: str) -> Any:
        return self._path_class(uri)

    def _fs(self, path: Any) -> Any:
        return path.getFileSystem(self._conf)

    def qualify(self, location: str) -> str:
        """An absolute path or a URI in Hadoop's qualified form; anything relative is refused.

        Raises:
            InvalidLocationError: the location is relative, empty, or not a URI Hadoop accepts.
        """
        text = location.strip()
        parts = urlsplit(text)
        absolute = text.startswith("/") or (bool(parts.scheme) and len(parts.scheme) > 1 and parts.path.startswith("/"))
        if not text or not absolute or "\x00" in text:
            raise InvalidLocationError(
                f"Location '{location}' must be an absolute path or a URI with a scheme, such as "
                "'/data/tables/t', 'file:///data/tables/t' or 's3a://bucket/tables/t'."
            )
        if ".." in parts.path.split("/"):
            raise InvalidLocationError(f"Location '{location}' must not contain '..'.")
        try:
            path = self._path(text)
            return str(self._fs(path).makeQualified(path).toString()).rstrip("/") or "/"
        except Exception as error:
            raise InvalidLocationError(f"Location '{location}' is not usable: {_java_first_line(error)}") from None

    def real(self, uri: str) -> str:
        """``uri`` (qualified) with the symbolic links on its path followed: where its files really are.

        Only local files have links (object stores have none); Hadoop's local
        FileSystem does not report them unless symlinks are enabled JVM-wide,
        so the JVM's own canonical path answers, which follows every link on
        the part of the path that exists and keeps the rest as written.
        """
        if not uri.startswith("file:/") or uri.startswith("file://"):
            return uri  # not a local path in Hadoop's qualified form (file:/x, decoded: '%', '#' are the name's)
        canonical = str(self._jvm.java.io.File(uri.removeprefix("file:")).getCanonicalPath())
        return f"file:{canonical}"

    def exists(self, uri: str) -> bool:
        path = self._path(uri)
        parts = urlsplit(uri)
        # Hadoop keeps one FileSystem per scheme and authority; asking it for one is a JVM round trip of its own.
        root = f"{parts.scheme}://{parts.netloc}"
        filesystem = self._filesystems.get(root)
        if filesystem is None:
            filesystem = self._filesystems[root] = self._fs(path)
        return bool(filesystem.exists(path))

    def existing(self, uris: Iterable[str]) -> set[str]:
        """Which of ``uris`` (qualified) exist: one glob per FileSystem rather than a JVM round trip apiece.

        Each is a literal alternative of the glob, so the FileSystem looks each
        up (a ``stat``, an object store's HEAD) and lists no folder. A URI
        with a character globs give a meaning to is asked about alone: Hadoop's
        globber does not read an escaped one as itself in a folder's name.
        """
        by_root: dict[str, list[str]] = {}
        found: set[str] = set()
        for uri in uris:
            parts = urlsplit(uri)
            root = f"{parts.scheme}://{parts.netloc}/" if parts.netloc else f"{parts.scheme}:/"
            if uri.startswith(root) and not _GLOB_SPECIAL.intersection(uri):
                by_root.setdefault(root, []).append(uri)
            elif self.exists(uri):
                found.add(uri)
        for root, group in by_root.items():
            pattern = self._path(root + "{" + ",".join(uri[len(root) :] for uri in group) + "}")
            statuses = self._fs(pattern).globStatus(pattern)
            if statuses is not None and len(statuses):
                wanted = set(group)
                found.update(uri for uri in (str(status.getPath().toString()) for status in statuses) if uri in wanted)
        return found

    def is_file(self, uri: str) -> bool:
        path = self._path(uri)
        return bool(self._fs(path).isFile(path))

    def has_entries(self, uri: str) -> bool:
        """Whether ``uri`` is a folder holding anything at all (hidden files included)."""
        path = self._path(uri)
        fs = self._fs(path)
        if not fs.exists(path) or fs.isFile(path):
            return False
        return len(fs.listStatus(path)) > 0

    def children(self, folder: str) -> list[str]:
        """The URIs of what a folder holds directly, hidden entries included."""
        path = self._path(folder)
        return [str(status.getPath().toString()) for status in self._fs(path).listStatus(path)]

    def mkdirs(self, uri: str) -> None:
        path = self._path(uri)
        self._fs(path).mkdirs(path)

    def delete(self, uri: str, *, recursive: bool = False) -> bool:
        """Delete a file (or, with ``recursive``, a folder and everything in it)."""
        path = self._path(uri)
        return bool(self._fs(path).delete(path, recursive))

    def list_files(self, folder: str, *, skip: Iterable[str] = (), keep_hidden: Iterable[str] = ()) -> list[FileInfo]:
        """Every file below ``folder``, recursively, except below the subfolders named in ``skip``.

        Hidden names (starting with ``.`` or ``_``) are left out, as Spark and
        Delta leave them out of a table's data files, except those in ``keep_hidden``.
        """
        skipped = {join(folder, name) for name in skip}
        kept = set(keep_hidden)
        found: list[FileInfo] = []
        root = self._path(folder)
        fs = self._fs(root)
        if not fs.exists(root):
            return found
        pending = [root]
        while pending:
            for status in fs.listStatus(pending.pop()):
                path = status.getPath()
                name = str(path.getName())
                uri = str(path.toString())
                if (name.startswith((".", "_")) and name not in kept) or uri in skipped:
                    continue
                if status.isDirectory():
                    pending.append(path)
                else:
                    found.append(FileInfo(uri, int(status.getLen()), int(status.getModificationTime())))
        return found

    def files_at(self, uri: str) -> list[FileInfo]:
        """The file ``uri`` names, or every file below the folder it names (hidden names left out); none if nothing is there."""
        path = self._path(uri)
        fs = self._fs(path)
        if not fs.exists(path):
            return []
        status = fs.getFileStatus(path)
        if status.isDirectory():
            return self.list_files(uri)
        return [FileInfo(str(status.getPath().toString()), int(status.getLen()), int(status.getModificationTime()))]

    def encoded(self, uri: str) -> str:
        """``uri`` percent-encoded as Hadoop's ``Path.toUri()`` writes it: how Spark's ``_metadata.file_path`` names a file."""
        return str(self._path(uri).toUri().toString())

    def md5(self, uri: str) -> str:
        """The MD5 digest of a file's bytes, in hex, computed in the JVM as the file streams through."""
        path = self._path(uri)
        stream = self._fs(path).open(path)
        try:
            return str(self._jvm.org.apache.commons.codec.digest.DigestUtils.md5Hex(stream))
        finally:
            stream.close()

    def size(self, uri: str) -> int:
        path = self._path(uri)
        return int(self._fs(path).getFileStatus(path).getLen())

    def remove_empty_folders(self, folder: str, *, keep: Iterable[str] = ()) -> None:
        """Delete the empty folders below ``folder`` (never ``folder`` itself or those in ``keep``)."""
        kept = {join(folder, name) for name in keep}
        root = self._path(folder)
        fs = self._fs(root)
        if not fs.exists(root):
            return

        def prune(path: Any) -> bool:
            empty = True
            for status in fs.listStatus(path):
                child = status.getPath()
                if status.isDirectory() and str(child.toString()) not in kept and prune(child):
                    fs.delete(child, False)
                else:
                    empty = False
            return empty

        prune(root)

    def copy(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Copy files (source URI, target URI) through the storage layer, several at a time.

        The bytes stream from one FileSystem to the other; no file is ever held
        in memory whole.
        """
        util = self._jvm.org.apache.hadoop.fs.FileUtil

        def copy(pair: tuple[str, str]) -> None:
            source, target = self._path(pair[0]), self._path(pair[1])
            if not util.copy(self._fs(source), source, self._fs(target), target, False, True, self._conf):
                raise OSError(f"could not copy {pair[0]} to {pair[1]}")

        with ThreadPoolExecutor(COPY_THREADS) as pool:
            list(pool.map(copy, list(pairs)))

    def walk_files(self, folder: str) -> Iterator[str]:
        """The URIs of every file below ``folder``, hidden ones included (what a folder's removal would take)."""
        root = self._path(folder)
        fs = self._fs(root)
        if not fs.exists(root):
            return
        files = fs.listFiles(root, True)
        while files.hasNext():
            yield str(files.next().getPath().toString())


# What Hadoop's glob patterns give a meaning to.
_GLOB_SPECIAL = frozenset("\\{}[]*?,")


def _java_first_line(error: Exception) -> str:
    java = getattr(error, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__
