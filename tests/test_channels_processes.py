"""Two processes opening one channel: the later wins, and the earlier's buffered rows never land.

(Random kills of an ingesting process are tests/test_kills.py.)
"""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pytest
from lake_helpers import rows, start_worker, worker_line

import lakeclone

pytestmark = [pytest.mark.spark, pytest.mark.worker_processes]


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
    holder = start_worker(script, str(lake.warehouse), errors=errors, stdin=True, own_group=True)
    try:
        assert worker_line(holder, errors) == "buffered"
        with lake.streaming_client("second") as client:
            channel, status = client.open_channel("shared", table="events", max_client_lag="10 minutes")
            assert status.latest_committed_offset_token is None
            assert holder.stdin is not None
            holder.stdin.write("go\n")
            holder.stdin.flush()
            assert worker_line(holder, errors).startswith("invalid")
            assert holder.wait(timeout=120) == 0, errors.read_text()[-3000:]
            channel.append_rows([{"id": 10, "origin": "second"}], offset_token="second:1")
        assert rows(lake, "SELECT id, origin FROM events") == [(10, "second")]
        assert lake.sql("SHOW CHANNELS").first()["offset_token"] == "second:1"
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
