"""Run by a notebook kernel's IPython as it starts (``PYTHONSTARTUP``): its Spark is the test process's JVM.

See ``jvm_settings.kernel_env``. This connects to the JVM that
``PYSPARK_GATEWAY_PORT`` names, wraps its SparkContext (a JVM runs only one)
and makes a session of the kernel's own the active one, which
``lakeclone.connect()`` then uses. It runs in the notebook's namespace,
so it leaves no name behind.
"""


def _share_the_test_process_jvm() -> None:
    import json
    import os
    import sys
    from pathlib import Path

    tests = str(Path(os.environ.pop("PYTHONSTARTUP")).parent)
    sys.path.insert(0, tests)
    try:
        from jvm_settings import attached_session
    finally:
        sys.path.remove(tests)

    spark = attached_session(os.environ.pop("PYSPARK_GATEWAY_PORT"), os.environ.pop("PYSPARK_GATEWAY_SECRET"))
    for key, value in json.loads(os.environ.pop("LAKECLONE_TEST_SPARK_CONF")).items():
        spark.conf.set(key, value)


_share_the_test_process_jvm()
del _share_the_test_process_jvm
