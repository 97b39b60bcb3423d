"""Writing and reading the audit log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.models import AuditEntry
from app.users.models import User


def actor_name(actor: User | str | None) -> str:
    """How an actor is written in the log: the username, a given label, or "system"."""
    if actor is None:
        return "system"
    if isinstance(actor, User):
        return actor.username
    return actor


def record(
    *,
    session: Session,
    actor: User | str | None,
    action: str,
    target: str,
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    """Add an audit entry to the session; the caller's commit stores it with the change itself."""
    entry = AuditEntry(
        actor=actor_name(actor), action=action, target=target, detail=dict(detail or {})
    )
    session.add(entry)
    return entry


def list_entries(*, session: Session, limit: int = 100) -> Sequence[AuditEntry]:
    """The newest entries first."""
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    return session.scalars(query).all()
