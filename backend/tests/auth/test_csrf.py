"""The double-submit CSRF check on unsafe, cookie-authenticated requests."""

from __future__ import annotations

from app.auth.cookies import CSRF_HEADER
from fastapi.testclient import TestClient

from tests.conftest import SignedInClient

NEW_USER = {"username": "csrf-check", "password": "a long enough password", "role": "viewer"}


def test_unsafe_request_without_header_is_refused(admin_client: SignedInClient) -> None:
    del admin_client.headers[CSRF_HEADER]
    reply = admin_client.post("/api/v1/users", json=NEW_USER)
    assert reply.status_code == 403
    assert reply.json() == {"detail": "CSRF token missing or wrong"}
    assert all(u["username"] != "csrf-check" for u in admin_client.get("/api/v1/users").json())


def test_unsafe_request_with_wrong_header_is_refused(admin_client: SignedInClient) -> None:
    admin_client.headers[CSRF_HEADER] = "guessed"
    assert admin_client.post("/api/v1/users", json=NEW_USER).status_code == 403


def test_unsafe_request_with_header_is_accepted(admin_client: SignedInClient) -> None:
    assert admin_client.post("/api/v1/users", json=NEW_USER).status_code == 201


def test_planted_cookie_pair_does_not_match_the_session(admin_client: SignedInClient) -> None:
    # An attacker able to set cookies (sibling subdomain) sets cookie and header alike;
    # the token must still equal the one stored with the session.
    admin_client.cookies.set("nf_csrf", "planted")
    admin_client.headers[CSRF_HEADER] = "planted"
    assert admin_client.post("/api/v1/users", json=NEW_USER).status_code == 403


def test_safe_methods_need_no_header(admin_client: SignedInClient) -> None:
    del admin_client.headers[CSRF_HEADER]
    assert admin_client.get("/api/v1/users").status_code == 200


def test_agent_endpoints_are_exempt(admin_client: SignedInClient) -> None:
    del admin_client.headers[CSRF_HEADER]
    reply = admin_client.post("/api/v1/agent/ping", json={})
    assert reply.json().get("detail") != "CSRF token missing or wrong"


def test_without_session_the_answer_is_401_not_403(client: TestClient) -> None:
    assert client.post("/api/v1/users", json=NEW_USER).status_code == 401
