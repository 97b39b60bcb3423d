"""One fix for many hosts, in waves: a canary, then batches; stopped at the first bad host."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import service as audit_service
from app.changes import impact, proposals, service
from app.changes.models import (
    Change,
    ChangeStatus,
    Rollout,
    RolloutStatus,
)
from app.changes.schemas import RolloutCreate, RolloutHost, RolloutRead
from app.configs.models import ConfigAnalysis
from app.core.config import get_settings
from app.core.errors import ConflictError, InvalidInputError, NotFoundError
from app.findings.models import Finding
from app.hosts.models import Host
from app.users.models import User

# How often the beat task checks the metric gate; a gate of N checks watches N of these.
GATE_INTERVAL = timedelta(seconds=30)
BAD_OUTCOMES = (ChangeStatus.failed, ChangeStatus.refused, ChangeStatus.rolled_back)


def _matches(labels: dict[str, str], wanted: dict[str, list[str]]) -> bool:
    return all(labels.get(key) in values for key, values in wanted.items())


def _fixable_keys(session: Session, host: Host, rule: str, snapshot_id: int) -> list[str]:
    """Keys of the rule's fixable findings in the latest analysis of the host's current config."""
    latest = session.scalar(
        select(func.max(ConfigAnalysis.id)).where(ConfigAnalysis.host_id == host.id)
    )
    analysis = session.get(ConfigAnalysis, latest) if latest is not None else None
    if analysis is None or analysis.snapshot_id != snapshot_id:
        return []
    rows = session.execute(
        select(Finding.key, Finding.fix).where(
            Finding.analysis_id == analysis.id, Finding.rule == rule
        )
    )
    return sorted(
        row.key for row in rows if row.fix and row.fix.get("action") not in (None, "none")
    )


def create_rollout(*, session: Session, body: RolloutCreate, actor: User, now: datetime) -> Rollout:
    """Propose the rule's fix on every matching host, approve the canary wave; commits."""
    rollout = Rollout(
        rule=body.rule,
        labels=dict(body.labels),
        canary=body.canary,
        batch_size=body.batch_size,
        auto_rollback=body.auto_rollback.model_dump() if body.auto_rollback else None,
        comment=body.comment,
        created_by=actor.username,
        created_at=now,
    )
    session.add(rollout)
    session.flush()
    hosts = session.scalars(select(Host).order_by(Host.hostname, Host.id)).all()
    planned: list[Change] = []
    for host in hosts:
        if not _matches(host.labels or {}, rollout.labels):
            continue
        reason = _why_not(session, rollout, host, now, planned)
        if reason is not None:
            rollout.skipped = [
                *rollout.skipped,
                {"host_id": host.id, "hostname": host.hostname, "reason": reason},
            ]
    if not planned:
        session.rollback()
        raise InvalidInputError(
            f"no matching host has a fix of {body.rule} to apply"
            + (f" ({len(rollout.skipped)} skipped)" if rollout.skipped else "")
        )
    for index, change in enumerate(planned):
        change.wave = (
            0 if index < rollout.canary else 1 + (index - rollout.canary) // rollout.batch_size
        )
    audit_service.record(
        session=session,
        actor=actor,
        action="rollout.create",
        target=f"rollout:{rollout.id}",
        detail={"rule": rollout.rule, "labels": rollout.labels, "hosts": len(planned)},
    )
    session.flush()
    advance(session=session, rollout_id=rollout.id, now=now)
    session.commit()
    for change in planned:
        service.announce(change)
    return rollout


