"""HTTP routes of the fleet view and host pages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi import status as http_status

from app.api.deps import AdminUser, OperatorUser, SessionDep, ViewerUser
from app.core.db import utcnow
from app.core.types import IdPath
from app.hosts import service
from app.hosts.fleet import FleetFilter
from app.hosts.schemas import (
    FleetPage,
    FleetSort,
    FleetSummary,
    HostDetail,
    HostLabelsUpdate,
    HostStatus,
    SortOrder,
)

router = APIRouter(tags=["hosts"])


LabelQuery = Annotated[
    list[str],
    Query(description="key:value; repeated keys match any of their values, keys all apply"),
]
StatusQuery = Annotated[
    list[HostStatus], Query(description="Hosts in any of these statuses; none: every status")
]
HostnameQuery = Annotated[
    str | None, Query(max_length=253, description="Part of the hostname, case-insensitive")
]
# A page of the table; 500 bounds what one request can make the database sort and send.
MAX_PAGE = 500


def fleet_filter(label: list[str], status: list[HostStatus], q: str | None) -> FleetFilter:
    """The service's filter from the query parameters."""
    return FleetFilter(
        labels=service.parse_label_filters(label),
        statuses=frozenset(status),
        hostname_part=q.strip() or None if q is not None else None,
    )


@router.get("/fleet", response_model=FleetPage)
def list_fleet(
    session: SessionDep,
    _user: ViewerUser,
    label: LabelQuery = [],  # noqa: B006 - FastAPI copies defaults per request
    status: StatusQuery = [],  # noqa: B006
    q: HostnameQuery = None,
    sort: Annotated[FleetSort, Query(description="The column to sort by")] = "hostname",
    order: Annotated[SortOrder, Query(description="Unknown values come last either way")] = "asc",
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> FleetPage:
    """A page of the hosts with status and newest figures, filtered and sorted by the server."""
    return service.list_fleet(
        session=session,
        fleet_filter=fleet_filter(label, status, q),
        sort=sort,
        order=order,
        limit=limit,
        offset=offset,
        now=utcnow(),
    )


@router.get("/fleet/summary", response_model=FleetSummary)
def fleet_summary(
    session: SessionDep,
    _user: ViewerUser,
    label: LabelQuery = [],  # noqa: B006 - FastAPI copies defaults per request
    status: StatusQuery = [],  # noqa: B006
    q: HostnameQuery = None,
) -> FleetSummary:
    """Hosts by status, summed load and findings of the hosts the same filters match."""
    return service.fleet_summary(
        session=session, fleet_filter=fleet_filter(label, status, q), now=utcnow()
    )


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


@router.delete("/hosts/{host_id}", status_code=http_status.HTTP_204_NO_CONTENT)
def delete_host(host_id: IdPath, session: SessionDep, user: AdminUser) -> None:
    """Remove a host and all its data."""
    service.delete_host(session=session, host_id=host_id, actor=user)


@router.post("/hosts/{host_id}/reset-enrolment", response_model=HostDetail)
def reset_enrolment(host_id: IdPath, session: SessionDep, user: AdminUser) -> HostDetail:
    """Revoke the host's token; its agent must enrol again (once) with an enrolment token."""
    return service.reset_enrolment(session=session, host_id=host_id, actor=user, now=utcnow())
