"""Celery tasks of the configs domain."""

from __future__ import annotations

import logging

from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from app.configs import service
from app.core.db import SessionLocal
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)


@celery_app.task(name="configs.analyze_snapshot", **TRANSIENT_RETRY_POLICY)
def analyze_snapshot(snapshot_id: int) -> None:
    """Parse a newly stored config snapshot and record the outcome."""
    with SessionLocal() as session:
        snapshot = service.summarize_snapshot(session=session, snapshot_id=snapshot_id)
    if snapshot is not None:
        log.info(
            "config snapshot %d of host %d: %s, %s files, %s lines",
            snapshot_id,
            snapshot.host_id,
            snapshot.parse_status,
            snapshot.file_count,
            snapshot.line_count,
        )


def enqueue_analysis(snapshot_id: int) -> bool:
    """Queue the analysis of a committed snapshot; False (logged) when the broker is down.

    The push that brought the snapshot is already stored, and failing it would only make the
    agent resend data we have; the snapshot stays 'pending' where an operator can see it."""
    try:
        analyze_snapshot.delay(snapshot_id)
    except (KombuError, RedisError, OSError):
        log.exception("could not queue the analysis of config snapshot %d", snapshot_id)
        return False
    return True
