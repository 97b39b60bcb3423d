"""Recommended changes (one patch for one host), their event trail, and fleet rollouts."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import Enum, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class ChangeStatus(enum.StrEnum):
    """Where a change is in its workflow (docs/changes.md, section 3)."""

    proposed = "proposed"
    approved = "approved"
    sent = "sent"
    applying = "applying"
    verified = "verified"
    rolled_back = "rolled_back"
    failed = "failed"
    refused = "refused"
    rejected = "rejected"
    superseded = "superseded"


# A change in one of these is finished: nothing moves it any more.
FINAL_STATUSES = frozenset(
    {
        ChangeStatus.verified,
        ChangeStatus.rolled_back,
        ChangeStatus.failed,
        ChangeStatus.refused,
        ChangeStatus.rejected,
        ChangeStatus.superseded,
    }
)
# Approved and sent changes are the host's pending action: repeated in push replies until the
# agent reports a step of it.
PENDING_STATUSES = (ChangeStatus.approved, ChangeStatus.sent)
# At most one change per host may be between approval and its outcome.
IN_FLIGHT_STATUSES = (ChangeStatus.approved, ChangeStatus.sent, ChangeStatus.applying)


def _status_column() -> Any:
    return Enum(ChangeStatus, native_enum=False, length=16, validate_strings=True)


class Change(Base):
    """One patch for one host: made from findings (or reversing a change), approved, applied."""

    __tablename__ = "changes"
    __table_args__ = (Index("ix_changes_host_id_status", "host_id", "status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"))
    # "fix" (from findings) or "rollback" (the reverse patch of `reverts_change_id`).
    kind: Mapped[str] = mapped_column(String(16), default="fix")
    reverts_change_id: Mapped[int | None] = mapped_column(
        ForeignKey("changes.id", ondelete="SET NULL")
    )
    rollout_id: Mapped[int | None] = mapped_column(
        ForeignKey("rollouts.id", ondelete="SET NULL"), index=True
    )
    # Wave of its rollout: 0 is the canary, then 1, 2, ...
    wave: Mapped[int | None]
    status: Mapped[ChangeStatus] = mapped_column(_status_column(), default=ChangeStatus.proposed)
    # The agent's latest step while applying (check, backup, write, test, reload, verify, ...).
    step: Mapped[str | None] = mapped_column(String(32))
    finding_keys: Mapped[list[str]] = mapped_column(JSONType, default=list)
    rules: Mapped[list[str]] = mapped_column(JSONType, default=list)
    title: Mapped[str] = mapped_column(String(500))
    base_snapshot_id: Mapped[int | None] = mapped_column(
        ForeignKey("config_snapshots.id", ondelete="SET NULL")
    )
    # The host's config hash the patch was made against: any other hash makes it stale.
    base_config_hash: Mapped[str] = mapped_column(String(64))
    diff: Mapped[str] = mapped_column(Text)
    # The patch the agent applies: [{path, base_sha256, new_sha256, ops}].
    files: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    edits: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    overrides: Mapped[dict[str, list[str]]] = mapped_column(JSONType, default=dict)
    score_before: Mapped[int | None]
    score_after: Mapped[int | None]
    comment: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[str] = mapped_column(String(150))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    approved_by: Mapped[str | None] = mapped_column(String(150))
    approved_at: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]
    # When the agent reported the outcome (verified or not).
    finished_at: Mapped[datetime | None]
    outcome_message: Mapped[str | None] = mapped_column(Text)
    failed_step: Mapped[str | None] = mapped_column(String(32))
    # Highest agent report seq stored for this change (reports are idempotent per seq).
    report_seq: Mapped[int] = mapped_column(default=0)
    # Before/after comparison once measured (app.changes.impact); None until then.
    impact: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # Consecutive failed checks of the metric gate after the apply (rollouts with auto rollback).
    gate_failures: Mapped[int] = mapped_column(default=0)


class ChangeEvent(Base):
    """One transition of a change or one step the agent reported, with who and when."""

    __tablename__ = "change_events"
    # An agent report is stored once per (change, seq); transitions by people have no seq.
    __table_args__ = (UniqueConstraint("change_id", "report_seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    change_id: Mapped[int] = mapped_column(ForeignKey("changes.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    status: Mapped[str] = mapped_column(String(16))
    step: Mapped[str | None] = mapped_column(String(32))
    step_status: Mapped[str | None] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(150))
    message: Mapped[str] = mapped_column(Text, default="")
    detail: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    report_seq: Mapped[int | None]


class RolloutStatus(enum.StrEnum):
    """Whether a rollout still sends waves."""

    running = "running"
    completed = "completed"
    stopped = "stopped"


class Rollout(Base):
    """One fix for many hosts, in waves: a canary first, then batches; stops at a failure."""

    __tablename__ = "rollouts"

    id: Mapped[int] = mapped_column(primary_key=True)
    rule: Mapped[str] = mapped_column(String(64))
    # {key: [values]}: hosts matching every key (any of its values); {} is the whole fleet.
    labels: Mapped[dict[str, list[str]]] = mapped_column(JSONType, default=dict)
    status: Mapped[RolloutStatus] = mapped_column(
        Enum(RolloutStatus, native_enum=False, length=16, validate_strings=True),
        default=RolloutStatus.running,
    )
    stop_reason: Mapped[str | None] = mapped_column(Text)
    canary: Mapped[int] = mapped_column(default=1)
    batch_size: Mapped[int] = mapped_column(default=5)
    # {"drops": bool, "error_share_rise": float | None, "checks": int} or None.
    auto_rollback: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # Hosts that matched but got no change, with why: [{host_id, hostname, reason}].
    skipped: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    comment: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[str] = mapped_column(String(150))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
