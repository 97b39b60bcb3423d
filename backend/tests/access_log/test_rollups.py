"""Rollups of access-log figures: counters summed, sketches merged within alpha, retention."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from app.access_log.aggregate import ROLLUP_LEVEL
from app.access_log.models import (
    AccessLogRecent,
    LogStats,
    LogStatsRollup,
    LogUpstreamRollup,
    LogUpstreamStats,
)
from app.access_log.packed import pack_protocol
from app.access_log.rollups import rollup_logs
from app.core.db import SessionLocal, utcnow
from app.metrics import rollups
from app.metrics.settings import RetentionSettings
from nginx_fleet_analyzer.latency_sketch import Sketch, level_alpha
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from tests.access_log.factories import insert_log_rows, latencies, log_row, sketch_json
from tests.hosts.factories import make_host

QUANTILES = (0.5, 0.9, 0.95, 0.99)
ROLLUP_ALPHA = level_alpha(ROLLUP_LEVEL)


def exact(values: list[float], q: float) -> float:
    """The nearest-rank quantile: the ceil(q·n)-th smallest value."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def assert_within_accuracy(sketch_data: dict[str, object] | None, values: list[float]) -> None:
    """The stored sketch has the rollups' bins, and every tested quantile of it is within
    their accuracy of the exact one."""
    sketch = Sketch.from_json(sketch_data)
    assert sketch.count == len(values)
    assert sketch.level == ROLLUP_LEVEL
    for q in QUANTILES:
        estimate, truth = sketch.quantile(q), exact(values, q)
        assert estimate is not None
        assert abs(estimate - truth) <= ROLLUP_ALPHA * truth, (q, estimate, truth)


def rollup_rows(session: Session, resolution: str) -> list[LogStatsRollup]:
    """Site rollups of one resolution by bucket and site."""
    session.expire_all()
    return list(
        session.scalars(
            select(LogStatsRollup)
            .where(LogStatsRollup.resolution == resolution)
            .order_by(LogStatsRollup.bucket_start, LogStatsRollup.site)
        )
    )


def closed_hour() -> datetime:
    """The start of an hour that has closed and whose raw rows are all still kept (3 hours)."""
    return (utcnow() - timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)


def test_merged_rollups_give_the_quantiles_of_all_their_values_within_their_accuracy(
    db_session: Session,
) -> None:
    host = make_host()
    # 20 minutes of samples 10 s apart across an hour boundary, two sites of different speeds.
    start = closed_hour() - timedelta(minutes=10)
    values: dict[tuple[datetime, str], list[float]] = defaultdict(list)
    hours: dict[tuple[datetime, str], list[float]] = defaultdict(list)
    rows = []
    for seq in range(120):
        ts = start + timedelta(seconds=10 * seq)
        for index, name in enumerate(("api.example.com", "static.example.com")):
            times = latencies(30 + seq % 7, seed=seq * 2 + index, median=0.2 / (1 + 9 * index))
            rows.append(log_row(host.id, ts, seq, name, times=times, upstream_times=times[:5]))
            minute = ts.replace(second=0)
            values[(minute, name)] += times
            hours[(minute.replace(minute=0), name)] += times
    insert_log_rows(rows)
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=start, end=start + timedelta(minutes=20)
    )
    minutes = rollup_rows(db_session, "1m")
    assert len(minutes) == 40
    for row in minutes:
        expected = values[(row.bucket_start, row.site)]
        assert row.requests == len(expected)
        assert_within_accuracy(row.request_time, expected)
    hour_rows = rollup_rows(db_session, "1h")
    first_hour, second_hour = start.hour, closed_hour().hour
    assert [(row.bucket_start.hour, row.site) for row in hour_rows] == [
        (first_hour, "api.example.com"),
        (first_hour, "static.example.com"),
        (second_hour, "api.example.com"),
        (second_hour, "static.example.com"),
    ]
    for row in hour_rows:
        expected = hours[(row.bucket_start, row.site)]
        assert row.requests == len(expected)
        assert_within_accuracy(row.request_time, expected)


