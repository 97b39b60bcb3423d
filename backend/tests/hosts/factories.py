"""Small factories of hosts and samples written straight to the database."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.core.db import SessionLocal
from app.core.security import hash_token
from app.hosts.models import Host
from app.metrics.models import Sample
from sqlalchemy import insert
from sqlalchemy.orm import Session


@dataclass(frozen=True)
class HostWithToken:
    """A host row's id with the raw token and agent id the agent would hold."""

    id: int
    token: str
    agent_id: str


def make_host(
    *,
    hostname: str = "web-1",
    labels: dict[str, str] | None = None,
    agent_id: str | None = None,
    **columns: Any,
) -> HostWithToken:
    """Insert an enrolled host and return it with its host token."""
    token = f"nfh_{secrets.token_urlsafe(16)}"
    agent_id = agent_id or f"agent-{secrets.token_hex(6)}"
    with SessionLocal() as session:
        host = Host(
            agent_id=agent_id,
            hostname=hostname,
            labels=labels if labels is not None else {"env": "prod"},
            token_hash=hash_token(token),
            **columns,
        )
        session.add(host)
        session.commit()
        return HostWithToken(id=host.id, token=token, agent_id=agent_id)


def sample_values(host_id: int, seq: int, ts: datetime, **figures: Any) -> dict[str, Any]:
    """A complete samples row with every optional figure None unless given."""
    row: dict[str, Any] = {
        column.name: None for column in Sample.__table__.columns if column.nullable
    }
    row.update(
        host_id=host_id,
        seq=seq,
        ts=ts,
        nginx_up=True,
        stub_status_available=True,
        extra={},
    )
    row.update(figures)
    return row


def insert_samples(session: Session, rows: list[dict[str, Any]]) -> None:
    """Bulk-insert samples rows and commit."""
    session.execute(insert(Sample), rows)
    session.commit()
