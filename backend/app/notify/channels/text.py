"""Plain-text renderings of a notification shared by the channels (titles, email bodies)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.notify.channels.base import absolute_url
from app.notify.notification import AlertItem, Notification


def title(notification: Notification) -> str:
    """[FIRING:N] rule name, [RESOLVED] rule name, or [TEST] for a channel test."""
    if notification.event == "test":
        return f"[TEST] {notification.rule_name}"
    if notification.status == "firing":
        return f"[FIRING:{len(notification.firing)}] {notification.rule_name}"
    return f"[RESOLVED] {notification.rule_name}"


def _when(value: datetime) -> str:
    """A time as operators read it in a message: 2026-11-30 14:05 UTC."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _value(alert: AlertItem) -> str:
    """The alert's value with its unit, as short as it reads well."""
    assert alert.value is not None
    return f"{alert.value:g} {alert.unit}".strip()


def alert_lines(alert: AlertItem, external_url: str) -> list[str]:
    """One alert as indented lines: host, summary, cause, value, links, labels."""
    if alert.status == "firing":
        since = f"firing since {_when(alert.started_at)}"
    else:
        ended = f" at {_when(alert.ended_at)}" if alert.ended_at else ""
        since = f"resolved{ended}, started {_when(alert.started_at)}"
    lines = [f"{alert.hostname} ({alert.severity}, {since})"]
    if alert.summary:
        lines.append(f"  {alert.summary}")
    if alert.cause_text:
        lines.append(f"  Cause: {alert.cause_text}")
    if alert.value is not None:
        lines.append(f"  Value: {_value(alert)}")
    lines.append(f"  Incident: {absolute_url(alert.url, external_url)}")
    if alert.finding_url:
        lines.append(f"  Config finding: {absolute_url(alert.finding_url, external_url)}")
    if alert.labels:
        labels = ", ".join(f"{key}={value}" for key, value in sorted(alert.labels.items()))
        lines.append(f"  Labels: {labels}")
    return lines


def plain_body(notification: Notification) -> str:
    """The whole notification as plain text (an email body)."""
    lines = [title(notification), ""]
    description = next((a.description for a in notification.alerts if a.description), "")
    if description:
        lines += [description, ""]
    for alert in notification.alerts:
        lines += [*alert_lines(alert, notification.external_url), ""]
    if notification.external_url:
        lines += ["-- ", f"nginx-fleet: {notification.external_url}"]
    return "\n".join(lines) + "\n"
