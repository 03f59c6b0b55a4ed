"""lakeclone on a Spark standalone cluster that bin/cluster starts on loopback: the executors do the work.

The test's own process has its local SparkSession, and a JVM holds one
SparkContext, so a driver process of its own runs lakeclone against the
cluster, and the test reads back what it wrote with the Delta kernel.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from delta_reader import kernel_rows, sorted_rows

pytestmark = pytest.mark.worker_processes

PROJECT = Path(__file__).resolve().parent.parent
CLUSTER = PROJECT / "bin" / "cluster"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A master and one worker (1 core, 1 GB) on free loopback ports; their URL."""
    state = tmp_path_factory.mktemp("cluster")
    ports = ["--port", str(_free_port()), "--ui-port", str(_free_port())]
    started = subprocess.run(
        [str(CLUSTER), "start", "--dir", str(state), *ports], capture_output=True, text=True, timeout=180, check=False
    )
    try:
        assert started.returncode == 0, started.stderr + "".join(p.read_text() for p in state.glob("*.log"))
        yield started.stdout.strip()
    finally:
        subprocess.run([str(CLUSTER), "stop", "--dir", str(state)], capture_output=True, timeout=120, check=True)
    assert not list(state.glob("*.pid"))  # stop ended every process start began


DRIVER = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    import lakeclone

    master, warehouse = sys.argv[1], sys.argv[2]
    builder = (
        SparkSession.builder.master(master)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", "1")
        .config("spark.sql.shuffle.partitions", "2")
        # Delta reads a table's log in 50 tasks by default: on one executor core, most of the run.
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
    )
    spark = lakeclone.configure_spark(builder).getOrCreate()
    lake = lakeclone.connect(warehouse, spark=spark)
    lake.sql("CREATE TABLE orders (id INT, amount INT)")
    lake.sql("INSERT INTO orders SELECT id, id % 100 FROM range(1000)")
    lake.sql("CREATE TABLE orders_dev CLONE orders")
    lake.sql("CREATE STREAM changes ON TABLE orders")
    lake.sql("CREATE TABLE audit (id INT, amount INT, action STRING)")
    lake.sql("UPDATE orders SET amount = amount + 1000 WHERE id < 10")
    lake.sql(
        "MERGE INTO audit a USING changes c ON a.id = c.id "
        "WHEN NOT MATCHED AND c.METADATA$ACTION = 'INSERT' THEN INSERT VALUES (c.id, c.amount, c.METADATA$ACTION)"
    )
    lake.sql("BEGIN")
    lake.sql("DELETE FROM orders_dev WHERE id >= 500")
    lake.sql("COMMIT")
    result = {
        "executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1,
        "orders": lake.sql("SELECT COUNT(*), SUM(amount) FROM orders").collect()[0][:],
        "before_update": lake.sql("SELECT SUM(amount) FROM orders AT(VERSION => 1)").collect()[0][0],
        "dev": lake.sql("SELECT COUNT(*) FROM orders_dev").collect()[0][0],
        "stream_empty": lake.sql("SELECT COUNT(*) FROM changes").collect()[0][0] == 0,
        "vacuum_planned": len(lake.vacuum_plan("orders").decisions) > 0,
        "locations": {t: lake.sql(f"DESCRIBE DETAIL {t}").collect()[0].location for t in ("orders", "orders_dev", "audit")},
    }
    print(json.dumps(result))
    """
)


def test_lakeclone_runs_on_a_standalone_cluster(cluster: str, tmp_path: Path) -> None:
    assert cluster.startswith("spark://127.0.0.1:")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    ran = subprocess.run(
        [sys.executable, str(driver), cluster, str(tmp_path / "warehouse")],
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    result = json.loads(ran.stdout.strip().splitlines()[-1])
    assert result["executors"] == 1  # the worker's executor, besides the driver
    assert result["orders"] == [1000, sum(i % 100 for i in range(1000)) + 10 * 1000]
    assert result["before_update"] == sum(i % 100 for i in range(1000))
    assert result["dev"] == 500
    assert result["stream_empty"]  # the MERGE consumed the stream
    assert result["vacuum_planned"]
    locations = result["locations"]
    # What the cluster wrote, read back by the Delta kernel.
    assert len(kernel_rows(locations["orders"])) == 1000
    assert len(kernel_rows(locations["orders_dev"])) == 500
    assert sorted_rows(kernel_rows(locations["audit"])) == sorted((i, i % 100 + 1000, "INSERT") for i in range(10))