def _why_not(
    session: Session, rollout: Rollout, host: Host, now: datetime, planned: list[Change]
) -> str | None:
    """Plan the host's change (appended to planned), or say why it gets none."""
    if not service.apply_allowed(session=session, host_id=host.id):
        return "read-only: its agent does not allow applying changes"
    busy = service.in_flight(session, host.id)
    if busy is not None:
        return f"change {busy.id} is still {busy.status} on it"
    try:
        base = proposals.current_base(session=session, host_id=host.id)
    except ConflictError as error:
        return error.detail
    keys = _fixable_keys(session, host, rollout.rule, base.snapshot.id)
    if not keys:
        return f"no fixable {rollout.rule} finding in its latest analysis"
    proposal = proposals.propose(
        session=session, base=base, finding_keys=keys, overrides={}, now=now
    )
    if not proposal.ok:
        return proposal.reason
    planned.append(
        service.new_change(
            session=session,
            base=base,
            proposal=proposal,
            actor=f"rollout:{rollout.id}",
            now=now,
            comment=rollout.comment,
            rollout_id=rollout.id,
        )
    )
    return None


def _current_changes(session: Session, rollout_id: int) -> list[Change]:
    """The rollout's changes, a superseded one replaced by its regenerated successor."""
    changes = session.scalars(
        select(Change)
        .where(Change.rollout_id == rollout_id, Change.kind == "fix")
        .order_by(Change.id)
    ).all()
    latest: dict[int, Change] = {}
    for change in changes:
        latest[change.host_id] = change
    return list(latest.values())


def _watch(rollout: Rollout) -> timedelta:
    """How long the rollout's metric gate watches each applied host (at least `checks` checks)."""
    rules = rollout.auto_rollback or {}
    checks = int(rules.get("checks", 3))
    return max(timedelta(seconds=int(rules.get("watch_s", 300))), GATE_INTERVAL * checks)


def _settled(change: Change, rollout: Rollout, now: datetime) -> bool:
    """Whether a verified change has also passed the rollout's metric gate, when it has one."""
    if change.status is not ChangeStatus.verified:
        return False
    if not rollout.auto_rollback or change.finished_at is None:
        return True
    return now - change.finished_at >= _watch(rollout)


def advance(*, session: Session, rollout_id: int, now: datetime) -> None:
    """Approve the next wave once the current one is applied (and gated), or stop; flushed."""
    rollout = session.get(Rollout, rollout_id, with_for_update=True)
    if rollout is None or rollout.status is not RolloutStatus.running:
        return
    changes = _current_changes(session, rollout.id)
    names = service.hostnames(session=session, host_ids={c.host_id for c in changes})
    for change in changes:
        if change.status in BAD_OUTCOMES or (
            change.status is ChangeStatus.superseded
            and change.outcome_message
            and "not proposed again" in change.outcome_message
        ):
            where = f" at step {change.failed_step}" if change.failed_step else ""
            stop(
                session=session,
                rollout=rollout,
                reason=f"{names.get(change.host_id)}: change {change.id} {change.status}{where}: "
                f"{change.outcome_message or 'no message'}",
                now=now,
            )
            return
    waves = sorted({c.wave for c in changes if c.wave is not None})
    for wave in waves:
        members = [c for c in changes if c.wave == wave]
        if all(_settled(c, rollout, now) for c in members):
            continue
        for change in members:
            if change.status is ChangeStatus.proposed:
                change.status = ChangeStatus.approved
                change.approved_by = f"rollout:{rollout.id}"
                change.approved_at = now
                service.add_event(
                    session,
                    change,
                    actor=f"rollout:{rollout.id}",
                    now=now,
                    message=f"approved by rollout {rollout.id}, wave {wave}",
                )
        return
    rollout.status = RolloutStatus.completed
    rollout.finished_at = now


def stop(*, session: Session, rollout: Rollout, reason: str, now: datetime) -> None:
    """Stop a rollout: its changes not yet sent are rejected, with the reason; flushed."""
    rollout.status = RolloutStatus.stopped
    rollout.stop_reason = reason
    rollout.finished_at = now
    for change in _current_changes(session, rollout.id):
        if change.status in (ChangeStatus.proposed, ChangeStatus.approved):
            change.status = ChangeStatus.rejected
            change.finished_at = now
            change.outcome_message = f"rollout {rollout.id} stopped: {reason}"
            service.add_event(
                session,
                change,
                actor=f"rollout:{rollout.id}",
                now=now,
                message=change.outcome_message,
            )
    audit_service.record(
        session=session,
        actor=f"rollout:{rollout.id}",
        action="rollout.stop",
        target=f"rollout:{rollout.id}",
        detail={"reason": reason},
    )


