"""Celery tasks of the hosts domain (thin: the work is in app.hosts.latest)."""

from __future__ import annotations

import logging

from app.core.db import SessionLocal, utcnow
from app.hosts.latest import refresh_sorted_copies
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)


@celery_app.task(name="hosts.refresh_sorted_copies", **TRANSIENT_RETRY_POLICY)
def refresh_sorted() -> int:
    """Catch up the fleet page's sort copies of hosts that stopped pushing; how many."""
    with SessionLocal() as session:
        refreshed = refresh_sorted_copies(session=session, now=utcnow())
        session.commit()
    log.info("sorted copies refreshed for %d hosts", refreshed)
    return refreshed
