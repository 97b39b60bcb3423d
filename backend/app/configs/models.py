"""nginx -T dumps as received from the agents and their analyses (findings: app.findings)."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import Enum, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


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


class AnalysisStatus(enum.StrEnum):
    """Whether the engine ran to the end on a snapshot."""

    ok = "ok"
    failed = "failed"


class ConfigAnalysis(Base):
    """One run of the rules over a snapshot with the host's facts and last hour of metrics."""

    __tablename__ = "config_analyses"
    # (host_id, id): "the latest analysis of each host" is the highest id per host.
    # (host_id, analyzed_at): a host's score history and the pruning of its old analyses.
    # (snapshot_id, id): "the latest analysis of a snapshot" (the config tab, pruning).
    __table_args__ = (
        Index("ix_config_analyses_host_id_id", "host_id", "id"),
        Index("ix_config_analyses_host_id_analyzed_at", "host_id", "analyzed_at"),
        Index("ix_config_analyses_snapshot_id_id", "snapshot_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"))
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("config_snapshots.id", ondelete="CASCADE"))
    analyzed_at: Mapped[datetime] = mapped_column(default=utcnow)
    status: Mapped[AnalysisStatus] = mapped_column(
        Enum(AnalysisStatus, native_enum=False, length=16, validate_strings=True)
    )
    # None when the engine failed; muted findings are left out of the score and the counts.
    score: Mapped[int | None]
    category_scores: Mapped[dict[str, int]] = mapped_column(JSONType, default=dict)
    error_count: Mapped[int] = mapped_column(default=0)
    warning_count: Mapped[int] = mapped_column(default=0)
    info_count: Mapped[int] = mapped_column(default=0)
    # SHA-256 of the facts and the (rounded) metrics window the rules saw.
    inputs_digest: Mapped[str] = mapped_column(String(64))
    inputs: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    error: Mapped[str | None] = mapped_column(Text)


class PendingAnalysis(Base):
    """A host whose analysis is queued: at most one queued analysis per host.

    The task removes the row when it starts and then analyses the host's current snapshot, so a
    burst of snapshots costs one or two analyses. A row older than the claim timeout is taken
    as a lost task and may be claimed again."""

    __tablename__ = "pending_analyses"

    host_id: Mapped[int] = mapped_column(
        ForeignKey("hosts.id", ondelete="CASCADE"), primary_key=True
    )
    queued_at: Mapped[datetime] = mapped_column(default=utcnow)
