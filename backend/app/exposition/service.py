"""The scrape token (create, state, delete, check) and the fleet figures /metrics exposes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, select
from sqlalchemy.orm import Session

from app.audit import service as audit
from app.core.db import Base, utcnow
from app.core.errors import NotAuthenticatedError
from app.core.security import hash_token, new_token
from app.exposition.models import MetricsToken
from app.exposition.schemas import MetricsTokenState
from app.hosts.models import Host
from app.hosts.schemas import HostStatus
from app.hosts.status import host_status
from app.metrics.models import Sample
from app.users.models import User

METRICS_TOKEN_PREFIX = "nfm_"  # noqa: S105 - a prefix, not a secret
TOKEN_PATH = "/api/v1/metrics-token"  # noqa: S105 - a route, not a secret
# Figures of the newest sample exposed per host.
SAMPLE_FIGURES = (
    "active",
    "reading",
    "writing",
    "waiting",
    "req_per_s",
    "accepts_per_s",
    "drops_per_s",
    "fds_open",
    "fds_limit",
)
SEVERITIES = ("critical", "warning", "info")
# Incidents in these states count as firing alerts.
FIRING_STATES = ("firing", "recovering")
INCIDENTS_TABLE = "alert_incidents"


def token_state(*, session: Session) -> MetricsTokenState:
    """Whether a scrape token is set and when it was made."""
    created_at = session.scalar(select(func.max(MetricsToken.created_at)))
    return MetricsTokenState(set=created_at is not None, created_at=created_at)


def create_token(*, session: Session, actor: User) -> str:
    """A new scrape token replacing the previous one; its value exists only in the reply."""
    token = new_token(METRICS_TOKEN_PREFIX)
    session.execute(delete(MetricsToken))
    session.add(MetricsToken(token_hash=hash_token(token), created_by=actor.id))
    audit.record(
        session=session, actor=actor, action="metrics_token.create", target="metrics_token"
    )
    session.commit()
    return token


def delete_token(*, session: Session, actor: User) -> None:
    """Remove the scrape token: /metrics then refuses every scrape."""
    if session.scalar(select(func.count()).select_from(MetricsToken)):
        session.execute(delete(MetricsToken))
        audit.record(
            session=session, actor=actor, action="metrics_token.delete", target="metrics_token"
        )
    session.commit()


def check_scrape(*, session: Session, authorization: str | None) -> None:
    """Let a scrape through only with the current token; 401 saying what is missing."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if session.scalar(select(func.count()).select_from(MetricsToken)) == 0:
        raise NotAuthenticatedError(
            "no metrics token is configured: an admin creates one with "
            f"POST {TOKEN_PATH} (Settings page), then Prometheus sends it as "
            "'Authorization: Bearer <token>' (authorization.credentials in scrape_config)"
        )
    if scheme.lower() != "bearer" or not token:
        raise NotAuthenticatedError("send the metrics token as 'Authorization: Bearer <token>'")
    found = session.scalar(
        select(MetricsToken.id).where(MetricsToken.token_hash == hash_token(token))
    )
    if found is None:
        raise NotAuthenticatedError("unknown metrics token (it may have been replaced or deleted)")


@dataclass(frozen=True)
class HostFigures:
    """One host as /metrics shows it."""

    host_id: int
    hostname: str
    labels: dict[str, str]
    status: HostStatus
    last_seen_age_s: float | None
    # The newest sample's figures; empty when the host is silent (stale figures would mislead).
    sample: dict[str, float]


@dataclass(frozen=True)
class FleetFigures:
    """Every host, and the firing alerts per severity (None before alerting exists)."""

    hosts: list[HostFigures]
    firing_by_severity: dict[str, int] | None


def _host_figures(row: Sequence[Any], now: datetime, push_interval_s: int) -> HostFigures:
    """HostFigures from a row of fleet_figures' query: host columns, then SAMPLE_FIGURES."""
    host_id, hostname, labels, last_seen_at, nginx_up, stub_status_available = row[:6]
    status, _reason = host_status(
        last_seen_at=last_seen_at,
        nginx_up=nginx_up,
        stub_status_available=stub_status_available,
        stub_status_error=None,
        now=now,
        push_interval_s=push_interval_s,
    )
    sample: dict[str, float] = {}
    if status in ("up", "down"):
        sample = {
            name: float(value)
            for name, value in zip(SAMPLE_FIGURES, row[6:], strict=True)
            if value is not None
        }
    age = None if last_seen_at is None else max((now - last_seen_at).total_seconds(), 0.0)
    return HostFigures(
        host_id=host_id,
        hostname=hostname,
        labels=dict(labels or {}),
        status=status,
        last_seen_age_s=age,
        sample=sample,
    )


def firing_by_severity(session: Session) -> dict[str, int] | None:
    """Firing alerts per severity; None while no incidents table is mapped (alerting absent)."""
    table = Base.metadata.tables.get(INCIDENTS_TABLE)
    if table is None:
        return None
    counts = dict.fromkeys(SEVERITIES, 0)
    rows = session.execute(
        select(table.c.severity, func.count())
        .where(table.c.state.in_(FIRING_STATES))
        .group_by(table.c.severity)
    )
    for severity, count in rows:
        counts[str(severity)] = int(count)
    return counts


def fleet_figures(
    *, session: Session, push_interval_s: int, now: datetime | None = None
) -> FleetFigures:
    """Every host with its newest sample (one query), and the firing alerts."""
    now = now or utcnow()
    sample_columns = [Sample.__table__.c[name] for name in SAMPLE_FIGURES]
    rows = session.execute(
        select(
            Host.id,
            Host.hostname,
            Host.labels,
            Host.last_seen_at,
            Host.nginx_up,
            Host.stub_status_available,
            *sample_columns,
        )
        .outerjoin(Sample, and_(Sample.host_id == Host.id, Sample.seq == Host.last_seq))
        .order_by(Host.id)
    )
    hosts = [_host_figures(row, now, push_interval_s) for row in rows]
    return FleetFigures(hosts=hosts, firing_by_severity=firing_by_severity(session))
