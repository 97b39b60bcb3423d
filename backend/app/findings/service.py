"""Acknowledgements (create, list, delete, expiry) and the fleet's most common findings."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, Subquery, case, exists, func, or_, select, true
from sqlalchemy.orm import Session

from app.audit import service as audit_service
from app.configs.models import ConfigAnalysis
from app.configs.rescoring import latest_analysis_id_of, rescore_latest
from app.core.errors import InvalidInputError, NotFoundError
from app.findings.models import Ack, Finding
from app.findings.schemas import AckCreate, TopFinding
from app.hosts.models import Host
from app.users.models import User

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


def _hosts_in_scope(ack: Ack) -> list[int] | None:
    """Hosts whose latest score an ack can change: its host, or all (None) when fleet-wide."""
    return [ack.host_id] if ack.host_id is not None else None


def list_acks(*, session: Session) -> Sequence[Ack]:
    """Every acknowledgement, newest first (expired ones included, for the record)."""
    return session.scalars(select(Ack).order_by(Ack.id.desc())).all()


def create_ack(*, session: Session, body: AckCreate, actor: User, now: datetime) -> Ack:
    """Mute findings, re-score the hosts concerned; audited; commits."""
    # FOR KEY SHARE: a delete of the host waits until this ack is committed (or refused).
    host_query = (
        select(Host.id).where(Host.id == body.host_id).with_for_update(read=True, key_share=True)
    )
    if body.host_id is not None and session.scalar(host_query) is None:
        raise NotFoundError(f"host {body.host_id} does not exist")
    if body.finding_key is not None and not body.finding_key.startswith(f"{body.rule}@"):
        raise InvalidInputError(
            f"finding_key {body.finding_key!r} is not a finding of rule {body.rule} "
            f"(keys look like {body.rule}@/etc/nginx/nginx.conf:http/server[example.com]/listen)"
        )
    if body.expires_at is not None and body.expires_at.tzinfo is None:
        raise InvalidInputError("expires_at needs a time zone, e.g. 2026-12-01T00:00:00Z")
    if body.expires_at is not None and body.expires_at <= now:
        raise InvalidInputError("expires_at is in the past: the acknowledgement would do nothing")
    ack = Ack(
        rule=body.rule,
        host_id=body.host_id,
        finding_key=body.finding_key,
        reason=body.reason,
        created_by=actor.username,
        created_at=now,
        expires_at=body.expires_at,
    )
    session.add(ack)
    session.flush()
    audit_service.record(
        session=session,
        actor=actor,
        action="ack.create",
        target=f"ack:{ack.id}",
        detail={
            "rule": ack.rule,
            "host_id": ack.host_id,
            "finding_key": ack.finding_key,
            "reason": ack.reason,
            "expires_at": ack.expires_at.isoformat() if ack.expires_at else None,
        },
    )
    rescore_latest(session=session, host_ids=_hosts_in_scope(ack), now=now)
    session.commit()
    return ack


def delete_ack(*, session: Session, ack_id: int, actor: User, now: datetime) -> None:
    """Unmute: remove an acknowledgement and re-score the hosts concerned; audited; commits."""
    # Locked so that two deletes of one ack queue up and the second finds it gone (404).
    ack = session.scalar(select(Ack).where(Ack.id == ack_id).with_for_update())
    if ack is None:
        raise NotFoundError(f"acknowledgement {ack_id} does not exist")
    scope = _hosts_in_scope(ack)
    audit_service.record(
        session=session,
        actor=actor,
        action="ack.delete",
        target=f"ack:{ack_id}",
        detail={"rule": ack.rule, "host_id": ack.host_id, "finding_key": ack.finding_key},
    )
    session.delete(ack)
    session.flush()
    rescore_latest(session=session, host_ids=scope, now=now)
    session.commit()


def apply_expired_acks(*, session: Session, now: datetime) -> int:
    """Re-score the hosts of acks that expired since the last run; returns analyses re-scored."""
    expired = session.scalars(
        select(Ack).where(Ack.expires_at <= now, Ack.expiry_applied.is_(False))
    ).all()
    if not expired:
        return 0
    # One fleet-wide ack among them means every host's score may change.
    fleet_wide = any(ack.host_id is None for ack in expired)
    host_ids = None if fleet_wide else sorted({ack.host_id for ack in expired if ack.host_id})
    rescored = rescore_latest(session=session, host_ids=host_ids, now=now)
    for ack in expired:
        ack.expiry_applied = True
    session.commit()
    return rescored


def unmuted(now: datetime) -> ColumnElement[bool]:
    """No acknowledgement in force at `now` mutes the Finding row (app.findings.muting in SQL)."""
    return ~exists().where(
        Ack.rule == Finding.rule,
        or_(Ack.host_id.is_(None), Ack.host_id == Finding.host_id),
        or_(Ack.finding_key.is_(None), Ack.finding_key == Finding.key),
        or_(Ack.expires_at.is_(None), Ack.expires_at > now),
    )


def latest_analysis_ids(dialect: str) -> Subquery:
    """The id of each host's latest analysis (column analysis_id), one index probe per host.

    On PostgreSQL a LATERAL join, which the planner runs once per host; SQLite has no LATERAL
    and takes the correlated max(id)."""
    if dialect == "postgresql":
        newest = (
            select(ConfigAnalysis.id)
            .where(ConfigAnalysis.host_id == Host.id)
            .order_by(ConfigAnalysis.id.desc())
            .limit(1)
            .lateral("newest")
        )
        query = select(newest.c.id.label("analysis_id")).select_from(Host).join(newest, true())
    else:
        query = select(latest_analysis_id_of(Host.id.expression).label("analysis_id")).select_from(
            Host
        )
    return query.subquery("latest")


def top_findings_query(*, dialect: str, now: datetime) -> Select[Any]:
    """Each rule over every host's latest analysis, muted findings left out, most hosts first.

    Counted by the database in two hash aggregations (per rule and host, then per rule) over
    the findings ix_findings_analysis_id finds for each latest analysis; the example shown is
    the rule's first finding."""
    latest = latest_analysis_ids(dialect)
    per_host = (
        select(
            Finding.rule,
            func.count().label("findings"),
            func.min(Finding.id).label("first_id"),
        )
        .join(latest, latest.c.analysis_id == Finding.analysis_id)
        .where(unmuted(now))
        .group_by(Finding.rule, Finding.host_id)
        .subquery("per_host")
    )
    counted = (
        select(
            per_host.c.rule,
            func.count().label("hosts"),
            func.sum(per_host.c.findings).label("findings"),
            func.min(per_host.c.first_id).label("first_id"),
        )
        .group_by(per_host.c.rule)
        .subquery("counted")
    )
    severity_rank = case(
        *((Finding.severity == name, rank) for name, rank in SEVERITY_RANK.items()),
        else_=len(SEVERITY_RANK),
    )
    return (
        select(
            counted.c.rule,
            counted.c.hosts,
            counted.c.findings,
            Finding.severity,
            Finding.category,
            Finding.message,
            Finding.doc_url,
        )
        .join(Finding, Finding.id == counted.c.first_id)
        .order_by(counted.c.hosts.desc(), severity_rank, counted.c.findings.desc(), counted.c.rule)
    )


def top_findings(*, session: Session, now: datetime) -> list[TopFinding]:
    """The rules hitting the most hosts (top_findings_query)."""
    return [
        TopFinding(
            rule=row.rule,
            severity=row.severity,
            category=row.category,
            hosts=row.hosts,
            findings=row.findings,
            example_message=row.message,
            doc_url=row.doc_url,
        )
        for row in session.execute(
            top_findings_query(dialect=session.get_bind().dialect.name, now=now)
        )
    ]
