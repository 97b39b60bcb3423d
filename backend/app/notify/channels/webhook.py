"""Webhook channel: the Prometheus Alertmanager webhook payload (version 4), POSTed as JSON.

Field names and shapes follow Alertmanager's notify/webhook (Message) and template (Data,
Alert), so that receivers written for Alertmanager take these notifications unchanged.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app.notify.channels.base import SendResult, absolute_url, post_json
from app.notify.kinds import WebhookSettings
from app.notify.notification import AlertItem, Notification

PAYLOAD_VERSION = "4"
# Go's zero time.Time as Alertmanager marshals it: the endsAt of an alert still firing.
ZERO_TIME = "0001-01-01T00:00:00Z"
# A fleet-wide rule may fire on thousands of hosts; receivers choke on unbounded bodies.
MAX_ALERTS = 1000


def rfc3339(value: datetime) -> str:
    """An aware datetime as RFC 3339 in UTC with a Z, like Go's time.Time JSON."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def alert_labels(alert: AlertItem) -> dict[str, str]:
    """The host's labels, then alertname, severity and host (which win over host labels)."""
    return {
        **alert.labels,
        "alertname": alert.rule_key,
        "severity": alert.severity,
        "host": alert.hostname,
    }


def alert_annotations(alert: AlertItem, external_url: str) -> dict[str, str]:
    """summary, description, cause and finding_url, each only when known."""
    annotations = {
        "summary": alert.summary,
        "description": alert.description,
        "cause": alert.cause_text,
        "finding_url": absolute_url(alert.finding_url, external_url) if alert.finding_url else None,
    }
    return {name: value for name, value in annotations.items() if value}


def alert_json(alert: AlertItem, *, external_url: str, now: datetime) -> dict[str, Any]:
    """One alert as Alertmanager's template.Alert."""
    ends_at = ZERO_TIME if alert.status == "firing" else rfc3339(alert.ended_at or now)
    return {
        "status": alert.status,
        "labels": alert_labels(alert),
        "annotations": alert_annotations(alert, external_url),
        "startsAt": rfc3339(alert.started_at),
        "endsAt": ends_at,
        "generatorURL": absolute_url(alert.url, external_url),
        "fingerprint": alert.fingerprint,
    }


def common(maps: list[dict[str, str]]) -> dict[str, str]:
    """The pairs every map has (Alertmanager's commonLabels / commonAnnotations)."""
    if not maps:
        return {}
    shared = dict(maps[0])
    for other in maps[1:]:
        shared = {key: value for key, value in shared.items() if other.get(key) == value}
    return shared


def build_payload(
    notification: Notification, *, receiver: str, now: datetime | None = None
) -> dict[str, Any]:
    """The Alertmanager v4 webhook body of a notification sent to the channel `receiver`."""
    now = now or datetime.now(UTC)
    alerts = [
        alert_json(alert, external_url=notification.external_url, now=now)
        for alert in notification.alerts[:MAX_ALERTS]
    ]
    return {
        "version": PAYLOAD_VERSION,
        # Alertmanager's group key: the route ({} for the root) and the group labels.
        "groupKey": "{}:{alertname=" + json.dumps(notification.rule_key) + "}",
        "truncatedAlerts": max(len(notification.alerts) - MAX_ALERTS, 0),
        "status": notification.status,
        "receiver": receiver,
        "groupLabels": {"alertname": notification.rule_key},
        "commonLabels": common([alert["labels"] for alert in alerts]),
        "commonAnnotations": common([alert["annotations"] for alert in alerts]),
        "externalURL": notification.external_url,
        "alerts": alerts,
    }


def send(
    notification: Notification,
    *,
    channel_name: str,
    settings: WebhookSettings,
    secrets: dict[str, str],
    timeout_s: float,
) -> SendResult:
    """POST the payload to the channel's URL, with its bearer token when one is set."""
    token = secrets.get("bearer_token")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return post_json(
        settings.url,
        build_payload(notification, receiver=channel_name),
        headers=headers,
        secrets=[token] if token else [],
        timeout_s=timeout_s,
    )
