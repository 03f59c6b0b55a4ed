"""The settings of every JVM the tests start: the shared session's, worker processes' and notebook kernels'.

Tests run thousands of statements on tiny tables, where compiling each plan
to Java costs more than running it: with Spark's interpreted evaluation
test_clones and test_dml ran 8.5% faster on two cores, and a cold worker's
first statements about a fifth faster. Spark guarantees the same results
either way (its own suites test both). The benchmarks and ``bin/run-notebooks``
run with Spark's defaults.
"""

from __future__ import annotations

import os

SPARK_CONF = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}


def worker_env() -> dict[str, str]:
    """The environment of a process the tests start that runs Spark of its own (a worker, a script, a kernel).

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
