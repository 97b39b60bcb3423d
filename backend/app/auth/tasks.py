"""Periodic clean-up of sign-in state (scheduled by app.worker's beat schedule)."""

from __future__ import annotations

import logging

from app.auth import service
from app.core.db import SessionLocal
from app.worker.celery_app import celery_app

log = logging.getLogger(__name__)


@celery_app.task(name="auth.purge_expired_sessions", acks_late=True, ignore_result=True)
def purge_expired_sessions() -> int:
    """Delete expired sessions and stale sign-in failures."""
    with SessionLocal() as session:
        removed = service.purge_expired_sessions(session=session)
    log.info("purged %d expired sessions", removed)
    return removed
