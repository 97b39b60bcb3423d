"""Deliveries through a real Celery worker: a stuck channel holds up no other, 429 is retried."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from app.notify import service
from app.notify.kinds import ChannelKind
from app.notify.models import AlertDelivery, DeliveryStatus
from sqlalchemy.orm import Session

from tests.notify.factories import make_channel, notification, webhook_channel
from tests.notify.receivers import Reply, http_receiver, silent_port


def wait_until(
    session: Session, delivery_id: int, done: Callable[[AlertDelivery], bool], log: Path
) -> AlertDelivery:
    """The delivery once done(delivery) holds (fails after 60 s, showing the worker's log)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        session.expire_all()
        delivery = session.get_one(AlertDelivery, delivery_id)
        if done(delivery):
            return delivery
        time.sleep(0.1)
    raise AssertionError(f"delivery {delivery_id} not done after 60 s:\n{log.read_text()}")


def test_a_stuck_channel_does_not_hold_up_a_healthy_one(db_session: Session, worker: Path) -> None:
    with silent_port() as port, http_receiver() as receiver:
        stuck = webhook_channel("stuck", f"http://127.0.0.1:{port}/hook")
        healthy = webhook_channel("healthy", receiver.url())
        # The stuck channel's delivery is queued first.
        stuck_id, healthy_id = service.enqueue(
            session=db_session, channel_ids=[stuck.id, healthy.id], notification=notification()
        )
        db_session.commit()
        assert service.dispatch([stuck_id, healthy_id]) == 2
        sent = wait_until(db_session, healthy_id, lambda d: d.status is DeliveryStatus.sent, worker)
        # Meanwhile the stuck one is still waiting for its first answer.
        assert db_session.get_one(AlertDelivery, stuck_id).attempt_count == 0
        retrying = wait_until(db_session, stuck_id, lambda d: d.attempt_count == 1, worker)
    [healthy_attempt] = sent.attempts
    [stuck_attempt] = retrying.attempts
    assert healthy_attempt.ok and healthy_attempt.duration_ms < 2000
    assert len(receiver.received) == 1
    assert retrying.status is DeliveryStatus.retrying
    assert stuck_attempt.error == "no answer within 10 s (ReadTimeout)"
    assert 10_000 <= stuck_attempt.duration_ms < 12_000
    assert retrying.next_attempt_at is not None
    # The 10 s timeout, then the first backoff step of 10 s.
    assert 20 <= (retrying.next_attempt_at - stuck_attempt.at).total_seconds() < 22
    # Both started together: the healthy one did not wait for the stuck one's timeout.
    healthy_done = healthy_attempt.at.timestamp() + healthy_attempt.duration_ms / 1000
    assert healthy_done < stuck_attempt.at.timestamp() + 5


def test_slack_429_is_retried_after_retry_after(db_session: Session, worker: Path) -> None:
    script = [Reply(429, {"Retry-After": "1"}, b"rate_limited"), Reply(200, body=b"ok")]
    with http_receiver(script) as receiver:
        url = receiver.url("/services/T000/B000/webhook-secret-part")
        channel = make_channel("slack", ChannelKind.slack, secrets={"webhook_url": url})
        [delivery_id] = service.enqueue(
            session=db_session, channel_ids=[channel.id], notification=notification()
        )
        db_session.commit()
        service.dispatch([delivery_id])
        delivery = wait_until(
            db_session,
            delivery_id,
            lambda d: d.status is not DeliveryStatus.pending and d.attempt_count >= 2,
            worker,
        )
        first, second = receiver.wait_for(2)
    assert delivery.status is DeliveryStatus.sent
    refused, accepted = delivery.attempts
    assert (refused.ok, refused.status_code, refused.error) == (
        False,
        429,
        "HTTP 429: rate_limited",
    )
    assert (accepted.ok, accepted.status_code) == (True, 200)
    assert second.at - first.at >= 1.0
    assert (accepted.at - refused.at).total_seconds() >= 1.0
    assert first.json()["text"].startswith("[FIRING:1] Dropped connections")
