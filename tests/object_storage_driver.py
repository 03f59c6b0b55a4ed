"""A driver process for tests/test_object_storage.py: one scenario on S3 (the server in AWS_ENDPOINT_URL), JSON out.

Usage: python object_storage_driver.py SCENARIO ARGS...

Each scenario prints progress lines and, last, one line of JSON with what it
saw, for the test to check. A JVM holds one SparkContext, and the tests' own
has no S3A on its class path, so each scenario runs in a process of its own.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import lakeclone
from lakeclone.session import embedded_spark


def log_store(table: str) -> dict[str, Any]:
    """lakeclone's log store, called directly: of writers of one commit file, exactly one wins, each time."""
    spark = embedded_spark(object_storage=True)
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    store = jvm.io.lakeclone.delta.ConditionalCreateLogStore(conf)

    def write(version: int, text: str, *, overwrite: bool = False) -> str:
        path = jvm.org.apache.hadoop.fs.Path(f"{table}/_delta_log/{version:020d}.json")
        try:
            store.write(path, jvm.java.util.Collections.singletonList(text).iterator(), overwrite, conf)
        except Exception as error:
            return str(error.java_exception.getClass().getName())  # type: ignore[attr-defined]
        return "written"

    def read(version: int) -> list[str]:
        path = jvm.org.apache.hadoop.fs.Path(f"{table}/_delta_log/{version:020d}.json")
        lines = store.read(path, conf)
        found = []
        while lines.hasNext():
            found.append(str(lines.next()))
        lines.close()
        return found

    result: dict[str, Any] = {"first": write(0, "first"), "second": write(0, "second"), "kept": read(0)}
    result["overwrite"] = write(0, "replaced", overwrite=True)
    result["after_overwrite"] = read(0)
    # Races: two threads (two connections to the store) write each version at the same moment.
    rounds = []
    for version in range(1, 11):
        start = threading.Barrier(2)
        outcome: dict[str, str] = {}

        def racer(name: str, version: int = version, start: threading.Barrier = start, outcome: dict[str, str] = outcome) -> None:
            start.wait()
            outcome[name] = write(version, name)

        threads = [threading.Thread(target=racer, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rounds.append({"outcome": outcome, "kept": read(version)})
    result["races"] = rounds
    return result


def appender(table: str, name: str, commits: str, barrier: str) -> dict[str, Any]:
    """Append ``commits`` commits of ten rows each to ``table`` with delta-spark itself, once every appender is ready.

    Appender ``a`` creates the table first. Each says it is ready by a file in
    the folder ``barrier`` and starts when both files are there, so that both
    drivers commit at the same time.
    """
    spark = embedded_spark(object_storage=True)
    base = {"a": 0, "b": 1_000_000}[name]
    if name == "a":
        spark.range(0).write.format("delta").save(table)
    folder = Path(barrier)
    (folder / name).touch()
    while len(list(folder.iterdir())) < 2:
        time.sleep(0.05)
    while not spark._jvm.io.delta.tables.DeltaTable.isDeltaTable(spark._jsparkSession, table):
        time.sleep(0.1)
    began = time.time()
    for commit in range(int(commits)):
        first = base + commit * 10
        spark.range(first, first + 10).write.format("delta").mode("append").save(table)
    return {"began": began, "ended": time.time()}


def behaviours(warehouse: str, catalog: str, other_bucket: str) -> dict[str, Any]:
    """lakeclone's main behaviours on a warehouse in one bucket, with a table and clones in another."""
    clock = lakeclone.ManualClock()
    lake = lakeclone.connect(warehouse, catalog=catalog, clock=clock)

    def sql(text: str) -> list[Any]:
        return [list(row) for row in lake.sql(text).collect()]

    sql("CREATE TABLE orders (id INT, amount INT)")
    sql("INSERT INTO orders SELECT id, id % 100 FROM range(1000)")
    sql(f"CREATE EXTERNAL TABLE ext (id INT, note STRING) LOCATION '{other_bucket}/ext'")
    sql("INSERT INTO ext VALUES (1, 'a'), (2, 'b')")
    sql("CREATE TABLE orders_dev CLONE orders")  # shallow, in the warehouse's bucket
    sql("CREATE TABLE ext_dev CLONE ext")  # shallow: the warehouse's bucket refers to the other's files
    sql("CREATE TABLE ext_copy DEEP CLONE ext")  # deep: the other bucket's files copied into the warehouse's
    sql("CREATE STREAM changes ON TABLE orders")
    sql("CREATE TABLE audit (id INT, amount INT, action STRING)")
    sql("UPDATE orders SET amount = amount + 1000 WHERE id < 10")
    sql(
        "MERGE INTO audit a USING changes c ON a.id = c.id "
        "WHEN NOT MATCHED AND c.METADATA$ACTION = 'INSERT' THEN INSERT VALUES (c.id, c.amount, c.METADATA$ACTION)"
    )
    sql("BEGIN")
    sql("DELETE FROM orders_dev WHERE id >= 500")
    sql("INSERT INTO audit VALUES (-1, 0, 'MANUAL')")
    sql("COMMIT")
    sql("BEGIN")
    sql("DELETE FROM audit")
    sql("ROLLBACK")
    sql("DELETE FROM ext WHERE id = 1")
    sql("CREATE ROLE analyst")
    sql("CREATE USER ana")
    sql("GRANT ROLE analyst TO USER ana")
    sql("GRANT USAGE ON DATABASE lake TO ROLE analyst")
    sql("GRANT USAGE ON SCHEMA lake.public TO ROLE analyst")
    sql("GRANT SELECT ON TABLE orders TO ROLE analyst")
    ana = lakeclone.connect(warehouse, catalog=catalog, clock=clock, user="ana", role="analyst")
    try:
        ana.sql("SELECT * FROM audit").collect()
        denied = ""
    except lakeclone.LakecloneError as error:
        denied = str(error)
    before_update = sql("SELECT SUM(amount) FROM orders AT(VERSION => 1)")[0][0]
    clock.advance(days=8)  # past the tables' 1-day retention
    sql("ALTER SESSION SET spark.databricks.delta.retentionDurationCheck.enabled = FALSE")
    vacuumed = {t: sql(f"VACUUM {t} RETAIN 0 HOURS") for t in ("orders", "ext")}
    from lakeclone.widgets import timeline

    shown = timeline(lake, "orders").shown()
    locations = {t: sql(f"DESCRIBE DETAIL {t}")[0] for t in ("orders", "orders_dev", "ext", "ext_dev", "ext_copy", "audit")}
    spark = lake.spark
    return {
        "orders": sql("SELECT COUNT(*), SUM(amount) FROM orders")[0],
        "before_update": before_update,
        "orders_dev": sql("SELECT COUNT(*) FROM orders_dev")[0][0],
        "ext_dev": sql("SELECT * FROM ext_dev ORDER BY id"),
        "ext_copy": sql("SELECT * FROM ext_copy ORDER BY id"),
        "ext": sql("SELECT * FROM ext ORDER BY id"),
        "audit": sorted(sql("SELECT * FROM audit")),
        "stream_left": sql("SELECT COUNT(*) FROM changes")[0][0],
        "ana_orders": ana.sql("SELECT COUNT(*) FROM orders").collect()[0][0],
        "ana_denied": denied,
        "vacuumed": vacuumed,
        "timeline": {"status": shown.status, "rows": len(shown.rows), "images": shown.images},
        "locations": {t: [str(v) for v in detail] for t, detail in locations.items()},
        # Each table read by delta-spark itself, by its location, not through lakeclone.
        "delta_spark": {
            t: sorted(
                tuple(r)
                for r in spark.read.format("delta").load(lake.sql(f"DESCRIBE DETAIL {t}").collect()[0].location).collect()
            )
            for t in ("orders_dev", "ext_dev", "ext_copy", "audit")
        },
    }


def ingest(warehouse: str, catalog: str, batches: str) -> dict[str, Any]:
    """Send ``batches`` batches of ten rows through a channel, resuming after the last committed offset token."""
    lake = lakeclone.connect(warehouse, catalog=catalog)
    lake.sql("CREATE TABLE IF NOT EXISTS events (id INT, batch INT)")
    with lake.streaming_client("loader") as client:
        channel, status = client.open_channel("events_channel", table="events", max_client_lag="1 second")
        resumed = status.latest_committed_offset_token
        start = int(resumed) + 1 if resumed is not None else 0
        for batch in range(start, int(batches)):
            channel.append_rows([{"id": batch * 10 + i, "batch": batch} for i in range(10)], offset_token=str(batch))
            channel.flush()
            print(f"committed {batch}", flush=True)
        final = channel.get_latest_committed_offset_token()
    counts = lake.sql("SELECT COUNT(*), COUNT(DISTINCT id) FROM events").collect()[0]
    return {"resumed": resumed, "final": final, "rows": counts[0], "distinct": counts[1]}


def faults(warehouse: str, catalog: str) -> dict[str, Any]:
    """Connect and create a table where that must fail; the error lakeclone raised."""
    try:
        lakeclone.connect(warehouse, catalog=catalog).sql("CREATE TABLE t (id INT)")
    except lakeclone.LakecloneError as error:
        return {"error": type(error).__name__, "message": str(error)}
    return {"error": None}


def main() -> None:
    scenario, *args = sys.argv[1:]
    scenarios = {"log_store": log_store, "appender": appender, "behaviours": behaviours, "ingest": ingest, "faults": faults}
    print(json.dumps(scenarios[scenario](*args), default=str), flush=True)


if __name__ == "__main__":
    main()
