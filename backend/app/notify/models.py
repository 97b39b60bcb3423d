"""Alert channels, the deliveries of notifications to them, and each delivery's attempts."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import Enum, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.db import Base, JSONType, utcnow
from app.notify.kinds import ChannelKind


class DeliveryStatus(enum.StrEnum):
    """Where a delivery stands: waiting for its first or next attempt, or done."""

    pending = "pending"
    retrying = "retrying"
    sent = "sent"
    failed = "failed"


class AlertChannel(Base):
    """A place notifications go: a webhook, a Slack webhook or email recipients."""

    __tablename__ = "alert_channels"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[ChannelKind] = mapped_column(
        Enum(ChannelKind, native_enum=False, length=16, validate_strings=True)
    )
    enabled: Mapped[bool] = mapped_column(default=True)
    settings: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # Fernet token of the secrets as JSON (app.notify.secrets); never returned by the API.
    secrets_encrypted: Mapped[str | None] = mapped_column(Text)
    # Names of the secrets set, so that listing channels never needs to decrypt.
    secret_names: Mapped[list[str]] = mapped_column(JSONType, default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class AlertDelivery(Base):
    """One notification to one channel, with its status and when it is tried next."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (
        Index("ix_alert_deliveries_channel_id_id", "channel_id", "id"),
        Index("ix_alert_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_alert_deliveries_rule_key_created_at", "rule_key", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("alert_channels.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(16))
    rule_key: Mapped[str] = mapped_column(String(100))
    incident_ids: Mapped[list[int]] = mapped_column(JSONType, default=list)
    # The Notification as JSON (app.notify.notification): every attempt sends the same content.
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType)
    status: Mapped[DeliveryStatus] = mapped_column(
        Enum(DeliveryStatus, native_enum=False, length=16, validate_strings=True),
        default=DeliveryStatus.pending,
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # None once sent or failed.
    next_attempt_at: Mapped[datetime | None]
    attempt_count: Mapped[int] = mapped_column(default=0)

    # Loaded on demand: a joined load would make the delivery's row lock take the channel's too.
    channel: Mapped[AlertChannel] = relationship()
    attempts: Mapped[list[AlertDeliveryAttempt]] = relationship(
        order_by="AlertDeliveryAttempt.n", lazy="selectin", passive_deletes=True
    )


class AlertDeliveryAttempt(Base):
    """One try of a delivery: when, how long, and what the receiver answered."""

    __tablename__ = "alert_delivery_attempts"

    id: Mapped[int] = mapped_column(primary_key=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("alert_deliveries.id", ondelete="CASCADE"), index=True
    )
    n: Mapped[int]
    at: Mapped[datetime] = mapped_column(default=utcnow)
    ok: Mapped[bool]
    status_code: Mapped[int | None]
    error: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int]
