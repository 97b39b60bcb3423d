"""Celery tasks of the metrics domain (thin: the work is in app.metrics.rollups)."""

from __future__ import annotations

import logging
from datetime import datetime

from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from app.core.db import SessionLocal, get_engine, utcnow
from app.metrics import partitioning, rollups
from app.metrics.settings import get_retention
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)


@celery_app.task(name="metrics.rollup", **TRANSIENT_RETRY_POLICY)
def rollup() -> None:
    """Refresh the recent 1-minute and 1-hour rollups of every host."""
    with SessionLocal() as session:
        minutes, hours = rollups.rollup_recent(session=session, now=utcnow())
    log.info("rollups refreshed: %d minute rows, %d hour rows", minutes, hours)


@celery_app.task(name="metrics.rollup_range", **TRANSIENT_RETRY_POLICY)
def rollup_range(host_id: int, start: str, end: str) -> None:
    """Rebuild one host's rollups over [start, end) (ISO timestamps), after late samples."""
    with SessionLocal() as session:
        rollups.rollup_range(
            session=session,
            host_id=host_id,
            start=datetime.fromisoformat(start),
            end=datetime.fromisoformat(end),
        )


def enqueue_rollup(host_id: int, start: datetime, end: datetime) -> bool:
    """Queue a rebuild of one host's rollups; False (logged) when the broker is down.

    Called after a push is committed: failing it would only make the agent resend data we
    have, and the periodic rollup covers recent buckets anyway."""
    try:
        rollup_range.delay(host_id, start.isoformat(), end.isoformat())
    except (KombuError, RedisError, OSError):
        log.exception("could not queue the rollup of late samples of host %d", host_id)
        return False
    return True


@celery_app.task(name="metrics.apply_retention", **TRANSIENT_RETRY_POLICY)
def apply_retention() -> None:
    """Drop the partitions of metrics older than their retention."""
    with SessionLocal() as session:
        removed = rollups.apply_retention(session=session, now=utcnow(), retention=get_retention())
    for kind, expired in removed.items():
        if expired.partitions or expired.rows_deleted:
            log.info(
                "retention of %s: dropped %s, deleted %d rows",
                kind,
                ", ".join(expired.partitions) or "no partition",
                expired.rows_deleted,
            )


@celery_app.task(name="metrics.create_partitions", **TRANSIENT_RETRY_POLICY)
def create_partitions() -> None:
    """Create the time-series partitions of the coming days that are missing."""
    with SessionLocal() as session:
        created = partitioning.create_ahead(session=session, now=utcnow())
    if created:
        log.info("partitions created: %s", ", ".join(created))


@celery_app.task(name="metrics.seal_partitions", **TRANSIENT_RETRY_POLICY)
def seal_partitions() -> None:
    """Rebuild the indexes of the samples', rollups' and access-log rollups' partitions whose
    period has ended."""
    sealed = partitioning.seal_all(engine=get_engine(), now=utcnow())
    if sealed:
        log.info("partitions sealed (indexes rebuilt): %s", ", ".join(sealed))
