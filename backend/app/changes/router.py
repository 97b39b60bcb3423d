"""HTTP routes of recommended changes and rollouts (docs/changes.md, section 4)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from app.api.deps import OperatorUser, SessionDep, ViewerUser
from app.changes import rollouts, service
from app.changes.models import Change, ChangeStatus
from app.changes.schemas import (
    ChangeCreate,
    ChangeDetail,
    ChangeEventRead,
    ChangePage,
    ChangeRead,
    CommentBody,
    Proposal,
    ProposalRequest,
    RolloutCreate,
    RolloutRead,
)
from app.core.db import utcnow
from app.core.types import IdPath

router = APIRouter(tags=["changes"])


def _read(change: Change, hostname: str) -> ChangeRead:
    # Every column by attribute access: __dict__ lacks those expired by the last commit.
    columns = {attr.key: getattr(change, attr.key) for attr in Change.__mapper__.column_attrs}
    return ChangeRead.model_validate({**columns, "hostname": hostname})


def _one(session: SessionDep, change: Change) -> ChangeRead:
    names = service.hostnames(session=session, host_ids={change.host_id})
    return _read(change, names.get(change.host_id, "?"))


@router.post("/hosts/{host_id}/changes/preview", response_model=Proposal)
def preview_change(
    host_id: IdPath, body: ProposalRequest, session: SessionDep, user: ViewerUser
) -> Proposal:
    """The checked diff that would fix these findings of the host's current config."""
    return service.preview(session=session, host_id=host_id, body=body, actor=user, now=utcnow())


@router.post(
    "/hosts/{host_id}/changes", response_model=ChangeRead, status_code=status.HTTP_201_CREATED
)
def create_change(
    host_id: IdPath, body: ChangeCreate, session: SessionDep, user: OperatorUser
) -> ChangeRead:
    """Propose the checked diff for these findings (422 with the reason when none is offered)."""
    change = service.create_change(
        session=session, host_id=host_id, body=body, actor=user, now=utcnow()
    )
    return _one(session, change)


@router.get("/changes", response_model=ChangePage)
def list_changes(
    session: SessionDep,
    _user: ViewerUser,
    host_id: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    status_: Annotated[ChangeStatus | None, Query(alias="status")] = None,
    rollout_id: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> ChangePage:
    """Changes, newest first, filtered by host, status or rollout."""
    rows, total = service.list_changes(
        session=session,
        host_id=host_id,
        status=status_.value if status_ else None,
        rollout_id=rollout_id,
        limit=limit,
        offset=offset,
    )
    names = service.hostnames(session=session, host_ids={c.host_id for c in rows})
    return ChangePage(items=[_read(c, names.get(c.host_id, "?")) for c in rows], total=total)


@router.get("/changes/{change_id}", response_model=ChangeDetail)
def get_change(change_id: IdPath, session: SessionDep, _user: ViewerUser) -> ChangeDetail:
    """A change with every transition and agent step."""
    change = service.get_change(session=session, change_id=change_id)
    events = service.events_of(session=session, change_id=change_id)
    return ChangeDetail(
        **_one(session, change).model_dump(),
        events=[ChangeEventRead.model_validate(event) for event in events],
    )


@router.post("/changes/{change_id}/approve", response_model=ChangeRead)
def approve_change(
    change_id: IdPath, session: SessionDep, user: OperatorUser, body: CommentBody | None = None
) -> ChangeRead:
    """Approve: the host's agent applies it after its next push (idempotent)."""
    comment = body.comment if body else ""
    change = service.approve(
        session=session, change_id=change_id, actor=user, comment=comment, now=utcnow()
    )
    return _one(session, change)


@router.post("/changes/{change_id}/reject", response_model=ChangeRead)
def reject_change(
    change_id: IdPath, session: SessionDep, user: OperatorUser, body: CommentBody | None = None
) -> ChangeRead:
    """Reject a change not yet sent to its agent."""
    comment = body.comment if body else ""
    change = service.reject(
        session=session, change_id=change_id, actor=user, comment=comment, now=utcnow()
    )
    return _one(session, change)


@router.post(
    "/changes/{change_id}/rollback", response_model=ChangeRead, status_code=status.HTTP_201_CREATED
)
def rollback_change(
    change_id: IdPath, session: SessionDep, user: OperatorUser, body: CommentBody | None = None
) -> ChangeRead:
    """Undo an applied change with its reverse diff, through the same safe path."""
    comment = body.comment if body else ""
    change = service.rollback(
        session=session, change_id=change_id, actor=user, comment=comment, now=utcnow()
    )
    return _one(session, change)


@router.post("/rollouts", response_model=RolloutRead, status_code=status.HTTP_201_CREATED)
def create_rollout(body: RolloutCreate, session: SessionDep, user: OperatorUser) -> RolloutRead:
    """Fix a rule on every matching host in waves: a canary first, then batches."""
    rollout = rollouts.create_rollout(session=session, body=body, actor=user, now=utcnow())
    return rollouts.rollout_read(session=session, rollout=rollout)


@router.get("/rollouts", response_model=list[RolloutRead])
def list_rollouts(session: SessionDep, _user: ViewerUser) -> list[RolloutRead]:
    """The newest rollouts with their hosts' progress."""
    return [
        rollouts.rollout_read(session=session, rollout=r)
        for r in rollouts.list_rollouts(session=session)
    ]


@router.get("/rollouts/{rollout_id}", response_model=RolloutRead)
def get_rollout(rollout_id: IdPath, session: SessionDep, _user: ViewerUser) -> RolloutRead:
    """One rollout with per-host progress."""
    rollout = rollouts.get_rollout(session=session, rollout_id=rollout_id)
    return rollouts.rollout_read(session=session, rollout=rollout)
