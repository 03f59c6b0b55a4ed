"""A class-data archive of the classes Spark, Delta and lakeclone load: built once at setup, mapped by every embedded session.

A cold JVM spends seconds loading and verifying the ~17,000 classes a Spark
session with Delta uses. Java's dynamic class-data sharing (JDK 13+) writes
them, parsed and verified, into an archive the next JVM maps from disk:
``python -m lakeclone.jars`` (which ``bin/setup`` runs) builds it by running a
short lakeclone workload in a JVM started with ``-XX:ArchiveClassesAtExit``,
checks that a new JVM maps it, and only then moves it into place beside the
jars. The embedded session (:func:`lakeclone.session.embedded_builder`) then
starts its JVM with ``-XX:SharedArchiveFile``.

The archive is only valid for the Java that wrote it and the same jars; a
stamp beside it names that Java and Spark's version, and setup builds it again
when either changes (Delta's version names the folder it is in). A JVM that
cannot use an archive (another Java, changed jars) ignores it and loads
classes as usual: the archive only ever saves time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from lakeclone.errors import SetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ARCHIVE = "classes.jsa"
STAMP = "classes.jsa.java"
# A JVM that cannot map the archive says so on stdout, where a terminal
# script's user would see it; it then starts as it would without one.
QUIET = "-Xlog:cds=off,cds+dynamic=off"

# What the archive's JVM runs: every kind of statement a session commonly
# starts with, so their classes (Delta's commit, MERGE, CDF, clone and
# VACUUM paths; Spark's Parquet, JSON and shuffle) are in it.
TRAINING_STATEMENTS = (
    "CREATE TABLE t (id INT, v STRING) CHANGE_TRACKING = TRUE",
    "CREATE TABLE u (id INT, v STRING)",
    "CREATE STREAM s ON TABLE t",
    "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    "INSERT INTO u VALUES (1, 'x'), (5, 'y')",
    "SELECT * FROM t",
    "UPDATE t SET v = 'c' WHERE id = 1",
    "DELETE FROM t WHERE id = 2",
    "MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN UPDATE SET v = u.v "
    "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (u.id, u.v)",
    "SELECT * FROM s",
    "INSERT INTO u SELECT id, v FROM s",
    "SELECT v, COUNT(*) FROM t GROUP BY v ORDER BY v",
    "SELECT * FROM t VERSION AS OF 1",
    "CREATE TABLE c CLONE t",
    "CREATE TABLE d DEEP CLONE t",
    "SELECT COUNT(*) FROM c",
    "SHOW TABLES",
    "DESCRIBE TABLE t",
    "DESCRIBE HISTORY t",
    "VACUUM t DRY RUN",
)


def archive_path() -> Path:
    """Where this environment's archive lives: beside Delta's jars, which it is only valid with."""
    from lakeclone.jars import jar_folder

    return jar_folder() / ARCHIVE


def java_options() -> str:
    """The embedded session's JVM options for the archive; empty when setup has not built one."""
    archive = archive_path()
    return f"-XX:SharedArchiveFile={archive} {QUIET}" if archive.exists() else ""


def java_identity() -> str:
    """What an archive is valid for: the Java binary Spark would start, its full version, and Spark's."""
    import pyspark

    from lakeclone.session import java_binary

    java = java_binary()
    if not java:
        raise SetupError("No Java was found to build the class-data archive with.")
    done = subprocess.run([java, "-Xshare:auto", "-version"], capture_output=True, text=True, timeout=60, check=False)
    return f"{os.path.realpath(java)}\n{done.stderr.strip()}\npyspark {pyspark.__version__}\n"


def build(*, quiet: bool = False) -> Path:
    """Build the archive unless one for this Java is already in place; returns its path.

    Raises:
        SetupError: the workload failed, or a new JVM could not map what it wrote.
    """
    archive = archive_path()
    stamp = archive.with_name(STAMP)
    identity = java_identity()
    if archive.exists() and stamp.exists() and stamp.read_text() == identity:
        return archive
    with tempfile.TemporaryDirectory(prefix="lakeclone-archive-", dir=archive.parent) as scratch:
        candidate = Path(scratch) / ARCHIVE
        _run_self("--train", candidate)
        if not candidate.exists():
            raise SetupError("The JVM ran lakeclone's workload but wrote no class-data archive.")
        _run_self("--check", candidate)
        (Path(scratch) / STAMP).write_text(identity)
        # The archive first: a stamp naming this Java only ever sits beside a checked archive.
        os.replace(candidate, archive)
        os.replace(Path(scratch) / STAMP, stamp)
    if not quiet:
        print(f"lakeclone: built the JVM class-data archive {archive}", file=sys.stderr)
    return archive


def _run_self(mode: str, archive: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lakeclone.jvm_archive", mode, str(archive)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        detail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        what = "run lakeclone's workload for" if mode == "--train" else "map"
        raise SetupError(f"A JVM could not {what} the class-data archive {archive}:\n{detail}")


def _session(java_option: str) -> SparkSession:
    from lakeclone.session import embedded_builder

    builder = embedded_builder(java_options=java_option)
    return builder.getOrCreate()


def _train(archive: Path) -> None:
    """Run the workload in a JVM that writes the classes it loaded to ``archive`` when it exits."""
    import lakeclone

    spark = _session(f"-XX:ArchiveClassesAtExit={archive}")
    with tempfile.TemporaryDirectory(prefix="lakeclone-archive-warehouse-") as warehouse:
        lake = lakeclone.connect(Path(warehouse) / "warehouse", spark=spark, progress=False)
        for statement in TRAINING_STATEMENTS:
            lake.sql(statement).collect()
        lake.sql("CREATE TABLE clicks (id INT, page STRING)")
        with lake.streaming_client("archive") as client:
            channel, _ = client.open_channel("c", table="clicks")
            channel.insert_rows([{"id": 1, "page": "/"}], offset_token="1")
            channel.flush()
        _exit_jvm(spark)


def _check(archive: Path) -> None:
    """Start a JVM that must map ``archive`` (``-Xshare:on`` refuses to start otherwise) and run a statement."""
    spark = _session(f"-XX:SharedArchiveFile={archive} -Xshare:on")
    if spark.sql("SELECT 1").first() != (1,):
        raise SetupError("A JVM with the class-data archive answered SELECT 1 wrongly.")
    _exit_jvm(spark)


def _exit_jvm(spark: SparkSession) -> None:
    """Stop the session and wait for its JVM to exit, which is when it writes the archive."""
    from pyspark import SparkContext

    process = SparkContext._gateway.proc  # type: ignore[union-attr]  # set by pyspark's launch_gateway
    spark.stop()
    # Spark's gateway exits when its stdin closes, through System.exit: the
    # point where ArchiveClassesAtExit writes.
    process.stdin.close()
    process.wait(timeout=600)


if __name__ == "__main__":
    {"--train": _train, "--check": _check}[sys.argv[1]](Path(sys.argv[2]))
