"""The push cadence hint: while a change is in flight on a host, its agent pushes sooner.

Actions ride push replies, so an approval waits for the agent's next push, up to its interval
(10 s by default). While a host has a change in flight, every push reply carries `next_push_s`
(docs/agent-protocol.md) and the agent makes its next push after that many seconds. Only those
hosts push faster: a fleet of 10,000 hosts keeps its 1,000 pushes/s.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, exists, or_, select, true
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from app.changes.models import IN_FLIGHT_STATUSES, Change, ChangeStatus
from app.core.config import get_settings
from app.hosts.models import Host, HostFacts
from app.metrics.sql import table_of

# An operator's preview or proposal speeds its host up for this long: a one-click approval
# then reaches the agent within seconds, and a host nobody acts on returns to its interval.
# (Finished changes do not: a fleet-wide rollout would make thousands of hosts push faster.)
PROPOSAL_WINDOW = timedelta(minutes=15)

_changes = table_of(Change)
_facts = table_of(HostFacts)
_hosts = table_of(Host)
_HINTED_STATUSES = (ChangeStatus.proposed, *IN_FLIGHT_STATUSES)


def proposed_since(now: datetime) -> datetime:
    """The oldest creation time of a proposal that still speeds its host up."""
    return now - PROPOSAL_WINDOW


def change_in_flight(host_id: Any, previewed_at: Any, since: Any) -> ColumnElement[bool]:
    """SQL: the host has a change approved, sent or applying; or since `since` a change of it
    was previewed or proposed by a person (a rollout's proposals wait for their wave: counted
    from approval on)."""
    return or_(
        previewed_at >= since,
        exists().where(
            _changes.c.host_id == host_id,
            # Statuses in the (host_id, status) index: only the host's recent changes are read.
            _changes.c.status.in_(_HINTED_STATUSES),
            or_(
                _changes.c.status != ChangeStatus.proposed,
                and_(_changes.c.rollout_id.is_(None), _changes.c.created_at >= since),
            ),
        ),
    )


def apply_allowed_column() -> ColumnElement[bool]:
    """SQL: the host's agent said it may apply (`facts.apply_allowed`), read from host_facts."""
    allowed: ColumnElement[bool] = _facts.c.facts["apply_allowed"].as_boolean().is_(true())
    return allowed


def should_push_sooner(*, session: Session, host_id: int, now: datetime) -> bool:
    """Whether the host's next push reply carries the hint (one query)."""
    query = select(
        exists().where(
            _facts.c.host_id == host_id,
            # Joined on the id, not each compared with host_id: one FROM, no cartesian product.
            _hosts.c.id == _facts.c.host_id,
            apply_allowed_column(),
            change_in_flight(host_id, _hosts.c.change_previewed_at, proposed_since(now)),
        )
    )
    return bool(session.execute(query).scalar())


def next_push_s(push_sooner: bool) -> int | None:
    """`next_push_s` of a push reply: the setting while a change is in flight, else None.

    None too when the setting is 0 (off) or not shorter than the push interval."""
    hint = get_settings().change_push_interval_s
    if not push_sooner or hint <= 0 or hint >= get_settings().push_interval_s:
        return None
    return hint
