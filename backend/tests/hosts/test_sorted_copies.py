"""The fleet's sort copies: refreshed by a push at most once per SORTED_COPY_MAX_AGE, so that the
pushes in between update the host row in place (HOT); caught up for hosts that stopped."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
from app.agents.batch_ingest import _HOST_STATUS_UPDATE, PushRequest, store_batch
from app.agents.schemas import PushReply
from app.core.db import utcnow
from app.hosts.latest import LATEST_FIGURES, SORTED_COPY_MAX_AGE, refresh_sorted_copies
from app.hosts.models import Host
from fastapi.testclient import TestClient
from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from tests.agents.payloads import push_body, recent, sample
from tests.hosts.factories import HostWithToken, make_host


def push(host: HostWithToken, samples: list[dict[str, Any]]) -> None:
    """Store one push through the group commit."""
    body = orjson.dumps(push_body(samples, agent_id=host.agent_id))
    [outcome] = store_batch([PushRequest(token=host.token, body=body, content_encoding=None)])
    assert isinstance(outcome, PushReply), repr(outcome)


def copies(session: Session, host_id: int) -> tuple[Any, ...]:
    """(active, sort_active, last_seen_at, sort_last_seen_at, sorted_at) of a host, read anew."""
    session.expire_all()
    row = session.execute(
        select(
            Host.active, Host.sort_active, Host.last_seen_at, Host.sort_last_seen_at, Host.sorted_at
        ).where(Host.id == host_id)
    ).one()
    return tuple(row)


def age_the_copies(session: Session, host_id: int) -> None:
    """Make the host's copies older than SORTED_COPY_MAX_AGE."""
    old = utcnow() - SORTED_COPY_MAX_AGE - timedelta(seconds=1)
    session.execute(update(Host).where(Host.id == host_id).values(sorted_at=old))
    session.commit()


def test_a_push_refreshes_the_copies_only_once_they_are_due(db_session: Session) -> None:
    host = make_host()
    push(host, [sample(1, recent(30), active=3)])
    active, sort_active, seen, sort_seen, sorted_at = copies(db_session, host.id)
    assert (active, sort_active) == (3, 3) and seen == sort_seen == sorted_at
    # Within the max age: the figures shown move on, the order the page sorts by does not.
    push(host, [sample(2, recent(20), active=5)])
    active, sort_active, seen, sort_seen, _ = copies(db_session, host.id)
    assert (active, sort_active) == (5, 3) and seen > sort_seen
    age_the_copies(db_session, host.id)
    push(host, [sample(3, recent(10), active=8)])
    active, sort_active, seen, sort_seen, sorted_at = copies(db_session, host.id)
    assert (active, sort_active) == (8, 8) and seen == sort_seen == sorted_at


def test_a_push_within_the_max_age_updates_the_row_in_place(db_session: Session) -> None:
    host = make_host()
    push(host, [sample(1, recent(30), active=3)])
    now = utcnow()
    params: dict[str, Any] = {
        "b_id": host.id,
        "b_hostname": db_session.scalar(select(Host.hostname).where(Host.id == host.id)),
        "b_last_seen_at": now,
        "b_agent_version": "test",
        "b_last_seq": 2,
        "b_nginx_up": True,
        "b_stub_status_available": True,
        "b_stub_status_error": None,
        "b_refresh_before": now - SORTED_COPY_MAX_AGE,
        **{f"b_{name}": 7 for name in LATEST_FIGURES},
    }

    def hot_updates() -> int:
        count = "SELECT pg_stat_get_xact_tuples_hot_updated('hosts'::regclass)"
        return int(db_session.execute(text(count)).scalar_one())

    # PostgreSQL 15's "xact" counter also holds a pooled backend's earlier transactions' counts
    # until its stats are flushed (~1 s): count from what it says now.
    before = hot_updates()
    # Every figure and last_seen_at change: only unindexed columns do, so the update is HOT.
    db_session.execute(_HOST_STATUS_UPDATE, [params])
    assert hot_updates() == before + 1
    # Due copies change indexed columns: a new row version with index entries (not HOT).
    db_session.execute(_HOST_STATUS_UPDATE, [{**params, "b_refresh_before": now}])
    assert hot_updates() == before + 1
    db_session.rollback()


def test_the_fleet_is_ordered_by_the_copies_and_shows_the_newest_figures(
    viewer_client: TestClient, db_session: Session
) -> None:
    busy, quiet = make_host(), make_host()
    push(busy, [sample(1, recent(30), active=50)])
    push(quiet, [sample(1, recent(30), active=10)])
    # quiet gets busier than busy; its copies are not due yet.
    push(quiet, [sample(2, recent(20), active=90)])
    items = viewer_client.get("/api/v1/fleet", params={"sort": "active", "order": "desc"}).json()
    assert [(row["id"], row["active"]) for row in items["items"]] == [(busy.id, 50), (quiet.id, 90)]
    age_the_copies(db_session, quiet.id)
    assert refresh_sorted_copies(session=db_session, now=utcnow()) == 1
    db_session.commit()
    items = viewer_client.get("/api/v1/fleet", params={"sort": "active", "order": "desc"}).json()
    assert [row["id"] for row in items["items"]] == [quiet.id, busy.id]


def test_the_periodic_refresh_touches_only_due_copies_that_differ(db_session: Session) -> None:
    host = make_host()
    push(host, [sample(1, recent(30), active=3)])
    push(host, [sample(2, recent(20), active=5)])
    # Differs but not due: a host that is pushing refreshes its copies itself.
    assert refresh_sorted_copies(session=db_session, now=utcnow()) == 0
    # The host stopped pushing: its copies catch up once, then there is nothing left to do.
    later = utcnow() + SORTED_COPY_MAX_AGE + timedelta(seconds=1)
    assert refresh_sorted_copies(session=db_session, now=later) == 1
    db_session.commit()
    assert copies(db_session, host.id)[:2] == (5, 5)
    age_the_copies(db_session, host.id)
    assert refresh_sorted_copies(session=db_session, now=utcnow()) == 0
