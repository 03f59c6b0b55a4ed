"""The channel monitor: a table's (or schema's) channels, their tokens, rows, errors and lag, live and static.

On a real Lake (real Spark, real Delta, real SQLite) with a manual clock: the
lag is moved by moving the clock; the channels are real ones, flushed.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator

import pytest

import lakeclone
from lakeclone.channels import StreamingClient
from lakeclone.widgets import WidgetError, channels, plot_channels
from lakeclone.widgets.channels import ChannelMonitor, ChannelsData, channels_html

pytestmark = pytest.mark.spark

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LONG_LAG = "10 minutes"


@pytest.fixture
def client(lake: lakeclone.Lake) -> Iterator[StreamingClient]:
    lake.sql("CREATE TABLE clicks (id INT, page STRING)")
    lake.sql("CREATE TABLE orders (id INT)")
    with lake.streaming_client("web") as streaming:
        yield streaming


def test_the_monitor_shows_each_channels_token_rows_errors_and_lag(lake, client, clock) -> None:
    p0, _ = client.open_channel("p0", table="clicks", on_error="CONTINUE", max_client_lag=LONG_LAG)
    p1, _ = client.open_channel("p1", table="clicks", max_client_lag=LONG_LAG)
    p0.insert_rows([{"id": 1, "page": "/"}, {"id": "two", "page": "/cart"}, {"id": 3}], offset_token="k:3")
    p0.flush()
    clock.advance(seconds=90)

    monitor = channels(lake, "clicks")
    shown = monitor.shown()
    assert shown.columns == (
        "channel",
        "table",
        "offset token",
        "rows inserted",
        "rows in error",
        "last error",
        "last commit",
        "lag",
        "status",
    )
    assert shown.column("channel") == ["p0", "p1"]
    assert shown.column("table") == ["LAKE.PUBLIC.CLICKS", "LAKE.PUBLIC.CLICKS"]
    assert shown.column("offset token") == ["k:3", "–"]
    assert shown.column("rows inserted") == ["2", "0"]
    assert shown.column("rows in error") == ["1", "0"]
    (error, none) = shown.column("last error")
    assert "ID" in error and none == ""
    assert shown.column("last commit") == ["1m 30s ago", "never"]
    assert shown.column("lag") == ["0s", "0s"]  # neither holds a row it has not committed
    assert shown.column("status") == ["ERROR", "ACTIVE"]
    assert shown.header.startswith("clicks · 2 channels · 2 rows inserted · 1 in error (as of 2024-01-01 00:01:30")
    assert shown.status == "" and shown.images == 1
    assert monitor.data is not None and monitor.data.channel("p0").offset_token == "k:3"

    # Live: a commit and time passing show on refresh (the button does what refresh() does).
    p1.append_rows([{"id": 10}, {"id": 11}, {"id": 12}], offset_token="k:12")
    p1.flush()
    clock.advance(seconds=5)
    monitor.refresh_button.click()
    shown = monitor.shown()
    assert shown.column("offset token") == ["k:3", "k:12"]
    assert shown.column("rows inserted") == ["2", "3"]
    assert shown.column("last commit")[1] == "5s ago"
    assert shown.column("lag") == ["0s", "0s"]
    assert monitor.refreshes == 1


def test_the_lag_is_the_age_of_the_oldest_row_not_committed_yet(lake, client, clock) -> None:
    """As Snowpipe Streaming users read it: a channel whose flushes fail (a transaction holds its table) falls behind."""
    channel, _ = client.open_channel("p0", table="clicks", max_client_lag="1 minute")
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    assert channels(lake, "clicks").shown().column("lag") == ["0s"]
    channel.append_rows([{"id": 2}], offset_token="2")
    lake.sql("BEGIN; INSERT INTO clicks VALUES (0, 'txn')")
    lake.lock_timeout = 0.2
    clock.advance(seconds=61)  # the rows are due: the background flush waits for the transaction, and fails
    monitor = channels(lake, "clicks")
    for _ in range(600):
        if monitor.shown().column("status") == ["ERROR"]:
            break
        time.sleep(0.05)
        monitor.refresh()
    clock.advance(seconds=30)
    monitor.refresh()
    shown = monitor.shown()
    assert shown.column("status") == ["ERROR"] and "LOCK_TIMEOUT" in shown.column("last error")[0]
    assert shown.column("lag") == ["1m 31s"]  # row 2 waits since it came, 91 s ago by the Lake's clock
    assert shown.column("last commit") == ["1m 31s ago"]
    # SHOW CHANNELS gives the moment the lag runs from, to any process.
    (row,) = lake.sql("SHOW CHANNELS IN TABLE clicks").collect()
    assert row["pending_since"] is not None and row["offset_token"] == "1"
    lake.sql("COMMIT")
    channel.flush()
    monitor.refresh()
    assert monitor.shown().column("lag") == ["0s"] and monitor.shown().column("offset token") == ["2"]


def test_the_static_fallback_is_html_and_png(lake, client) -> None:
    channel, _ = client.open_channel("p0", table="clicks", max_client_lag=LONG_LAG)
    channel.append_rows([{"id": 1}], offset_token="1")
    channel.flush()
    monitor = channels(lake, "clicks")
    bundle = monitor._repr_mimebundle_()
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(PNG_SIGNATURE) and png == monitor.static()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "<table" in bundle["text/html"] and "p0" in bundle["text/html"] and 'alt="channels of clicks"' in bundle["text/html"]
    data = ChannelsData.from_lake(lake, "clicks")
    assert channels_html(data) == monitor.table.value
    figure = plot_channels(data)
    assert [a.get_gid() for a in figure.axes[0].patches].count("rows-inserted") == 1
    labels = [t.get_text() for t in figure.axes[0].texts if t.get_gid() == "channel-label"]
    assert labels == ["token 1 · lag 0s"]


def test_a_schemas_channels_and_the_error_state(lake, client) -> None:
    client.open_channel("p0", table="clicks", max_client_lag=LONG_LAG)
    client.open_channel("o0", table="orders", max_client_lag=LONG_LAG)
    monitor = channels(lake)  # the current schema
    assert monitor.shown().column("channel") == ["p0", "o0"]  # by table: CLICKS, then ORDERS
    assert monitor.shown().header.startswith("LAKE.PUBLIC · 2 channels")

    table_monitor = ChannelMonitor(lake, "orders")
    client.close()
    lake.sql("DROP TABLE orders")
    assert table_monitor.refresh() is False
    shown = table_monitor.shown()
    assert shown.rows == () and shown.images == 0 and table_monitor.static() == b""
    assert shown.status.startswith("orders is gone") and "UNDROP TABLE" in shown.status
    lake.sql("UNDROP TABLE orders")
    assert table_monitor.refresh() is True
    assert table_monitor.shown().column("channel") == ["o0"]

    with pytest.raises(WidgetError, match=r"^Cannot show the channels of nothing_here: ") as raised:
        channels(lake, "nothing_here")
    assert raised.value.__cause__ is None and "\n" not in str(raised.value)
    with pytest.raises(WidgetError, match="above 0"):
        channels(lake, "clicks", auto_refresh=0)


def test_auto_refresh_runs_on_the_event_loop_until_turned_off(lake, client, clock) -> None:
    channel, _ = client.open_channel("p0", table="clicks", max_client_lag=LONG_LAG)

    async def watch() -> tuple[list[str], int, ChannelMonitor]:
        monitor = channels(lake, "clicks", auto_refresh=0.05)
        assert monitor.auto_refresh_toggle.value and monitor.auto_refreshing
        assert monitor.shown().column("offset token") == ["–"]
        channel.append_rows([{"id": 1}], offset_token="1")
        channel.flush()
        clock.advance(seconds=3)
        for _ in range(400):  # the timer refreshes without a click
            await asyncio.sleep(0.05)
            if monitor.refreshes >= 2:
                break
        seen = monitor.shown().column("offset token")
        monitor.auto_refresh_toggle.value = False
        stopped_at = monitor.refreshes
        await asyncio.sleep(0.3)
        return seen, stopped_at, monitor

    seen, stopped_at, monitor = asyncio.run(watch())
    assert seen == ["1"]
    assert stopped_at >= 2 and monitor.refreshes == stopped_at and not monitor.auto_refreshing
    assert monitor.shown().column("last commit") == ["3s ago"]


def test_auto_refresh_without_an_event_loop_says_why_it_is_off(lake, client) -> None:
    monitor = channels(lake, "clicks")
    monitor.auto_refresh_toggle.value = True
    assert monitor.auto_refresh_toggle.value is False and not monitor.auto_refreshing
    assert "needs a running event loop" in monitor.shown().status
    assert monitor.shown().column("channel") == []  # what it showed stays on show
