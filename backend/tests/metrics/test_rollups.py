"""Rollups (1m from raw, 1h from 1m) and retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from app.core.db import utcnow
from app.core.partitions import Period, ensure_partitions
from app.metrics import partitioning, rollups
from app.metrics.models import Sample, SampleRollup
from app.metrics.settings import RetentionSettings
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from tests.hosts.factories import insert_samples, make_host, sample_values


def minute_floor(moment: datetime) -> datetime:
    """moment rounded down to the minute."""
    return moment.replace(second=0, microsecond=0)


def rollup_rows(session: Session, resolution: str) -> list[SampleRollup]:
    """Rollups of one resolution by bucket."""
    session.expire_all()
    query = (
        select(SampleRollup)
        .where(SampleRollup.resolution == resolution)
        .order_by(SampleRollup.bucket_start)
    )
    return list(session.scalars(query))


def row_versions(session: Session) -> list[tuple[str, str]]:
    """(resolution, xmin) of every rollup row: xmin changes when a row is rewritten."""
    query = text("SELECT resolution, xmin::text FROM sample_rollups ORDER BY resolution")
    return [(resolution, xmin) for resolution, xmin in session.execute(query)]


def test_recent_rollups_average_and_keep_maxima(db_session: Session) -> None:
    host = make_host()
    # Half past an hour, so the two minutes below fall in one hour whatever the clock says.
    now = utcnow().replace(minute=0, second=0, microsecond=0) - timedelta(minutes=30)
    minute = minute_floor(now) - timedelta(minutes=2)
    insert_samples(db_session, [
        sample_values(host.id, 1, minute, active=2, req_per_s=1.0, drops_per_s=0.0),
        sample_values(host.id, 2, minute + timedelta(seconds=20), active=10, req_per_s=3.0,
                      drops_per_s=5.0),
        sample_values(host.id, 3, minute + timedelta(seconds=40), active=3, req_per_s=2.0),
        sample_values(host.id, 4, minute + timedelta(minutes=1), active=1, req_per_s=8.0),
    ])  # fmt: skip
    rollups.rollup_recent(session=db_session, now=now)
    first, second = rollup_rows(db_session, "1m")
    assert first.bucket_start == minute
    assert first.sample_count == 3
    assert first.active_avg == pytest.approx(5.0)
    assert first.active_max == 10
    assert first.req_per_s_avg == pytest.approx(2.0)
    assert first.drops_per_s_max == 5.0
    assert second.sample_count == 1
    [hour] = [row for row in rollup_rows(db_session, "1h") if row.host_id == host.id]
    assert hour.sample_count == 4
    # Minute averages weighted by their sample counts: (2.0 * 3 + 8.0 * 1) / 4.
    assert hour.req_per_s_avg == pytest.approx(3.5)
    assert hour.active_max == 10


def test_rollups_are_idempotent_and_pick_up_late_samples(db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    minute = minute_floor(now) - timedelta(minutes=3)
    insert_samples(db_session, [sample_values(host.id, 1, minute, cpu_pct=10.0)])
    rollups.rollup_recent(session=db_session, now=now)
    versions = row_versions(db_session)
    rollups.rollup_recent(session=db_session, now=now)
    # Nothing changed: no bucket was rewritten (the same row versions, by transaction id).
    assert row_versions(db_session) == versions
    [row] = rollup_rows(db_session, "1m")
    assert row.sample_count == 1
    insert_samples(
        db_session, [sample_values(host.id, 2, minute + timedelta(seconds=30), cpu_pct=30.0)]
    )
    rollups.rollup_recent(session=db_session, now=now)
    assert row_versions(db_session) != versions
    [row] = rollup_rows(db_session, "1m")
    assert row.sample_count == 2
    assert row.cpu_pct_avg == pytest.approx(20.0)


def test_rollup_range_covers_old_samples(db_session: Session) -> None:
    host = make_host()
    other = make_host(hostname="other")
    old = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    insert_samples(db_session, [
        sample_values(host.id, 1, old, load1=1.0),
        sample_values(host.id, 2, old + timedelta(hours=1, minutes=5), load1=3.0),
        sample_values(other.id, 1, old, load1=9.0),
    ])  # fmt: skip
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=old, end=old + timedelta(hours=2)
    )
    minutes = rollup_rows(db_session, "1m")
    assert [(row.host_id, row.load1_avg) for row in minutes] == [(host.id, 1.0), (host.id, 3.0)]
    assert [row.bucket_start for row in rollup_rows(db_session, "1h")] == [
        old,
        old + timedelta(hours=1),
    ]


def test_retention_deletes_only_expired_rows(db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    insert_samples(db_session, [
        sample_values(host.id, 1, now - timedelta(days=3)),
        sample_values(host.id, 2, now - timedelta(hours=1)),
    ])  # fmt: skip
    for resolution, age in [("1m", 40), ("1m", 10), ("1h", 400), ("1h", 100)]:
        db_session.add(
            SampleRollup(
                host_id=host.id,
                resolution=resolution,
                bucket_start=minute_floor(now - timedelta(days=age)),
                sample_count=1,
            )
        )
    db_session.commit()
    removed = rollups.apply_retention(session=db_session, now=now, retention=RetentionSettings())
    # Older than the partitions made at migration time: they waited in the DEFAULT partitions.
    assert {
        name: expired.rows_deleted
        for name, expired in removed.items()
        if not name.startswith("log")
    } == {"raw": 1, "1m": 1, "1h": 1, "gaps": 0}
    assert db_session.scalars(select(Sample.seq)).all() == [2]
    assert db_session.scalar(select(func.count()).select_from(SampleRollup)) == 2


def test_retention_is_configurable(
    db_session: Session, monkeypatch: pytest.MonkeyPatch, extra_partitions: None
) -> None:
    host = make_host()
    now = utcnow()
    # Within the default 2 days, in a partition that ended over half a day ago.
    old = now - timedelta(days=1, hours=13)
    ensure_partitions(session=db_session, specs=[partitioning.SAMPLES], now=now, since=old)
    insert_samples(db_session, [sample_values(host.id, 1, old)])
    kept = rollups.apply_retention(session=db_session, now=now, retention=RetentionSettings())
    assert kept["raw"].partitions == ()
    monkeypatch.setenv("NGINX_FLEET_RETENTION_RAW_DAYS", "0.5")
    removed = rollups.apply_retention(session=db_session, now=now, retention=RetentionSettings())
    assert f"samples_p{Period.quarter_day.floor(old):%Y%m%d%H}" in removed["raw"].partitions
    assert db_session.scalar(select(func.count()).select_from(Sample)) == 0
