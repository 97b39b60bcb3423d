"""Which incidents notify after an evaluation, grouped into one notification per rule."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from app.alerts.models import AlertRule, Incident, IncidentState
from app.alerts.readings import HostRow
from app.alerts.signals import SIGNALS
from app.core.config import get_settings
from app.notify import service as notify_service
from app.notify.notification import AlertItem, AlertStatus, Notification, NotificationEvent


def external_url() -> str:
    """The dashboard's address for links in notifications (relative when unknown)."""
    return (get_settings().public_url or "").rstrip("/")


def incident_url(incident_id: int) -> str:
    """The link to one incident's page."""
    return f"{external_url()}/alerts/incidents/{incident_id}"


def fingerprint(rule_key: str, host_id: int) -> str:
    """A stable id of the (rule, host) pair, as Alertmanager receivers expect one."""
    return hashlib.sha256(f"{rule_key}\x00{host_id}".encode()).hexdigest()[:16]


def alert_item(
    incident: Incident, rule: AlertRule, host: HostRow | None, status: AlertStatus
) -> AlertItem:
    """One incident as a notification's alert."""
    hostname = host.hostname if host else f"host {incident.host_id}"
    labels = host.labels if host else {}
    found = incident.cause or {}
    finding_url = (incident.finding or {}).get("url")
    return AlertItem(
        status=status,
        rule_key=incident.rule_key,
        rule_name=incident.rule_name,
        severity=incident.severity,
        host_id=incident.host_id,
        hostname=hostname,
        labels=dict(labels),
        summary=incident.summary,
        description=rule.description,
        cause_code=found.get("code"),
        cause_text=f"{found['title']}: {found['detail']}" if found else None,
        value=incident.value,
        unit=SIGNALS[rule.signal].unit if rule.signal in SIGNALS else "",
        started_at=incident.fired_at,
        ended_at=incident.resolved_at,
        url=incident_url(incident.id),
        finding_url=f"{external_url()}{finding_url}" if finding_url else None,
        fingerprint=fingerprint(incident.rule_key, incident.host_id),
        incident_id=incident.id,
    )


def _event(kinds: set[str]) -> NotificationEvent:
    """The event a grouped notification announces: a new firing wins over a repeat."""
    if "firing" in kinds:
        return "firing"
    return "repeat" if "repeat" in kinds else "resolved"


def notify(
    *,
    session: Session,
    now: datetime,
    rules: Mapping[int, AlertRule],
    hosts: Mapping[int, HostRow],
    open_incidents: Sequence[Incident],
    closed: Sequence[Incident],
) -> list[int]:
    """Queue the notifications this evaluation owes, one per rule and channel; delivery ids.

    An incident notifies once when it fires (or after its silence ends), again every
    repeat interval if the rule asks, and once when it resolves if its firing was announced."""
    groups: dict[int, list[tuple[str, Incident, AlertItem]]] = {}
    for incident in open_incidents:
        rule = rules.get(incident.rule_id)
        if rule is None or not rule.channel_ids or incident.silenced_by is not None:
            continue
        if incident.state is IncidentState.recovering:
            continue
        if incident.last_notified_at is None:
            kind = "firing"
        elif rule.repeat_interval_s and now - incident.last_notified_at >= timedelta(
            seconds=rule.repeat_interval_s
        ):
            kind = "repeat"
        else:
            continue
        incident.last_notified_at = now
        item = alert_item(incident, rule, hosts.get(incident.host_id), "firing")
        groups.setdefault(rule.id, []).append((kind, incident, item))
    for incident in closed:
        rule = rules.get(incident.rule_id)
        if rule is None or incident.last_notified_at is None or incident.notified_resolved:
            continue
        incident.notified_resolved = True
        if not rule.channel_ids:
            continue
        item = alert_item(incident, rule, hosts.get(incident.host_id), "resolved")
        groups.setdefault(rule.id, []).append(("resolved", incident, item))
    delivery_ids: list[int] = []
    for rule_id, items in groups.items():
        rule = rules[rule_id]
        notification = Notification(
            event=_event({kind for kind, _, _ in items}),
            rule_key=rule.key,
            rule_name=rule.name,
            alerts=[item for _, _, item in items],
            external_url=external_url(),
        )
        delivery_ids += notify_service.enqueue(
            session=session,
            channel_ids=list(rule.channel_ids),
            notification=notification,
            incident_ids=[incident.id for _, incident, _ in items],
        )
    return delivery_ids
