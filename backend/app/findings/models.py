"""Acknowledgements: an operator's decision that a finding is known and should not count."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, utcnow


class Ack(Base):
    """Mutes one rule (or one finding of it) on one host or on every host, maybe until a time."""

    __tablename__ = "acks"

    id: Mapped[int] = mapped_column(primary_key=True)
    rule: Mapped[str] = mapped_column(String(64), index=True)
    # None: every host of the fleet.
    host_id: Mapped[int | None] = mapped_column(
        ForeignKey("hosts.id", ondelete="CASCADE"), index=True
    )
    # None: every finding of the rule in scope; else one finding's key (rule@file:line).
    finding_key: Mapped[str | None] = mapped_column(String(1200))
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(150))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(index=True)
    # Set once the periodic task has re-scored the hosts after this ack expired.
    expiry_applied: Mapped[bool] = mapped_column(default=False)
