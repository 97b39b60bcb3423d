"""Small factories of hosts and samples written straight to the database."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.access_log.models import AccessLogRecent
from app.configs.models import AnalysisStatus, ConfigAnalysis, ConfigSnapshot
from app.core.db import SessionLocal
from app.core.security import hash_token
from app.hosts.models import SORTED_COPY_COLUMNS, Host
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
    """Insert an enrolled host and return it with its host token.

    Its sorted copies are those of the figures and last_seen_at given, as a push leaves them."""
    columns = {**sorted_copies(columns), **columns}
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


def sorted_copies(columns: dict[str, Any]) -> dict[str, Any]:
    """The sort_<column> copies (and sorted_at) of the SORTED_COPY_COLUMNS among `columns`."""
    copies = {f"sort_{name}": columns[name] for name in SORTED_COPY_COLUMNS if name in columns}
    if copies:
        copies["sorted_at"] = columns.get("last_seen_at")
    return copies


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
    )
    row.update(figures)
    return row


def insert_samples(session: Session, rows: list[dict[str, Any]]) -> None:
    """Bulk-insert samples rows and commit."""
    session.execute(insert(Sample), rows)
    session.commit()


def make_analysis(
    host_id: int,
    *,
    score: int | None,
    error_count: int = 0,
    warning_count: int = 0,
    ok: bool = True,
) -> int:
    """Insert a snapshot and an analysis of it for the host (its latest); returns its id."""
    with SessionLocal() as session:
        snapshot = ConfigSnapshot(host_id=host_id, hash=secrets.token_hex(32), dump="events {}\n")
        session.add(snapshot)
        session.flush()
        analysis = ConfigAnalysis(
            host_id=host_id,
            snapshot_id=snapshot.id,
            status=AnalysisStatus.ok if ok else AnalysisStatus.failed,
            score=score if ok else None,
            error_count=error_count,
            warning_count=warning_count,
            info_count=0,
            inputs_digest="0" * 64,
        )
        session.add(analysis)
        session.commit()
        return analysis.id


def make_recent_log(host_id: int, *, computed_at: datetime, **figures: float | None) -> None:
    """Insert the host's access-log figures of the last 15 minutes, computed at computed_at."""
    with SessionLocal() as session:
        session.add(
            AccessLogRecent(host_id=host_id, computed_at=computed_at, requests=100, **figures)
        )
        session.commit()
