"""Slack channel: an incoming-webhook message (text for notifications, blocks for the channel)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from app.notify import pacing
from app.notify.channels.base import SendResult, absolute_url, post_json
from app.notify.channels.text import title
from app.notify.kinds import SlackSettings
from app.notify.notification import AlertItem, Notification

# Slack: at most 50 blocks per message, 3000 characters per section, 150 per header.
MAX_ALERT_SECTIONS = 40
MAX_SECTION_CHARS = 2900
MAX_HEADER_CHARS = 150
# Slack's guidance for incoming webhooks: one message per second.
SPACING_S = 1.0


def escape(text: str) -> str:
    """Text safe inside Slack mrkdwn (&, < and > are control characters there)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def alert_section(alert: AlertItem, external_url: str) -> str:
    """One alert in mrkdwn: host (linked to the incident), summary, cause, finding."""
    url = absolute_url(alert.url, external_url)
    lines = [f"*<{url}|{escape(alert.hostname)}>* ({alert.severity}, {alert.status})"]
    if alert.summary:
        lines.append(escape(alert.summary))
    if alert.cause_text:
        lines.append(f"Cause: {escape(alert.cause_text)}")
    if alert.finding_url:
        lines.append(f"<{absolute_url(alert.finding_url, external_url)}|Related config finding>")
    return "\n".join(lines)[:MAX_SECTION_CHARS]


def build_message(notification: Notification) -> dict[str, Any]:
    """The webhook body: a plain-text fallback and the blocks that list the alerts."""
    heading = title(notification)
    shown = notification.alerts[:MAX_ALERT_SECTIONS]
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": heading[:MAX_HEADER_CHARS]}}
    ]
    for alert in shown:
        text = alert_section(alert, notification.external_url)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    hidden = len(notification.alerts) - len(shown)
    if hidden > 0:
        more = f"and {hidden} more; see <{notification.external_url}|the dashboard>"
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": more}]})
    hosts = ", ".join(alert.hostname for alert in shown)
    return {"text": f"{heading}: {hosts}" if hosts else heading, "blocks": blocks}


def send(
    notification: Notification,
    *,
    channel_name: str,
    settings: SlackSettings,
    secrets: dict[str, str],
    timeout_s: float,
) -> SendResult:
    """POST the message to the webhook URL, waiting for this webhook's next turn first."""
    url = secrets.get("webhook_url")
    if not url:
        return SendResult(ok=False, error="the Slack webhook URL is not set", permanent=True)
    pacing.wait_turn(url, spacing_s=SPACING_S)
    # The path is the secret part of a Slack webhook URL; an error page may echo it alone.
    path = urlsplit(url).path
    hidden = [path] if len(path) > 1 else []
    return post_json(url, build_message(notification), secrets=hidden, timeout_s=timeout_s)
