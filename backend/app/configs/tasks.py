"""Celery tasks of the configs domain: analysing snapshots, periodically and after changes."""

from __future__ import annotations

import logging
from datetime import timedelta

from kombu.exceptions import KombuError
from redis.exceptions import RedisError
from sqlalchemy import select

from app.configs import analyzer
from app.configs.models import ConfigSnapshot
from app.configs.schedule import REANALYZE_INTERVAL_S
from app.core.db import SessionLocal, utcnow
from app.findings import service as findings_service
from app.hosts.models import Host
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)

# Hosts silent for longer have no fresh metrics: their last analysis still holds.
RECENT_PUSH = timedelta(minutes=10)


@celery_app.task(name="configs.analyze_snapshot", **TRANSIENT_RETRY_POLICY)
def analyze_snapshot(snapshot_id: int) -> None:
    """Run the rules over a snapshot with its host's facts and metrics; store the findings."""
    with SessionLocal() as session:
        outcome = analyzer.analyze_snapshot(session=session, snapshot_id=snapshot_id, now=utcnow())
    log.info(
        "config snapshot %d: analysis %s (%s)", snapshot_id, outcome.analysis_id, outcome.action
    )


def enqueue_analysis(snapshot_id: int, *, expires_s: float | None = None) -> bool:
    """Queue the analysis of a committed snapshot; False (logged) when the broker is down.

    The push that brought the snapshot is already stored, and failing it would only make the
    agent resend data we have; the snapshot stays 'pending' where an operator can see it."""
    try:
        analyze_snapshot.apply_async((snapshot_id,), expires=expires_s)
    except (KombuError, RedisError, OSError):
        log.exception("could not queue the analysis of config snapshot %d", snapshot_id)
        return False
    return True


@celery_app.task(name="configs.reanalyze_fleet", **TRANSIENT_RETRY_POLICY)
def reanalyze_fleet() -> int:
    """Queue the analysis of the current snapshot of every host that pushed recently.

    Metric-aware rules need fresh figures; an unchanged outcome adds no analysis row."""
    with SessionLocal() as session:
        snapshot_ids = list(
            session.scalars(
                select(ConfigSnapshot.id)
                .join(
                    Host,
                    (Host.id == ConfigSnapshot.host_id) & (Host.config_hash == ConfigSnapshot.hash),
                )
                .where(Host.last_seen_at > utcnow() - RECENT_PUSH)
            )
        )
    # A run that waits longer than the interval is superseded by the next one.
    queued = sum(enqueue_analysis(i, expires_s=REANALYZE_INTERVAL_S) for i in snapshot_ids)
    log.info("re-analysis queued for %d of %d hosts", queued, len(snapshot_ids))
    return queued


@celery_app.task(name="configs.apply_expired_acks", **TRANSIENT_RETRY_POLICY)
def apply_expired_acks() -> int:
    """Re-score the hosts whose acknowledgements expired, so their findings count again."""
    with SessionLocal() as session:
        rescored = findings_service.apply_expired_acks(session=session, now=utcnow())
    if rescored:
        log.info("re-scored %d analyses after acknowledgements expired", rescored)
    return rescored
