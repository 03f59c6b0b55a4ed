"""Spark sessions for lakeclone: the embedded default, ``configure_spark`` for a user's own, and the check between them."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from lakeclone.errors import SetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MIN_JAVA = 17

JAVA_HELP = (
    "lakeclone needs Java {min}+ for Spark. Install it (Debian/Ubuntu: "
    "`apt-get install openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) "
    "or point JAVA_HOME at one."
)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

# What every lakeclone session needs: Delta's SQL extension and catalog, and
# session settings lakeclone's tables depend on.
REQUIRED_CONFIG = {
    "spark.sql.extensions": DELTA_EXTENSION,
    "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
}
SESSION_CONFIG = {
    # INT96 timestamps (Spark's default) are not readable by every Delta reader.
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # lakeclone decides what history VACUUM keeps; Delta's own VACUUM never runs,
    # and would log VACUUM START/END commits if it did.
    "spark.databricks.delta.vacuum.logging.enabled": "false",
    # Spark replaces ${name} in a statement's text with a setting's value, and
    # ${env:NAME} with an environment variable's, before it parses: a string
    # literal or quoted name in a tenant's SQL would read the kernel's environment.
    "spark.sql.variable.substitute": "false",
}

# Settings for one interactive user on a small machine: few shuffle and
# snapshot partitions (Delta's own test suite uses 2 for small tables), no web
# UI or console progress bars, and no Hadoop checksum (.crc) files beside the
# data files, which no Delta reader needs.
EMBEDDED_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "spark.hadoop.fs.file.impl.disable.cache": "true",
    # Delta writes its log through Hadoop's FileContext, which has its own
    # checksumming local file system.
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
    "spark.driver.memory": "4g",
    # Spark's own catalog is unused, but it would create spark-warehouse/ in the working folder.
    "spark.sql.warehouse.dir": os.path.join(tempfile.gettempdir(), "lakeclone-spark-warehouse"),
}


# Schemes of object storage lakeclone sets a session up for: S3 through Hadoop's S3A connector.
OBJECT_STORAGE_SCHEMES = ("s3a",)

# What a session on object storage needs besides Delta's: lakeclone's log store for
# Delta's commits on S3 (see lakeclone/jvm), and listings in a few tasks, where Delta's
# VACUUM would otherwise list a table's folders in 10,000 (each a request to the store).
# A server that is down or refuses the credentials fails a statement in seconds rather
# than after S3A's default of minutes of retries. S3A buffers what it uploads in memory:
# its default, files under hadoop.tmp.dir, goes through Hadoop's checksumming local file
# system, which the embedded session replaces with the raw one (EMBEDDED_CONFIG).
OBJECT_STORAGE_CONFIG = {
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "8",
    "spark.hadoop.fs.s3a.fast.upload.buffer": "bytebuffer",
    "spark.hadoop.fs.s3a.attempts.maximum": "3",
    "spark.hadoop.fs.s3a.retry.limit": "3",
    "spark.hadoop.fs.s3a.retry.interval": "200ms",
    "spark.hadoop.fs.s3a.connection.establish.timeout": "5s",
}
LOG_STORE_KEY = "spark.delta.logStore.s3a.impl"


def object_storage_settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """S3A's settings from the usual AWS environment variables, for a session on object storage.

    S3A itself reads the credentials in ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``
    and ``AWS_SESSION_TOKEN``, Hadoop's ``fs.s3a.access.key`` and an instance's role;
    this adds a server's address from ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL``
    (an S3-compatible server: path-style requests, plain HTTP allowed when the URL says
    so), the region from ``AWS_REGION`` or ``AWS_DEFAULT_REGION``, and a profile of
    ``~/.aws/credentials`` when ``AWS_PROFILE`` names one. Credentials never pass
    through lakeclone: it neither reads nor stores them.
    """
    environ = os.environ if environ is None else environ
    settings = {}
    endpoint = environ.get("AWS_ENDPOINT_URL_S3") or environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        settings["spark.hadoop.fs.s3a.endpoint"] = endpoint
        settings["spark.hadoop.fs.s3a.path.style.access"] = "true"
        settings["spark.hadoop.fs.s3a.connection.ssl.enabled"] = str(endpoint.startswith("https:")).lower()
    region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or ("us-east-1" if endpoint else None)
    if region:
        settings["spark.hadoop.fs.s3a.endpoint.region"] = region
    if environ.get("AWS_PROFILE"):
        settings["spark.hadoop.fs.s3a.aws.credentials.provider"] = (
            "software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider"
        )
    return settings


def java_binary() -> str | None:
    """The ``java`` Spark would start: ``$JAVA_HOME/bin/java``, else the one on the PATH."""
    home = os.environ.get("JAVA_HOME")
    return os.path.join(home, "bin", "java") if home else shutil.which("java")


def java_version() -> int | None:
    """The major version of the Java that Spark would start, or None when there is none."""
    java = java_binary()
    if not java or not os.path.exists(java):
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    # Java 8 and older report themselves as 1.x.
    return int(match.group(2) or 0) if major == 1 else major


def check_java() -> None:
    """Raise SetupError, saying what to install, unless Java 17+ is present."""
    version = java_version()
    if version is None or version < MIN_JAVA:
        found = "no Java was found" if version is None else f"found Java {version}"
        raise SetupError(f"{JAVA_HELP.format(min=MIN_JAVA)} ({found})")


def configure_spark(builder: SparkSession.Builder, *, object_storage: bool = False) -> SparkSession.Builder:
    """Add what lakeclone needs to a SparkSession builder: Delta's jars, SQL extension and catalog.

    Like delta-spark's ``configure_spark_with_delta_pip``, but the jars come from
    the folder ``python -m lakeclone.jars`` filled once, so starting a session
    needs no network.

    Args:
        builder: the user's builder; its own settings are kept.
        object_storage: also set it up for warehouses on S3 (``s3a://``): S3A's
            jars (``python -m lakeclone.jars --with s3`` fetches them), lakeclone's
            log store, which keeps Delta's commits whole when several drivers
            write one table, and :func:`object_storage_settings` for any S3A
            setting the builder does not have.

    Returns:
        The same builder.

    Raises:
        SetupError: Delta's jars (or S3A's) have not been fetched.

    Example:
        >>> from pyspark.sql import SparkSession
        >>> spark = lakeclone.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
        >>> lake = lakeclone.connect("/tmp/wh", spark=spark)  # doctest: +SKIP
    """
    # Imported here: `python -m lakeclone.jars` must not find the module already imported.
    from lakeclone.jars import LOG_STORE_CLASS, delta_jars, object_storage_jars

    jars = delta_jars() + (object_storage_jars() if object_storage else [])
    builder = builder.config("spark.jars", ",".join(str(jar) for jar in jars))
    for key, value in {**REQUIRED_CONFIG, **SESSION_CONFIG}.items():
        builder = builder.config(key, value)
    if object_storage:
        defaults = {LOG_STORE_KEY: LOG_STORE_CLASS, **OBJECT_STORAGE_CONFIG, **object_storage_settings()}
        for key, value in defaults.items():
            if key not in builder._options:
                builder = builder.config(key, value)
    return builder


def require_delta(spark: SparkSession) -> None:
    """Raise SetupError unless ``spark`` runs Delta's SQL extension and catalog."""
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    catalog = spark.conf.get("spark.sql.catalog.spark_catalog", "") or ""
    if DELTA_EXTENSION not in extensions.split(",") or catalog != DELTA_CATALOG:
        raise SetupError(
            "This SparkSession lacks Delta Lake's SQL extension and catalog. Build it with "
            "lakeclone.configure_spark(SparkSession.builder)...getOrCreate(), or let "
            "lakeclone.connect() start its own."
        )


