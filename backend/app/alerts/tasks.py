"""Celery tasks of the alerts domain: the periodic evaluation."""

from __future__ import annotations

import logging

from app.alerts import engine
from app.core.db import SessionLocal, utcnow
from app.notify import service as notify_service
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)


@celery_app.task(name="alerts.evaluate", **TRANSIENT_RETRY_POLICY)
def evaluate() -> int:
    """Evaluate every rule once; queue the deliveries of the notifications it owes."""
    with SessionLocal() as session:
        outcome = engine.evaluate(session=session, now=utcnow())
    if outcome.skipped:
        log.info("alert evaluation skipped: another one is running")
        return 0
    # After the commit: a delivery whose task is lost stays pending and the notify domain's
    # periodic re-dispatch sends it.
    notify_service.dispatch(outcome.delivery_ids)
    log.info(
        "alerts: %d rules over %d pairs in %.2f s; %d fired, %d resolved, %d deliveries",
        outcome.rules,
        outcome.pairs,
        outcome.seconds,
        outcome.fired,
        outcome.resolved,
        len(outcome.delivery_ids),
    )
    return len(outcome.delivery_ids)
