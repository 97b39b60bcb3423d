"""The webhook channel POSTs Alertmanager's webhook payload (version 4) to a real receiver."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.notify import service
from app.notify.delivery import attempt_delivery
from app.notify.models import AlertDelivery, DeliveryStatus
from sqlalchemy.orm import Session

from tests.notify.factories import (
    CAUSE,
    EXTERNAL_URL,
    STARTED,
    alert,
    notification,
    webhook_channel,
)
from tests.notify.receivers import Received, Reply, http_receiver

TOP_LEVEL = {
    "version": str,
    "groupKey": str,
    "truncatedAlerts": int,
    "status": str,
    "receiver": str,
    "groupLabels": dict,
    "commonLabels": dict,
    "commonAnnotations": dict,
    "externalURL": str,
    "alerts": list,
}
ALERT = {
    "status": str,
    "labels": dict,
    "annotations": dict,
    "startsAt": str,
    "endsAt": str,
    "generatorURL": str,
    "fingerprint": str,
}
GO_ZERO_TIME = "0001-01-01T00:00:00Z"


def rfc3339(value: str) -> datetime:
    """Parse an RFC 3339 UTC time as Go writes it (a Z, no offset)."""
    assert value.endswith("Z"), value
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.utcoffset() is not None
    return parsed


def assert_string_map(value: Any) -> None:
    assert isinstance(value, dict)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()), value


def assert_alertmanager_v4(body: Any) -> None:
    """Every key of Alertmanager's webhook Message, with its type, and the endsAt rules."""
    assert isinstance(body, dict)
    assert set(body) == set(TOP_LEVEL), set(body) ^ set(TOP_LEVEL)
    for key, kind in TOP_LEVEL.items():
        assert isinstance(body[key], kind), (key, body[key])
    assert body["version"] == "4"
    assert body["status"] in {"firing", "resolved"}
    assert body["truncatedAlerts"] >= 0
    for key in ("groupLabels", "commonLabels", "commonAnnotations"):
        assert_string_map(body[key])
    for item in body["alerts"]:
        assert set(item) == set(ALERT), set(item) ^ set(ALERT)
        for key, kind in ALERT.items():
            assert isinstance(item[key], kind), (key, item[key])
        assert item["status"] in {"firing", "resolved"}
        assert_string_map(item["labels"])
        assert_string_map(item["annotations"])
        assert {"alertname", "severity", "host"} <= item["labels"].keys()
        starts = rfc3339(item["startsAt"])
        if item["status"] == "firing":
            assert item["endsAt"] == GO_ZERO_TIME
        else:
            assert rfc3339(item["endsAt"]) >= starts
    firing = any(item["status"] == "firing" for item in body["alerts"])
    assert body["status"] == ("firing" if firing else "resolved")


def deliver_once(session: Session, channel_id: int, *alerts: Any, event: str = "firing") -> int:
    """Enqueue a notification to one channel and make its first attempt here."""
    [delivery_id] = service.enqueue(
        session=session, channel_ids=[channel_id], notification=notification(*alerts, event=event)
    )
    session.commit()
    outcome = attempt_delivery(session=session, delivery_id=delivery_id)
    assert outcome is not None
    return delivery_id


