"""The settings of every JVM the tests use: the shared session's (which notebook kernels use too) and worker processes'.

Tests run thousands of statements on tiny tables, where compiling each plan
to Java costs more than running it: with Spark's interpreted evaluation
test_clones and test_dml ran 8.5% faster on two cores, and a cold worker's
first statements about a fifth faster. Spark guarantees the same results
either way (its own suites test both). The benchmarks and ``bin/run-notebooks``
run with Spark's defaults.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_CONF = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}


def shared_spark() -> SparkSession:
    """This test process's SparkSession: the embedded one, with :data:`SPARK_CONF`; started on first use."""
    from lakeclone.session import embedded_spark

    spark = embedded_spark()
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

    gateway = SparkContext._gateway
    assert gateway is not None and spark.sparkContext._gateway is gateway
    return {
        **worker_env(),  # for the processes the kernel starts, which start JVMs of their own
        "PYSPARK_GATEWAY_PORT": str(gateway.gateway_parameters.port),
        "PYSPARK_GATEWAY_SECRET": gateway.gateway_parameters.auth_token,
        "PYTHONSTARTUP": str(Path(__file__).with_name("kernel_startup.py")),
        "LAKECLONE_TEST_SPARK_CONF": json.dumps(SPARK_CONF),
    }


def worker_env() -> dict[str, str]:
    """The environment of a process the tests start that runs Spark of its own (a worker, a script, a process a notebook starts).

    Unbuffered output, since the parent reads a worker's progress lines;
    :data:`SPARK_CONF`, through PySpark's ``PYSPARK_SUBMIT_ARGS``; and a JVM
    that compiles with the quick C1 compiler alone: it lives seconds to
    minutes, too short for C2 to pay off. On 2 cores, C2's compiler threads
    slowed each worker's start and first commits by about a third. C1 alone
    gets a 48 MB code cache, which a worker filled within a minute (the JVM
    then throws compiled code away and compiles it again): it gets C2's 240 MB.
    """
    own = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    java_options = " ".join(filter(None, (os.environ.get("JAVA_TOOL_OPTIONS"), own)))
    submit_args = " ".join(f"--conf {key}={value}" for key, value in SPARK_CONF.items())
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "JAVA_TOOL_OPTIONS": java_options,
        "PYSPARK_SUBMIT_ARGS": f"{submit_args} pyspark-shell",
    }
