"""GET /hosts/{id}/config and /hosts/{id}/scores, score columns of /fleet, /findings/top."""

from __future__ import annotations

from datetime import timedelta

from app.configs import analyzer
from app.core.db import utcnow
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.configs.factories import (
    NEAR_DEFAULT_DUMP,
    WORKER_CONNECTIONS_LINE,
    host_with_config,
    set_facts,
)
from tests.hosts.factories import make_host


def test_config_of_an_analysed_host(viewer_client: TestClient, db_session: Session) -> None:
    host, snapshot_id = host_with_config()
    set_facts(host.id, {"cpu_count": 4})
    analyzer.analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=utcnow())
    reply = viewer_client.get(f"/api/v1/hosts/{host.id}/config")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["host_id"] == host.id
    assert body["snapshot"]["id"] == snapshot_id
    [config_file] = body["files"]
    assert config_file["path"] == "/etc/nginx/nginx.conf"
    assert config_file["text"] == NEAR_DEFAULT_DUMP.split("\n", 1)[1].removesuffix("\n")
    assert config_file["line_count"] == 13
    analysis = body["analysis"]
    assert analysis["status"] == "ok"
    assert set(analysis["categories"]) >= {"workers", "validity", "tls"}
    found = next(f for f in analysis["findings"] if f["rule"] == "W-connections")
    assert found["line"] == WORKER_CONNECTIONS_LINE
    assert found["key"] == "W-connections@/etc/nginx/nginx.conf:events/worker_connections"
    assert (found["place"], found["directive"]) == ("events", "worker_connections")
    assert found["fix"]["directive"] == "worker_connections"
    assert found["evidence"]["cpu_count"] == 4
    assert found["doc_url"].startswith("https://nginx.org/")
    assert found["muted"] is False and found["ack_id"] is None
    counted = sum(analysis["counts"].values())
    assert counted == len(analysis["findings"])


def test_config_of_a_host_without_snapshot_and_unknown_host(viewer_client: TestClient) -> None:
    host = make_host()
    body = viewer_client.get(f"/api/v1/hosts/{host.id}/config").json()
    assert body == {"host_id": host.id, "snapshot": None, "files": [], "analysis": None}
    reply = viewer_client.get("/api/v1/hosts/999/config")
    assert reply.status_code == 404
    assert reply.json()["detail"] == "host 999 does not exist"


def test_config_needs_a_session(client: TestClient) -> None:
    assert client.get("/api/v1/hosts/1/config").status_code == 401


def test_score_history_one_point_per_analysis_in_range(
    viewer_client: TestClient, db_session: Session
) -> None:
    host, snapshot_id = host_with_config()
    now = utcnow()
    analyzer.analyze_snapshot(
        session=db_session, snapshot_id=snapshot_id, now=now - timedelta(days=3)
    )
    set_facts(host.id, {"cpu_count": 4})
    analyzer.analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=now)

    def points(range_: str) -> list[dict]:  # type: ignore[type-arg]
        reply = viewer_client.get(f"/api/v1/hosts/{host.id}/scores", params={"range": range_})
        assert reply.status_code == 200, reply.text
        result: list[dict] = reply.json()["points"]  # type: ignore[type-arg]
        return result

    week = points("7d")
    assert len(week) == 2
    older, newer = week
    # W-connections appeared with the facts: one warning more, a lower score.
    assert newer["warnings"] == older["warnings"] + 1
    assert newer["score"] < older["score"]
    assert points("24h") == [newer]
    assert (
        viewer_client.get(f"/api/v1/hosts/{host.id}/scores", params={"range": "1y"}).status_code
        == 422
    )


def test_fleet_rows_carry_score_and_counts(viewer_client: TestClient, db_session: Session) -> None:
    host, snapshot_id = host_with_config(hostname="analysed")
    make_host(hostname="fresh")
    outcome = analyzer.analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=utcnow())
    fleet = {row["hostname"]: row for row in viewer_client.get("/api/v1/fleet").json()["items"]}
    assert fleet["fresh"]["score"] is None and fleet["fresh"]["findings"] is None
    config = viewer_client.get(f"/api/v1/hosts/{host.id}/config").json()["analysis"]
    assert config["id"] == outcome.analysis_id
    assert fleet["analysed"]["score"] == config["score"]
    assert fleet["analysed"]["findings"] == config["counts"]
    detail = viewer_client.get(f"/api/v1/hosts/{host.id}").json()
    assert detail["score"] == config["score"]


def test_top_findings_count_hosts_and_leave_muted_out(
    operator_client: TestClient, db_session: Session
) -> None:
    for name, facts in (("a", {"cpu_count": 4}), ("b", {"cpu_count": 8}), ("c", None)):
        host, snapshot_id = host_with_config(hostname=name)
        if facts is not None:
            set_facts(host.id, facts)
        analyzer.analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=utcnow())
    top = {row["rule"]: row for row in operator_client.get("/api/v1/findings/top").json()}
    assert top["W-nofile"]["hosts"] == 3 and top["W-nofile"]["findings"] == 3
    # Host c has no CPU count: its W-connections is a note, still counted.
    assert top["W-connections"]["hosts"] == 3
    assert top["W-connections"]["severity"] == "warning"
    assert top["W-connections"]["category"] == "workers"
    assert "worker_connections" in top["W-connections"]["example_message"]
    ranked = [row["hosts"] for row in operator_client.get("/api/v1/findings/top").json()]
    assert ranked == sorted(ranked, reverse=True)

    reply = operator_client.post(
        "/api/v1/acks", json={"rule": "W-connections", "reason": "fleet plan"}
    )
    assert reply.status_code == 201
    rules = {row["rule"] for row in operator_client.get("/api/v1/findings/top").json()}
    assert "W-connections" not in rules and "W-nofile" in rules
