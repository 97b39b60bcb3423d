"""The workflow of a change: propose, approve, reject, roll back, supersede (docs/changes.md)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import service as audit_service
from app.changes import proposals
from app.changes.models import (
    FINAL_STATUSES,
    IN_FLIGHT_STATUSES,
    Change,
    ChangeEvent,
    ChangeStatus,
)
from app.changes.patches import apply_ops, reverse_files, sha256_text, unified_diff
from app.changes.schemas import ChangeCreate, Proposal, ProposalRequest
from app.core import pubsub
from app.core.errors import ConflictError, InvalidInputError, NotFoundError
from app.hosts.models import Host, HostFacts
from app.users.models import Role, User

log = logging.getLogger(__name__)


def apply_allowed(*, session: Session, host_id: int) -> bool:
    """Whether the host's agent said it may apply changes (`facts.apply_allowed`)."""
    facts = session.scalar(select(HostFacts.facts).where(HostFacts.host_id == host_id))
    return bool(facts and facts.get("apply_allowed") is True)


def preview(
    *, session: Session, host_id: int, body: ProposalRequest, actor: User, now: datetime
) -> Proposal:
    """The engine's checked patch for some findings of the host's current config; commits.

    Nothing of the patch is stored. A preview by someone who may approve stamps the host's
    `change_previewed_at`, so its agent pushes sooner while they decide (app.changes.cadence).
    """
    base = proposals.current_base(session=session, host_id=host_id)
    proposal = proposals.propose(
        session=session,
        base=base,
        finding_keys=list(body.finding_keys),
        overrides=dict(body.overrides),
        now=now,
    )
    if actor.role.allows(Role.operator):
        base.host.change_previewed_at = now
        session.commit()
    return proposal


def _title(proposal: Proposal) -> str:
    rules = sorted({key.split("@", 1)[0] for key in proposal.keys})
    edits = ", ".join(
        f"{edit.action} {edit.directive} {' '.join(edit.args)}".strip() for edit in proposal.edits
    )
    return f"{', '.join(rules)}: {edits}"[:500]


def add_event(
    session: Session,
    change: Change,
    *,
    actor: User | str | None,
    now: datetime,
    message: str = "",
    step: str | None = None,
    step_status: str | None = None,
    detail: dict[str, Any] | None = None,
    report_seq: int | None = None,
) -> None:
    """Add a trail entry for the change as it is now."""
    session.add(
        ChangeEvent(
            change_id=change.id,
            at=now,
            status=str(change.status),
            step=step,
            step_status=step_status,
            actor=audit_service.actor_name(actor),
            message=message,
            detail=dict(detail or {}),
            report_seq=report_seq,
        )
    )


def announce(change: Change) -> None:
    """Tell the live streams where a change is (after the commit; best-effort)."""
    pubsub.publish(
        "change",
        {
            "id": change.id,
            "host_id": change.host_id,
            "status": str(change.status),
            "step": change.step,
            "rollout_id": change.rollout_id,
        },
    )


def _audit(
    session: Session, change: Change, action: str, actor: User | str | None, **detail: Any
) -> None:
    audit_service.record(
        session=session,
        actor=actor,
        action=f"change.{action}",
        target=f"change:{change.id}",
        detail={"host_id": change.host_id, "status": str(change.status), **detail},
    )


def in_flight(session: Session, host_id: int, *, other_than: int | None = None) -> Change | None:
    """The host's change between approval and outcome, if any."""
    query = select(Change).where(Change.host_id == host_id, Change.status.in_(IN_FLIGHT_STATUSES))
    if other_than is not None:
        query = query.where(Change.id != other_than)
    return session.scalars(query.limit(1)).first()


def new_change(
    *,
    session: Session,
    base: proposals.Base,
    proposal: Proposal,
    actor: User | str | None,
    now: datetime,
    overrides: dict[str, list[str]] | None = None,
    comment: str = "",
    rollout_id: int | None = None,
    wave: int | None = None,
) -> Change:
    """Store a checked proposal as a proposed change (flushed, not committed)."""
    change = Change(
        host_id=base.host.id,
        kind="fix",
        rollout_id=rollout_id,
        wave=wave,
        status=ChangeStatus.proposed,
        finding_keys=list(proposal.keys),
        rules=sorted({key.split("@", 1)[0] for key in proposal.keys}),
        title=_title(proposal),
        base_snapshot_id=base.snapshot.id,
        base_config_hash=base.snapshot.hash,
        diff=proposal.diff,
        files=[patch.model_dump() for patch in proposal.files],
        edits=[edit.model_dump() for edit in proposal.edits],
        overrides=dict(overrides or {}),
        score_before=proposal.score_before,
        score_after=proposal.score_after,
        comment=comment,
        created_by=audit_service.actor_name(actor),
        created_at=now,
    )
    session.add(change)
    session.flush()
    add_event(session, change, actor=actor, now=now, message=comment or "proposed")
    _audit(session, change, "propose", actor, finding_keys=change.finding_keys)
    return change


