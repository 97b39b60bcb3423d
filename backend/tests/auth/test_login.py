"""Signing in and out, cookies, expiry and the failure rate limit."""

from __future__ import annotations

from datetime import timedelta

import httpx
from app.audit.models import AuditEntry
from app.auth import service
from app.auth.models import UserSession
from app.core.config import get_settings
from app.core.db import utcnow
from app.users.models import Role
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import TEST_PASSWORD, LoginAs, MakeUser, SignedInClient

LOGIN = "/api/v1/auth/login"


def _set_cookie_headers(reply_headers: httpx.Headers) -> list[str]:
    return reply_headers.get_list("set-cookie")


def test_login_sets_session_and_csrf_cookies(client: TestClient, make_user: MakeUser) -> None:
    user = make_user(role=Role.operator)
    reply = client.post(LOGIN, json={"username": user.username, "password": TEST_PASSWORD})
    assert reply.status_code == 200
    assert reply.json()["username"] == user.username
    assert reply.json()["role"] == "operator"
    cookies = {c.split("=", 1)[0]: c.lower() for c in _set_cookie_headers(reply.headers)}
    assert "httponly" in cookies["nf_session"]
    assert "samesite=lax" in cookies["nf_session"]
    assert "secure" not in cookies["nf_session"]
    assert "httponly" not in cookies["nf_csrf"]
    assert client.get("/api/v1/auth/me").json()["id"] == user.id


def test_cookies_are_secure_over_https(app: FastAPI, make_user: MakeUser) -> None:
    user = make_user()
    https_client = TestClient(app, base_url="https://testserver")
    reply = https_client.post(LOGIN, json={"username": user.username, "password": TEST_PASSWORD})
    assert reply.status_code == 200
    assert all("secure" in c.lower() for c in _set_cookie_headers(reply.headers))


def test_session_is_stored_hashed(
    client: TestClient, make_user: MakeUser, db_session: Session
) -> None:
    user = make_user()
    client.post(LOGIN, json={"username": user.username, "password": TEST_PASSWORD})
    raw = client.cookies["nf_session"]
    stored = db_session.scalars(select(UserSession.session_hash)).all()
    assert len(stored) == 1
    assert raw not in stored[0]
    assert len(stored[0]) == 64


def test_wrong_password_and_unknown_user_get_the_same_answer(
    client: TestClient, make_user: MakeUser
) -> None:
    user = make_user()
    wrong = client.post(LOGIN, json={"username": user.username, "password": "not the password"})
    unknown = client.post(LOGIN, json={"username": "nobody", "password": TEST_PASSWORD})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"detail": "invalid username or password"}
    assert "nf_session" not in client.cookies


def test_disabled_user_cannot_sign_in(client: TestClient, make_user: MakeUser) -> None:
    user = make_user(disabled=True)
    reply = client.post(LOGIN, json={"username": user.username, "password": TEST_PASSWORD})
    assert reply.status_code == 401


def test_repeated_failures_are_rate_limited_per_username(
    client: TestClient, make_user: MakeUser
) -> None:
    user = make_user()
    other = make_user()
    for _ in range(get_settings().login_max_failures):
        assert (
            client.post(LOGIN, json={"username": user.username, "password": "x"}).status_code == 401
        )
    locked = client.post(LOGIN, json={"username": user.username, "password": TEST_PASSWORD})
    assert locked.status_code == 429
    assert "Retry-After" in locked.headers
    still_open = client.post(LOGIN, json={"username": other.username, "password": TEST_PASSWORD})
    assert still_open.status_code == 200


def test_logout_ends_the_session(viewer_client: SignedInClient, db_session: Session) -> None:
    assert viewer_client.get("/api/v1/auth/me").status_code == 200
    reply = viewer_client.post("/api/v1/auth/logout")
    assert reply.status_code == 204
    assert db_session.scalars(select(UserSession)).all() == []
    assert viewer_client.get("/api/v1/auth/me").status_code == 401


def test_login_and_logout_are_audited(viewer_client: SignedInClient, db_session: Session) -> None:
    viewer_client.post("/api/v1/auth/logout")
    actions = db_session.scalars(select(AuditEntry.action).order_by(AuditEntry.id)).all()
    assert actions == ["auth.login", "auth.logout"]


def test_expired_session_is_refused(viewer_client: SignedInClient, db_session: Session) -> None:
    row = db_session.scalars(select(UserSession)).one()
    row.expires_at = utcnow() - timedelta(seconds=1)
    db_session.commit()
    reply = viewer_client.get("/api/v1/auth/me")
    assert reply.status_code == 401
    assert "expired" in reply.json()["detail"]


def test_expiry_slides_forward_on_use(viewer_client: SignedInClient, db_session: Session) -> None:
    row = db_session.scalars(select(UserSession)).one()
    row.last_seen_at = utcnow() - timedelta(minutes=10)
    row.expires_at = utcnow() + timedelta(minutes=5)
    db_session.commit()
    before = row.expires_at
    assert viewer_client.get("/api/v1/auth/me").status_code == 200
    db_session.refresh(row)
    assert row.expires_at - before > timedelta(hours=1)


def test_purge_removes_only_expired_sessions(login_as: LoginAs, db_session: Session) -> None:
    login_as(Role.viewer)
    login_as(Role.viewer)
    first = db_session.scalars(select(UserSession).order_by(UserSession.id)).first()
    assert first is not None
    first.expires_at = utcnow() - timedelta(minutes=1)
    db_session.commit()
    assert service.purge_expired_sessions(session=db_session) == 1
    assert len(db_session.scalars(select(UserSession)).all()) == 1
