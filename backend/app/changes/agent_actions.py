"""The agent's side of a change: pending actions in push replies, step reports from pushes."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.changes import rollouts, service
from app.changes.models import FINAL_STATUSES, PENDING_STATUSES, Change, ChangeEvent, ChangeStatus

log = logging.getLogger(__name__)

# What the last report of an action (step "outcome") may say, and the status it gives.
OUTCOMES = {
    "verified": ChangeStatus.verified,
    "refused": ChangeStatus.refused,
    "rolled_back": ChangeStatus.rolled_back,
    "failed": ChangeStatus.failed,
}


class StepReport(Protocol):
    """One step of an action as the agent reported it (app.agents.schemas.ActionReport)."""

    action_id: int
    seq: int
    step: str
    status: str
    at: datetime
    message: str
    detail: dict[str, Any]


def action_of(change: Change) -> dict[str, Any]:
    """The `apply` action of docs/changes.md for a change."""
    return {
        "type": "apply",
        "action_id": change.id,
        "change_id": change.id,
        "kind": change.kind,
        "files": change.files,
    }


def pending_actions(
    *, session: Session, host_id: int, now: datetime
) -> tuple[list[dict[str, Any]], list[Change]]:
    """The host's actions for this reply (flushed, not committed) and the changes it moved.

    An approved change is sent unless the host's config changed since its diff was made: then
    it is superseded and proposed again, never applied. A sent change is repeated until the
    agent reports a step of it."""
    changes = session.scalars(
        select(Change)
        .where(Change.host_id == host_id, Change.status.in_(PENDING_STATUSES))
        .order_by(Change.id)
        .with_for_update()
    ).all()
    actions: list[dict[str, Any]] = []
    moved: list[Change] = []
    for change in changes:
        if change.status is ChangeStatus.approved:
            if service.is_stale(session, change):
                fresh = service.supersede(
                    session=session,
                    change=change,
                    now=now,
                    reason="the host's config changed after approval, before the agent got it",
                )
                moved.extend([change, fresh] if fresh is not None else [change])
                continue
            change.status = ChangeStatus.sent
            change.sent_at = now
            service.add_event(session, change, actor=None, now=now, message="sent to the agent")
            moved.append(change)
        actions.append(action_of(change))
    return actions, moved


def record_reports(
    *, session: Session, host_id: int, reports: Sequence[StepReport], now: datetime
) -> list[Change]:
    """Store the agent's step reports (each (action, seq) once) and move the changes; flushed.

    A report about a change of another host is ignored: a host token only speaks for its host."""
    moved: dict[int, Change] = {}
    for report in sorted(reports, key=lambda r: (r.action_id, r.seq)):
        change = session.get(Change, report.action_id, with_for_update=True)
        if change is None or change.host_id != host_id:
            log.warning(
                "host %d reported step %s of action %d, which is not one of its changes",
                host_id,
                report.step,
                report.action_id,
            )
            continue
        seen = session.scalar(
            select(ChangeEvent.id).where(
                ChangeEvent.change_id == change.id, ChangeEvent.report_seq == report.seq
            )
        )
        if seen is not None:
            continue
        _advance(change, report, now)
        service.add_event(
            session,
            change,
            actor=f"agent:host:{host_id}",
            now=report.at,
            message=report.message,
            step=report.step,
            step_status=report.status,
            detail=report.detail,
            report_seq=report.seq,
        )
        moved[change.id] = change
    session.flush()
    for change in list(moved.values()):
        if change.status in FINAL_STATUSES:
            service.after_outcome(session=session, change=change, now=now)
            if change.rollout_id is not None:
                rollouts.advance(session=session, rollout_id=change.rollout_id, now=now)
    return list(moved.values())


def _advance(change: Change, report: StepReport, now: datetime) -> None:
    """The change's status and step after one report."""
    change.report_seq = max(change.report_seq, report.seq)
    if change.status in FINAL_STATUSES:
        return  # a late report of a finished action is kept in the trail only
    change.step = report.step
    if report.step == "outcome" and report.status in OUTCOMES:
        change.status = OUTCOMES[report.status]
        change.finished_at = now
        change.outcome_message = report.message or None
        failed_step = report.detail.get("failed_step") or report.detail.get("reason")
        change.failed_step = str(failed_step)[:32] if failed_step else None
    elif change.status in (ChangeStatus.approved, ChangeStatus.sent):
        change.status = ChangeStatus.applying
