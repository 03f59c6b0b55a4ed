"""The embedded SparkSession, and the translation of Spark failures into LakecloneErrors."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from lakeclone.errors import ExecutionError, LakecloneError, SetupError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MIN_JAVA = 17

JAVA_HELP = (
    "lakeclone needs Java {min}+ for Spark. Install it (Debian/Ubuntu: "
    "`apt-get install openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) "
    "or point JAVA_HOME at one."
)

# Settings for one interactive user on a small machine: few shuffle partitions,
# no web UI, no progress bars in notebook cells, and no Hadoop checksum (.crc)
# or _SUCCESS files beside the data files, which no Delta reader needs.
EMBEDDED_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "spark.hadoop.fs.file.impl.disable.cache": "true",
    "spark.sql.parquet.compression.codec": "snappy",
    "spark.driver.memory": "4g",
    # Spark's own catalog is unused, but it would create spark-warehouse/ in the working folder.
    "spark.sql.warehouse.dir": os.path.join(tempfile.gettempdir(), "lakeclone-spark-warehouse"),
}


def java_version() -> int | None:
    """The major version of the Java that Spark would start, or None when there is none."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
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


def embedded_spark() -> SparkSession:
    """The shared ``local[*]`` SparkSession, started on first use.

    Starting Spark takes seconds, so every Lake in a process that is not handed
    a session shares this one.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    check_java()
    # Spark warns at start-up when the host name resolves to loopback; on one
    # machine that is exactly what an embedded session wants.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log_config = Path(__file__).with_name("log4j2.properties").as_uri()
    builder = (
        SparkSession.builder.master("local[*]")
        .appName("lakeclone")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={log_config}")
    )
    for key, value in EMBEDDED_CONFIG.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    quiet_spark_logging()
    return spark


def quiet_spark_logging() -> None:
    """Stop PySpark from printing a failed query's Java stack trace.

    PySpark logs every captured exception, with the whole JVM trace, before
    raising it; lakeclone reports the error itself, as one message.
    """
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 1)


_UNRESOLVED = re.compile(r"UNRESOLVED_(COLUMN|FIELD|MAP_KEY)")


@contextlib.contextmanager
def spark_errors() -> Iterator[None]:
    """Turn Spark and Py4J failures raised inside the block into LakecloneErrors.

    Only the first line of Spark's message is kept: the rest is a query plan or a
    JVM trace, which says nothing to a SQL user.
    """
    from py4j.protocol import Py4JError
    from pyspark.errors import AnalysisException, PySparkException

    try:
        yield
    except LakecloneError:
        raise
    except AnalysisException as error:
        condition = error.getCondition() or ""
        params = error.getMessageParameters() or {}
        if _UNRESOLVED.match(condition) and "objectName" in params:
            name = params["objectName"].replace("`", "")
            raise SqlCompilationError(f"invalid identifier '{name}'") from None
        raise SqlCompilationError(_first_line(error.getMessage())) from None
    except PySparkException as error:
        raise ExecutionError(_first_line(error.getMessage())) from None
    except Py4JError as error:
        raise ExecutionError(_java_message(error)) from None


def _first_line(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else "Spark failed"
    # Spark appends "SQLSTATE: xxxxx" and query positions that refer to the
    # transpiled Spark SQL, not to the user's text.
    text = re.sub(r"\s*SQLSTATE: \w+.*$", "", text)
    # Spark's error-class prefix ("[DIVIDE_BY_ZERO] ...") is noise next to the message itself.
    return re.sub(r"^\[[A-Z_.]+\]\s*", "", text)


def _java_message(error: Exception) -> str:
    java = getattr(error, "java_exception", None)
    if java is not None:
        try:
            return _first_line(str(java.getMessage() or java.toString()))
        except Exception:  # noqa: BLE001 - the JVM may already be gone
            pass
    return _first_line(str(error))


# The actions that run a frame's query, and so are where a lazy failure (a bad
# cast, a division by zero) finally surfaces.
ACTIONS = ("collect", "count", "first", "head", "isEmpty", "show", "take", "tail", "toArrow", "toLocalIterator", "toPandas")

ARROW_FAILURE_WARNING = "toPandas attempted Arrow optimization.*has reached the error below"

_checked_classes: dict[type, type] = {}


def checked(frame: DataFrame) -> DataFrame:
    """``frame``, with its actions raising LakecloneErrors instead of Spark's errors.

    Spark runs a query only when an action asks for rows, after ``lake.sql``
    has returned; this carries lakeclone's error translation over to that moment.
    Frames derived from it with further transformations are plain Spark frames.
    """
    base = type(frame)
    cls = _checked_classes.get(base)
    if cls is None:
        cls = type(f"Checked{base.__name__}", (base,), {name: _checked_action(base, name) for name in ACTIONS})
        _checked_classes[base] = cls
    frame.__class__ = cls
    return frame


def _checked_action(base: type, name: str) -> Callable[..., object]:
    action = getattr(base, name)

    def run(self: DataFrame, *args: object, **kwargs: object) -> object:
        with spark_errors(), warnings.catch_warnings():
            # toPandas repeats a failure as a warning before raising it.
            warnings.filterwarnings("ignore", message=ARROW_FAILURE_WARNING)
            return action(self, *args, **kwargs)

    run.__name__ = name
    run.__doc__ = action.__doc__
    return run
