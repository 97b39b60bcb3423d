"""Enrolment tokens: issued once, listed without secrets, consumed, expired, revoked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from app.audit.models import AuditEntry
from app.core.config import Settings, get_settings
from app.core.db import utcnow
from app.core.security import hash_token
from app.enrollment.models import EnrollmentToken
from app.enrollment.service import EnrollmentTokenRejectedError, consume_enrollment_token
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import SignedInClient

TOKENS = "/api/v1/enrollment-tokens"


def _issue(admin_client: SignedInClient, **body: object) -> dict[str, object]:
    reply = admin_client.post(TOKENS, json=body)
    assert reply.status_code == 201, reply.text
    created: dict[str, object] = reply.json()
    return created


def test_create_shows_the_token_once(admin_client: SignedInClient, db_session: Session) -> None:
    created = _issue(admin_client, labels={"env": "prod", "role": "edge"}, max_uses=3)
    token = str(created["token"])
    assert token.startswith("nfe_")
    assert created["labels"] == {"env": "prod", "role": "edge"}
    assert created["max_uses"] == 3
    # No agent wheel is built in this test's downloads dir: nothing to install from.
    assert created["agent_wheel"] is None
    assert created["install_command"] is None
    assert created["enroll_command"] == (
        f"nginx-fleet-agent enroll --server http://testserver --token {token}"
    )
    listed = admin_client.get(TOKENS).json()
    assert listed == [
        {
            "id": created["id"],
            "labels": {"env": "prod", "role": "edge"},
            "created_at": listed[0]["created_at"],
            "expires_at": created["expires_at"],
            "uses": 0,
            "max_uses": 3,
            "revoked": False,
        }
    ]
    stored = db_session.scalars(select(EnrollmentToken)).one()
    assert stored.token_hash == hash_token(token)
    assert db_session.scalars(select(AuditEntry.action)).all()[-1] == "enrollment_token.create"


def test_default_expiry_is_a_day(admin_client: SignedInClient, db_session: Session) -> None:
    _issue(admin_client)
    stored = db_session.scalars(select(EnrollmentToken)).one()
    assert stored.expires_at - stored.created_at == timedelta(hours=24)
    assert stored.max_uses == 1


def test_enroll_command_uses_the_public_url(
    admin_client: SignedInClient, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    monkeypatch.setattr(settings, "public_url", "https://fleet.example/")
    assert get_settings().public_url == "https://fleet.example/"
    created = _issue(admin_client)
    assert str(created["enroll_command"]).startswith(
        "nginx-fleet-agent enroll --server https://fleet.example --token nfe_"
    )


def test_bad_labels_and_ranges_are_refused(admin_client: SignedInClient) -> None:
    bad_key = admin_client.post(TOKENS, json={"labels": {"env:x": "prod"}})
    assert bad_key.status_code == 422
    assert bad_key.json()["detail"].startswith("labels.env:x")
    zero_uses = admin_client.post(TOKENS, json={"max_uses": 0})
    assert zero_uses.status_code == 422
    assert zero_uses.json()["detail"].startswith("max_uses:")
    assert admin_client.get(TOKENS).json() == []


def test_consume_counts_uses_until_used_up(
    admin_client: SignedInClient, db_session: Session
) -> None:
    token = str(_issue(admin_client, max_uses=2)["token"])
    assert consume_enrollment_token(session=db_session, token=token).uses == 1
    db_session.commit()
    assert consume_enrollment_token(session=db_session, token=token).uses == 2
    db_session.commit()
    with pytest.raises(EnrollmentTokenRejectedError, match="used up"):
        consume_enrollment_token(session=db_session, token=token)
    assert admin_client.get(TOKENS).json()[0]["uses"] == 2


def test_a_use_is_not_counted_when_the_enrolment_rolls_back(
    admin_client: SignedInClient, db_session: Session
) -> None:
    token = str(_issue(admin_client)["token"])
    consume_enrollment_token(session=db_session, token=token)
    db_session.rollback()
    assert consume_enrollment_token(session=db_session, token=token).uses == 1


def test_expired_token_is_rejected(admin_client: SignedInClient, db_session: Session) -> None:
    token = str(_issue(admin_client)["token"])
    stored = db_session.scalars(select(EnrollmentToken)).one()
    stored.expires_at = utcnow() - timedelta(seconds=1)
    db_session.commit()
    with pytest.raises(EnrollmentTokenRejectedError, match="expired") as raised:
        consume_enrollment_token(session=db_session, token=token)
    assert raised.value.status_code == 401


def test_unknown_token_is_rejected(db_session: Session) -> None:
    with pytest.raises(EnrollmentTokenRejectedError, match="unknown"):
        consume_enrollment_token(session=db_session, token="nfe_made-up")


def test_revoked_token_is_rejected(admin_client: SignedInClient, db_session: Session) -> None:
    created = _issue(admin_client, max_uses=5)
    assert admin_client.delete(f"{TOKENS}/{created['id']}").status_code == 204
    assert admin_client.get(TOKENS).json()[0]["revoked"] is True
    with pytest.raises(EnrollmentTokenRejectedError, match="revoked"):
        consume_enrollment_token(session=db_session, token=str(created["token"]))
    # Revoking again is harmless and not audited twice.
    assert admin_client.delete(f"{TOKENS}/{created['id']}").status_code == 204
    revocations = db_session.scalars(
        select(AuditEntry).where(AuditEntry.action == "enrollment_token.revoke")
    ).all()
    assert len(revocations) == 1


def test_revoking_an_unknown_token_is_404(admin_client: SignedInClient) -> None:
    reply = admin_client.delete(f"{TOKENS}/999")
    assert reply.status_code == 404
    assert reply.json() == {"detail": "enrolment token 999 not found"}