def test_counters_are_summed_and_absent_stays_absent(db_session: Session) -> None:
    host = make_host()
    minute = closed_hour()
    insert_log_rows([
        log_row(host.id, minute, 1, "a", requests=10, status_5xx=None, cache_hit=4, cache_miss=1,
                bytes_sent=1000),
        log_row(host.id, minute + timedelta(seconds=10), 2, "a", requests=20, status_5xx=3,
                cache_hit=6, cache_miss=None, bytes_sent=2**40),
        log_row(host.id, minute + timedelta(seconds=20), 3, "b", requests=5),
    ])  # fmt: skip
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=minute, end=minute + timedelta(minutes=1)
    )
    first, second = rollup_rows(db_session, "1m")
    assert (first.site, first.requests, first.status_5xx) == ("a", 30, 3)
    assert (first.cache_hit, first.cache_miss, first.bytes_sent) == (10, 1, 1000 + 2**40)
    # No row of site b recorded a status or a cache status: absent, not zero.
    assert (second.site, second.requests, second.status_5xx, second.cache_hit) == (
        "b",
        5,
        None,
        None,
    )
    assert second.request_time is None


def test_rolling_up_again_replaces_buckets_and_picks_up_late_rows(db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    minute = now.replace(second=0, microsecond=0) - timedelta(minutes=1)
    insert_log_rows([log_row(host.id, minute, 1, times=[0.1, 0.2])])
    rollups.rollup_recent(session=db_session, now=now)
    rollups.rollup_recent(session=db_session, now=now)
    [row] = rollup_rows(db_session, "1m")
    assert row.requests == 2
    # A sample of the same minute arrives late: the bucket is rebuilt, not added to.
    insert_log_rows([log_row(host.id, minute + timedelta(seconds=30), 2, times=[0.3])])
    rollups.rollup_recent(session=db_session, now=now)
    [row] = rollup_rows(db_session, "1m")
    assert row.requests == 3
    assert row.request_time == sketch_json([0.1, 0.2, 0.3], ROLLUP_LEVEL)


def test_the_periodic_run_rebuilds_closed_hours_and_every_10_minutes_the_current_one(
    db_session: Session,
) -> None:
    host = make_host()
    nine = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    insert_log_rows(
        [log_row(host.id, nine + timedelta(minutes=m), m, requests=1) for m in range(70)]
    )

    def hour_requests() -> dict[int, int]:
        return {row.bucket_start.hour: row.requests for row in rollup_rows(db_session, "1h")}

    for minute in range(1, 10):
        rollups.rollup_recent(session=db_session, now=nine + timedelta(minutes=minute, seconds=5))
    # The current hour is provisional: its row waits for the tenth minute.
    assert hour_requests() == {}
    rollups.rollup_recent(session=db_session, now=nine + timedelta(minutes=10, seconds=5))
    assert hour_requests() == {9: 11}  # minutes 9:00 to 9:10
    for minute in range(11, 62):
        rollups.rollup_recent(session=db_session, now=nine + timedelta(minutes=minute, seconds=5))
    # Once closed, the hour is rebuilt whole, whatever the minute (10:00 began the next one).
    assert hour_requests() == {9: 60, 10: 1}


def test_upstreams_and_top_paths_are_rolled_up(db_session: Session) -> None:
    host = make_host()
    minute = closed_hour()
    upstream = {"host_id": host.id, "site": "a", "upstream": "10.0.0.7:80"}
    insert_log_rows(
        [
            log_row(host.id, minute, 1, "a", requests=5, top_paths=[["/x", 3, 0.3, 0.2]]),
            log_row(host.id, minute + timedelta(seconds=10), 2, "a", requests=5,
                    top_paths=[["/x", 1, 0.5, 0.5], ["/y", 4, 0.4, 0.1]]),
        ],
        [
            {**upstream, "ts": minute, "seq": 1, "attempts": 3, "errors": 1,
             "response_time": sketch_json([0.1, 0.2, 0.3])},
            {**upstream, "ts": minute + timedelta(seconds=10), "seq": 2, "attempts": 2,
             "errors": 0, "response_time": sketch_json([0.4, 0.5])},
        ],
    )  # fmt: skip
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=minute, end=minute + timedelta(minutes=1)
    )
    [row] = rollup_rows(db_session, "1m")
    assert row.top_paths == [["/x", 4, 0.8, 0.5], ["/y", 4, 0.4, 0.1]]
    upstreams = db_session.scalars(select(LogUpstreamRollup).order_by("resolution")).all()
    assert [(u.resolution, u.attempts, u.errors) for u in upstreams] == [("1h", 5, 1), ("1m", 5, 1)]
    assert upstreams[1].response_time == sketch_json([0.1, 0.2, 0.3, 0.4, 0.5], ROLLUP_LEVEL)


