"""Run by a notebook kernel's IPython as it starts (``PYTHONSTARTUP``): its Spark is the test process's JVM.

See ``jvm_settings.kernel_env``. PySpark's launcher has connected to the JVM
that ``PYSPARK_GATEWAY_PORT`` names; this wraps that JVM's SparkContext (a
JVM runs only one) and makes a session of the kernel's own the active one,
which ``lakeclone.connect()`` then uses. It runs in the notebook's namespace,
so it leaves no name behind.
"""


def _share_the_test_process_jvm() -> None:
    import json
    import os

    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    gateway = launch_gateway()
    # The processes the notebook starts (a channel's worker) start JVMs of their own.
    for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "PYTHONSTARTUP"):
        del os.environ[name]
    settings = json.loads(os.environ.pop("LAKECLONE_TEST_SPARK_CONF"))
    jvm = gateway.jvm
    context = jvm.org.apache.spark.SparkContext.getOrCreate()
    python_context = SparkContext(gateway=gateway, jsc=jvm.org.apache.spark.api.java.JavaSparkContext(context))
    sessions = getattr(jvm, "org.apache.spark.sql.classic.SparkSession")
    spark = SparkSession(python_context, sessions.getDefaultSession().get().newSession())
    for key, value in settings.items():
        spark.conf.set(key, value)


_share_the_test_process_jvm()
del _share_the_test_process_jvm