def require_object_storage(spark: SparkSession, location: str) -> None:
    """Raise SetupError unless ``spark`` was set up for a warehouse at ``location`` on object storage."""
    if not spark.conf.get(LOG_STORE_KEY, None):
        raise SetupError(
            f"The warehouse {location} is on object storage, and this process's Spark session was started "
            "without it. Connect to it first in a new process (lakeclone.connect then starts a session for "
            "object storage), or start your own with lakeclone.configure_spark(builder, object_storage=True)."
        )


def embedded_spark(*, object_storage: bool = False) -> SparkSession:
    """The shared ``local[*]`` SparkSession, started on first use.

    Starting Spark takes seconds, so every Lake in a process that is not handed
    a session shares this one.

    Args:
        object_storage: if the session starts here, set it up for S3 too
            (see :func:`configure_spark`).
    """
    active = active_session()
    if active is not None:
        return active
    check_java()
    builder = embedded_builder(object_storage=object_storage)
    _start_driver(builder)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    quiet_spark_logging()
    return spark


# What the driver JVM prints that says nothing to a lakeclone user, who sees it in red in a
# notebook's cell: the JVM's notice of the incubator module Spark's launcher always adds, and
# Delta's line for each table whose protocol lakeclone upgrades (turning change tracking on).
CONSOLE_NOISE = re.compile(rb"WARNING: Using incubator modules: |Upgraded table at \S+ to Protocol\(")


