"""Embedded mode: the SQLite variants of buckets and rollup upserts give the same answers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from app.core.db import build_engine
from app.hosts.models import Host
from app.metrics import rollups
from app.metrics.models import Sample, SampleRollup
from app.metrics.series import get_series
from app.models import Base
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from tests.hosts.factories import sample_values


@pytest.fixture
def sqlite_session(tmp_path: Path) -> Iterator[Session]:
    """A session on a fresh SQLite file holding one host."""
    engine = build_engine(f"sqlite:///{tmp_path / 'embedded.db'}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Host(id=1, agent_id="a", hostname="h", labels={}, token_hash="0" * 64))
        session.commit()
        yield session
    engine.dispose()


def test_series_and_rollups_on_sqlite(sqlite_session: Session) -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    start = now - timedelta(minutes=3)
    rows = [
        sample_values(1, seq, start + timedelta(seconds=10 * seq), cpu_pct=float(seq), active=seq)
        for seq in range(12)
    ]
    sqlite_session.execute(insert(Sample), rows)
    sqlite_session.commit()
    series = get_series(
        session=sqlite_session, host_id=1, start=now - timedelta(hours=6), end=now, now=now
    )
    assert series.step_s == 60
    assert [point.ts for point in series.points] == [start, start + timedelta(minutes=1)]
    assert series.points[0].cpu_pct == pytest.approx(2.5)
    assert series.points[1].active == 11
    rollups.rollup_recent(session=sqlite_session, now=now)
    rollups.rollup_recent(session=sqlite_session, now=now)
    minutes = sqlite_session.scalars(
        select(SampleRollup).where(SampleRollup.resolution == "1m").order_by("bucket_start")
    ).all()
    assert [(row.bucket_start, row.sample_count) for row in minutes] == [
        (start, 6),
        (start + timedelta(minutes=1), 6),
    ]
