"""Small factories of notifications and channels for the notify tests."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from app.core.db import SessionLocal
from app.notify import service
from app.notify.kinds import ChannelKind
from app.notify.models import AlertChannel
from app.notify.notification import AlertItem, AlertStatus, Notification
from app.notify.schemas import ChannelWrite
from app.users.models import Role, User

STARTED = datetime(2026, 11, 30, 14, 5, 0, tzinfo=UTC)
EXTERNAL_URL = "https://fleet.example.com"
CAUSE = (
    "worker_connections exhausted: the error log reported 'worker_connections are not "
    "enough' 37 times; Active 31 of 32 (1 worker x 32)"
)


def alert(
    hostname: str = "edge-1",
    *,
    status: AlertStatus = "firing",
    host_id: int = 3,
    incident_id: int | None = 7,
    labels: dict[str, str] | None = None,
    **fields: Any,
) -> AlertItem:
    """A dropped-connections alert of one host."""
    values: dict[str, Any] = {
        "status": status,
        "rule_key": "dropped-connections",
        "rule_name": "Dropped connections",
        "severity": "critical",
        "host_id": host_id,
        "hostname": hostname,
        "labels": {"env": "prod"} if labels is None else labels,
        "summary": f"412 connections dropped in 2 min on {hostname}",
        "description": "nginx accepted connections it could not handle.",
        "cause_code": "worker_connections",
        "cause_text": CAUSE,
        "value": 412.0,
        "unit": "connections",
        "started_at": STARTED,
        "ended_at": STARTED + timedelta(minutes=9) if status == "resolved" else None,
        "url": f"{EXTERNAL_URL}/alerts/incidents/{incident_id}",
        "finding_url": f"{EXTERNAL_URL}/hosts/{host_id}/config?finding=12",
        "fingerprint": f"{host_id:016x}",
        "incident_id": incident_id,
    }
    values.update(fields)
    return AlertItem(**values)


def notification(*alerts: AlertItem, event: str = "firing") -> Notification:
    """A notification of the dropped-connections rule (one firing alert by default)."""
    return Notification(
        event=event,  # type: ignore[arg-type]
        rule_key="dropped-connections",
        rule_name="Dropped connections",
        alerts=list(alerts) or [alert()],
        external_url=EXTERNAL_URL,
    )


def admin_user() -> User:
    """An admin to act as (audit entries need an actor)."""
    with SessionLocal() as session:
        user = User(username=f"admin-{secrets.token_hex(4)}", password_hash="x", role=Role.admin)
        session.add(user)
        session.commit()
        return user


def make_channel(
    name: str,
    kind: ChannelKind,
    settings: dict[str, Any] | None = None,
    secrets: dict[str, str] | None = None,
    *,
    enabled: bool = True,
) -> AlertChannel:
    """Create a channel through the service (settings checked, secrets encrypted)."""
    body = ChannelWrite(
        name=name, kind=kind, enabled=enabled, settings=settings or {}, secrets=secrets or {}
    )
    with SessionLocal() as session:
        return service.create_channel(session=session, body=body, actor=admin_user())


def webhook_channel(name: str, url: str, **options: Any) -> AlertChannel:
    """A webhook channel to url."""
    return make_channel(name, ChannelKind.webhook, {"url": url}, **options)
