"""nginx -T dumps as received from the agents."""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import Enum, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, utcnow


class ParseStatus(enum.StrEnum):
    """Where a snapshot is in its analysis."""

    pending = "pending"
    parsed = "parsed"
    error = "error"


class ConfigSnapshot(Base):
    """One distinct configuration of a host (stored once per hash) and its parse summary."""

    __tablename__ = "config_snapshots"
    __table_args__ = (UniqueConstraint("host_id", "hash"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), index=True)
    hash: Mapped[str] = mapped_column(String(64))
    dump: Mapped[str] = mapped_column(Text)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    parse_status: Mapped[ParseStatus] = mapped_column(
        Enum(ParseStatus, native_enum=False, length=16, validate_strings=True),
        default=ParseStatus.pending,
    )
    file_count: Mapped[int | None]
    line_count: Mapped[int | None]
    parse_errors: Mapped[str | None] = mapped_column(Text)
    analyzed_at: Mapped[datetime | None]
