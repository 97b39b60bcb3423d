"""The rules' metrics window reads the access logs: C-hit-ratio and C-microcache come alive."""

from __future__ import annotations

from datetime import timedelta

import pytest
from app.access_log.models import LogStats
from app.access_log.rollups import rollup_logs
from app.access_log.settings import LogRetentionSettings
from app.access_log.window import counters_by_host
from app.configs.analyzer import analyze_snapshot
from app.configs.window import MIN_CACHED_REQUESTS, metrics_window
from app.core.db import SessionLocal, utcnow
from app.findings.models import Finding
from pydantic import ValidationError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from tests.access_log.factories import insert_log_rows, log_row
from tests.configs.factories import add_counter_samples, host_with_config
from tests.hosts.factories import make_host

CACHED_AND_LOGGED = """# configuration file /etc/nginx/nginx.conf:
events {}
http {
    log_format cache '$remote_addr [$time_local] "$request" $status $body_bytes_sent '
                     'ucs=$upstream_cache_status rt=$request_time urt=$upstream_response_time';
    access_log /var/log/nginx/access.log cache;
    proxy_cache_path /var/cache/nginx keys_zone=shop:10m max_size=100m;
    server {
        listen 80;
        server_name shop.example.com;
        location / {
            proxy_pass http://127.0.0.1:8080;
            proxy_cache shop;
        }
    }
}
"""
APP_WITHOUT_CACHE = """# configuration file /etc/nginx/nginx.conf:
events {}
http {
    server {
        listen 80;
        server_name app.example.com;
        location / {
            proxy_pass http://127.0.0.1:8080;
        }
    }
}
"""


def with_samples(host_id: int) -> None:
    """A few stub_status samples in the last hour: without any there is no window."""
    add_counter_samples(host_id, [(100, 100), (160, 160), (220, 220)])


def test_the_window_reads_the_hit_ratio_of_the_last_hour(db_session: Session) -> None:
    host = make_host()
    with_samples(host.id)
    now = utcnow()
    insert_log_rows([
        # Before the hour: its hits must not count.
        log_row(host.id, now - timedelta(minutes=70), 1, "a", requests=500, cache_hit=500),
        log_row(host.id, now - timedelta(minutes=30), 2, "a", requests=100, cache_hit=20,
                cache_stale=5, cache_miss=70, cache_bypass=5, get_2xx=90),
        log_row(host.id, now - timedelta(minutes=20), 3, "b", requests=60, get_2xx=None),
    ])  # fmt: skip
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    assert window.cache_hit_ratio == pytest.approx(0.25)
    # Only the rows that recorded the request method count in the denominator.
    assert window.status_2xx_get_ratio == pytest.approx(0.9)


def test_too_few_cached_requests_make_no_ratio(db_session: Session) -> None:
    host = make_host()
    with_samples(host.id)
    now = utcnow()
    insert_log_rows([
        log_row(host.id, now - timedelta(minutes=5), 1, requests=99,
                cache_miss=MIN_CACHED_REQUESTS - 1, get_2xx=99),
    ])  # fmt: skip
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    assert (window.cache_hit_ratio, window.status_2xx_get_ratio) == (None, None)


def test_without_access_log_figures_the_ratios_stay_unmeasured(db_session: Session) -> None:
    host = make_host()
    with_samples(host.id)
    window = metrics_window(session=db_session, host_id=host.id, now=utcnow())
    assert window is not None
    assert (window.cache_hit_ratio, window.status_2xx_get_ratio) == (None, None)


def findings_of(session: Session, host_id: int, rule: str) -> list[Finding]:
    """The host's findings of one rule."""
    session.expire_all()
    return list(
        session.scalars(select(Finding).where(Finding.host_id == host_id, Finding.rule == rule))
    )


@pytest.mark.parametrize(("hits", "expected"), [(30, 1), (80, 0)])
def test_a_low_hit_ratio_over_the_hour_raises_c_hit_ratio(
    db_session: Session, hits: int, expected: int
) -> None:
    host, snapshot_id = host_with_config(CACHED_AND_LOGGED)
    with_samples(host.id)
    now = utcnow()
    insert_log_rows([
        log_row(host.id, now - timedelta(minutes=m), m, requests=100, cache_hit=hits,
                cache_miss=100 - hits)
        for m in (10, 20, 30)
    ])  # fmt: skip
    analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=now)
    found = findings_of(db_session, host.id, "C-hit-ratio")
    assert len(found) == expected
    if found:
        assert found[0].evidence["cache_hit_ratio"] == pytest.approx(0.3)
    # The log format records the cache status, so the "not observable" finding stays away.
    assert findings_of(db_session, host.id, "C-observable") == []


