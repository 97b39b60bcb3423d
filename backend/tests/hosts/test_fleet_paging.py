"""GET /fleet sorted, filtered and paged by the server; GET /fleet/summary."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from app.core.db import SessionLocal, utcnow
from app.hosts.models import Host
from app.hosts.schemas import FleetSort
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.hosts.factories import make_analysis, make_host, make_recent_log, sorted_copies


def page(client: TestClient, **params: Any) -> dict[str, Any]:
    """The fleet page for these query parameters."""
    reply = client.get("/api/v1/fleet", params=params)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def names(client: TestClient, **params: Any) -> list[str]:
    """Hostnames of the fleet page, in order."""
    return [host["hostname"] for host in page(client, **params)["items"]]


# Host-row figures of three hosts ("low" < "mid" < "high") for each figure column.
FIGURE_COLUMNS: dict[FleetSort, tuple[str, list[Any]]] = {
    "req_per_s": ("req_per_s", [1.0, 20.0, 300.0]),
    "active": ("active", [1, 5, 9]),
    "waiting": ("waiting", [0, 3, 8]),
    "drops_per_s": ("drops_per_s", [0.0, 0.5, 4.0]),
    "cpu_pct": ("cpu_pct", [2.0, 40.0, 95.0]),
    "mem_used_pct": ("mem_used_pct", [10.0, 50.0, 90.0]),
    "fds": ("fds_used_pct", [1.0, 30.0, 99.0]),
}
LOG_COLUMNS: tuple[FleetSort, ...] = ("cache_hit_ratio", "request_time_p95_s", "share_5xx")


def three_hosts_and_an_unknown(column: FleetSort) -> None:
    """Hosts low, mid, high by `column`, and 'none' whose value is unknown."""
    now = utcnow()
    by_name = {
        name: make_host(hostname=name, last_seen_at=now).id
        for name in ("mid", "none", "low", "high")
    }
    ranked = [by_name["low"], by_name["mid"], by_name["high"]]
    if column in FIGURE_COLUMNS:
        field, values = FIGURE_COLUMNS[column]
        with SessionLocal() as session:
            for host_id, value in zip(ranked, values, strict=True):
                figure = {field: value}
                session.execute(
                    update(Host).where(Host.id == host_id).values(**figure, **sorted_copies(figure))
                )
            session.commit()
    elif column in LOG_COLUMNS:
        for host_id, value in zip(ranked, (0.1, 0.5, 0.9), strict=True):
            make_recent_log(host_id, computed_at=now, **{column: value})
        # Figures the rollups stopped refreshing are unknown, not small.
        make_recent_log(by_name["none"], computed_at=now - timedelta(minutes=6), **{column: 0.0})
    else:
        field = {"score": "score", "errors": "error_count", "warnings": "warning_count"}[column]
        for host_id, value in zip(ranked, (10, 50, 90), strict=True):
            make_analysis(host_id, **{"score": 70, field: value})
        # A failed analysis has neither score nor counts.
        make_analysis(by_name["none"], score=None, ok=False)


@pytest.mark.parametrize("column", [*FIGURE_COLUMNS, *LOG_COLUMNS, "score", "errors", "warnings"])
def test_every_figure_column_sorts_both_ways_with_unknown_last(
    viewer_client: TestClient, column: FleetSort
) -> None:
    three_hosts_and_an_unknown(column)
    assert names(viewer_client, sort=column, order="asc") == ["low", "mid", "high", "none"]
    assert names(viewer_client, sort=column, order="desc") == ["high", "mid", "low", "none"]


def test_hostname_status_and_last_seen_sort(viewer_client: TestClient) -> None:
    now = utcnow()
    make_host(hostname="b-up", last_seen_at=now - timedelta(seconds=5), nginx_up=True)
    make_host(hostname="a-new")
    make_host(hostname="d-down", last_seen_at=now, nginx_up=False)
    make_host(hostname="c-stale", last_seen_at=now - timedelta(minutes=5))
    assert names(viewer_client) == ["a-new", "b-up", "c-stale", "d-down"]
    assert names(viewer_client, order="desc") == ["d-down", "c-stale", "b-up", "a-new"]
    # Worst first: down, stale, new, up.
    assert names(viewer_client, sort="status") == ["d-down", "c-stale", "a-new", "b-up"]
    assert names(viewer_client, sort="last_seen_at", order="desc") == [
        "d-down", "b-up", "c-stale", "a-new",
    ]  # fmt: skip


def test_ties_are_broken_by_host_id_in_the_sort_direction(viewer_client: TestClient) -> None:
    ids = [make_host(hostname="same", agent_id=f"agent-{i}").id for i in range(3)]
    ascending = [host["id"] for host in page(viewer_client, sort="hostname")["items"]]
    descending = [host["id"] for host in page(viewer_client, order="desc")["items"]]
    assert ascending == ids
    assert descending == ids[::-1]


def test_pages_cover_the_fleet_once_with_the_total(viewer_client: TestClient) -> None:
    for index in range(7):
        make_host(hostname=f"web-{index}", req_per_s=float(index % 3))
    seen: list[str] = []
    for offset in range(0, 8, 3):
        body = page(viewer_client, sort="req_per_s", order="desc", limit=3, offset=offset)
        assert body["total"] == 7
        assert (body["limit"], body["offset"]) == (3, offset)
        seen += [host["hostname"] for host in body["items"]]
    assert sorted(seen) == [f"web-{index}" for index in range(7)]
    assert len(seen) == 7
    assert page(viewer_client, offset=50)["items"] == []
    assert page(viewer_client, offset=50)["total"] == 7


def test_status_filter_and_hostname_search(viewer_client: TestClient) -> None:
    now = utcnow()
    make_host(hostname="edge-1.example", last_seen_at=now, nginx_up=True)
    make_host(hostname="edge-2.example", last_seen_at=now, nginx_up=False)
    make_host(hostname="app_1.example", last_seen_at=now - timedelta(hours=1))
    make_host(hostname="app-2.example")
    assert names(viewer_client, status="up") == ["edge-1.example"]
    assert names(viewer_client, status=["down", "stale"]) == ["app_1.example", "edge-2.example"]
    assert names(viewer_client, status="new") == ["app-2.example"]
    assert names(viewer_client, q="EDGE") == ["edge-1.example", "edge-2.example"]
    # LIKE's wildcards are plain characters in a search.
    assert names(viewer_client, q="app_") == ["app_1.example"]
    assert names(viewer_client, q="%") == []
    assert page(viewer_client, q="edge", status="up", limit=1)["total"] == 1


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"sort": "colour"}, "sort"),
        ({"order": "up"}, "order"),
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"offset": -1}, "offset"),
        ({"status": "sleeping"}, "status"),
    ],
)
def test_bad_paging_parameters_are_422_naming_the_field(
    viewer_client: TestClient, params: dict[str, Any], field: str
) -> None:
    reply = viewer_client.get("/api/v1/fleet", params=params)
    assert reply.status_code == 422
    assert field in reply.json()["detail"]


def test_summary_counts_the_filtered_fleet(viewer_client: TestClient) -> None:
    now = utcnow()
    up = make_host(hostname="up", last_seen_at=now, nginx_up=True, req_per_s=10.0,
                   drops_per_s=1.5, labels={"env": "prod"})  # fmt: skip
    make_host(hostname="down", last_seen_at=now, nginx_up=False, req_per_s=2.5,
              drops_per_s=0.0, labels={"env": "prod"})  # fmt: skip
    # Stale figures are old: not counted in the load nor the drops.
    make_host(hostname="stale", last_seen_at=now - timedelta(hours=1), req_per_s=100.0,
              drops_per_s=9.0, labels={"env": "prod"})  # fmt: skip
    make_host(hostname="new", labels={"env": "dev"})
    make_analysis(up.id, score=80, error_count=1, warning_count=2)
    reply = viewer_client.get("/api/v1/fleet/summary", params={"label": "env:prod"})
    assert reply.status_code == 200, reply.text
    assert reply.json() == {
        "hosts": 3,
        "by_status": {"up": 1, "down": 1, "stale": 1, "new": 0},
        "req_per_s": 12.5,
        "hosts_with_drops": 1,
        "findings": {"error": 1, "warning": 2, "info": 0},
    }
    everything = viewer_client.get("/api/v1/fleet/summary").json()
    assert everything["hosts"] == 4 and everything["by_status"]["new"] == 1
    assert viewer_client.get("/api/v1/fleet/summary", params={"q": "zzz"}).json()["hosts"] == 0


def test_summary_needs_a_session(client: TestClient) -> None:
    assert client.get("/api/v1/fleet/summary").status_code == 401
