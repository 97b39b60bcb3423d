"""Reading, relabelling and removing hosts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.audit import service as audit_service
from app.configs.schemas import FindingCounts
from app.core import pubsub
from app.core.config import get_settings
from app.core.errors import InvalidInputError, NotFoundError
from app.core.security import HOST_TOKEN_PREFIX, hash_token, new_token
from app.hosts.fleet import (
    FleetFilter,
    LabelFilter,
    fleet_count_query,
    fleet_host_of,
    fleet_page_query,
    fleet_rows,
    session_dialect,
    summary_query,
)
from app.hosts.models import Host, HostFacts
from app.hosts.schemas import (
    FleetPage,
    FleetSort,
    FleetSummary,
    HostCounts,
    HostDetail,
    SortOrder,
)
from app.users.models import User

# How long an admin's "reset agent enrolment" lets the host's agent_id enrol without its token.
ENROLMENT_RESET_WINDOW = timedelta(hours=24)


def parse_label_filters(raw: Sequence[str]) -> LabelFilter:
    """['env:prod', 'env:staging', 'role:edge'] -> {'env': {'prod', 'staging'}, 'role': {...}}."""
    wanted: LabelFilter = defaultdict(set)
    for item in raw:
        key, sep, value = item.partition(":")
        if not sep or not key:
            raise InvalidInputError(f"label filter {item!r} must be written key:value")
        wanted[key].add(value)
    return dict(wanted)


def list_fleet(
    *,
    session: Session,
    fleet_filter: FleetFilter,
    sort: FleetSort,
    order: SortOrder,
    limit: int,
    offset: int,
    now: datetime,
) -> FleetPage:
    """One page of the hosts matching the filter, sorted, with the count of all that match."""
    interval = get_settings().push_interval_s
    dialect = session_dialect(session)
    page = fleet_page_query(
        dialect=dialect,
        fleet_filter=fleet_filter,
        sort=sort,
        order=order,
        limit=limit,
        offset=offset,
        now=now,
        push_interval_s=interval,
    )
    items = [
        fleet_host_of(row._mapping, now=now, push_interval_s=interval)
        for row in session.execute(page)
    ]
    # The count is only needed when the page does not show it already.
    if offset == 0 and len(items) < limit:
        total = len(items)
    else:
        count = fleet_count_query(
            dialect=dialect, fleet_filter=fleet_filter, now=now, push_interval_s=interval
        )
        total = session.execute(count).scalar_one()
    return FleetPage(items=items, total=total, limit=limit, offset=offset)


def fleet_summary(*, session: Session, fleet_filter: FleetFilter, now: datetime) -> FleetSummary:
    """Counts by status, load and findings of the hosts matching the filter."""
    query = summary_query(
        dialect=session_dialect(session),
        fleet_filter=fleet_filter,
        now=now,
        push_interval_s=get_settings().push_interval_s,
    )
    row = session.execute(query).one()
    return FleetSummary(
        hosts=row.hosts,
        by_status=HostCounts(up=row.up, down=row.down, stale=row.stale, new=row.new),
        req_per_s=float(row.req_per_s),
        hosts_with_drops=row.hosts_with_drops,
        findings=FindingCounts(error=row.error, warning=row.warning, info=row.info),
    )


def list_labels(*, session: Session) -> dict[str, list[str]]:
    """Every label key in the fleet with its values, both sorted."""
    values: dict[str, set[str]] = defaultdict(set)
    for labels in session.scalars(select(Host.labels)):
        for key, value in (labels or {}).items():
            values[key].add(value)
    return {key: sorted(values[key]) for key in sorted(values)}


def get_host_detail(*, session: Session, host_id: int, now: datetime) -> HostDetail:
    """One host with its agent, facts and newest figures; NotFoundError when unknown."""
    rows, _analysis = fleet_rows(session_dialect(session))
    row = session.execute(rows.where(Host.id == host_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"host {host_id} does not exist")
    fleet_host = fleet_host_of(
        row._mapping, now=now, push_interval_s=get_settings().push_interval_s
    )
    host = session.get_one(Host, host_id)
    facts = session.scalar(select(HostFacts.facts).where(HostFacts.host_id == host_id))
    # A reset past its window admits nobody any more: it is shown as no reset at all.
    reset_at = host.enrolment_reset_at
    reset_expires_at = reset_at + ENROLMENT_RESET_WINDOW if reset_at else None
    if reset_expires_at is not None and reset_expires_at <= now:
        reset_expires_at = None
    return HostDetail(
        **fleet_host.model_dump(),
        agent_id=host.agent_id,
        agent_version=host.agent_version,
        enrolled_at=host.enrolled_at,
        enrolment_reset_at=reset_at if reset_expires_at else None,
        enrolment_reset_expires_at=reset_expires_at,
        facts=facts,
        apply_allowed=bool(facts and facts.get("apply_allowed") is True),
    )


def _lock_host(session: Session, host_id: int) -> Host:
    """The host, row-locked until commit, or NotFoundError.

    The lock orders a label edit and a delete of the same host: whichever comes second waits,
    then finds the host changed or gone, instead of updating a row that no longer exists."""
    host = session.scalar(select(Host).where(Host.id == host_id).with_for_update())
    if host is None:
        raise NotFoundError(f"host {host_id} does not exist")
    return host


def update_labels(
    *, session: Session, host_id: int, labels: dict[str, str], actor: User, now: datetime
) -> HostDetail:
    """Replace a host's labels (the UI wins over the agent from now on); audited; commits."""
    host = _lock_host(session, host_id)
    before = dict(host.labels or {})
    host.labels = dict(labels)
    audit_service.record(
        session=session,
        actor=actor,
        action="host.update_labels",
        target=f"host:{host_id}",
        detail={"hostname": host.hostname, "before": before, "after": host.labels},
    )
    session.commit()
    pubsub.publish("host", {"host_id": host_id})
    return get_host_detail(session=session, host_id=host_id, now=now)


def delete_host(*, session: Session, host_id: int, actor: User) -> None:
    """Remove a host with its token, samples, rollups and configs; audited; commits."""
    host = _lock_host(session, host_id)
    audit_service.record(
        session=session,
        actor=actor,
        action="host.delete",
        target=f"host:{host_id}",
        detail={"hostname": host.hostname, "agent_id": host.agent_id},
    )
    # The database cascades to the host's data; no rows are loaded to delete them.
    session.execute(delete(Host).where(Host.id == host_id))
    session.commit()
    pubsub.publish("host", {"host_id": host_id})


def reset_enrolment(*, session: Session, host_id: int, actor: User, now: datetime) -> HostDetail:
    """Revoke a host's token and let its agent_id enrol once more with an enrolment token.

    For an agent that lost its token (state file gone, machine rebuilt); audited; commits."""
    host = _lock_host(session, host_id)
    # A token nobody knows: the current agent is locked out until it enrols again.
    host.token_hash = hash_token(new_token(HOST_TOKEN_PREFIX))
    host.enrolment_reset_at = now
    audit_service.record(
        session=session,
        actor=actor,
        action="host.reset_enrolment",
        target=f"host:{host_id}",
        detail={"hostname": host.hostname, "agent_id": host.agent_id},
    )
    session.commit()
    pubsub.publish("host", {"host_id": host_id})
    return get_host_detail(session=session, host_id=host_id, now=now)
