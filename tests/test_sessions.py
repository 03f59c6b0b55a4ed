"""Session leases in the catalog: how one session tells whether another still runs, on this machine or another."""

from __future__ import annotations

import datetime as dt
import gc
import os
from pathlib import Path

import pytest
from lake_helpers import rows

import lakeclone
from lakeclone.catalog import sessions
from lakeclone.catalog.sessions import LEASE_SECONDS, Lease, ProcessIdentity
from lakeclone.catalog.store import Catalog
from lakeclone.errors import LockTimeoutError

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
ELSEWHERE = ProcessIdentity("another-machine/boot", 4242, "17")


def test_a_lease_from_another_machine_is_alive_until_it_expires_by_the_asking_clock(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite")
    catalog.sessions.begin(Lease("remote", ELSEWHERE, NOW, NOW + dt.timedelta(seconds=LEASE_SECONDS)))

    assert catalog.sessions.is_alive("remote", NOW + dt.timedelta(seconds=LEASE_SECONDS - 1))
    assert not catalog.sessions.is_alive("remote", NOW + dt.timedelta(seconds=LEASE_SECONDS + 1))
    assert catalog.sessions.dead(NOW + dt.timedelta(seconds=LEASE_SECONDS + 1)) == ["remote"]
    assert not catalog.sessions.is_alive("never-began", NOW)


def test_a_lease_on_this_machine_lives_as_long_as_its_process_whatever_its_expiry(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite")
    parent = ProcessIdentity(sessions.this_process().host, os.getppid(), sessions._started(os.getppid()) or "")
    catalog.sessions.begin(Lease("parent", parent, NOW, NOW))  # expired at once, by its clock
    # A pid reused by a later process is not the process that took the lease.
    reused = ProcessIdentity(parent.host, os.getppid(), "1")
    catalog.sessions.begin(Lease("earlier-process", reused, NOW, NOW + dt.timedelta(days=1)))

    assert catalog.sessions.is_alive("parent", NOW + dt.timedelta(days=1))
    assert not catalog.sessions.is_alive("earlier-process", NOW)


def test_a_session_on_another_machine_that_stops_renewing_has_its_transaction_rolled_back(
    tmp_path: Path, spark, clock: lakeclone.ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions._RENEWER, "renew_all", lambda: None)  # the other machine's process went quiet
    warehouse = tmp_path / "warehouse"
    remote = lakeclone.connect(warehouse, spark=spark, clock=clock)
    remote.sql("CREATE TABLE t (id INT)")
    remote.sql("BEGIN")
    remote.sql("INSERT INTO t VALUES (1)")
    # Its lease as a session on another machine records it.
    catalog = remote._executor.catalog
    session_id = remote._executor.session.id
    catalog.sessions.end(session_id)
    catalog.sessions.begin(Lease(session_id, ELSEWHERE, clock(), clock() + dt.timedelta(seconds=LEASE_SECONDS)))
    local = lakeclone.connect(warehouse, spark=spark, clock=clock)
    local.lock_timeout = 0.3

    with pytest.raises(LockTimeoutError):
        local.sql("INSERT INTO t VALUES (2)")  # its lease holds: the table stays locked

    clock.advance(seconds=LEASE_SECONDS + 1)
    local.sql("INSERT INTO t VALUES (2)")

    assert rows(local, "SELECT id FROM t") == [(2,)]  # the dead session's transaction was rolled back


def test_the_renewer_extends_running_sessions_and_ends_those_python_dropped(
    tmp_path: Path, spark, clock: lakeclone.ManualClock
) -> None:
    kept = lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=clock)
    dropped = lakeclone.connect(tmp_path / "warehouse", spark=spark, clock=clock)
    dropped_id = dropped._executor.session.id
    lakeclone.connect(tmp_path / "other", spark=spark, clock=clock)  # the latest Lake, which the magic would use
    catalog = kept._executor.catalog
    assert catalog.sessions.is_alive(dropped_id, clock())
    del dropped
    gc.collect()
    assert not catalog.sessions.is_alive(dropped_id, clock())  # in its own process, at once

    clock.advance(minutes=10)
    before = clock()  # a ManualClock ticks a millisecond at each reading
    sessions._RENEWER.renew_all()

    lease = catalog.sessions.lease(kept._executor.session.id)
    assert lease is not None and before < lease.expires_at - dt.timedelta(seconds=LEASE_SECONDS) < clock()
    assert catalog.sessions.lease(dropped_id) is None  # and gone for every other process
    kept.close()
    assert catalog.sessions.lease(kept._executor.session.id) is None