def create_change(
    *, session: Session, host_id: int, body: ChangeCreate, actor: User, now: datetime
) -> Change:
    """Store the checked patch for some findings as a proposed change; commits.

    The same findings, values and base config give back the proposed change already stored."""
    base = proposals.current_base(session=session, host_id=host_id)
    if not apply_allowed(session=session, host_id=host_id):
        raise ConflictError(
            f"the agent of {base.host.hostname} does not allow applying changes "
            "(allow_apply = true in its config): this host is read-only"
        )
    keys, overrides = sorted(body.finding_keys), dict(body.overrides)
    for existing in session.scalars(
        select(Change).where(
            Change.host_id == host_id,
            Change.status == ChangeStatus.proposed,
            Change.base_config_hash == base.snapshot.hash,
            Change.rollout_id.is_(None),
        )
    ):
        if sorted(existing.finding_keys) == keys and existing.overrides == overrides:
            return existing
    proposal = proposals.propose(
        session=session, base=base, finding_keys=keys, overrides=overrides, now=now
    )
    if not proposal.ok:
        raise InvalidInputError(f"no change is offered for this: {proposal.reason}")
    change = new_change(
        session=session,
        base=base,
        proposal=proposal,
        actor=actor,
        now=now,
        overrides=overrides,
        comment=body.comment,
    )
    session.commit()
    announce(change)
    return change


def _locked(session: Session, change_id: int) -> Change:
    change = session.get(Change, change_id, with_for_update=True)
    if change is None:
        raise NotFoundError(f"change {change_id} does not exist")
    return change


def supersede(*, session: Session, change: Change, now: datetime, reason: str) -> Change | None:
    """Mark a change stale and propose it again from the host's current config (flushed).

    Returns the fresh proposed change, or None when the findings are gone or no longer fixable."""
    change.status = ChangeStatus.superseded
    change.finished_at = now
    change.outcome_message = reason
    add_event(session, change, actor=None, now=now, message=reason)
    _audit(session, change, "supersede", None, reason=reason)
    if change.kind != "fix":
        return None
    try:
        base = proposals.current_base(session=session, host_id=change.host_id)
    except (ConflictError, NotFoundError):
        return None
    proposal = proposals.propose(
        session=session,
        base=base,
        finding_keys=list(change.finding_keys),
        overrides=dict(change.overrides),
        now=now,
    )
    if not proposal.ok:
        change.outcome_message = f"{reason}; not proposed again: {proposal.reason}"
        return None
    fresh = new_change(
        session=session,
        base=base,
        proposal=proposal,
        actor=None,
        now=now,
        overrides=change.overrides,
        comment=f"regenerated: change {change.id} was made against an older config",
        rollout_id=change.rollout_id,
        wave=change.wave,
    )
    change.outcome_message = f"{reason}; proposed again as change {fresh.id}"
    return fresh


def is_stale(session: Session, change: Change) -> bool:
    """Whether the host's config is no longer the one the change's diff was made against."""
    host_hash = session.scalar(select(Host.config_hash).where(Host.id == change.host_id))
    return host_hash != change.base_config_hash


def approve(
    *, session: Session, change_id: int, actor: User | str, comment: str, now: datetime
) -> Change:
    """Approve a proposed change so its agent gets it with the next push; commits.

    Idempotent: approving an approved (or already sent, applying, applied) change changes
    nothing and sends nothing again."""
    change = _locked(session, change_id)
    if change.status in (*IN_FLIGHT_STATUSES, ChangeStatus.verified):
        return change
    if change.status is not ChangeStatus.proposed:
        raise ConflictError(f"change {change.id} is {change.status} and cannot be approved")
    if is_stale(session, change):
        fresh = supersede(
            session=session,
            change=change,
            now=now,
            reason="the host's config changed since this diff was made",
        )
        session.commit()
        announce(change)
        hint = f"; review the new diff, change {fresh.id}" if fresh is not None else ""
        raise ConflictError(f"change {change.id} is stale and was superseded{hint}")
    # The host row's lock orders two approvals of different changes of one host: the second
    # sees the first in flight instead of both being sent.
    session.execute(select(Host.id).where(Host.id == change.host_id).with_for_update())
    busy = in_flight(session, change.host_id, other_than=change.id)
    if busy is not None:
        raise ConflictError(
            f"change {busy.id} is still {busy.status} on this host; approve this one after it"
        )
    change.status = ChangeStatus.approved
    change.approved_by = audit_service.actor_name(actor)
    change.approved_at = now
    add_event(session, change, actor=actor, now=now, message=comment or "approved")
    _audit(session, change, "approve", actor, comment=comment)
    session.commit()
    announce(change)
    return change


def reject(*, session: Session, change_id: int, actor: User, comment: str, now: datetime) -> Change:
    """Reject a change that has not been sent to its agent yet; commits (idempotent)."""
    change = _locked(session, change_id)
    if change.status is ChangeStatus.rejected:
        return change
    if change.status not in (ChangeStatus.proposed, ChangeStatus.approved):
        raise ConflictError(f"change {change.id} is {change.status} and cannot be rejected")
    change.status = ChangeStatus.rejected
    change.finished_at = now
    add_event(session, change, actor=actor, now=now, message=comment or "rejected")
    _audit(session, change, "reject", actor, comment=comment)
    session.commit()
    announce(change)
    return change


