"""The settings of every JVM the tests use: the shared session's (which notebook kernels use too) and worker processes'.

Tests run thousands of statements on tiny tables, where compiling each plan
to Java costs more than running it: with Spark's interpreted evaluation
test_clones and test_dml ran 8.5% faster on two cores, and a cold worker's
first statements about a fifth faster. For the same reason a shuffle has
two partitions (one task per core, not the session's eight) and adaptive
execution, which plans each stage again after the one before it, is off:
test_dml, test_streams and test_streams_views took 302 s on two workers
instead of 336-355 s. Spark guarantees the same results either way (its own
suites test both). The benchmarks and ``bin/run-notebooks`` run with the
embedded session's settings.

The shared session is set up for object storage too (S3A's jars and
lakeclone's log store, pointed at the run's S3 server: see s3_server.py),
so that a test or a notebook kernel can open a warehouse on ``s3a://``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

    from pyspark.sql import SparkSession

SPARK_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.adaptive.enabled": "false",
}

# The garbage collector of every JVM the tests start. Spark's default, G1, spends
# CPU in concurrent threads to keep pauses short, which a notebook user waits on
# but a test run does not: with the parallel collector, test_streams_views,
# test_dml and test_streams on three workers took 197-251 s (median 247) against
# 255-267 s (median 257) with G1, every run of it below every run without.
GC_OPTIONS = "-XX:+UseParallelGC"

# Where the controller's JVM listens, for its xdist workers: "<port> <secret>".
SHARED_JVM = "LAKECLONE_TEST_JVM"
_shared_jvm: str | None = None
_attached: SparkSession | None = None


def start_shared_jvm() -> None:
    """In xdist's controller, before it starts the workers: start the embedded JVM that the workers share.

    Each worker's JVM compiled the same Spark and Delta code again: JIT
    compilation was about half of a test JVM's CPU in its first minutes and a
    third after ten, on a machine whose two cores the two workers keep busy.
    With one JVM for both, test_dml and test_streams on two workers took
    189-221 s instead of 288 s (CPU 362-426 s instead of 564 s). Each worker
    runs in a session of its own, as a notebook kernel does (:func:`attached_session`).
    """
    from lakeclone.session import embedded_spark

    # The JVM's standard output, which it inherits, is where Delta prints a line
    # for each table it upgrades: here that was among pytest's progress dots.
    sys.stdout.flush()
    terminal, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        with _java_options(GC_OPTIONS):
            embedded_spark(object_storage=True)
    finally:
        os.dup2(terminal, 1)
        os.close(terminal)
        os.close(devnull)
    os.environ[SHARED_JVM] = " ".join(gateway_address())


@contextlib.contextmanager
def _java_options(options: str) -> Iterator[None]:
    """``options`` for the JVMs started in the block (through ``JAVA_TOOL_OPTIONS``), not for those this process starts later."""
    before = os.environ.get("JAVA_TOOL_OPTIONS")
    os.environ["JAVA_TOOL_OPTIONS"] = " ".join(filter(None, (before, options)))
    try:
        yield
    finally:
        if before is None:
            del os.environ["JAVA_TOOL_OPTIONS"]
        else:
            os.environ["JAVA_TOOL_OPTIONS"] = before


def gateway_address() -> tuple[str, str]:
    """The port and secret of the JVM this process's Spark runs in, as PySpark's gateway variables take them."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    assert gateway is not None
    return str(gateway.gateway_parameters.port), gateway.gateway_parameters.auth_token


def take_shared_jvm() -> None:
    """In an xdist worker, as it starts: note the controller's JVM, and keep it from the processes tests start."""
    global _shared_jvm
    _shared_jvm = os.environ.pop(SHARED_JVM, None)


