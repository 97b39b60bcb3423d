"""The Slack channel: the message, Retry-After, spacing per webhook, and the URL kept secret."""

from __future__ import annotations

import threading
import time

from app.notify import pacing, service
from app.notify.channels import slack
from app.notify.channels.base import parse_retry_after
from app.notify.delivery import attempt_delivery
from app.notify.kinds import ChannelKind
from app.notify.models import AlertDelivery, DeliveryStatus
from sqlalchemy.orm import Session

from tests.notify.factories import CAUSE, EXTERNAL_URL, alert, make_channel, notification
from tests.notify.receivers import Reply, http_receiver


def test_the_message_lists_each_host_with_cause_and_links() -> None:
    message = slack.build_message(
        notification(alert("edge-1"), alert("edge-<2>", host_id=4, incident_id=8))
    )
    assert message["text"] == "[FIRING:2] Dropped connections: edge-1, edge-<2>"
    header, first, second = message["blocks"]
    assert header == {
        "type": "header",
        "text": {"type": "plain_text", "text": "[FIRING:2] Dropped connections"},
    }
    text = first["text"]["text"]
    assert first["text"]["type"] == "mrkdwn"
    assert text.startswith(f"*<{EXTERNAL_URL}/alerts/incidents/7|edge-1>* (critical, firing)")
    assert f"Cause: {CAUSE.replace('<', '&lt;')}" in text
    assert f"<{EXTERNAL_URL}/hosts/3/config?finding=12|Related config finding>" in text
    # Slack mrkdwn control characters in a hostname are escaped.
    assert "|edge-&lt;2&gt;>*" in second["text"]["text"]


def test_a_long_notification_stays_within_slack_block_limits() -> None:
    many = [alert(f"edge-{n}", host_id=n, incident_id=n) for n in range(1, 61)]
    message = slack.build_message(notification(*many))
    assert len(message["blocks"]) <= 50
    assert message["blocks"][-1]["elements"][0]["text"].startswith("and 20 more")


def test_retry_after_is_read_as_seconds_or_as_a_date() -> None:
    assert parse_retry_after("1") == 1.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("999999") == 3600.0


def test_sends_to_one_webhook_are_a_second_apart_across_threads(redis_url: str) -> None:
    address = f"http://127.0.0.1:1/services/{time.monotonic_ns()}"
    taken: list[float] = []

    def take() -> None:
        pacing.wait_turn(address, spacing_s=1.0)
        taken.append(time.monotonic())

    threads = [threading.Thread(target=take) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    taken.sort()
    assert len(taken) == 3
    assert taken[1] - taken[0] >= 0.95 and taken[2] - taken[1] >= 0.95
    # Another webhook has its own turn.
    started = time.monotonic()
    pacing.wait_turn(address + "-other", spacing_s=1.0)
    assert time.monotonic() - started < 0.5


def test_a_429_schedules_the_retry_at_retry_after_and_the_url_never_shows(
    db_session: Session,
) -> None:
    # The receiver echoes the request path, which holds the webhook's secret part.
    script = [Reply(429, {"Retry-After": "3"}, b"rate limited for /services/T0/B0/SeCrEt")]
    with http_receiver(script) as receiver:
        url = receiver.url("/services/T0/B0/SeCrEt")
        channel = make_channel("slack", ChannelKind.slack, secrets={"webhook_url": url})
        [delivery_id] = service.enqueue(
            session=db_session, channel_ids=[channel.id], notification=notification()
        )
        db_session.commit()
        attempt_delivery(session=db_session, delivery_id=delivery_id)
        [request] = receiver.wait_for(1)
    assert request.path == "/services/T0/B0/SeCrEt"
    assert request.json()["blocks"][0]["type"] == "header"
    delivery = db_session.get_one(AlertDelivery, delivery_id)
    assert delivery.status is DeliveryStatus.retrying
    [attempt] = delivery.attempts
    assert attempt.status_code == 429
    assert attempt.error == "HTTP 429: rate limited for [redacted]"
    assert "SeCrEt" not in (attempt.error or "")
    assert delivery.next_attempt_at is not None
    assert 3 <= (delivery.next_attempt_at - attempt.at).total_seconds() < 5