def check_gates(*, session: Session, now: datetime) -> list[Change]:
    """Run the metric gate of every verified change of a running gated rollout; commits.

    A change failing its gate `checks` times in a row is rolled back through the same path and
    its rollout stops, saying which check failed. Returns the rollbacks made."""
    rollbacks: list[Change] = []
    running = session.scalars(
        select(Rollout).where(
            Rollout.status == RolloutStatus.running, Rollout.auto_rollback.is_not(None)
        )
    ).all()
    for rollout in running:
        rules: dict[str, Any] = rollout.auto_rollback or {}
        window = timedelta(seconds=get_settings().impact_window_s)
        checks = int(rules.get("checks", 3))
        for change in _current_changes(session, rollout.id):
            if change.status is not ChangeStatus.verified or change.finished_at is None:
                continue
            if now - change.finished_at > _watch(rollout) + GATE_INTERVAL:
                continue
            failure = impact.gate_check(
                session=session,
                change=change,
                rules=rules,
                since=now - GATE_INTERVAL,
                now=now,
                window=window,
            )
            change.gate_failures = change.gate_failures + 1 if failure else 0
            if failure is None or change.gate_failures < checks:
                continue
            reason = f"{failure}, in {checks} consecutive checks"
            service.add_event(
                session,
                change,
                actor=f"rollout:{rollout.id}",
                now=now,
                message=f"regressed: {reason}",
            )
            rollbacks.append(
                service.make_rollback(
                    session=session,
                    change=change,
                    actor=f"rollout:{rollout.id}",
                    comment=reason,
                    now=now,
                )
            )
            stop(
                session=session,
                rollout=rollout,
                reason=f"change {change.id} regressed: {reason}",
                now=now,
            )
            break
        else:
            advance(session=session, rollout_id=rollout.id, now=now)
    session.commit()
    return rollbacks


def advance_running(*, session: Session, now: datetime) -> None:
    """Advance every running rollout (a gate period may have passed); commits."""
    for rollout_id in session.scalars(
        select(Rollout.id).where(Rollout.status == RolloutStatus.running)
    ).all():
        advance(session=session, rollout_id=rollout_id, now=now)
    session.commit()


def rollout_read(*, session: Session, rollout: Rollout) -> RolloutRead:
    """A rollout with each host's wave and change."""
    changes = _current_changes(session, rollout.id)
    names = service.hostnames(session=session, host_ids={c.host_id for c in changes})
    hosts = [
        RolloutHost(
            host_id=c.host_id,
            hostname=names.get(c.host_id, "?"),
            wave=c.wave,
            change_id=c.id,
            status=str(c.status),
        )
        for c in sorted(changes, key=lambda c: (c.wave or 0, c.id))
    ] + [
        RolloutHost(
            host_id=s["host_id"],
            hostname=s["hostname"],
            wave=None,
            change_id=None,
            status="skipped",
            reason=s["reason"],
        )
        for s in rollout.skipped
    ]
    return RolloutRead(
        id=rollout.id,
        rule=rollout.rule,
        labels=rollout.labels,
        status=str(rollout.status),
        stop_reason=rollout.stop_reason,
        canary=rollout.canary,
        batch_size=rollout.batch_size,
        auto_rollback=rollout.auto_rollback,
        comment=rollout.comment,
        created_by=rollout.created_by,
        created_at=rollout.created_at,
        finished_at=rollout.finished_at,
        hosts=hosts,
    )


def get_rollout(*, session: Session, rollout_id: int) -> Rollout:
    """One rollout; NotFoundError when unknown."""
    rollout = session.get(Rollout, rollout_id)
    if rollout is None:
        raise NotFoundError(f"rollout {rollout_id} does not exist")
    return rollout


def list_rollouts(*, session: Session, limit: int = 50) -> Sequence[Rollout]:
    """The newest rollouts first."""
    return session.scalars(select(Rollout).order_by(Rollout.id.desc()).limit(limit)).all()