def make_rollback(
    *, session: Session, change: Change, actor: User | str | None, comment: str, now: datetime
) -> Change:
    """Store the approved reverse patch of a verified change (flushed, not committed).

    The host's current files must be exactly what the change made of them."""
    base = proposals.current_base(session=session, host_id=change.host_id)
    texts = _file_texts(base.snapshot.dump)
    files = reverse_files(change.files)
    diffs = []
    for patch in files:
        current = texts.get(patch["path"])
        if current is None or sha256_text(current) != patch["base_sha256"]:
            raise ConflictError(
                f"{patch['path']} changed since change {change.id} was applied "
                "(or the host has not sent its new config yet): the reverse patch does not apply"
            )
        restored = apply_ops(current, patch["ops"])
        if sha256_text(restored) != patch["new_sha256"]:
            raise ConflictError(f"the reverse patch of {patch['path']} does not restore it")
        diffs.append(unified_diff(patch["path"], current, restored))
    rollback = Change(
        host_id=change.host_id,
        kind="rollback",
        reverts_change_id=change.id,
        rollout_id=change.rollout_id,
        wave=change.wave,
        status=ChangeStatus.approved,
        finding_keys=list(change.finding_keys),
        rules=list(change.rules),
        title=f"roll back change {change.id}: {change.title}"[:500],
        base_snapshot_id=base.snapshot.id,
        base_config_hash=base.snapshot.hash,
        diff="".join(diffs),
        files=files,
        edits=[],
        overrides={},
        score_before=change.score_after,
        score_after=change.score_before,
        comment=comment,
        created_by=audit_service.actor_name(actor),
        created_at=now,
        approved_by=audit_service.actor_name(actor),
        approved_at=now,
    )
    session.add(rollback)
    session.flush()
    add_event(session, rollback, actor=actor, now=now, message=comment or "rollback approved")
    _audit(session, rollback, "rollback", actor, reverts=change.id, comment=comment)
    return rollback


def rollback(
    *, session: Session, change_id: int, actor: User, comment: str, now: datetime
) -> Change:
    """Send the reverse patch of a verified change through the same safe path; commits."""
    change = _locked(session, change_id)
    if change.status is not ChangeStatus.verified:
        raise ConflictError(
            f"change {change.id} is {change.status}: only an applied one rolls back"
        )
    existing = session.scalars(
        select(Change).where(
            Change.reverts_change_id == change.id, Change.status.not_in(FINAL_STATUSES)
        )
    ).first()
    if existing is not None:
        return existing
    busy = in_flight(session, change.host_id)
    if busy is not None:
        raise ConflictError(f"change {busy.id} is still {busy.status} on this host")
    reverse = make_rollback(session=session, change=change, actor=actor, comment=comment, now=now)
    session.commit()
    announce(reverse)
    return reverse


def _file_texts(dump: str) -> dict[str, str]:
    from nginx_fleet_analyzer.dump import split_dump

    return dict(split_dump(dump))


def get_change(*, session: Session, change_id: int) -> Change:
    """One change; NotFoundError when unknown."""
    change = session.get(Change, change_id)
    if change is None:
        raise NotFoundError(f"change {change_id} does not exist")
    return change


def events_of(*, session: Session, change_id: int) -> Sequence[ChangeEvent]:
    """The trail of a change, oldest first."""
    return session.scalars(
        select(ChangeEvent).where(ChangeEvent.change_id == change_id).order_by(ChangeEvent.id)
    ).all()


def list_changes(
    *,
    session: Session,
    host_id: int | None,
    status: str | None,
    rollout_id: int | None,
    limit: int,
    offset: int,
) -> tuple[Sequence[Change], int]:
    """A page of changes, newest first, and how many match."""
    query = select(Change)
    if host_id is not None:
        query = query.where(Change.host_id == host_id)
    if status is not None:
        query = query.where(Change.status == status)
    if rollout_id is not None:
        query = query.where(Change.rollout_id == rollout_id)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(Change.id.desc()).limit(limit).offset(offset)).all()
    return rows, total


def hostnames(*, session: Session, host_ids: set[int]) -> dict[int, str]:
    """Host names by id, for the API's change views."""
    if not host_ids:
        return {}
    rows = session.execute(select(Host.id, Host.hostname).where(Host.id.in_(host_ids)))
    return {row.id: row.hostname for row in rows}


def after_outcome(*, session: Session, change: Change, now: datetime) -> None:
    """What follows an agent's outcome in the change's own trail (and a reverted change's)."""
    _audit(session, change, str(change.status), f"agent:host:{change.host_id}")
    if change.kind == "rollback" and change.status is ChangeStatus.verified:
        reverted = (
            session.get(Change, change.reverts_change_id) if change.reverts_change_id else None
        )
        if reverted is not None:
            add_event(
                session, reverted, actor=None, now=now, message=f"rolled back by change {change.id}"
            )
