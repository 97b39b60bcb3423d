"""Acknowledgements (create, list, delete, expiry) and the fleet's most common findings."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import service as audit_service
from app.configs.rescoring import latest_analysis_ids, rescore_latest
from app.core.errors import InvalidInputError, NotFoundError
from app.findings.models import Ack, Finding
from app.findings.muting import active_acks, matching_ack
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


def top_findings(*, session: Session, now: datetime) -> list[TopFinding]:
    """Each rule over every host's latest analysis, muted findings left out, most hosts first."""
    latest = latest_analysis_ids().subquery()
    rows = session.execute(
        select(
            Finding.host_id,
            Finding.rule,
            Finding.key,
            Finding.severity,
            Finding.category,
            Finding.message,
            Finding.doc_url,
        )
        .join(latest, latest.c.analysis_id == Finding.analysis_id)
        .order_by(Finding.id)
    ).all()
    acks = active_acks(session=session, now=now)
    hosts: dict[str, set[int]] = defaultdict(set)
    counts: dict[str, int] = defaultdict(int)
    first: dict[str, TopFinding] = {}
    for row in rows:
        if matching_ack(acks, host_id=row.host_id, rule=row.rule, key=row.key) is not None:
            continue
        hosts[row.rule].add(row.host_id)
        counts[row.rule] += 1
        if row.rule not in first:
            first[row.rule] = TopFinding(
                rule=row.rule,
                severity=row.severity,
                category=row.category,
                hosts=0,
                findings=0,
                example_message=row.message,
                doc_url=row.doc_url,
            )
    result = [
        top.model_copy(update={"hosts": len(hosts[rule]), "findings": counts[rule]})
        for rule, top in first.items()
    ]
    result.sort(key=lambda t: (-t.hosts, SEVERITY_RANK.get(t.severity, 3), -t.findings, t.rule))
    return result
