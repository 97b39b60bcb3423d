"""Group commit: many pushes authenticated, stored and committed together, in one transaction.

Plain appends (the steady state of a fleet) share one auth query, one INSERT, one UPDATE and
one commit; pushes that need the rare paths (facts, a config dump, gap records, no valid sample,
samples reaching back before the newest stored one) go through the per-push path after the
batch, in arrival order per host. A refused push gets a domain error (app.agents.errors) as its
outcome, which the router turns into the HTTP reply.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, update
from sqlalchemy.orm import Session

from app.access_log.ingest import store_access_logs
from app.agents import service
from app.agents.errors import UNKNOWN_TOKEN, HostTokenError
from app.agents.ingest import (
    Committed,
    announce_many,
    check_agent,
    committed_push,
    ingest_push,
    stub_status_error,
)
from app.agents.payload import decode_body, parse_push_payload
from app.agents.schemas import PushPayload, PushReply
from app.agents.service import AuthenticatedHost
from app.core.config import get_settings
from app.core.db import SessionLocal, utcnow
from app.core.errors import ServiceError
from app.hosts.latest import (
    LATEST_FIGURES,
    SORTED_COPY_MAX_AGE,
    latest_figures,
    sorted_copy_values,
)
from app.hosts.models import SORTED_COPY_COLUMNS, Host
from app.metrics.rates import CounterReading
from app.metrics.samples import fill_rates, insert_rows_of_hosts, reading_of, sample_row
from app.metrics.sql import table_of

log = logging.getLogger(__name__)

_hosts = table_of(Host)


@dataclass(frozen=True, slots=True)
class PushRequest:
    """One push as received: the bearer token and the raw body."""

    token: str
    body: bytes
    content_encoding: str | None


# What each push of a batch gets: its reply, or the exception its request must raise.
Outcome = PushReply | Exception


def _decode(request: PushRequest) -> PushPayload:
    """The validated payload of a push; PayloadRejected (413/422) when unusable as a whole."""
    max_bytes = get_settings().ingest_max_bytes
    raw = decode_body(request.body, content_encoding=request.content_encoding, max_bytes=max_bytes)
    return parse_push_payload(raw)


def handle_push(request: PushRequest) -> PushReply:
    """Authenticate, decode, validate and store one push on its own (the per-push path)."""
    with SessionLocal() as session:
        host = service.authenticate(session=session, token=request.token)
        if host is None:
            raise HostTokenError(UNKNOWN_TOKEN)
        payload = _decode(request)
        return ingest_push(session=session, host=host, payload=payload, now=utcnow())


@dataclass(slots=True)
class _Append:
    """A push whose samples all come after its host's newest one: rows with rates ready."""

    index: int
    host: AuthenticatedHost
    payload: PushPayload
    rows: list[dict[str, Any]]


@dataclass(slots=True)
class _Plan:
    """How each push of a batch is handled."""

    appends: list[_Append]
    # Indexes of pushes for the per-push path, in arrival order.
    one_by_one: list[int]


def _plan(
    session: Session, requests: Sequence[PushRequest], outcomes: list[Outcome | None]
) -> _Plan:
    """Authenticate and validate every push; refused ones get their error in outcomes."""
    hosts = service.authenticate_many(session=session, tokens={r.token for r in requests})
    plan = _Plan(appends=[], one_by_one=[])
    # Per host: the newest seq and counters once the earlier pushes of this batch are stored.
    newest: dict[int, tuple[int | None, CounterReading | None]] = {}
    hosts_one_by_one: set[int] = set()
    for index, request in enumerate(requests):
        host = hosts.get(request.token)
        if host is None:
            outcomes[index] = HostTokenError(UNKNOWN_TOKEN)
            continue
        try:
            payload = _decode(request)
            check_agent(host, payload)
        except ServiceError as refused:
            outcomes[index] = refused
            continue
        newest_seq, newest_reading = newest.get(host.id, (host.newest_seq, host.newest_reading))
        rare = (
            payload.facts is not None
            or payload.config is not None
            or bool(payload.gaps)
            or bool(payload.action_reports)
            or host.action_pending
            or not payload.samples
        )
        reaches_back = (
            payload.samples and newest_seq is not None and payload.samples[0].seq <= newest_seq
        )
        # Once one push of a host takes the per-push path, its later ones follow it in order.
        if rare or reaches_back or host.id in hosts_one_by_one:
            hosts_one_by_one.add(host.id)
            plan.one_by_one.append(index)
            continue
        rows = [sample_row(host.id, sample) for sample in payload.samples]
        fill_rates(rows, before=newest_reading)
        newest[host.id] = (rows[-1]["seq"], reading_of(rows[-1]))
        plan.appends.append(_Append(index=index, host=host, payload=payload, rows=rows))
    return plan


