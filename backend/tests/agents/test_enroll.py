"""Enrolment: a host token in exchange for an enrolment token."""

from __future__ import annotations

from typing import Any

from app.audit.models import AuditEntry
from app.core.security import hash_token
from app.enrollment.service import issue_token
from app.hosts.models import Host
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

AGENT_ID = "6f1c2b7e-0000-4000-8000-00000000abcd"


def enrolment_token(session: Session, labels: dict[str, str], max_uses: int = 1) -> str:
    """A fresh enrolment token."""
    issued = issue_token(
        session=session, actor=None, labels=labels, expires_in_hours=1, max_uses=max_uses
    )
    return issued.token


def enroll(client: TestClient, token: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """POST /agent/enroll and return the JSON reply (asserting 201)."""
    reply = client.post(
        "/api/v1/agent/enroll",
        json={
            "enrollment_token": token,
            "agent_id": AGENT_ID,
            "hostname": "web-1",
            "labels": labels or {},
        },
    )
    assert reply.status_code == 201, reply.text
    result: dict[str, Any] = reply.json()
    return result


def test_enroll_creates_host_with_merged_labels(client: TestClient, db_session: Session) -> None:
    token = enrolment_token(db_session, {"env": "prod", "team": "edge"})
    reply = enroll(client, token, labels={"env": "dev", "role": "lb"})
    assert reply["host_token"].startswith("nfh_")
    assert reply["push_interval_s"] == 10
    host = db_session.get(Host, reply["host_id"])
    assert host is not None
    # The admin's token labels win over the agent's own on a clash.
    assert host.labels == {"env": "prod", "team": "edge", "role": "lb"}
    assert host.token_hash == hash_token(reply["host_token"])
    assert host.last_seen_at is None
    actions = db_session.scalars(select(AuditEntry.action)).all()
    assert "host.enroll" in actions


def test_host_token_authenticates_ping(client: TestClient, db_session: Session) -> None:
    reply = enroll(client, enrolment_token(db_session, {}))
    ping = client.post(
        "/api/v1/agent/ping", headers={"Authorization": f"Bearer {reply['host_token']}"}
    )
    assert ping.status_code == 200
    assert ping.json() == {"ok": True, "host_id": reply["host_id"]}


def test_reenrolling_rotates_the_token(client: TestClient, db_session: Session) -> None:
    token = enrolment_token(db_session, {}, max_uses=2)
    first = enroll(client, token)
    second = enroll(client, token)
    assert second["host_id"] == first["host_id"]
    assert second["host_token"] != first["host_token"]
    old = client.post(
        "/api/v1/agent/ping", headers={"Authorization": f"Bearer {first['host_token']}"}
    )
    new = client.post(
        "/api/v1/agent/ping", headers={"Authorization": f"Bearer {second['host_token']}"}
    )
    assert old.status_code == 401
    assert new.status_code == 200
    assert len(db_session.scalars(select(Host)).all()) == 1


def test_used_up_enrolment_token_is_401(client: TestClient, db_session: Session) -> None:
    token = enrolment_token(db_session, {})
    enroll(client, token)
    reply = client.post(
        "/api/v1/agent/enroll",
        json={"enrollment_token": token, "agent_id": "other-agent", "hostname": "web-2"},
    )
    assert reply.status_code == 401
    assert "used up" in reply.json()["detail"]


def test_unknown_enrolment_token_is_401_and_creates_nothing(
    client: TestClient, db_session: Session
) -> None:
    reply = client.post(
        "/api/v1/agent/enroll",
        json={"enrollment_token": "nfe_nope", "agent_id": AGENT_ID, "hostname": "web-1"},
    )
    assert reply.status_code == 401
    assert db_session.scalars(select(Host)).all() == []


def test_enrol_request_with_bad_label_is_422(client: TestClient) -> None:
    reply = client.post(
        "/api/v1/agent/enroll",
        json={
            "enrollment_token": "nfe_x",
            "agent_id": AGENT_ID,
            "hostname": "web-1",
            "labels": {"bad key!": "x"},
        },
    )
    assert reply.status_code == 422
    assert "labels" in reply.json()["detail"]
