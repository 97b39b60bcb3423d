"""Enrolment of agents and authentication of their host tokens."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, bindparam, exists, select
from sqlalchemy.orm import Session

from app.agents.schemas import EnrollRequest
from app.audit import service as audit_service
from app.changes import cadence
from app.changes.models import PENDING_STATUSES, Change
from app.core import pubsub
from app.core.db import utcnow
from app.core.errors import ConflictError
from app.core.security import HOST_TOKEN_PREFIX, hash_token, new_token, tokens_equal
from app.enrollment.models import EnrollmentToken
from app.enrollment.service import consume_enrollment_token
from app.hosts.models import Host, HostFacts
from app.hosts.service import ENROLMENT_RESET_WINDOW
from app.metrics.models import Sample
from app.metrics.rates import CounterReading
from app.metrics.sql import table_of


@dataclass(frozen=True, slots=True)
class Enrolled:
    """An enrolled host and its new token (shown once)."""

    host_id: int
    host_token: str
    rotated: bool


class HostAlreadyEnrolledError(ConflictError):
    """The agent_id belongs to an enrolled host and the request did not prove to be that host."""


def _may_take_over(
    host: Host, presented_host_token: str | None, enrollment_token: EnrollmentToken, now: datetime
) -> str | None:
    """How a re-enrolment of host proves itself ("host_token", "admin_reset"), or None.

    An admin reset admits only an enrolment token made after it, within ENROLMENT_RESET_WINDOW:
    a token handed out earlier (or leaked) cannot claim a host whose agent waits to re-enrol."""
    reset_at = host.enrolment_reset_at
    if (
        reset_at is not None
        and now - reset_at <= ENROLMENT_RESET_WINDOW
        and enrollment_token.created_at >= reset_at
    ):
        return "admin_reset"
    if presented_host_token and tokens_equal(hash_token(presented_host_token), host.token_hash):
        return "host_token"
    return None


def enroll(
    *,
    session: Session,
    request: EnrollRequest,
    presented_host_token: str | None,
    now: datetime,
) -> Enrolled:
    """Exchange an enrolment token for a host token; commits.

    A new host gets the token's labels over the agent's (the admin who made the token decides).
    An agent_id that is already enrolled keeps its host and labels and gets a new token, but only
    when the request carries that host's current token or an admin reset the host's enrolment:
    agent_ids are visible to every viewer, so an enrolment token alone never rotates a host."""
    enrollment_token = consume_enrollment_token(session=session, token=request.enrollment_token)
    host_token = new_token(HOST_TOKEN_PREFIX)
    host = session.scalar(select(Host).where(Host.agent_id == request.agent_id).with_for_update())
    proof: str | None = None
    if host is None:
        host = Host(
            agent_id=request.agent_id,
            hostname=request.hostname,
            labels={**request.labels, **(enrollment_token.labels or {})},
            token_hash=hash_token(host_token),
            enrolled_at=now,
        )
        session.add(host)
    else:
        proof = _may_take_over(host, presented_host_token, enrollment_token, now)
        if proof is None:
            # Raising rolls back, so the enrolment token's use is not burned.
            raise HostAlreadyEnrolledError(
                f"agent_id {request.agent_id!r} is already enrolled; re-enrolling needs the "
                "host's current token (Authorization: Bearer nfh_…), or an admin's "
                "'reset agent enrolment' on that host and an enrolment token made after it "
                f"(within {ENROLMENT_RESET_WINDOW.total_seconds() / 3600:g} hours)"
            )
        host.token_hash = hash_token(host_token)
        host.hostname = request.hostname
        host.enrolment_reset_at = None
    session.flush()
    detail: dict[str, object] = {
        "hostname": host.hostname,
        "enrollment_token_id": enrollment_token.id,
        "labels": host.labels,
    }
    if proof is not None:
        detail["proof"] = proof
    audit_service.record(
        session=session,
        actor=f"agent:{request.agent_id}",
        action="host.rotate_token" if proof is not None else "host.enroll",
        target=f"host:{host.id}",
        detail=detail,
    )
    session.commit()
    pubsub.publish("host", {"host_id": host.id})
    return Enrolled(host_id=host.id, host_token=host_token, rotated=proof is not None)


@dataclass(frozen=True, slots=True)
class AuthenticatedHost:
    """The host a token belongs to, with what the next push needs to know about it."""

    id: int
    agent_id: str
    hostname: str
    labels: dict[str, str]
    config_hash: str | None
    nginx_version: str | None
    newest_seq: int | None
    newest_reading: CounterReading | None
    # An approved or sent change waits for this host: its pushes take the per-push path.
    action_pending: bool = False
    # A change is in flight and the agent may apply: the reply asks for the next push sooner.
    push_sooner: bool = False


_hosts = table_of(Host)
_facts = table_of(HostFacts)
_samples = table_of(Sample)
_changes = table_of(Change)
_ACTION_PENDING = (
    exists()
    .where(_changes.c.host_id == _hosts.c.id, _changes.c.status.in_(PENDING_STATUSES))
    .correlate(_hosts)
)

# Built once: every push runs it, and plain table columns skip the ORM's per-query work.
_HOSTS_OF_TOKENS = (
    select(
        _hosts.c.token_hash,
        _hosts.c.id,
        _hosts.c.agent_id,
        _hosts.c.hostname,
        _hosts.c.labels,
        _hosts.c.config_hash,
        _hosts.c.last_seq,
        _facts.c.nginx_version,
        _samples.c.ts,
        _samples.c.accepts,
        _samples.c.handled,
        _samples.c.requests,
        _ACTION_PENDING.label("action_pending"),
        and_(
            cadence.apply_allowed_column(),
            cadence.change_in_flight(
                _hosts.c.id, _hosts.c.change_previewed_at, bindparam("proposed_since")
            ),
        ).label("push_sooner"),
    )
    .outerjoin(_facts, _facts.c.host_id == _hosts.c.id)
    .outerjoin(
        _samples, and_(_samples.c.host_id == _hosts.c.id, _samples.c.seq == _hosts.c.last_seq)
    )
    .where(_hosts.c.token_hash.in_(bindparam("token_hashes", expanding=True)))
)


def authenticate_many(*, session: Session, tokens: Iterable[str]) -> dict[str, AuthenticatedHost]:
    """The hosts of bearer tokens, by token (one query); unknown tokens are left out."""
    token_of_hash = {hash_token(token): token for token in tokens}
    rows = session.connection().execute(
        _HOSTS_OF_TOKENS,
        {
            "token_hashes": list(token_of_hash),
            "proposed_since": cadence.proposed_since(utcnow()),
        },
    )
    return {token_of_hash[row.token_hash]: _authenticated_host(row) for row in rows}


def authenticate(*, session: Session, token: str) -> AuthenticatedHost | None:
    """The host of a bearer token (one query: host, facts and newest counters), or None."""
    return authenticate_many(session=session, tokens=[token]).get(token)


def _authenticated_host(row: Row[Any, *tuple[Any, ...]]) -> AuthenticatedHost:
    """An AuthenticatedHost from a row of _HOSTS_OF_TOKENS."""
    reading = (
        CounterReading(ts=row.ts, accepts=row.accepts, handled=row.handled, requests=row.requests)
        if row.ts is not None
        else None
    )
    return AuthenticatedHost(
        id=row.id,
        agent_id=row.agent_id,
        hostname=row.hostname,
        labels=row.labels or {},
        config_hash=row.config_hash,
        nginx_version=row.nginx_version,
        newest_seq=row.last_seq,
        newest_reading=reading,
        action_pending=bool(row.action_pending),
        push_sooner=bool(row.push_sooner),
    )
