"""A worker killed with SIGKILL at random moments (3 times in CI, 20 with ``--long``): no channel row and no stream change is lost or repeated.

Each worker process does two things at once, the way one ingestion job may:

* it pushes two numbered sources through two channels into EVENTS, the way
  Snowpipe Streaming's two examples do: a Kafka-like partition whose tokens
  are ``T:P1:<offset>``, and a directory of log files whose tokens are
  ``messages_<n>.log:<line>``; the channels flush in the background every
  200 ms;
* it appends rows to SRC and consumes the stream S on it into SINK,
  alternately by an autocommit INSERT … SELECT and by a transaction that also
  copies the same changes into MIRROR.

The parent kills the worker's whole process group (Python, its Spark JVM and
Spark's Python workers at once, like a machine going down) at a random moment
after the worker has opened both channels, committed once on each and
consumed the stream once; then it starts the next, whose ``connect()``
recovers what the dead one left and which resumes each source after the token
its channel committed. After the last kill a final worker ingests the rest of
both sources. At the end EVENTS holds each source exactly once, SINK every id
of SRC exactly once, and MIRROR exactly the ids SINK got through
transactions: no transaction was half applied.

One worker serves both properties so that each kill costs one process start
(a cold JVM, seconds of CPU on two cores) instead of two.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from delta_reader import kernel_rows
from lake_helpers import location, rows, start_worker, worker_line

import lakeclone

pytestmark = [pytest.mark.spark, pytest.mark.worker_processes]

# Each kill costs a cold worker (about a minute on two cores): CI kills a few
# times, each at a random moment of a randomly seeded run, which still proves
# the rule for every point it lands on; ``pytest --long`` kills twenty times.
KILLS, LONG_KILLS = 3, 20
RECORDS = 40_000  # per source: more than twenty short lives ingest, so the last worker always has some left
LOG_FILES = 40  # of RECORDS // LOG_FILES lines each

WORKER = textwrap.dedent(
    """
    import sys
    import threading
    import time
    from pathlib import Path

    import lakeclone

    warehouse, folder, mode = sys.argv[1:4]
    RECORDS, LOG_FILES = int(sys.argv[4]), int(sys.argv[5])
    batch, pause = (10, 0.02) if mode == "kill" else (5000, 0.0)


    def kafka(token):
        # One partition of topic T: the token is the last offset committed.
        start = 0 if token is None else int(token.rsplit(":", 1)[1]) + 1
        for first in range(start, RECORDS, batch):
            offsets = range(first, min(first + batch, RECORDS))
            yield [{"source": "kafka", "id": o, "origin": f"T:P1:{o}"} for o in offsets], f"T:P1:{offsets[-1]}"


    def logs(token):
        # Files messages_1.log ... in order: the token is the last file and line committed.
        file, line = (1, 0) if token is None else (int(token.split("_")[1].split(".")[0]), int(token.split(":")[1]))
        for number in range(file, LOG_FILES + 1):
            name = f"messages_{number}.log"
            lines = (Path(folder) / name).read_text().splitlines()
            skip = line if number == file else 0
            for first in range(skip, len(lines), batch):
                chunk = lines[first:first + batch]
                rows = [
                    {"source": "logs", "id": int(text.split()[1]), "origin": f"{name}:{first + i + 1}"}
                    for i, text in enumerate(chunk)
                ]
                yield rows, f"{name}:{first + len(chunk)}"


    def ingest(pairs):
        # Round robin over the channels until every source is exhausted.
        live = list(pairs)
        while live:
            for pair in list(live):
                channel, source = pair
                found = next(source, None)
                if found is None:
                    live.remove(pair)
                    continue
                channel.append_rows(found[0], offset_token=found[1])
            time.sleep(pause)


    def consume(lake, round):
        # Three new ids in SRC, then the stream's changes into SINK: autocommit, or a transaction also filling MIRROR.
        top = lake.sql("SELECT COALESCE(MAX(id), 0) AS top FROM src").first()[0]
        lake.sql(f"INSERT INTO src VALUES ({top + 1}), ({top + 2}), ({top + 3})")
        if round % 2:
            lake.sql("INSERT INTO sink SELECT id, 'auto' FROM s WHERE METADATA$ACTION = 'INSERT'")
        else:
            lake.sql(
                "BEGIN;"
                "INSERT INTO sink SELECT id, 'txn' FROM s WHERE METADATA$ACTION = 'INSERT';"
                "INSERT INTO mirror SELECT id FROM s WHERE METADATA$ACTION = 'INSERT';"
                "COMMIT"
            )


    lake = lakeclone.connect(warehouse)  # recovers what a killed worker left
    with lake.streaming_client("worker") as client:
        live = []
        for name, read in (("kafka", kafka), ("logs", logs)):
            channel, status = client.open_channel(name, table="events", max_client_lag="200 milliseconds")
            live.append((channel, read(status.latest_committed_offset_token)))
            print("ready", name, status.latest_committed_offset_token, flush=True)
        for channel, source in live:
            rows, token = next(source)
            channel.append_rows(rows, offset_token=token)
            channel.flush()  # one commit of its own on each channel before the worker may be killed
        print("committed", flush=True)
        if mode == "final":
            ingest(live)
            for channel, _ in live:
                channel.flush()
                print("done", channel.name, channel.get_latest_committed_offset_token(), flush=True)
            sys.exit(0)
        consume(lake, 0)
        print("consumed", flush=True)
        threading.Thread(target=ingest, args=(live,), daemon=True).start()
        round = 1
        while True:  # until killed
            consume(lake, round)
            round += 1
    """
)


def _ready(worker: subprocess.Popen[str], errors: Path) -> dict[str, str]:
    """Each channel's committed token, as the worker read it when it opened the channel, once it has committed on both."""
    tokens = {}
    for _ in range(2):
        word, name, token = worker_line(worker, errors).split(" ", 2)
        assert word == "ready", (word, name, token)
        tokens[name] = token
    assert worker_line(worker, errors) == "committed"
    return tokens


