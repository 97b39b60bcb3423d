"""The metrics window: counter growth survives restarts; nginx CPU is nginx's, sustained."""

from __future__ import annotations

from datetime import timedelta

import pytest
from app.configs.window import (
    counter_growth,
    metrics_window,
    nginx_cpu_shares,
    paired_growth,
    percentile,
)
from app.core.db import utcnow
from sqlalchemy.orm import Session

from tests.hosts.factories import insert_samples, make_host, sample_values


def test_counter_growth_sums_increases() -> None:
    assert counter_growth([10, 15, 15, 40]) == 30.0


def test_counter_growth_after_a_restart_counts_from_zero() -> None:
    # 100 -> 120 (+20), restart, 5 (+5), 9 (+4).
    assert counter_growth([100, 120, 5, 9]) == 29.0


def test_counter_growth_needs_two_readings() -> None:
    assert counter_growth([None, 7, None]) is None


def test_paired_growth_restarts_both_counters_together() -> None:
    # Only accepts goes down, handled happens to be higher: still one restart of both.
    accepts, handled = paired_growth([(100, 90), (110, 95), (8, 100), (12, 104)])
    assert accepts == 10 + 8 + 4
    assert handled == 5 + 100 + 4


def test_percentile_needs_enough_samples_to_be_sustained() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.95) == 95.0
    # One spike among 19 quiet samples is no p95.
    assert percentile([5.0] * 18 + [99.0], 0.95) is None
    assert percentile([5.0] * 19 + [99.0], 0.95) == 5.0


def test_nginx_cpu_shares_prefer_workers_and_divide_by_the_cores() -> None:
    readings = [(4, 80.0, 90.0), (None, 40.0, 50.0)]
    # 80% of one core on 4 cores is 20% of the host; the second sample uses the facts' 2 cores.
    assert nginx_cpu_shares(readings, 2) == ([20.0, 20.0], "workers")
    older: list[tuple[int | None, float | None, float | None]] = [
        (None, None, 60.0),
        (None, None, None),
    ]
    assert nginx_cpu_shares(older, 4) == ([15.0], "master+workers")
    # Without any core count the share cannot be known.
    assert nginx_cpu_shares(older, None) == ([], None)


def test_metrics_window_reports_nginx_cpu_not_the_hosts(db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    busy_host_quiet_nginx = [
        sample_values(
            host.id,
            seq,
            now - timedelta(seconds=10 * (30 - seq)),
            cpu_pct=95.0,
            cpu_cores=2,
            nginx_cpu_pct=11.0,
            worker_cpu_pct=10.0 + (seq == 30) * 180,
        )
        for seq in range(1, 31)
    ]
    insert_samples(db_session, busy_host_quiet_nginx)
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    assert window.cpu_pct == 95.0
    assert window.nginx_cpu_source == "workers"
    # 10% of one core on 2 cores = 5%; the one 190% spike moves the mean, not the p95.
    assert window.nginx_cpu_pct_p95 == 5.0
    assert window.nginx_cpu_pct_mean == pytest.approx((29 * 5.0 + 95.0) / 30)


def test_metrics_window_without_process_cpu_says_so(db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    insert_samples(db_session, [sample_values(host.id, 1, now, cpu_pct=80.0)])
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    assert (window.nginx_cpu_pct_mean, window.nginx_cpu_source) == (None, None)


def test_metrics_window_active_connections_are_sustained_not_one_spike(
    db_session: Session,
) -> None:
    host = make_host()
    now = utcnow()
    # 40 readings of 100 active connections and one burst of 5,000.
    rows = [
        sample_values(
            host.id,
            seq,
            now - timedelta(seconds=10 * (40 - seq)),
            active=5000 if seq == 20 else 100,
            waiting=50,
        )
        for seq in range(1, 41)
    ]
    insert_samples(db_session, rows)
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    assert window.peak_active == 5000.0
    assert window.active_p95 == 100.0
    assert window.sustained_active() == (100.0, "p95")


def test_metrics_window_without_enough_samples_for_a_p95_uses_the_mean(
    db_session: Session,
) -> None:
    host = make_host()
    now = utcnow()
    rows = [
        sample_values(host.id, seq, now - timedelta(seconds=10 * (5 - seq)), active=active)
        for seq, active in enumerate((100, 100, 100, 100, 600), start=1)
    ]
    insert_samples(db_session, rows)
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    assert window.active_p95 is None
    assert window.sustained_active() == (200.0, "mean")
