"""The fleet list's access-log columns: last 15 minutes, null when not measured, no N+1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from app.access_log.aggregate import ROLLUP_LEVEL
from app.access_log.models import AccessLogRecent
from app.core.db import SessionLocal, get_engine, utcnow
from app.metrics import rollups
from fastapi.testclient import TestClient
from nginx_fleet_analyzer.latency_sketch import level_alpha
from sqlalchemy import event, update

from tests.access_log.factories import insert_log_rows, log_row
from tests.hosts.factories import make_host

LOG_COLUMNS = ("cache_hit_ratio", "request_time_p95_s", "share_5xx")


def fleet(client: TestClient) -> dict[str, dict[str, Any]]:
    """The fleet list by hostname."""
    reply = client.get("/api/v1/fleet")
    assert reply.status_code == 200, reply.text
    return {host["hostname"]: host for host in reply.json()["items"]}


def busy_hosts(count: int) -> list[int]:
    """Hosts with 15 minutes of log figures: host i has a p95 of (i + 1) / 10 s."""
    now = utcnow()
    ids = []
    for index in range(count):
        host = make_host(hostname=f"web-{index}", last_seen_at=now, nginx_up=True)
        ids.append(host.id)
        insert_log_rows([
            log_row(host.id, now - timedelta(minutes=1), 1, times=[(index + 1) / 10] * 20,
                    cache_hit=index, cache_miss=10 - index, status_2xx=20 - index,
                    status_5xx=index),
        ])  # fmt: skip
    with SessionLocal() as session:
        rollups.rollup_recent(session=session, now=now)
    return ids


def test_the_fleet_shows_the_last_15_minutes_of_access_log_figures(
    viewer_client: TestClient,
) -> None:
    busy_hosts(3)
    make_host(hostname="no-logs")
    rows = fleet(viewer_client)
    assert rows["web-2"]["cache_hit_ratio"] == pytest.approx(0.2)
    assert rows["web-2"]["share_5xx"] == pytest.approx(0.1)
    # Read off the minute rollups' sketches.
    assert rows["web-2"]["request_time_p95_s"] == pytest.approx(0.3, rel=level_alpha(ROLLUP_LEVEL))
    assert {name: rows["no-logs"][name] for name in LOG_COLUMNS} == dict.fromkeys(LOG_COLUMNS)
    # The figures sort the hosts as the UI's sortable columns will.
    by_p95 = sorted(
        (host for host in rows.values() if host["request_time_p95_s"] is not None),
        key=lambda host: host["request_time_p95_s"],
        reverse=True,
    )
    assert [host["hostname"] for host in by_p95] == ["web-2", "web-1", "web-0"]
    detail = viewer_client.get(f"/api/v1/hosts/{rows['web-1']['id']}").json()
    assert detail["cache_hit_ratio"] == pytest.approx(0.1)


def test_figures_the_rollups_stopped_refreshing_are_not_shown(viewer_client: TestClient) -> None:
    [host_id] = busy_hosts(1)
    with SessionLocal() as session:
        session.execute(
            update(AccessLogRecent).values(computed_at=utcnow() - timedelta(minutes=10))
        )
        session.commit()
    row = fleet(viewer_client)["web-0"]
    assert row["id"] == host_id
    assert {name: row[name] for name in LOG_COLUMNS} == dict.fromkeys(LOG_COLUMNS)


@contextmanager
def counted_statements() -> Iterator[list[str]]:
    """The SQL statements run on the engine meanwhile."""
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    engine = get_engine()
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_the_fleet_list_costs_the_same_queries_for_one_host_or_many(
    viewer_client: TestClient,
) -> None:
    busy_hosts(1)
    with counted_statements() as one:
        fleet(viewer_client)
    for index in range(5):
        make_host(hostname=f"more-{index}", last_seen_at=utcnow(), nginx_up=True)
    with counted_statements() as six:
        rows = fleet(viewer_client)
    assert len(rows) == 6
    assert len(six) == len(one), six
