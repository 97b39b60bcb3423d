"""Enrolment: a host token in exchange for an enrolment token."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from app.audit.models import AuditEntry
from app.core.db import utcnow
from app.core.security import hash_token
from app.enrollment.models import EnrollmentToken
from app.enrollment.service import issue_token
from app.hosts.models import Host
from app.users.models import Role
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import LoginAs, SignedInClient

AGENT_ID = "6f1c2b7e-0000-4000-8000-00000000abcd"


def enrolment_token(session: Session, labels: dict[str, str], max_uses: int = 1) -> str:
    """A fresh enrolment token."""
    issued = issue_token(
        session=session, actor=None, labels=labels, expires_in_hours=1, max_uses=max_uses
    )
    return issued.token


def enroll_reply(client: TestClient, token: str, host_token: str | None = None) -> Response:
    """POST /agent/enroll for AGENT_ID, with the current host token when given."""
    headers = {"Authorization": f"Bearer {host_token}"} if host_token else {}
    return client.post(
        "/api/v1/agent/enroll",
        json={"enrollment_token": token, "agent_id": AGENT_ID, "hostname": "web-1"},
        headers=headers,
    )


def enroll(
    client: TestClient,
    token: str,
    labels: dict[str, str] | None = None,
    host_token: str | None = None,
) -> dict[str, Any]:
    """POST /agent/enroll and return the JSON reply (asserting 201)."""
    headers = {"Authorization": f"Bearer {host_token}"} if host_token else {}
    reply = client.post(
        "/api/v1/agent/enroll",
        json={
            "enrollment_token": token,
            "agent_id": AGENT_ID,
            "hostname": "web-1",
            "labels": labels or {},
        },
        headers=headers,
    )
    assert reply.status_code == 201, reply.text
    result: dict[str, Any] = reply.json()
    return result


def ping(client: TestClient, host_token: str) -> int:
    """The status of POST /agent/ping with a host token."""
    reply = client.post("/api/v1/agent/ping", headers={"Authorization": f"Bearer {host_token}"})
    return reply.status_code


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


def test_reenrolling_with_the_current_host_token_rotates_it(
    client: TestClient, db_session: Session
) -> None:
    token = enrolment_token(db_session, {}, max_uses=2)
    first = enroll(client, token)
    second = enroll(client, token, host_token=first["host_token"])
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


def test_enrolment_token_and_agent_id_cannot_take_a_host_over(
    client: TestClient, db_session: Session
) -> None:
    victim = enroll(client, enrolment_token(db_session, {}))
    # The attacker holds a valid enrolment token and the victim's agent_id (viewers see it).
    attacker_token = enrolment_token(db_session, {})
    taken = enroll_reply(client, attacker_token)
    assert taken.status_code == 409
    assert "already enrolled" in taken.json()["detail"]
    forged = enroll_reply(client, attacker_token, host_token="nfh_guessed")
    assert forged.status_code == 409
    assert ping(client, victim["host_token"]) == 200
    host = db_session.scalars(select(Host)).one()
    assert host.token_hash == hash_token(victim["host_token"])
    # Refused attempts burn no use of the enrolment token.
    used = db_session.scalars(select(EnrollmentToken.uses).order_by(EnrollmentToken.id)).all()
    assert used == [1, 0]
    actions = db_session.scalars(select(AuditEntry.action)).all()
    assert "host.rotate_token" not in actions


def test_admin_reset_lets_the_agent_enrol_once_and_is_audited(
    client: TestClient, admin_client: SignedInClient, db_session: Session
) -> None:
    first = enroll(client, enrolment_token(db_session, {}))
    older_token = enrolment_token(db_session, {})
    reply = admin_client.post(f"/api/v1/hosts/{first['host_id']}/reset-enrolment")
    assert reply.status_code == 200, reply.text
    assert reply.json()["enrolment_reset_at"] is not None
    assert reply.json()["enrolment_reset_expires_at"] > reply.json()["enrolment_reset_at"]
    # The old token is revoked at once.
    assert ping(client, first["host_token"]) == 401
    # A token made before the reset (handed out earlier, or leaked) cannot claim the host.
    assert enroll_reply(client, older_token).status_code == 409
    token = enrolment_token(db_session, {}, max_uses=2)
    again = enroll(client, token)
    assert again["host_id"] == first["host_id"]
    assert ping(client, again["host_token"]) == 200
    # The reset allowed exactly one enrolment.
    assert enroll_reply(client, token).status_code == 409
    entries = db_session.scalars(select(AuditEntry).order_by(AuditEntry.id)).all()
    reset = next(entry for entry in entries if entry.action == "host.reset_enrolment")
    assert reset.actor == admin_client.user.username
    assert reset.target == f"host:{first['host_id']}"
    rotated = next(entry for entry in entries if entry.action == "host.rotate_token")
    assert rotated.detail["proof"] == "admin_reset"


def test_a_reset_expires_after_a_day(
    client: TestClient, admin_client: SignedInClient, db_session: Session
) -> None:
    first = enroll(client, enrolment_token(db_session, {}))
    assert admin_client.post(f"/api/v1/hosts/{first['host_id']}/reset-enrolment").status_code == 200
    host = db_session.scalars(select(Host)).one()
    host.enrolment_reset_at = utcnow() - timedelta(hours=25)
    db_session.commit()
    late = enrolment_token(db_session, {})
    assert enroll_reply(client, late).status_code == 409
    # The host page no longer shows it as pending.
    detail = admin_client.get(f"/api/v1/hosts/{first['host_id']}").json()
    assert detail["enrolment_reset_at"] is None
    assert detail["enrolment_reset_expires_at"] is None


def test_only_admins_reset_an_enrolment(
    client: TestClient, login_as: LoginAs, db_session: Session
) -> None:
    enrolled = enroll(client, enrolment_token(db_session, {}))
    for role in (Role.viewer, Role.operator):
        reply = login_as(role).post(f"/api/v1/hosts/{enrolled['host_id']}/reset-enrolment")
        assert reply.status_code == 403
    assert ping(client, enrolled["host_token"]) == 200


def test_resetting_an_unknown_host_is_404(admin_client: SignedInClient) -> None:
    assert admin_client.post("/api/v1/hosts/999/reset-enrolment").status_code == 404
