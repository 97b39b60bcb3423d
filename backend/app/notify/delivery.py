"""One attempt of one delivery: lock it, send it, record the attempt, schedule the next one."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.db import utcnow
from app.notify import channels
from app.notify.backoff import next_delay
from app.notify.channels.base import SEND_TIMEOUT_S, SendResult
from app.notify.models import AlertChannel, AlertDelivery, AlertDeliveryAttempt, DeliveryStatus
from app.notify.notification import Notification
from app.notify.secrets import SecretKeyMissingError, SecretsUnreadableError, decrypt_secrets

log = logging.getLogger(__name__)

OPEN_STATUSES = (DeliveryStatus.pending, DeliveryStatus.retrying)
MAX_ERROR_CHARS = 2000


@dataclass(frozen=True)
class AttemptOutcome:
    """What an attempt did: the delivery's new status and, when retrying, the wait."""

    delivery_id: int
    status: DeliveryStatus
    retry_in_s: float | None


def _send(channel: AlertChannel, notification: Notification, timeout_s: float) -> SendResult:
    """Send through the channel; a secret that cannot be read fails the delivery at once."""
    try:
        secrets = decrypt_secrets(channel.secrets_encrypted)
    except (SecretsUnreadableError, SecretKeyMissingError) as error:
        return SendResult(ok=False, error=str(error), permanent=True)
    return channels.send(
        kind=channel.kind,
        channel_name=channel.name,
        settings=channel.settings,
        secrets=secrets,
        notification=notification,
        timeout_s=timeout_s,
    )


def _lock_due(session: Session, delivery_id: int, now: datetime) -> AlertDelivery | None:
    """The delivery, locked, when it is open and due; None when another task holds it or it is
    sent, failed, gone or scheduled later (a duplicate task of an attempt already made)."""
    # SKIP LOCKED: a second task for the same delivery leaves at once instead of sending twice.
    delivery = session.scalar(
        select(AlertDelivery)
        .where(AlertDelivery.id == delivery_id)
        .with_for_update(of=AlertDelivery, skip_locked=True)
    )
    if delivery is None or delivery.status not in OPEN_STATUSES:
        return None
    if delivery.next_attempt_at is not None and delivery.next_attempt_at > now:
        return None
    return delivery


def record_attempt(
    *,
    session: Session,
    delivery: AlertDelivery,
    result: SendResult,
    started_at: datetime,
    duration_ms: int,
    retry: bool = True,
) -> AttemptOutcome:
    """Store the attempt and the delivery's new status; does not commit."""
    delivery.attempt_count += 1
    delivery.attempts.append(
        AlertDeliveryAttempt(
            n=delivery.attempt_count,
            at=started_at,
            ok=result.ok,
            status_code=result.status_code,
            error=result.error[:MAX_ERROR_CHARS] if result.error else None,
            duration_ms=duration_ms,
        )
    )
    delay = next_delay(result, delivery.attempt_count) if retry else None
    if result.ok:
        delivery.status = DeliveryStatus.sent
        delivery.next_attempt_at = None
    elif delay is None:
        delivery.status = DeliveryStatus.failed
        delivery.next_attempt_at = None
    else:
        delivery.status = DeliveryStatus.retrying
        delivery.next_attempt_at = utcnow() + timedelta(seconds=delay)
    session.flush()
    return AttemptOutcome(delivery_id=delivery.id, status=delivery.status, retry_in_s=delay)


def attempt_delivery(
    *,
    session: Session,
    delivery_id: int,
    timeout_s: float = SEND_TIMEOUT_S,
    retry: bool = True,
    send_when_disabled: bool = False,
) -> AttemptOutcome | None:
    """Make the next attempt of a due delivery and commit it; None when there was nothing to do.

    The row stays locked while sending, so that a duplicate task cannot send it a second time."""
    started_at = utcnow()
    delivery = _lock_due(session, delivery_id, started_at)
    if delivery is None:
        session.rollback()
        return None
    channel = session.get_one(AlertChannel, delivery.channel_id)
    started = time.monotonic()
    if channel.enabled or send_when_disabled:
        result = _send(channel, Notification.from_json(delivery.payload), timeout_s)
    else:
        result = SendResult(ok=False, error="the channel was disabled", permanent=True)
    duration_ms = round((time.monotonic() - started) * 1000)
    outcome = record_attempt(
        session=session,
        delivery=delivery,
        result=result,
        started_at=started_at,
        duration_ms=duration_ms,
        retry=retry,
    )
    session.commit()
    log.info(
        "delivery %d to channel %r (%s), attempt %d: %s%s",
        delivery_id,
        channel.name,
        channel.kind,
        delivery.attempt_count,
        outcome.status,
        f" ({result.error})" if result.error else "",
    )
    return outcome


def overdue_delivery_ids(
    *, session: Session, now: datetime, grace_s: float, limit: int
) -> list[int]:
    """Open deliveries due for more than grace_s: their task was lost (worker restart, broker)."""
    cutoff = now - timedelta(seconds=grace_s)
    return list(
        session.scalars(
            select(AlertDelivery.id)
            .where(
                AlertDelivery.status.in_(OPEN_STATUSES),
                AlertDelivery.next_attempt_at <= cutoff,
            )
            .order_by(AlertDelivery.next_attempt_at)
            .limit(limit)
        )
    )