def _start_driver(builder: SparkSession.Builder) -> None:
    """Start the driver JVM for ``builder``, its console output passed on to this process's without :data:`CONSOLE_NOISE`.

    PySpark's launcher would start it with this process's stdout and stderr;
    here they are pipes, read from before the JVM starts, so that what it
    says if it fails to start is passed on too.
    """
    from pyspark import SparkConf
    from pyspark.core.context import SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf().setAll(list(builder._options.items()))
    ends = {}
    for fd in (1, 2):
        read, write = os.pipe()
        threading.Thread(target=_pass_on, args=(read, fd), name=f"lakeclone-jvm-output-{fd}", daemon=True).start()
        ends[fd] = write
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": ends[1], "stderr": ends[2]})  # type: ignore[no-untyped-call]
    finally:
        for write in ends.values():
            os.close(write)  # the JVM holds its own copies
    SparkContext._ensure_initialized(gateway=gateway)


def _pass_on(read: int, fd: int) -> None:
    """Copy the JVM's output lines from the pipe ``read`` to ``fd``, but for noise, until the JVM closes it."""
    with os.fdopen(read, "rb") as lines:
        for line in lines:
            if CONSOLE_NOISE.match(line):
                continue
            # The JVM waits on a full pipe: keep reading whatever happens to what is written.
            with contextlib.suppress(OSError):
                os.write(fd, line)


def active_session() -> SparkSession | None:
    """The process's active SparkSession; None if there is none, or if its JVM is gone.

    A JVM killed (by the kernel's out-of-memory killer, say) leaves PySpark
    holding a session whose every call fails to connect: it is forgotten here,
    so that the next ``getOrCreate()`` starts a new JVM.
    """
    from py4j.protocol import Py4JError
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context = SparkContext._active_spark_context
    if context is None:
        return None
    try:
        context._jvm.java.lang.System.nanoTime()  # type: ignore[union-attr]
    except (Py4JError, ConnectionError):
        _forget()
        return None
    return SparkSession.getActiveSession()


def _forget() -> None:
    """Make PySpark forget a session whose JVM is gone, so that the next ``getOrCreate()`` starts a new one."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    SparkContext._active_spark_context = None
    SparkContext._gateway = None
    SparkContext._jvm = None


def embedded_builder(
    app_name: str = "lakeclone", *, java_options: str | None = None, object_storage: bool = False
) -> SparkSession.Builder:
    """The embedded session's builder: ``local[*]``, :data:`EMBEDDED_CONFIG`, lakeclone's log settings and Delta.

    Args:
        app_name: Spark's name for the application.
        java_options: the driver JVM's options besides the log settings; by
            default those that map the class-data archive setup built (see
            :mod:`lakeclone.jvm_archive`).
        object_storage: set it up for warehouses on S3 too (see :func:`configure_spark`).
    """
    from pyspark.sql import SparkSession

    from lakeclone import jvm_archive

    # Spark warns at start-up when the host name resolves to loopback; on one
    # machine that is exactly what an embedded session wants.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log_config = Path(__file__).with_name("log4j2.properties").as_uri()
    builder = (
        SparkSession.builder.master("local[*]")
        .appName(app_name)
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j.configurationFile={log_config} {jvm_archive.java_options() if java_options is None else java_options}",
        )
    )
    for key, value in EMBEDDED_CONFIG.items():
        builder = builder.config(key, value)
    return configure_spark(builder, object_storage=object_storage)


@contextlib.contextmanager
def session_setting(spark: SparkSession, key: str, value: str) -> Iterator[None]:
    """Set a session setting for the length of a block, then put back what was there (or nothing)."""
    previous = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, previous)


@contextlib.contextmanager
def session_settings(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """:func:`session_setting` for each of ``settings`` (none: nothing is asked of Spark)."""
    with contextlib.ExitStack() as stack:
        for key, value in settings.items():
            stack.enter_context(session_setting(spark, key, value))
        yield


def prepare(spark: SparkSession) -> None:
    """Check a session for Delta and apply lakeclone's session settings to it."""
    require_delta(spark)
    for key, value in SESSION_CONFIG.items():
        spark.conf.set(key, value)
    quiet_spark_logging()


def quiet_spark_logging() -> None:
    """Stop PySpark from printing a failed query's Java stack trace.

    PySpark logs every captured exception, with the whole JVM trace, before
    raising it; lakeclone reports the error itself, as one message.
    """
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 1)