# The sorted copies change only when due (app.hosts.latest): most of these updates are HOT.
_HOST_STATUS_UPDATE = (
    update(_hosts)
    .where(_hosts.c.id == bindparam("b_id"))
    .values(
        hostname=bindparam("b_hostname"),
        last_seen_at=bindparam("b_last_seen_at"),
        agent_version=bindparam("b_agent_version"),
        last_seq=bindparam("b_last_seq"),
        nginx_up=bindparam("b_nginx_up"),
        stub_status_available=bindparam("b_stub_status_available"),
        stub_status_error=bindparam("b_stub_status_error"),
        **{name: bindparam(f"b_{name}") for name in LATEST_FIGURES},
        **sorted_copy_values(
            {name: bindparam(f"b_{name}") for name in SORTED_COPY_COLUMNS},
            refresh_before=bindparam("b_refresh_before"),
        ),
    )
)


def _host_status(append: _Append, now: datetime) -> dict[str, Any]:
    """The _HOST_STATUS_UPDATE parameters after an append."""
    newest = append.rows[-1]
    return {
        "b_id": append.host.id,
        "b_hostname": append.payload.hostname,
        "b_last_seen_at": now,
        "b_agent_version": append.payload.agent_version,
        "b_last_seq": newest["seq"],
        "b_nginx_up": newest["nginx_up"],
        "b_stub_status_available": newest["stub_status_available"],
        "b_stub_status_error": stub_status_error(newest),
        "b_refresh_before": now - SORTED_COPY_MAX_AGE,
        **{f"b_{name}": value for name, value in latest_figures(newest).items()},
    }


def _committed(append: _Append, inserted: set[int], now: datetime) -> Committed:
    """The reply, live event and late rollup of one stored append (`inserted`: its host's seqs)."""
    return committed_push(
        host=append.host,
        payload=append.payload,
        rows=append.rows,
        inserted=inserted,
        gaps_stored=0,
        known_config_hash=append.host.config_hash,
        now=now,
    )


def _store_appends(session: Session, appends: list[_Append], now: datetime) -> list[Committed]:
    """Insert every append's rows, update their hosts and commit, all at once."""
    inserted = insert_rows_of_hosts(session, [row for append in appends for row in append.rows])
    store_access_logs(
        session,
        (
            (append.host.id, sample)
            for append in appends
            for sample in append.payload.samples
            if (append.host.id, sample.seq) in inserted
        ),
    )
    # The last append of a host holds its newest status; updating in id order keeps two
    # processes that update the same hosts from deadlocking.
    statuses = {append.host.id: _host_status(append, now) for append in appends}
    session.execute(_HOST_STATUS_UPDATE, [statuses[host_id] for host_id in sorted(statuses)])
    session.commit()
    inserted_of_host: dict[int, set[int]] = defaultdict(set)
    for host_id, seq in inserted:
        inserted_of_host[host_id].add(seq)
    return [_committed(append, inserted_of_host[append.host.id], now) for append in appends]


def _one_by_one(requests: Sequence[PushRequest], indexes: Sequence[int]) -> dict[int, Outcome]:
    """Each push through the per-push path, each with its own outcome."""
    outcomes: dict[int, Outcome] = {}
    for index in indexes:
        try:
            outcomes[index] = handle_push(requests[index])
        except Exception as error:  # handed to that push's own request
            outcomes[index] = error
    return outcomes


def store_batch(requests: Sequence[PushRequest]) -> list[Outcome]:
    """Store a batch of pushes with one commit for the plain appends; one outcome per push.

    A reply is only returned after the commit that stored its push. When the shared
    transaction fails, each push is retried on its own so that one bad push fails only itself."""
    outcomes: list[Outcome | None] = [None] * len(requests)
    retry: list[int] = []
    with SessionLocal() as session:
        try:
            plan = _plan(session, requests, outcomes)
            now = utcnow()
            committed = _store_appends(session, plan.appends, now) if plan.appends else []
        except Exception:
            log.exception("a batch of %d pushes failed; storing them one by one", len(requests))
            session.rollback()
            retry = [index for index, outcome in enumerate(outcomes) if outcome is None]
        else:
            retry = plan.one_by_one
            announce_many(
                [
                    (append.host.id, stored)
                    for append, stored in zip(plan.appends, committed, strict=True)
                ]
            )
            for append, stored in zip(plan.appends, committed, strict=True):
                outcomes[append.index] = stored.reply
    for index, outcome in _one_by_one(requests, retry).items():
        outcomes[index] = outcome
    return [
        outcome if outcome is not None else RuntimeError("push left without an outcome")
        for outcome in outcomes
    ]
