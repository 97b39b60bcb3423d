"""Acknowledgements: roles, validation, audit, muting per host and fleet-wide, expiry."""

from __future__ import annotations

from datetime import timedelta

from app.audit.models import AuditEntry
from app.configs import analyzer
from app.configs.models import ConfigAnalysis
from app.core.db import utcnow
from app.findings import service
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.configs.factories import host_with_config, set_facts

W_CONNECTIONS_KEY = "W-connections@/etc/nginx/nginx.conf:events/worker_connections"


def analysed_host(session: Session, hostname: str = "web-1") -> tuple[int, int]:
    """A host with 4 CPUs and the near-default config, analysed; (host id, its score)."""
    host, snapshot_id = host_with_config(hostname=hostname)
    set_facts(host.id, {"cpu_count": 4})
    outcome = analyzer.analyze_snapshot(session=session, snapshot_id=snapshot_id, now=utcnow())
    analysis = session.get(ConfigAnalysis, outcome.analysis_id)
    assert analysis is not None and analysis.score is not None
    return host.id, analysis.score


def current(client: TestClient, host_id: int) -> dict:  # type: ignore[type-arg]
    """The analysis part of GET /hosts/{id}/config."""
    reply = client.get(f"/api/v1/hosts/{host_id}/config")
    assert reply.status_code == 200, reply.text
    analysis: dict = reply.json()["analysis"]  # type: ignore[type-arg]
    return analysis


def finding(analysis: dict, rule: str) -> dict:  # type: ignore[type-arg]
    """The first finding of a rule in an analysis body."""
    return next(f for f in analysis["findings"] if f["rule"] == rule)


def test_viewer_cannot_acknowledge(viewer_client: TestClient, db_session: Session) -> None:
    host_id, _ = analysed_host(db_session)
    body = {"rule": "W-connections", "host_id": host_id, "reason": "known, capacity plan"}
    reply = viewer_client.post("/api/v1/acks", json=body)
    assert reply.status_code == 403
    assert viewer_client.get("/api/v1/acks").json() == []


def test_reason_is_required_and_bounded(operator_client: TestClient) -> None:
    # Blank text counts as its trimmed length: "     " is no reason, " ok " too short.
    for reason in ("", "ok", "x" * 501, "     ", " ok "):
        reply = operator_client.post("/api/v1/acks", json={"rule": "W-drops", "reason": reason})
        assert reply.status_code == 422
        assert "reason" in reply.json()["detail"]


def test_a_blank_rule_is_refused(operator_client: TestClient) -> None:
    reply = operator_client.post("/api/v1/acks", json={"rule": "   ", "reason": "looks empty"})
    assert reply.status_code == 422
    assert "rule" in reply.json()["detail"]
    assert operator_client.get("/api/v1/acks").json() == []


def test_unknown_host_and_foreign_key_are_refused(operator_client: TestClient) -> None:
    reply = operator_client.post(
        "/api/v1/acks", json={"rule": "W-drops", "host_id": 999, "reason": "not ours"}
    )
    assert reply.status_code == 404
    reply = operator_client.post(
        "/api/v1/acks",
        json={"rule": "W-drops", "finding_key": W_CONNECTIONS_KEY, "reason": "mixed up"},
    )
    assert reply.status_code == 422
    assert "not a finding of rule W-drops" in reply.json()["detail"]


def test_past_expiry_is_refused(operator_client: TestClient) -> None:
    past = (utcnow() - timedelta(minutes=1)).isoformat()
    reply = operator_client.post(
        "/api/v1/acks", json={"rule": "W-drops", "reason": "too late", "expires_at": past}
    )
    assert reply.status_code == 422
    assert "in the past" in reply.json()["detail"]


def test_host_ack_of_one_finding_mutes_it_there_only(
    operator_client: TestClient, db_session: Session
) -> None:
    host_id, score_before = analysed_host(db_session, "a")
    other_id, other_before = analysed_host(db_session, "b")
    counts_before = current(operator_client, host_id)["counts"]
    body = {
        "rule": "W-connections",
        "host_id": host_id,
        "finding_key": W_CONNECTIONS_KEY,
        "reason": "capacity is planned for next quarter",
    }
    reply = operator_client.post("/api/v1/acks", json=body)
    assert reply.status_code == 201, reply.text
    ack = reply.json()
    assert ack["created_by"] == operator_client.user.username  # type: ignore[attr-defined]
    assert ack["expires_at"] is None

    analysis = current(operator_client, host_id)
    muted = finding(analysis, "W-connections")
    assert muted["muted"] is True and muted["ack_id"] == ack["id"]
    assert finding(analysis, "W-nofile")["muted"] is False
    assert analysis["score"] > score_before
    assert analysis["counts"]["warning"] == counts_before["warning"] - 1
    other = current(operator_client, other_id)
    assert finding(other, "W-connections")["muted"] is False
    assert other["score"] == other_before

    entry = db_session.scalar(select(AuditEntry).where(AuditEntry.action == "ack.create"))
    assert entry is not None and entry.detail["finding_key"] == W_CONNECTIONS_KEY


def test_fleet_wide_ack_mutes_every_host_and_delete_restores(
    operator_client: TestClient, db_session: Session
) -> None:
    first_id, first_before = analysed_host(db_session, "a")
    second_id, second_before = analysed_host(db_session, "b")
    reply = operator_client.post(
        "/api/v1/acks", json={"rule": "W-nofile", "reason": "systemd sets LimitNOFILE"}
    )
    assert reply.status_code == 201, reply.text
    ack_id = reply.json()["id"]
    for host_id, before in ((first_id, first_before), (second_id, second_before)):
        analysis = current(operator_client, host_id)
        assert finding(analysis, "W-nofile")["muted"] is True
        assert analysis["score"] > before
    assert [a["id"] for a in operator_client.get("/api/v1/acks").json()] == [ack_id]

    assert operator_client.delete(f"/api/v1/acks/{ack_id}").status_code == 204
    assert operator_client.delete(f"/api/v1/acks/{ack_id}").status_code == 404
    for host_id, before in ((first_id, first_before), (second_id, second_before)):
        analysis = current(operator_client, host_id)
        assert finding(analysis, "W-nofile")["muted"] is False
        assert analysis["score"] == before
    actions = db_session.scalars(select(AuditEntry.action).order_by(AuditEntry.id)).all()
    assert actions[-2:] == ["ack.create", "ack.delete"]


def test_expired_ack_counts_again_after_the_periodic_task(
    operator_client: TestClient, db_session: Session
) -> None:
    host_id, score_before = analysed_host(db_session)
    expires = utcnow() + timedelta(minutes=5)
    reply = operator_client.post(
        "/api/v1/acks",
        json={
            "rule": "W-connections",
            "host_id": host_id,
            "reason": "until the maintenance window",
            "expires_at": expires.isoformat(),
        },
    )
    assert reply.status_code == 201, reply.text
    muted_score = current(operator_client, host_id)["score"]
    assert muted_score > score_before

    # Before the expiry nothing changes; after it, the task re-scores once.
    assert service.apply_expired_acks(session=db_session, now=expires - timedelta(seconds=1)) == 0
    later = expires + timedelta(seconds=1)
    assert service.apply_expired_acks(session=db_session, now=later) == 1
    assert service.apply_expired_acks(session=db_session, now=later) == 0
    db_session.expire_all()
    analysis = db_session.scalars(select(ConfigAnalysis)).one()
    assert analysis.score == score_before