def test_receiver_gets_an_alertmanager_v4_payload(db_session: Session) -> None:
    with http_receiver() as receiver:
        channel = webhook_channel(
            "ops-hook", receiver.url("/alertmanager"), secrets={"bearer_token": "s3cr3t-token"}
        )
        delivery_id = deliver_once(
            db_session,
            channel.id,
            alert("edge-1", host_id=3, incident_id=7),
            alert(
                "edge-2",
                host_id=4,
                incident_id=8,
                status="resolved",
                labels={"env": "prod", "dc": "fra"},
            ),
        )
        [request] = receiver.wait_for(1)
    assert request.path == "/alertmanager"
    assert request.headers["Authorization"] == "Bearer s3cr3t-token"
    assert request.headers["Content-Type"] == "application/json"
    body = request.json()
    assert_alertmanager_v4(body)
    assert body["receiver"] == "ops-hook"
    assert body["status"] == "firing"
    assert body["externalURL"] == EXTERNAL_URL
    assert body["groupLabels"] == {"alertname": "dropped-connections"}
    assert body["groupKey"] == '{}:{alertname="dropped-connections"}'
    # host differs between the alerts, dc is on one only.
    assert body["commonLabels"] == {
        "alertname": "dropped-connections",
        "severity": "critical",
        "env": "prod",
    }
    assert body["commonAnnotations"] == {
        "description": "nginx accepted connections it could not handle.",
        "cause": CAUSE,
    }
    first, second = body["alerts"]
    assert first["labels"] == {
        "alertname": "dropped-connections",
        "severity": "critical",
        "host": "edge-1",
        "env": "prod",
    }
    assert first["annotations"]["summary"] == "412 connections dropped in 2 min on edge-1"
    assert first["annotations"]["finding_url"] == f"{EXTERNAL_URL}/hosts/3/config?finding=12"
    assert first["startsAt"] == "2026-11-30T14:05:00Z"
    assert first["generatorURL"] == f"{EXTERNAL_URL}/alerts/incidents/7"
    assert first["fingerprint"] == f"{3:016x}"
    assert second["status"] == "resolved"
    assert second["labels"]["dc"] == "fra"
    assert rfc3339(second["endsAt"]) > STARTED
    delivery = db_session.get_one(AlertDelivery, delivery_id)
    assert delivery.status is DeliveryStatus.sent
    assert delivery.incident_ids == [7, 8]
    [attempt] = delivery.attempts
    assert (attempt.ok, attempt.status_code, attempt.error) == (True, 200, None)


def test_a_resolved_notification_ends_every_alert(db_session: Session) -> None:
    with http_receiver() as receiver:
        channel = webhook_channel("resolved-hook", receiver.url())
        deliver_once(db_session, channel.id, alert(status="resolved"), event="resolved")
        [request] = receiver.wait_for(1)
    body = request.json()
    assert_alertmanager_v4(body)
    assert body["status"] == "resolved"
    assert body["alerts"][0]["endsAt"] == "2026-11-30T14:14:00Z"
    assert "Authorization" not in request.headers


def test_host_labels_never_override_alertname_severity_or_host(db_session: Session) -> None:
    labels = {"alertname": "spoofed", "severity": "info", "host": "elsewhere", "team": "edge"}
    with http_receiver() as receiver:
        channel = webhook_channel("labels-hook", receiver.url())
        deliver_once(db_session, channel.id, alert(labels=labels))
        [request] = receiver.wait_for(1)
    assert request.json()["alerts"][0]["labels"] == {
        "alertname": "dropped-connections",
        "severity": "critical",
        "host": "edge-1",
        "team": "edge",
    }


def received_error(session: Session, delivery_id: int) -> tuple[DeliveryStatus, str | None]:
    session.expire_all()
    delivery = session.get_one(AlertDelivery, delivery_id)
    return delivery.status, delivery.attempts[-1].error


def test_a_4xx_fails_at_once_and_a_5xx_retries(db_session: Session) -> None:
    script = [Reply(404, body=b"no such hook"), Reply(503, {"Retry-After": "7"}, b"busy")]
    with http_receiver(script) as receiver:
        channel = webhook_channel("flaky-hook", receiver.url())
        refused = deliver_once(db_session, channel.id, alert())
        busy = deliver_once(db_session, channel.id, alert())
        received: list[Received] = receiver.wait_for(2)
    assert len(received) == 2
    assert received_error(db_session, refused) == (DeliveryStatus.failed, "HTTP 404: no such hook")
    assert received_error(db_session, busy) == (DeliveryStatus.retrying, "HTTP 503: busy")
    delivery = db_session.get_one(AlertDelivery, busy)
    assert delivery.next_attempt_at is not None
    wait = (delivery.next_attempt_at - delivery.attempts[0].at).total_seconds()
    # Retry-After (7 s) rather than the first backoff step (10 s).
    assert 7 <= wait < 9, wait


def test_only_the_start_of_a_huge_error_reply_is_kept(db_session: Session) -> None:
    with http_receiver([Reply(502, body=b"<html>" + b"x" * 5_000_000)]) as receiver:
        channel = webhook_channel("huge-hook", receiver.url())
        delivery_id = deliver_once(db_session, channel.id, alert())
    status, error = received_error(db_session, delivery_id)
    assert status is DeliveryStatus.retrying
    assert error is not None and error.startswith("HTTP 502: <html>xxx") and len(error) < 400