def test_recent_figures_cover_the_last_15_minutes_of_every_site(db_session: Session) -> None:
    host, quiet = make_host(), make_host(hostname="quiet")
    now = utcnow()
    old = now - timedelta(minutes=40)
    insert_log_rows([
        # Outside the window: its misses must not count.
        log_row(host.id, old, 1, "a", times=[9.0] * 50, cache_miss=50, status_5xx=50,
                status_2xx=0),
        log_row(host.id, now - timedelta(minutes=3), 2, "a", times=[0.1] * 19 + [2.0],
                cache_hit=6, cache_stale=1, cache_miss=2, cache_bypass=1, status_2xx=18,
                status_5xx=2),
        log_row(host.id, now - timedelta(minutes=2), 3, "b", times=[0.1] * 20, status_2xx=20,
                status_5xx=0),
    ])  # fmt: skip
    rollups.rollup_range(session=db_session, host_id=host.id, start=old, end=now)
    rollups.rollup_recent(session=db_session, now=now)
    db_session.expire_all()
    recent = db_session.get(AccessLogRecent, host.id)
    assert recent is not None
    assert recent.requests == 40
    assert recent.cache_hit_ratio == pytest.approx(0.7)
    assert recent.share_5xx == pytest.approx(0.05)
    # The 38th of 40 values (nearest rank of 0.95) is one of the 0.1 s ones.
    assert recent.request_time_p95_s == pytest.approx(0.1, rel=ROLLUP_ALPHA)
    assert db_session.get(AccessLogRecent, quiet.id) is None


def test_retention_deletes_log_figures_by_their_own_retention(db_session: Session) -> None:
    """Raw rows go after 3 hours, minutes after 2 days, hours after 35 (the samples keep
    theirs 2, 30 and 365 days)."""
    host = make_host()
    now = utcnow()
    insert_log_rows(
        [
            log_row(host.id, now - timedelta(hours=7), 1, times=[0.1]),
            log_row(host.id, now - timedelta(hours=1), 2, times=[0.1]),
        ],
        [
            {"host_id": host.id, "ts": now - timedelta(hours=7), "seq": 1, "site": "a",
             "upstream": "u", "attempts": 1, "errors": 0, "response_time": None},
        ],
    )  # fmt: skip
    for resolution, age in [("1m", 3), ("1m", 1), ("1h", 40), ("1h", 20)]:
        db_session.add(
            LogStatsRollup(
                host_id=host.id,
                resolution=resolution,
                bucket_start=(now - timedelta(days=age)).replace(second=0, microsecond=0),
                site="a",
                requests=1,
            )
        )
        db_session.add(
            LogUpstreamRollup(
                host_id=host.id,
                resolution=resolution,
                bucket_start=(now - timedelta(days=age)).replace(second=0, microsecond=0),
                site="a",
                upstream="u",
                attempts=1,
                errors=0,
            )
        )
    db_session.commit()
    removed = rollups.apply_retention(session=db_session, now=now, retention=RetentionSettings())
    assert {
        name: expired.rows_deleted for name, expired in removed.items() if name.startswith("log")
    } == {
        "log_raw": 1,
        "log_upstream_raw": 1,
        "log_1m": 1,
        "log_upstream_1m": 1,
        "log_1h": 1,
        "log_upstream_1h": 1,
    }
    assert db_session.scalars(select(LogStats.seq)).all() == [2]
    assert db_session.scalar(select(func.count()).select_from(LogUpstreamStats)) == 0
    assert db_session.scalar(select(func.count()).select_from(LogStatsRollup)) == 2


