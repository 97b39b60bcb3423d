"""Celery tasks of the changes domain: metric gates, rollout waves, impact measurement."""

from __future__ import annotations

import logging

from app.changes import service
from app.changes.watch import watch_changes
from app.core.db import SessionLocal, utcnow
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)


@celery_app.task(name="changes.watch", **TRANSIENT_RETRY_POLICY)
def watch() -> int:
    """Gate and advance running rollouts, measure the impact of applied changes."""
    with SessionLocal() as session:
        moved = watch_changes(session=session, now=utcnow())
    for change in moved:
        service.announce(change)
    return len(moved)