@pytest.fixture
def kills(request: pytest.FixtureRequest) -> int:
    return LONG_KILLS if request.config.getoption("--long") else KILLS


@pytest.fixture
def kill_seed(request: pytest.FixtureRequest) -> int:
    seed = request.config.getoption("--kill-seed")
    return random.randrange(2**32) if seed is None else int(seed)


def test_random_kills_neither_lose_nor_repeat_a_row_or_a_change(tmp_path: Path, spark, kills: int, kill_seed: int) -> None:
    # The workers run on the system clock, so this Lake does too: a stream made by
    # a manual clock's 2024 would be long stale by theirs.
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)
    lake.sql(
        "CREATE TABLE events (source STRING, id INT, origin STRING);"
        "CREATE TABLE src (id INT); CREATE STREAM s ON TABLE src;"
        "CREATE TABLE sink (id INT, how STRING); CREATE TABLE mirror (id INT)"
    )
    folder = tmp_path / "source"
    folder.mkdir()
    per_file = RECORDS // LOG_FILES
    for number in range(1, LOG_FILES + 1):
        first = (number - 1) * per_file
        (folder / f"messages_{number}.log").write_text("".join(f"message {i}\n" for i in range(first, first + per_file)))
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    args = [str(lake.warehouse), str(folder)]
    sizes = [str(RECORDS), str(LOG_FILES)]
    print(f"kill moments: --kill-seed {kill_seed}")  # shown on failure, to replay the same moments
    chooser = random.Random(kill_seed)
    resumed: list[dict[str, str]] = []
    for kill in range(kills):
        errors = tmp_path / f"worker_{kill}.err"
        worker = start_worker(script, *args, "kill", *sizes, errors=errors, own_group=True)
        try:
            resumed.append(_ready(worker, errors))
            assert worker_line(worker, errors) == "consumed"  # up, recovered, and progress on both sides before the kill
            time.sleep(chooser.uniform(0.0, 3.0))  # flushes and stream statements under way, or between them
            assert worker.poll() is None, errors.read_text()[-3000:]
        finally:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=60)

    errors = tmp_path / "worker_last.err"
    last = start_worker(script, *args, "final", *sizes, errors=errors, own_group=True)
    try:
        _ready(last, errors)
        done = {worker_line(last, errors), worker_line(last, errors)}
        assert last.wait(timeout=600) == 0, errors.read_text()[-3000:]
    finally:
        if last.poll() is None:
            os.killpg(last.pid, signal.SIGKILL)

    # Channels: each source in EVENTS exactly once, each worker having resumed after the last one's commits.
    final = {"kafka": f"T:P1:{RECORDS - 1}", "logs": f"messages_{LOG_FILES}.log:{per_file}"}
    assert done == {f"done {name} {token}" for name, token in final.items()}
    for name in final:
        tokens = [tokens[name] for tokens in resumed]
        assert tokens[0] == "None" and len(set(tokens)) == kills
        assert rows(lake, f"SELECT id FROM events WHERE source = '{name}'") == [(i,) for i in range(RECORDS)]
    assert kernel_rows(location(lake, "events")) == rows(lake, "SELECT source, id, origin FROM events")
    shown = {row["name"]: row["offset_token"] for row in lake.sql("SHOW CHANNELS").collect()}
    assert shown == final

    # Streams: every id of SRC in SINK once, MIRROR exactly SINK's transactional ids, no transaction left open.
    lake = lakeclone.connect(lake.warehouse, spark=spark)  # recovers what the last killed worker left
    lake.sql("INSERT INTO sink SELECT id, 'final' FROM s WHERE METADATA$ACTION = 'INSERT'")
    source = rows(lake, "SELECT id FROM src")
    assert len(source) > kills  # the workers got work done between kills
    assert rows(lake, "SELECT id FROM sink") == source
    assert kernel_rows(location(lake, "sink")) == rows(lake, "SELECT id, how FROM sink")
    assert rows(lake, "SELECT id FROM mirror") == rows(lake, "SELECT id FROM sink WHERE how = 'txn'")
    assert lake.sql("SHOW TRANSACTIONS").collect() == []
