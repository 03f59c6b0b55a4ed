"""Warehouses on S3: the run's S3-compatible server (tests/s3_server.py, bin/s3-server on loopback), and drivers of their own.

Each scenario runs lakeclone in a driver process of its own
(tests/object_storage_driver.py), as a user's program would, with a session
it starts for object storage, and prints what it saw as JSON: two drivers
at once, a driver killed, faults at connect. What the drivers wrote is read
back by delta-spark in the driver and by delta-rs here; the Delta kernel
binding takes no S3 endpoint, so it reads only local tables.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import deltalake
import pytest
from jvm_settings import worker_env
from s3_server import BUCKETS, SERVER, free_port

import lakeclone
from lakeclone.errors import StorageError

pytestmark = pytest.mark.worker_processes

DRIVER = Path(__file__).with_name("object_storage_driver.py")
WAREHOUSE_BUCKET, OTHER_BUCKET = BUCKETS


@pytest.fixture(scope="module")
def s3() -> dict[str, str]:
    """The run's S3 server (tests/s3_server.py) and a key for it: the environment a driver needs."""
    return {key: os.environ[key] for key in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}


def drive(s3: dict[str, str], folder: Path, scenario: str, *args: str) -> dict[str, Any]:
    """Run one driver scenario to its end; what it printed last, as JSON."""
    ran = subprocess.run(
        [sys.executable, str(DRIVER), scenario, *args],
        env={**worker_env(), **s3},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=folder,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    return dict(json.loads(ran.stdout.strip().splitlines()[-1]))


def start_driver(s3: dict[str, str], folder: Path, scenario: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), scenario, *args],
        env={**worker_env(), **s3},
        stdout=subprocess.PIPE,
        stderr=(folder / f"{scenario}-{uuid.uuid4().hex[:6]}.err").open("w"),
        text=True,
        cwd=folder,
        start_new_session=True,
    )


