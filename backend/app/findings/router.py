"""HTTP routes of acknowledgements and fleet-wide findings."""

from __future__ import annotations

from fastapi import APIRouter, status

from app.api.deps import OperatorUser, SessionDep, ViewerUser
from app.core.db import utcnow
from app.core.types import IdPath
from app.findings import service
from app.findings.models import Ack
from app.findings.schemas import AckCreate, AckRead, TopFinding

router = APIRouter(tags=["findings"])


@router.get("/findings/top", response_model=list[TopFinding])
def top_findings(session: SessionDep, _user: ViewerUser) -> list[TopFinding]:
    """Which rules hit how many hosts, over each host's latest analysis, muted left out."""
    return service.top_findings(session=session, now=utcnow())


@router.get("/acks", response_model=list[AckRead])
def list_acks(session: SessionDep, _user: ViewerUser) -> list[Ack]:
    """Every acknowledgement, newest first."""
    return list(service.list_acks(session=session))


@router.post(
    "/acks",
    response_model=AckRead,
    status_code=status.HTTP_201_CREATED,
    responses={404: {"description": "The host does not exist"}},
)
def create_ack(body: AckCreate, session: SessionDep, user: OperatorUser) -> Ack:
    """Mute a rule or one finding, on one host or fleet-wide, maybe until a time."""
    return service.create_ack(session=session, body=body, actor=user, now=utcnow())


@router.delete("/acks/{ack_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_ack(ack_id: IdPath, session: SessionDep, user: OperatorUser) -> None:
    """Remove an acknowledgement: its findings count again."""
    service.delete_ack(session=session, ack_id=ack_id, actor=user, now=utcnow())
