"""Time buckets are 64-bit: series and rollups work for times after 2038-01-19."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.metrics import rollups
from app.metrics.models import SampleRollup
from app.metrics.series import get_series
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.hosts.factories import insert_samples, make_host, sample_values

AFTER_2038 = datetime(2040, 3, 1, 12, 0, tzinfo=UTC)


def test_series_and_rollups_after_2038(db_session: Session) -> None:
    host = make_host()
    start = AFTER_2038 - timedelta(minutes=5)
    insert_samples(db_session, [
        sample_values(host.id, seq, start + timedelta(seconds=10 * seq), active=seq)
        for seq in range(30)
    ])  # fmt: skip
    series = get_series(
        session=db_session,
        host_id=host.id,
        start=AFTER_2038 - timedelta(minutes=15),
        end=AFTER_2038,
        now=AFTER_2038,
    )
    assert len(series.points) == 30
    assert series.points[0].ts == start
    assert series.points[-1].active == 29

    rollups.rollup_range(session=db_session, host_id=host.id, start=start, end=AFTER_2038)
    buckets = db_session.scalars(
        select(SampleRollup.bucket_start)
        .where(SampleRollup.resolution == "1m")
        .order_by(SampleRollup.bucket_start)
    ).all()
    assert buckets[0] == start
    assert len(buckets) == 5