def deltars_rows(s3: dict[str, str], location: str) -> list[tuple[Any, ...]]:
    """A table on the server as delta-rs reads it, rows sorted (delta-rs cannot read shallow clones: their paths are absolute)."""
    options = {**s3, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1"}
    table = deltalake.DeltaTable(location, storage_options=options).to_pyarrow_table()
    return sorted(tuple(row.values()) for row in table.to_pylist())


def fresh(bucket: str) -> str:
    """A prefix of its own in ``bucket``, so tests sharing the server never meet."""
    return f"s3a://{bucket}/{uuid.uuid4().hex[:12]}"


def test_the_log_store_lets_exactly_one_writer_create_each_commit(s3: dict[str, str], tmp_path: Path) -> None:
    seen = drive(s3, tmp_path, "log_store", f"{fresh(WAREHOUSE_BUCKET)}/table")

    assert seen["first"] == "written"
    # The second writer of version 0 is refused by the server's put-if-absent, as Delta expects.
    assert seen["second"] == "java.nio.file.FileAlreadyExistsException"
    assert seen["kept"] == ["first"]
    assert (seen["overwrite"], seen["after_overwrite"]) == ("written", ["replaced"])
    # Ten races of two writers released together: each time one won, and its commit is what the file holds.
    for race in seen["races"]:
        outcomes = sorted(race["outcome"].items(), key=lambda item: item[1] != "written")
        (winner, won), (_, lost) = outcomes
        assert (won, lost) == ("written", "java.nio.file.FileAlreadyExistsException")
        assert race["kept"] == [winner]


def test_two_drivers_committing_to_one_table_lose_nothing(s3: dict[str, str], tmp_path: Path) -> None:
    table = f"{fresh(WAREHOUSE_BUCKET)}/appended"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    commits = 10
    drivers = [start_driver(s3, tmp_path, "appender", table, name, str(commits), str(barrier)) for name in ("a", "b")]
    spans = []
    for driver in drivers:
        out, _ = driver.communicate(timeout=600)
        assert driver.returncode == 0, "".join(p.read_text()[-3000:] for p in tmp_path.glob("*.err"))
        spans.append(json.loads(out.strip().splitlines()[-1]))
    # The two drivers were committing at the same time...
    assert max(s["began"] for s in spans) < min(s["ended"] for s in spans)
    # ...and every commit of each is in the table: version 0 (the creation) and one version per append.
    options = {**s3, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1"}
    delta = deltalake.DeltaTable(table, storage_options=options)
    assert delta.version() == 2 * commits
    expected = [(base + i,) for base in (0, 1_000_000) for i in range(commits * 10)]
    assert deltars_rows(s3, table) == sorted(expected)


def test_lakeclone_on_object_storage(s3: dict[str, str], tmp_path: Path) -> None:
    seen = drive(s3, tmp_path, "behaviours", fresh(WAREHOUSE_BUCKET), str(tmp_path / "catalog"), fresh(OTHER_BUCKET))

    orders = sum(i % 100 for i in range(1000))
    assert seen["orders"] == [1000, orders + 10 * 1000]
    assert seen["before_update"] == orders  # time travel
    assert seen["orders_dev"] == 500  # a shallow clone, changed in a transaction
    # A shallow clone in the warehouse's bucket of a table in another, and a deep copy of it: both kept
    # the row its source deleted, and VACUUM of the source kept the file the shallow clone still needs.
    assert seen["ext"] == [[2, "b"]]
    assert seen["ext_dev"] == seen["ext_copy"] == [[1, "a"], [2, "b"]]
    assert seen["vacuumed"]["orders"] == [[0, 0]]  # its old file is the clone's
    locations = {table: detail[4] for table, detail in seen["locations"].items()}
    assert locations["ext"].startswith(f"s3a://{OTHER_BUCKET}/")
    assert all(locations[t].startswith(f"s3a://{WAREHOUSE_BUCKET}/") for t in ("orders", "orders_dev", "ext_dev", "ext_copy"))
    # The stream's changes went into audit by a consuming MERGE; the rolled-back DELETE left audit as it was.
    audit = [[i, i % 100 + 1000, "INSERT"] for i in range(10)]
    assert seen["audit"] == [[-1, 0, "MANUAL"], *audit]
    assert seen["stream_left"] == 0
    assert seen["ana_orders"] == 1000
    assert "'LAKE.PUBLIC.AUDIT' does not exist or not authorized" in seen["ana_denied"]
    assert seen["timeline"]["status"] == "" and seen["timeline"]["rows"] >= 5 and seen["timeline"]["images"] == 1
    # Read back by delta-spark in the driver, and here by delta-rs, neither through lakeclone.
    by_spark = seen["delta_spark"]
    assert by_spark["audit"] == [[-1, 0, "MANUAL"], *audit]
    assert by_spark["ext_dev"] == by_spark["ext_copy"] == [[1, "a"], [2, "b"]]
    assert len(by_spark["orders_dev"]) == 500
    assert deltars_rows(s3, locations["ext_copy"]) == [(1, "a"), (2, "b")]
    assert deltars_rows(s3, locations["audit"]) == sorted([(-1, 0, "MANUAL"), *(tuple(row) for row in audit)])
    assert len(deltars_rows(s3, locations["orders"])) == 1000


def test_a_channel_killed_mid_ingest_resumes_exactly_once(s3: dict[str, str], tmp_path: Path) -> None:
    warehouse, catalog = fresh(WAREHOUSE_BUCKET), str(tmp_path / "catalog")
    batches = "20"
    first = start_driver(s3, tmp_path, "ingest", warehouse, catalog, batches)
    assert first.stdout is not None
    for line in first.stdout:
        if line.startswith("committed 5"):
            break
    os.killpg(first.pid, signal.SIGKILL)  # the driver and its JVM, between or inside commits
    first.wait(timeout=60)

    seen = drive(s3, tmp_path, "ingest", warehouse, catalog, batches)

    assert int(seen["resumed"]) >= 5
    assert seen["final"] == "19"
    assert seen["rows"] == seen["distinct"] == 200  # every batch once: none lost, none twice


def test_storage_faults_are_one_line_and_create_nothing(s3: dict[str, str], tmp_path: Path) -> None:
    # In this process: lakeclone refuses what it can tell without a session on object storage.
    with pytest.raises(lakeclone.LakecloneError, match="Use s3a://bucket/wh for a warehouse on S3"):
        lakeclone.connect("s3://bucket/wh", catalog=tmp_path / "c0")
    with pytest.raises(lakeclone.LakecloneError, match="must not hold credentials"):
        lakeclone.connect("s3a://AKIA:secret@bucket/wh", catalog=tmp_path / "c0")
    assert not (tmp_path / "c0").exists()
    seen = drive(s3, tmp_path, "faults", f"s3a://no-such-bucket-{uuid.uuid4().hex[:8]}/wh", str(tmp_path / "c1"))
    assert seen["error"] == StorageError.__name__
    assert seen["message"].startswith("Bucket 'no-such-bucket-") and seen["message"].endswith(
        "correct the warehouse's or location's URI."
    )
    assert not (tmp_path / "c1").exists()
    down = {**s3, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"}
    seen = drive(down, tmp_path, "faults", fresh(WAREHOUSE_BUCKET), str(tmp_path / "c2"))
    assert seen["error"] == StorageError.__name__ and seen["message"].startswith("Cannot reach the object store at 127.0.0.1:")
    assert "\n" not in seen["message"] and not (tmp_path / "c2").exists()
    # A server that checks keys (moto's, told to): lakeclone's key is not one it knows.
    state, port = tmp_path / "checking-server", free_port()
    checking = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "0"}
    started = subprocess.run(
        [str(SERVER), "start", "--dir", str(state), "--port", str(port)],
        env=checking,
        capture_output=True,
        timeout=120,
        check=False,
    )
    try:
        assert started.returncode == 0, started.stderr
        seen = drive(
            {**s3, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"},
            tmp_path,
            "faults",
            fresh(WAREHOUSE_BUCKET),
            str(tmp_path / "c3"),
        )
    finally:
        subprocess.run([str(SERVER), "stop", "--dir", str(state)], capture_output=True, timeout=60, check=True)
    assert seen["error"] == StorageError.__name__
    assert seen["message"].startswith(f"Access to s3a://{WAREHOUSE_BUCKET} denied (403): check the credentials")
    assert "lakeclone" not in seen["message"]  # the key is never repeated
    assert not (tmp_path / "c3").exists()
