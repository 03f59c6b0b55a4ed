"""An ingester killed with SIGKILL at random moments: its table ends equal to its sources, no duplicate, no gap.

A worker process reads two numbered sources and pushes each through its own
channel into one table, the way Snowpipe Streaming's two examples do: a
Kafka-like partition whose tokens are ``T:P1:<offset>``, and a directory of log
files whose tokens are ``messages_<n>.log:<line>``. The parent kills the
worker's whole process group (Python, its Spark JVM and Spark's Python workers
at once) at a random moment after it has opened both channels and committed
once on each, and starts the next, which reopens the channels, reads each
committed token and resumes each source after it. Twenty kills, each one
hitting both channels; a last worker ingests the rest.

Also: two processes opening one channel, the later wins and the earlier's
buffered rows never land.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from delta_reader import kernel_rows
from lake_helpers import location, rows, worker_env

import lakeclone

pytestmark = pytest.mark.spark

KILLS = 20
RECORDS = 20_000  # per source
LOG_FILES = 40  # of RECORDS // LOG_FILES lines each

WORKER = textwrap.dedent(
    """
    import sys
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


    lake = lakeclone.connect(warehouse)
    with lake.streaming_client("worker") as client:
        channels, sources = [], []
        for name, read in (("kafka", kafka), ("logs", logs)):
            channel, status = client.open_channel(name, table="events", max_client_lag="200 milliseconds")
            channels.append(channel)
            sources.append(read(status.latest_committed_offset_token))
            print("ready", name, status.latest_committed_offset_token, flush=True)
        live = list(zip(channels, sources))
        number = 0
        while live:
            for pair in list(live):
                channel, source = pair
                found = next(source, None)
                if found is None:
                    live.remove(pair)
                    continue
                channel.append_rows(found[0], offset_token=found[1])
            if number == 0:
                for channel in channels:
                    channel.flush()  # one commit of its own on each channel before it may be killed
                print("committed", flush=True)
            number += 1
            time.sleep(pause)
        for channel in channels:
            channel.flush()
            print("done", channel.name, channel.get_latest_committed_offset_token(), flush=True)
    """
)


def _start(script: Path, args: list[str], errors: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        cwd=script.parent,
        stdout=subprocess.PIPE,
        stderr=errors.open("w"),
        text=True,
        start_new_session=True,  # its own process group: the JVM dies with it
        env=worker_env(),
    )


def _line(worker: subprocess.Popen[str], errors: Path) -> str:
    assert worker.stdout is not None
    line = worker.stdout.readline().strip()
    assert line, errors.read_text()[-3000:]
    return line


def _ready(worker: subprocess.Popen[str], errors: Path) -> dict[str, str]:
    """Each channel's committed token, as the worker read it when it opened the channel."""
    tokens = {}
    for _ in range(2):
        word, name, token = _line(worker, errors).split(" ", 2)
        assert word == "ready", (word, name, token)
        tokens[name] = token
    return tokens


def test_random_kills_neither_lose_nor_repeat_a_row(tmp_path: Path, spark) -> None:
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)  # the workers run on the system clock too
    lake.sql("CREATE TABLE events (source STRING, id INT, origin STRING)")
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
    chooser = random.Random("channels-20261125")
    resumed: list[dict[str, str]] = []
    for kill in range(KILLS):
        errors = tmp_path / f"worker_{kill}.err"
        worker = _start(script, [*args, "kill", *sizes], errors)
        try:
            resumed.append(_ready(worker, errors))
            assert _line(worker, errors) == "committed"
            time.sleep(chooser.uniform(0.0, 3.0))  # background flushes under way, or between them
            assert worker.poll() is None, errors.read_text()[-3000:]
        finally:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=60)

    errors = tmp_path / "worker_last.err"
    last = _start(script, [*args, "final", *sizes], errors)
    try:
        _ready(last, errors)
        assert _line(last, errors) == "committed"
        done = {_line(last, errors), _line(last, errors)}
        assert last.wait(timeout=600) == 0, errors.read_text()[-3000:]
    finally:
        if last.poll() is None:
            os.killpg(last.pid, signal.SIGKILL)
    final = {"kafka": f"T:P1:{RECORDS - 1}", "logs": f"messages_{LOG_FILES}.log:{per_file}"}
    assert done == {f"done {name} {token}" for name, token in final.items()}

    for name in final:
        tokens = [tokens[name] for tokens in resumed]
        assert tokens[0] == "None" and len(set(tokens)) == KILLS  # each worker resumed after the last one's commits
        ids = rows(lake, f"SELECT id FROM events WHERE source = '{name}'")
        assert ids == [(i,) for i in range(RECORDS)]  # no duplicate, no gap
    assert kernel_rows(location(lake, "events")) == rows(lake, "SELECT source, id, origin FROM events")
    shown = {row["name"]: row["offset_token"] for row in lake.sql("SHOW CHANNELS").collect()}
    assert shown == final


HOLDER = textwrap.dedent(
    """
    import sys
    import lakeclone
    from lakeclone.channels import ChannelInvalidError

    lake = lakeclone.connect(sys.argv[1])
    with lake.streaming_client("first") as client:
        channel, _ = client.open_channel("shared", table="events", max_client_lag="10 minutes")
        channel.append_rows([{"id": 1, "origin": "first"}, {"id": 2, "origin": "first"}], offset_token="first:2")
        print("buffered", flush=True)
        sys.stdin.readline()  # the other process opens the channel meanwhile
        try:
            channel.flush()
            print("flushed", flush=True)
        except ChannelInvalidError as error:
            print("invalid", error, flush=True)
    """
)


def test_the_later_of_two_processes_wins_and_the_earlier_rows_never_land(tmp_path: Path, spark) -> None:
    lake = lakeclone.connect(tmp_path / "warehouse", spark=spark)
    lake.sql("CREATE TABLE events (id INT, origin STRING)")
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    errors = tmp_path / "holder.err"
    holder = subprocess.Popen(
        [sys.executable, str(script), str(lake.warehouse)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors.open("w"),
        text=True,
        start_new_session=True,
        env=worker_env(),
    )
    try:
        assert _line(holder, errors) == "buffered"
        with lake.streaming_client("second") as client:
            channel, status = client.open_channel("shared", table="events", max_client_lag="10 minutes")
            assert status.latest_committed_offset_token is None
            assert holder.stdin is not None
            holder.stdin.write("go\n")
            holder.stdin.flush()
            assert _line(holder, errors).startswith("invalid")
            assert holder.wait(timeout=120) == 0, errors.read_text()[-3000:]
            channel.append_rows([{"id": 10, "origin": "second"}], offset_token="second:1")
        assert rows(lake, "SELECT id, origin FROM events") == [(10, "second")]
        assert lake.sql("SHOW CHANNELS").first()["offset_token"] == "second:1"
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
