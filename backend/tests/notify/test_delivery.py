"""Deliveries: enqueue, attempts with backoff, failing for good, idempotence, the overdue sweep."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from app.core.db import SessionLocal, utcnow
from app.notify import service
from app.notify.backoff import MAX_ATTEMPTS, backoff_delay, next_delay
from app.notify.channels.base import SendResult
from app.notify.delivery import attempt_delivery, overdue_delivery_ids
from app.notify.models import AlertChannel, AlertDelivery, DeliveryStatus
from app.notify.notification import AlertItem, Notification
from sqlalchemy import update
from sqlalchemy.orm import Session

from tests.notify.factories import alert, notification, webhook_channel
from tests.notify.receivers import Reply, http_receiver, silent_port


def enqueue(session: Session, channel_ids: list[int], *alerts: AlertItem) -> list[int]:
    """Commit deliveries of a notification of these alerts to the channels."""
    ids = service.enqueue(
        session=session, channel_ids=channel_ids, notification=notification(*alerts)
    )
    session.commit()
    return ids


def make_due(session: Session, delivery_id: int) -> None:
    """Bring the next attempt forward to now, as if the backoff had passed."""
    session.execute(
        update(AlertDelivery)
        .where(AlertDelivery.id == delivery_id)
        .values(next_attempt_at=utcnow())
    )
    session.commit()


def test_backoff_grows_and_honours_retry_after() -> None:
    assert [backoff_delay(n) for n in range(1, 6)] == [10, 30, 90, 270, 810]
    failed = SendResult(ok=False, error="HTTP 500")
    assert next_delay(failed, 1) == 10
    assert next_delay(SendResult(ok=False, retry_after_s=2.5), 1) == 2.5
    assert next_delay(SendResult(ok=False, retry_after_s=0), 1) == 1.0
    assert next_delay(SendResult(ok=False, permanent=True), 1) is None
    assert next_delay(failed, MAX_ATTEMPTS) is None
    assert next_delay(SendResult(ok=True), 1) is None


def test_enqueue_skips_disabled_and_missing_channels_and_does_not_commit(
    db_session: Session,
) -> None:
    on = webhook_channel("on", "http://127.0.0.1:9/on")
    off = webhook_channel("off", "http://127.0.0.1:9/off", enabled=False)
    ids = service.enqueue(
        session=db_session,
        channel_ids=[on.id, off.id, 999, on.id],
        notification=notification(alert(incident_id=7), alert("edge-2", incident_id=8)),
    )
    assert len(ids) == 1
    with SessionLocal() as other:
        assert other.get(AlertDelivery, ids[0]) is None  # not committed yet
    db_session.commit()
    delivery = db_session.get_one(AlertDelivery, ids[0])
    assert (delivery.channel_id, delivery.status, delivery.attempt_count) == (
        on.id,
        DeliveryStatus.pending,
        0,
    )
    assert delivery.incident_ids == [7, 8]
    assert Notification.from_json(delivery.payload) == notification(
        alert(incident_id=7), alert("edge-2", incident_id=8)
    )
    explicit = service.enqueue(
        session=db_session, channel_ids=[on.id], notification=notification(), incident_ids=[42, 42]
    )
    assert db_session.get_one(AlertDelivery, explicit[0]).incident_ids == [42]


def test_a_receiver_that_never_answers_is_retried_with_backoff_until_it_fails(
    db_session: Session,
) -> None:
    with silent_port() as port:
        channel = webhook_channel("black-hole", f"http://127.0.0.1:{port}/hook")
        [delivery_id] = enqueue(db_session, [channel.id])
        waits = []
        for n in range(1, MAX_ATTEMPTS + 1):
            started = time.monotonic()
            outcome = attempt_delivery(session=db_session, delivery_id=delivery_id, timeout_s=0.3)
            assert time.monotonic() - started < 3
            assert outcome is not None
            delivery = db_session.get_one(AlertDelivery, delivery_id)
            attempt = delivery.attempts[-1]
            assert (attempt.n, attempt.ok, attempt.status_code) == (n, False, None)
            assert attempt.error == "no answer within 0.3 s (ReadTimeout)"
            assert attempt.duration_ms >= 300
            if n < MAX_ATTEMPTS:
                assert delivery.status is DeliveryStatus.retrying
                assert delivery.next_attempt_at is not None
                waits.append((delivery.next_attempt_at - attempt.at).total_seconds())
                # Not due yet: a second task for the same attempt does nothing.
                assert attempt_delivery(session=db_session, delivery_id=delivery_id) is None
                make_due(db_session, delivery_id)
    assert delivery.status is DeliveryStatus.failed
    assert delivery.next_attempt_at is None
    assert [round(w) for w in waits] == [10, 30, 90, 270, 810]


def test_a_sent_delivery_is_never_sent_again(db_session: Session) -> None:
    with http_receiver() as receiver:
        channel = webhook_channel("hook", receiver.url())
        [delivery_id] = enqueue(db_session, [channel.id])
        assert attempt_delivery(session=db_session, delivery_id=delivery_id) is not None
        make_due(db_session, delivery_id)  # even when the row says it is due
        assert attempt_delivery(session=db_session, delivery_id=delivery_id) is None
        time.sleep(0.2)
    assert len(receiver.received) == 1
    assert db_session.get_one(AlertDelivery, delivery_id).attempt_count == 1


def test_two_tasks_of_one_delivery_send_it_once(db_session: Session) -> None:
    # The receiver holds its answer, so the two tasks overlap while the first sends.
    release = threading.Event()
    with http_receiver() as receiver:
        original = receiver.server.RequestHandlerClass.do_POST  # type: ignore[attr-defined]

        def slow_post(handler: object) -> None:
            release.wait(5)
            original(handler)

        receiver.server.RequestHandlerClass.do_POST = slow_post  # type: ignore[attr-defined]
        channel = webhook_channel("hook", receiver.url())
        [delivery_id] = enqueue(db_session, [channel.id])
        outcomes: list[object] = []

        def run() -> None:
            with SessionLocal() as session:
                outcomes.append(attempt_delivery(session=session, delivery_id=delivery_id))

        first = threading.Thread(target=run)
        first.start()
        time.sleep(0.5)
        # The first holds the row: the second leaves at once instead of waiting or sending.
        started = time.monotonic()
        run()
        assert time.monotonic() - started < 1
        release.set()
        first.join(10)
    assert outcomes[0] is None
    assert outcomes[1] is not None
    assert len(receiver.received) == 1


def test_a_disabled_channel_fails_its_pending_deliveries(db_session: Session) -> None:
    channel = webhook_channel("soon-off", "http://127.0.0.1:9/hook")
    [delivery_id] = enqueue(db_session, [channel.id])
    db_session.execute(update(AlertChannel).values(enabled=False))
    db_session.commit()
    attempt_delivery(session=db_session, delivery_id=delivery_id)
    delivery = db_session.get_one(AlertDelivery, delivery_id)
    assert delivery.status is DeliveryStatus.failed
    assert delivery.attempts[0].error == "the channel was disabled"


def test_the_sweep_finds_only_overdue_open_deliveries(db_session: Session) -> None:
    channel = webhook_channel("hook", "http://127.0.0.1:9/hook")
    lost, fresh, done = (
        enqueue(db_session, [channel.id])
        + enqueue(db_session, [channel.id])
        + enqueue(db_session, [channel.id])
    )
    long_ago = utcnow() - timedelta(minutes=10)
    db_session.execute(
        update(AlertDelivery)
        .where(AlertDelivery.id.in_([lost, done]))
        .values(next_attempt_at=long_ago)
    )
    db_session.execute(
        update(AlertDelivery).where(AlertDelivery.id == done).values(status=DeliveryStatus.sent)
    )
    db_session.commit()
    overdue = overdue_delivery_ids(session=db_session, now=utcnow(), grace_s=120, limit=100)
    assert overdue == [lost]
    assert fresh not in overdue


def test_deliveries_are_listed_per_incident(db_session: Session) -> None:
    with http_receiver([Reply(500, body=b"oops")]) as receiver:
        first = webhook_channel("first", receiver.url())
        second = webhook_channel("second", receiver.url())
        ids_7 = enqueue(db_session, [first.id, second.id], alert(incident_id=7))
        [id_8] = enqueue(db_session, [first.id], alert(incident_id=8))
        for delivery_id in [*ids_7, id_8]:
            attempt_delivery(session=db_session, delivery_id=delivery_id)
    reads = service.deliveries_for_incident(
        session=db_session,
        incident_id=7,
        rule_key="dropped-connections",
        since=utcnow() - timedelta(hours=1),
    )
    assert [read.id for read in reads] == sorted(ids_7, reverse=True)
    assert {read.channel_name for read in reads} == {"first", "second"}
    assert all(read.incident_ids == [7] for read in reads)
    by_channel = {read.channel_name: read for read in reads}
    assert by_channel["first"].status == DeliveryStatus.retrying
    assert by_channel["first"].attempts[0].error == "HTTP 500: oops"
    assert by_channel["second"].status == DeliveryStatus.sent
    assert (
        service.deliveries_for_incident(session=db_session, incident_id=7, rule_key="other") == []
    )
    assert (
        service.deliveries_for_incident(
            session=db_session, incident_id=7, since=utcnow() + timedelta(minutes=1)
        )
        == []
    )
    assert [r.id for r in service.deliveries_for_incident(session=db_session, incident_id=8)] == [
        id_8
    ]


@pytest.mark.parametrize("event", ["firing", "resolved", "repeat", "test"])
def test_the_notification_survives_json(event: str) -> None:
    original = notification(alert(), alert("edge-2", status="resolved", value=None), event=event)
    assert Notification.from_json(original.to_json()) == original


def test_naive_datetimes_and_unknown_events_are_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        alert(started_at=utcnow().replace(tzinfo=None))
    with pytest.raises(ValueError, match="event"):
        notification(event="exploded")