def test_a_late_rollup_leaves_the_current_hour_to_the_periodic_run(db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    hour = now.replace(minute=0, second=0, microsecond=0)
    insert_log_rows([
        log_row(host.id, hour - timedelta(minutes=30), 1, requests=7),
        log_row(host.id, hour, 2, requests=3),
    ])  # fmt: skip
    # A host whose clock lags sends every sample "late": each push must stay cheap.
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=hour - timedelta(minutes=30), end=now
    )
    assert sum(row.requests for row in rollup_rows(db_session, "1m")) == 10
    assert [(row.bucket_start, row.requests) for row in rollup_rows(db_session, "1h")] == [
        (hour - timedelta(hours=1), 7)
    ]


def test_minutes_whose_raw_rows_expired_are_not_rebuilt_from_what_is_left(
    db_session: Session,
) -> None:
    """Raw rows are kept 3 hours: a minute older than that keeps its rollup when a late row
    of it turns up, instead of being rebuilt from that row alone."""
    host = make_host()
    now = utcnow()
    minute = now.replace(second=0, microsecond=0) - timedelta(hours=4)
    insert_log_rows(
        [log_row(host.id, minute + timedelta(seconds=s), s, times=[0.2]) for s in (1, 2)]
    )
    # Rolled up back then, when its rows were new.
    end = minute + timedelta(minutes=1)
    rollup_logs(db_session, start=minute, end=end, now=end, host_id=host.id)
    db_session.commit()
    with SessionLocal() as session:
        session.execute(delete(LogStats))
        session.commit()
    insert_log_rows([log_row(host.id, minute + timedelta(seconds=30), 3, times=[0.3])])
    rollups.rollup_range(session=db_session, host_id=host.id, start=minute, end=minute)
    [row] = rollup_rows(db_session, "1m")
    assert row.requests == 2
    assert row.request_time == sketch_json([0.2, 0.2], ROLLUP_LEVEL)


def test_an_hour_of_minutes_stored_at_1_and_at_2_percent_holds_every_value_at_2(
    db_session: Session,
) -> None:
    """Minute rollups stored before ROLLUP_LEVEL keep their protocol bins (deflated): the hour
    built from them and newer minutes brings them to the rollups' level before adding."""
    host = make_host()
    hour = closed_hour()
    before, after = latencies(300, seed=1, median=0.02), latencies(200, seed=2, median=0.8)
    stored_before = {"host_id": host.id, "resolution": "1m", "site": "a"}
    db_session.execute(
        insert(LogStatsRollup),
        [{**stored_before, "bucket_start": hour + timedelta(minutes=5), "requests": 300,
          "request_time": pack_protocol(sketch_json(before), deflate=True)}],
    )  # fmt: skip
    db_session.execute(
        insert(LogUpstreamRollup),
        [{**stored_before, "bucket_start": hour + timedelta(minutes=5), "upstream": "u",
          "attempts": 300, "errors": 0,
          "response_time": pack_protocol(sketch_json(before), deflate=True)}],
    )  # fmt: skip
    db_session.commit()
    minute = hour + timedelta(minutes=10)
    insert_log_rows(
        [log_row(host.id, minute, 1, "a", times=after)],
        [{"host_id": host.id, "ts": minute, "seq": 1, "site": "a", "upstream": "u",
          "attempts": 200, "errors": 0, "response_time": sketch_json(after)}],
    )  # fmt: skip
    rollups.rollup_range(session=db_session, host_id=host.id, start=minute, end=minute)
    [row] = rollup_rows(db_session, "1h")
    assert row.requests == 500
    assert row.request_time == sketch_json(before + after, ROLLUP_LEVEL)
    assert_within_accuracy(row.request_time, before + after)
    upstream = db_session.scalars(
        select(LogUpstreamRollup).where(LogUpstreamRollup.resolution == "1h")
    ).one()
    assert upstream.response_time == sketch_json(before + after, ROLLUP_LEVEL)
