"""Queueing analyses: one queued per host, claims that expire, the periodic re-analysis."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from app.configs import queueing, tasks
from app.configs.models import ConfigSnapshot, PendingAnalysis
from app.core.db import build_engine, utcnow
from app.hosts.models import Host
from app.models import Base
from kombu.exceptions import OperationalError
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tests.configs.factories import host_with_config


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Host ids of the analyze_host messages sent (the broker is not needed to count them)."""
    messages: list[int] = []

    def apply_async(args: tuple[int], **_options: Any) -> None:
        messages.append(args[0])

    monkeypatch.setattr(tasks.analyze_host, "apply_async", apply_async)
    yield messages


def claims(session: Session) -> set[int]:
    """Hosts with an analysis queued."""
    session.expire_all()
    return set(session.scalars(select(PendingAnalysis.host_id)))


def test_a_host_is_queued_once_until_its_task_starts(db_session: Session, sent: list[int]) -> None:
    host, _ = host_with_config()
    assert all(tasks.enqueue_analysis(host_id=host.id) for _ in range(5))
    assert sent == [host.id]
    assert claims(db_session) == {host.id}


def test_a_stale_claim_is_taken_for_a_lost_task(db_session: Session) -> None:
    host, _ = host_with_config()
    now = utcnow()
    assert queueing.claim_hosts(session=db_session, host_ids=[host.id], now=now) == [host.id]
    assert queueing.claim_hosts(session=db_session, host_ids=[host.id], now=now) == []
    later = now + queueing.CLAIM_TIMEOUT + timedelta(seconds=1)
    assert queueing.claim_hosts(session=db_session, host_ids=[host.id], now=later) == [host.id]


def test_a_broker_outage_releases_the_claim_so_the_next_push_retries(
    db_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, _ = host_with_config()

    def broker_down(*_args: Any, **_options: Any) -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(tasks.analyze_host, "apply_async", broker_down)
    assert tasks.enqueue_analysis(host_id=host.id) is False
    assert claims(db_session) == set()


def test_the_task_releases_the_claim_and_analyses_the_current_snapshot(
    db_session: Session, sent: list[int]
) -> None:
    host, snapshot_id = host_with_config()
    tasks.enqueue_analysis(host_id=host.id)
    tasks.analyze_host(host.id)
    assert claims(db_session) == set()
    snapshot = db_session.get(ConfigSnapshot, snapshot_id)
    assert snapshot is not None and snapshot.analyzed_at is not None


def test_reanalysis_skips_hosts_queued_or_just_analysed(
    db_session: Session, sent: list[int]
) -> None:
    now = utcnow()
    pushing, _ = host_with_config(hostname="pushing", last_seen_at=now)
    queued, _ = host_with_config(hostname="queued", last_seen_at=now)
    _fresh, fresh_snapshot = host_with_config(hostname="fresh", last_seen_at=now)
    _silent, silent_snapshot = host_with_config(
        hostname="silent", last_seen_at=now - timedelta(hours=1)
    )
    never_analysed, _ = host_with_config(
        hostname="lost-task", last_seen_at=now - timedelta(hours=1)
    )
    # Analysed long enough ago to be due, except `fresh` (a push just had it analysed).
    for snapshot_id, ago in ((fresh_snapshot, 10), (silent_snapshot, 3600)):
        db_session.execute(
            update(ConfigSnapshot)
            .where(ConfigSnapshot.id == snapshot_id)
            .values(analyzed_at=now - timedelta(seconds=ago), parse_status="parsed")
        )
    db_session.execute(
        update(ConfigSnapshot)
        .where(ConfigSnapshot.host_id == pushing.id)
        .values(analyzed_at=now - timedelta(minutes=6), parse_status="parsed")
    )
    db_session.commit()
    tasks.enqueue_analysis(host_id=queued.id)
    sent.clear()

    assert tasks.reanalyze_fleet() == 2
    assert sorted(sent) == sorted([pushing.id, never_analysed.id])
    # The next run finds every due host queued already: nothing more goes to the broker.
    assert tasks.reanalyze_fleet() == 0
    assert len(sent) == 2
    assert claims(db_session) == {pushing.id, queued.id, never_analysed.id}


def test_claims_work_on_sqlite_too(tmp_path: Path) -> None:
    engine = build_engine(f"sqlite:///{tmp_path / 'embedded.db'}")
    Base.metadata.create_all(engine)
    now = utcnow()
    with Session(engine) as session:
        host = Host(agent_id="a", hostname="h", labels={}, token_hash="0" * 64, last_seen_at=now)
        session.add(host)
        session.flush()
        session.add(ConfigSnapshot(host_id=host.id, hash="1" * 64, dump="", received_at=now))
        host.config_hash = "1" * 64
        session.commit()
        interval = timedelta(minutes=5)
        assert queueing.hosts_due(session=session, now=now, interval=interval) == [host.id]
        assert queueing.claim_hosts(session=session, host_ids=[host.id], now=now) == [host.id]
        session.commit()
        assert queueing.claim_hosts(session=session, host_ids=[host.id], now=now) == []
        assert queueing.hosts_due(session=session, now=now, interval=interval) == []
        later = now + queueing.CLAIM_TIMEOUT + timedelta(seconds=1)
        assert queueing.claim_hosts(session=session, host_ids=[host.id], now=later) == [host.id]
    engine.dispose()
