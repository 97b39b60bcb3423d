"""Celery tasks of the notify domain: one attempt per task, and the sweep for lost tasks."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from app.core.db import SessionLocal, utcnow
from app.notify import delivery
from app.notify.schedule import REDISPATCH_INTERVAL_S
from app.worker.celery_app import celery_app
from app.worker.queues import Queue
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)

# A queued attempt not started this long after it was due is dropped; the sweep sends a new one.
TASK_EXPIRES_S = 600
# The sweep leaves a due delivery this long to its own task before sending another one.
OVERDUE_GRACE_S = 2 * REDISPATCH_INTERVAL_S
SWEEP_LIMIT = 1000


@celery_app.task(name="notify.deliver", **TRANSIENT_RETRY_POLICY)
def deliver(delivery_id: int) -> str | None:
    """Make the next attempt of a delivery; on a retryable failure queue the one after."""
    with SessionLocal() as session:
        outcome = delivery.attempt_delivery(session=session, delivery_id=delivery_id)
    if outcome is None:
        return None
    if outcome.retry_in_s is not None:
        dispatch([delivery_id], countdown_s=outcome.retry_in_s)
    return outcome.status.value


def dispatch(delivery_ids: Iterable[int], *, countdown_s: float = 0.0) -> int:
    """Queue one task per delivery (a stuck channel holds up no other); returns how many.

    A broker outage is logged, not raised: the deliveries are committed, and the periodic
    sweep queues them again once they are overdue."""
    queued = 0
    for delivery_id in delivery_ids:
        try:
            deliver.apply_async(
                (delivery_id,),
                countdown=countdown_s,
                expires=countdown_s + TASK_EXPIRES_S,
                queue=Queue.default.value,
            )
        except (KombuError, RedisError, OSError):
            log.exception("could not queue delivery %d; the sweep will retry it", delivery_id)
            continue
        queued += 1
    return queued


@celery_app.task(name="notify.redispatch_overdue", **TRANSIENT_RETRY_POLICY)
def redispatch_overdue() -> int:
    """Queue again the deliveries whose attempt is overdue (their task was lost)."""
    with SessionLocal() as session:
        overdue = delivery.overdue_delivery_ids(
            session=session, now=utcnow(), grace_s=OVERDUE_GRACE_S, limit=SWEEP_LIMIT
        )
    if overdue:
        log.warning("re-queueing %d overdue alert deliveries", len(overdue))
    return dispatch(overdue)
