"""What the alerts engine hands to channels: one notification of one rule, its alerts.

Stored as JSON on each delivery row, so that a retry sends exactly what the first attempt sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast, get_args

AlertStatus = Literal["firing", "resolved"]
NotificationEvent = Literal["firing", "resolved", "repeat", "test"]

ALERT_STATUSES: frozenset[str] = frozenset(get_args(AlertStatus))
NOTIFICATION_EVENTS: frozenset[str] = frozenset(get_args(NotificationEvent))


def _time_to_json(value: datetime | None) -> str | None:
    """An aware datetime as ISO 8601 in UTC; naive values are refused (they would shift)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime in a notification; use an aware UTC value")
    return value.astimezone(UTC).isoformat()


def _time_from_json(value: Any) -> datetime | None:
    """The datetime of _time_to_json's output."""
    if value is None:
        return None
    return datetime.fromisoformat(str(value)).astimezone(UTC)


@dataclass(frozen=True)
class AlertItem:
    """One (rule, host) alert inside a notification."""

    status: AlertStatus
    rule_key: str
    rule_name: str
    severity: str
    host_id: int
    hostname: str
    labels: dict[str, str]
    summary: str
    description: str
    cause_code: str | None
    cause_text: str | None
    value: float | None
    unit: str
    started_at: datetime
    ended_at: datetime | None
    # Absolute link to the incident in the dashboard.
    url: str
    finding_url: str | None
    fingerprint: str
    # The incident this alert belongs to: deliveries are listed per incident by it.
    incident_id: int | None = None

    def __post_init__(self) -> None:
        if self.status not in ALERT_STATUSES:
            raise ValueError(f"alert status must be one of {sorted(ALERT_STATUSES)}")
        _time_to_json(self.started_at)
        _time_to_json(self.ended_at)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "status": self.status,
            "rule_key": self.rule_key,
            "rule_name": self.rule_name,
            "severity": self.severity,
            "host_id": self.host_id,
            "hostname": self.hostname,
            "labels": dict(self.labels),
            "summary": self.summary,
            "description": self.description,
            "cause_code": self.cause_code,
            "cause_text": self.cause_text,
            "value": self.value,
            "unit": self.unit,
            "started_at": _time_to_json(self.started_at),
            "ended_at": _time_to_json(self.ended_at),
            "url": self.url,
            "finding_url": self.finding_url,
            "fingerprint": self.fingerprint,
            "incident_id": self.incident_id,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AlertItem:
        """The AlertItem of to_json's output."""
        started_at = _time_from_json(data["started_at"])
        assert started_at is not None
        value = data.get("value")
        return cls(
            status=cast(AlertStatus, data["status"]),
            rule_key=str(data["rule_key"]),
            rule_name=str(data["rule_name"]),
            severity=str(data["severity"]),
            host_id=int(data["host_id"]),
            hostname=str(data["hostname"]),
            labels={str(k): str(v) for k, v in (data.get("labels") or {}).items()},
            summary=str(data.get("summary") or ""),
            description=str(data.get("description") or ""),
            cause_code=data.get("cause_code"),
            cause_text=data.get("cause_text"),
            value=None if value is None else float(value),
            unit=str(data.get("unit") or ""),
            started_at=started_at,
            ended_at=_time_from_json(data.get("ended_at")),
            url=str(data["url"]),
            finding_url=data.get("finding_url"),
            fingerprint=str(data["fingerprint"]),
            incident_id=data.get("incident_id"),
        )


@dataclass(frozen=True)
class Notification:
    """The alerts of one rule that one evaluation sends to its channels."""

    event: NotificationEvent
    rule_key: str
    rule_name: str
    alerts: list[AlertItem] = field(default_factory=list)
    # Absolute address of the dashboard (NGINX_FLEET_PUBLIC_URL).
    external_url: str = ""

    def __post_init__(self) -> None:
        if self.event not in NOTIFICATION_EVENTS:
            raise ValueError(f"notification event must be one of {sorted(NOTIFICATION_EVENTS)}")

    @property
    def firing(self) -> list[AlertItem]:
        """The alerts still firing."""
        return [alert for alert in self.alerts if alert.status == "firing"]

    @property
    def status(self) -> AlertStatus:
        """firing when any alert is firing, else resolved (Alertmanager's group status)."""
        return "firing" if self.firing else "resolved"

    @property
    def incident_ids(self) -> list[int]:
        """The incidents of the alerts, in order, without repeats."""
        ids = (alert.incident_id for alert in self.alerts if alert.incident_id is not None)
        return list(dict.fromkeys(ids))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "event": self.event,
            "rule_key": self.rule_key,
            "rule_name": self.rule_name,
            "alerts": [alert.to_json() for alert in self.alerts],
            "external_url": self.external_url,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Notification:
        """The Notification of to_json's output."""
        return cls(
            event=cast(NotificationEvent, data["event"]),
            rule_key=str(data["rule_key"]),
            rule_name=str(data["rule_name"]),
            alerts=[AlertItem.from_json(item) for item in data.get("alerts") or []],
            external_url=str(data.get("external_url") or ""),
        )
