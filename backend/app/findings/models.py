"""Findings of the config analyses, and the acknowledgements that mute them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class Ack(Base):
    """Mutes one rule (or one finding of it) on one host or on every host, maybe until a time."""

    __tablename__ = "acks"

    id: Mapped[int] = mapped_column(primary_key=True)
    rule: Mapped[str] = mapped_column(String(64), index=True)
    # None: every host of the fleet.
    host_id: Mapped[int | None] = mapped_column(
        ForeignKey("hosts.id", ondelete="CASCADE"), index=True
    )
    # None: every finding of the rule in scope; else one finding's key: rule, file, block path
    # and directive (rule@file:place/directive, see the engine's Finding.key), no line number.
    finding_key: Mapped[str | None] = mapped_column(String(1200))
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(150))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(index=True)
    # Set once the periodic task has re-scored the hosts after this ack expired.
    expiry_applied: Mapped[bool] = mapped_column(default=False)


class Finding(Base):
    """One finding of an analysis, as the engine reported it."""

    __tablename__ = "findings"
    __table_args__ = (Index("ix_findings_host_id_analysis_id", "host_id", "analysis_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    analysis_id: Mapped[int] = mapped_column(
        ForeignKey("config_analyses.id", ondelete="CASCADE"), index=True
    )
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(1200))
    # Block path and directive the finding is about (they make the key); '' when none.
    place: Mapped[str] = mapped_column(String(1200), default="", server_default="")
    directive: Mapped[str] = mapped_column(String(300), default="", server_default="")
    rule: Mapped[str] = mapped_column(String(64), index=True)
    severity: Mapped[str] = mapped_column(String(16))
    category: Mapped[str] = mapped_column(String(32))
    file: Mapped[str] = mapped_column(String(1024))
    line: Mapped[int]
    message: Mapped[str] = mapped_column(Text)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    fix: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    doc_url: Mapped[str] = mapped_column(String(1024), default="")