def attached_session(port: str, secret: str) -> SparkSession:
    """A new session in the running JVM at ``port``, whose SparkContext this process then wraps (a JVM runs only one)."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_GATEWAY_PORT"], os.environ["PYSPARK_GATEWAY_SECRET"] = port, secret
    try:
        gateway = launch_gateway()  # connects to the JVM these name
    finally:
        # The processes this one starts start JVMs of their own.
        del os.environ["PYSPARK_GATEWAY_PORT"], os.environ["PYSPARK_GATEWAY_SECRET"]
    jvm = gateway.jvm
    context = jvm.org.apache.spark.SparkContext.getOrCreate()
    python_context = SparkContext(gateway=gateway, jsc=jvm.org.apache.spark.api.java.JavaSparkContext(context))
    sessions = getattr(jvm, "org.apache.spark.sql.classic.SparkSession")
    session = SparkSession(python_context, sessions.getDefaultSession().get().newSession())
    _interrupt_only(session)
    return session


def _interrupt_only(session: SparkSession) -> None:
    """On SIGINT, cancel ``session``'s own jobs, where PySpark's handler cancels every job of the JVM.

    jupyter_client interrupts a kernel before it shuts it down: with
    PySpark's handler, a notebook ending on one worker cancelled the statement
    the other worker's notebook was running in the shared JVM ("Job 631
    cancelled as part of cancellation of all jobs").
    """

    def interrupt(signum: int, frame: FrameType | None) -> NoReturn:
        try:
            session.interruptAll()
        finally:
            raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, interrupt)


def shared_spark() -> SparkSession:
    """This test process's SparkSession, with :data:`SPARK_CONF`: in the controller's JVM under xdist, else the embedded one; started on first use."""
    global _attached
    from lakeclone.session import embedded_spark

    if _shared_jvm is None:
        with _java_options(GC_OPTIONS):
            spark = embedded_spark(object_storage=True)
    else:
        if _attached is None:
            _attached = attached_session(*_shared_jvm.split())
        spark = _attached
    for key, value in SPARK_CONF.items():
        spark.conf.set(key, value)
    return spark


def kernel_env(spark: SparkSession) -> dict[str, str]:
    """The environment of a notebook kernel that runs its Spark in ``spark``'s JVM, in a session of its own.

    A kernel with a JVM of its own spent its first minute starting and warming
    it (a notebook's kernel lives a minute or two): sharing this process's JVM,
    which is warm, ran two notebooks and a test file after them in 141 s
    instead of 184 s. PySpark connects to a running JVM when
    ``PYSPARK_GATEWAY_PORT`` names it; ``kernel_startup.py``, which IPython runs
    as the kernel starts, wraps the JVM's SparkContext for the kernel, since a
    JVM runs only one. The kernel runs only while this process waits for a cell.
    Kernels are still real processes that run every cell, and the worker
    processes a notebook starts still start JVMs of their own (as the
    worker-process and terminal-script tests do); ``bin/run-notebooks`` runs
    the notebooks with kernels that start theirs.
    """
    from pyspark import SparkContext

    assert spark.sparkContext._gateway is SparkContext._gateway
    port, secret = gateway_address()
    return {
        **worker_env(),  # for the processes the kernel starts, which start JVMs of their own
        "PYSPARK_GATEWAY_PORT": port,
        "PYSPARK_GATEWAY_SECRET": secret,
        "PYTHONSTARTUP": str(Path(__file__).with_name("kernel_startup.py")),
        "LAKECLONE_TEST_SPARK_CONF": json.dumps(SPARK_CONF),
    }


def worker_env() -> dict[str, str]:
    """The environment of a process the tests start that runs Spark of its own (a worker, a script, a process a notebook starts).

    Unbuffered output, since the parent reads a worker's progress lines;
    :data:`SPARK_CONF`, through PySpark's ``PYSPARK_SUBMIT_ARGS``; and a JVM
    with the tests' collector (:data:`GC_OPTIONS`) that compiles with the quick C1 compiler alone: it lives seconds to
    minutes, too short for C2 to pay off. On 2 cores, C2's compiler threads
    slowed each worker's start and first commits by about a third. C1 alone
    gets a 48 MB code cache, which a worker filled within a minute (the JVM
    then throws compiled code away and compiles it again): it gets C2's 240 MB.
    """
    own = f"{GC_OPTIONS} -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    java_options = " ".join(filter(None, (os.environ.get("JAVA_TOOL_OPTIONS"), own)))
    submit_args = " ".join(f"--conf {key}={value}" for key, value in SPARK_CONF.items())
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "JAVA_TOOL_OPTIONS": java_options,
        "PYSPARK_SUBMIT_ARGS": f"{submit_args} pyspark-shell",
    }