def test_mostly_get_2xx_before_an_uncached_app_raises_c_microcache(db_session: Session) -> None:
    host, snapshot_id = host_with_config(APP_WITHOUT_CACHE)
    with_samples(host.id)
    now = utcnow()
    insert_log_rows([log_row(host.id, now - timedelta(minutes=5), 1, requests=200, get_2xx=190)])
    analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=now)
    [finding] = findings_of(db_session, host.id, "C-microcache")
    assert finding.evidence["status_2xx_get_ratio"] == pytest.approx(0.95)


def test_the_window_carries_the_p95_request_time_and_5xx_share_as_evidence(
    db_session: Session,
) -> None:
    host = make_host()
    with_samples(host.id)
    now = utcnow()
    times = [0.010] * 150 + [0.200] * 40 + [2.500] * 10
    insert_log_rows([
        log_row(host.id, now - timedelta(minutes=30), 1, "a", times=times[:100],
                status_2xx=95, status_5xx=5),
        log_row(host.id, now - timedelta(minutes=10), 2, "a", times=times[100:],
                status_2xx=90, status_4xx=5, status_5xx=5),
    ])  # fmt: skip
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    # Nearest rank: the 190th of 200 sorted times is the last of the 0.200 s ones.
    assert window.request_time_p95_s == pytest.approx(0.200, rel=0.01)
    assert window.share_5xx == pytest.approx(10 / 200)
    assert window.traffic_evidence()["share_5xx"] == pytest.approx(0.05)


def test_a_quiet_host_has_no_p95_or_5xx_share(db_session: Session) -> None:
    host = make_host()
    with_samples(host.id)
    now = utcnow()
    insert_log_rows([
        log_row(host.id, now - timedelta(minutes=5), 1, "a", times=[3.0] * 20, status_5xx=20),
    ])  # fmt: skip
    window = metrics_window(session=db_session, host_id=host.id, now=now)
    assert window is not None
    assert window.request_time_p95_s is None and window.share_5xx is None


def test_alert_windows_past_the_raw_rows_read_minute_rollups_once(db_session: Session) -> None:
    """A day's window: minute rollups up to the last few minutes, raw rows after them; a
    window within the raw retention reads raw rows only."""
    host, other = make_host(), make_host()
    now = utcnow()
    old = now.replace(second=0, microsecond=0) - timedelta(hours=10)
    insert_log_rows(
        [
            log_row(host.id, old + timedelta(seconds=5), 1, status_5xx=4, status_2xx=6,
                    requests=10),
            log_row(other.id, old + timedelta(seconds=5), 1, status_2xx=3, requests=3),
        ]
    )  # fmt: skip
    # Rolled up back then, when the rows were new.
    end = old + timedelta(minutes=1)
    for host_id in (host.id, other.id):
        rollup_logs(db_session, start=old, end=end, now=end, host_id=host_id)
    db_session.commit()
    # Their raw rows expired; rows of the last minute are not rolled up yet.
    with SessionLocal() as session:
        session.execute(delete(LogStats))
        session.commit()
    insert_log_rows(
        [log_row(host.id, now - timedelta(seconds=30), 2, status_5xx=1, status_2xx=1, requests=2)]
    )
    names = ("requests", "status_2xx", "status_5xx")
    day = counters_by_host(
        session=db_session, names=names, start=now - timedelta(days=1), end=now, now=now
    )
    assert day == {
        host.id: {"requests": 12, "status_2xx": 7, "status_5xx": 5},
        other.id: {"requests": 3, "status_2xx": 3, "status_5xx": None},
    }
    hour = counters_by_host(
        session=db_session, names=names, start=now - timedelta(hours=1), end=now, now=now
    )
    assert hour == {host.id: {"requests": 2, "status_2xx": 1, "status_5xx": 1}}


def test_log_retention_is_set_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGINX_FLEET_LOG_RETENTION_RAW_HOURS", "12")
    monkeypatch.setenv("NGINX_FLEET_LOG_RETENTION_1M_DAYS", "7")
    settings = LogRetentionSettings()
    assert (settings.raw, settings.minute, settings.hour) == (
        timedelta(hours=12),
        timedelta(days=7),
        timedelta(days=35),
    )
    # Fewer than the rules' hour of raw rows, or a day of minutes, would starve them.
    monkeypatch.setenv("NGINX_FLEET_LOG_RETENTION_RAW_HOURS", "0.5")
    with pytest.raises(ValidationError, match="RAW_HOURS"):
        LogRetentionSettings()
