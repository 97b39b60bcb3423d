"""The channel senders, chosen by kind; each turns every failure into a SendResult."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from app.notify.channels import email, slack, webhook
from app.notify.channels.base import SEND_TIMEOUT_S, SendResult
from app.notify.kinds import ChannelKind, EmailSettings, SlackSettings, WebhookSettings
from app.notify.notification import Notification


def send(
    *,
    kind: ChannelKind,
    channel_name: str,
    settings: dict[str, Any],
    secrets: dict[str, str],
    notification: Notification,
    timeout_s: float = SEND_TIMEOUT_S,
) -> SendResult:
    """Send a notification through a channel of this kind with its stored settings."""
    try:
        if kind is ChannelKind.webhook:
            return webhook.send(
                notification,
                channel_name=channel_name,
                settings=WebhookSettings.model_validate(settings),
                secrets=secrets,
                timeout_s=timeout_s,
            )
        if kind is ChannelKind.slack:
            return slack.send(
                notification,
                channel_name=channel_name,
                settings=SlackSettings.model_validate(settings),
                secrets=secrets,
                timeout_s=timeout_s,
            )
        return email.send(
            notification,
            channel_name=channel_name,
            settings=EmailSettings.model_validate(settings),
            secrets=secrets,
            timeout_s=timeout_s,
        )
    except ValidationError as error:
        # Stored settings the current code refuses (edited in the database, or an old shape).
        reason = "; ".join(
            f"settings.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()
        )
        return SendResult(ok=False, error=f"invalid channel settings: {reason}", permanent=True)
