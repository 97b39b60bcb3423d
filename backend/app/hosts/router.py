"""HTTP routes of the fleet view and host pages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from app.api.deps import AdminUser, OperatorUser, SessionDep, ViewerUser
from app.core.db import utcnow
from app.core.types import IdPath
from app.hosts import service
from app.hosts.schemas import FleetHost, HostDetail, HostLabelsUpdate

router = APIRouter(tags=["hosts"])


@router.get("/fleet", response_model=list[FleetHost])
def list_fleet(
    session: SessionDep,
    _user: ViewerUser,
    label: Annotated[
        list[str],
        Query(description="key:value; repeated keys match any of their values, keys all apply"),
    ] = [],  # noqa: B006 - FastAPI copies defaults per request
) -> list[FleetHost]:
    """Every host with status and newest figures, filtered by labels."""
    filters = service.parse_label_filters(label)
    return service.list_fleet(session=session, label_filters=filters, now=utcnow())


@router.get("/fleet/labels", response_model=dict[str, list[str]])
def list_labels(session: SessionDep, _user: ViewerUser) -> dict[str, list[str]]:
    """Label keys and their values, for the filter UI."""
    return service.list_labels(session=session)


@router.get("/hosts/{host_id}", response_model=HostDetail)
def get_host(host_id: IdPath, session: SessionDep, _user: ViewerUser) -> HostDetail:
    """One host with its agent and facts."""
    return service.get_host_detail(session=session, host_id=host_id, now=utcnow())


@router.patch("/hosts/{host_id}", response_model=HostDetail)
def update_host(
    host_id: IdPath, body: HostLabelsUpdate, session: SessionDep, user: OperatorUser
) -> HostDetail:
    """Replace a host's labels."""
    return service.update_labels(
        session=session, host_id=host_id, labels=body.labels, actor=user, now=utcnow()
    )


@router.delete("/hosts/{host_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_host(host_id: IdPath, session: SessionDep, user: AdminUser) -> None:
    """Remove a host and all its data."""
    service.delete_host(session=session, host_id=host_id, actor=user)


@router.post("/hosts/{host_id}/reset-enrolment", response_model=HostDetail)
def reset_enrolment(host_id: IdPath, session: SessionDep, user: AdminUser) -> HostDetail:
    """Revoke the host's token; its agent must enrol again (once) with an enrolment token."""
    return service.reset_enrolment(session=session, host_id=host_id, actor=user, now=utcnow())
