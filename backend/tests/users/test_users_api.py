"""User administration through the API, with the password and last-admin rules."""

from __future__ import annotations

from app.audit.models import AuditEntry
from app.auth.models import UserSession
from app.users.models import Role, User
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import TEST_PASSWORD, LoginAs, MakeUser, SignedInClient

USERS = "/api/v1/users"
GOOD_PASSWORD = "twelve chars long at least"


def test_admin_creates_and_lists_users(admin_client: SignedInClient, db_session: Session) -> None:
    reply = admin_client.post(
        USERS, json={"username": "dana", "password": GOOD_PASSWORD, "role": "operator"}
    )
    assert reply.status_code == 201
    created = reply.json()
    assert created["role"] == "operator"
    assert "password" not in created and "password_hash" not in created
    listed = {u["username"]: u for u in admin_client.get(USERS).json()}
    assert listed["dana"]["id"] == created["id"]
    stored = db_session.scalars(select(User).where(User.username == "dana")).one()
    assert stored.password_hash.startswith("$argon2id$")
    audit = db_session.scalars(select(AuditEntry).where(AuditEntry.action == "user.create")).one()
    assert audit.actor == admin_client.user.username
    assert audit.detail["username"] == "dana"


def test_short_password_is_refused_with_a_reason(admin_client: SignedInClient) -> None:
    reply = admin_client.post(
        USERS, json={"username": "eve", "password": "short", "role": "viewer"}
    )
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("password:")
    assert "12" in reply.json()["detail"]
    assert all(u["username"] != "eve" for u in admin_client.get(USERS).json())


def test_duplicate_username_conflicts(admin_client: SignedInClient, make_user: MakeUser) -> None:
    existing = make_user()
    reply = admin_client.post(
        USERS, json={"username": existing.username, "password": GOOD_PASSWORD, "role": "viewer"}
    )
    assert reply.status_code == 409
    assert existing.username in reply.json()["detail"]


def test_invalid_role_is_refused(admin_client: SignedInClient) -> None:
    reply = admin_client.post(
        USERS, json={"username": "x", "password": GOOD_PASSWORD, "role": "root"}
    )
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("role:")


def test_role_change_ends_the_users_sessions(
    admin_client: SignedInClient, login_as: LoginAs
) -> None:
    operator = login_as(Role.operator)
    reply = admin_client.patch(f"{USERS}/{operator.user.id}", json={"role": "viewer"})
    assert reply.status_code == 200
    assert reply.json()["role"] == "viewer"
    assert operator.get("/api/v1/auth/me").status_code == 401


def test_password_change_takes_effect(
    admin_client: SignedInClient, make_user: MakeUser, client: SignedInClient
) -> None:
    user = make_user()
    new_password = "a brand new password"
    reply = admin_client.patch(f"{USERS}/{user.id}", json={"password": new_password})
    assert reply.status_code == 200
    old = client.post(
        "/api/v1/auth/login", json={"username": user.username, "password": TEST_PASSWORD}
    )
    assert old.status_code == 401
    new = client.post(
        "/api/v1/auth/login", json={"username": user.username, "password": new_password}
    )
    assert new.status_code == 200


def test_patch_short_password_keeps_the_old_one(
    admin_client: SignedInClient, make_user: MakeUser, db_session: Session
) -> None:
    user = make_user()
    reply = admin_client.patch(f"{USERS}/{user.id}", json={"password": "tiny"})
    assert reply.status_code == 422
    stored = db_session.get(User, user.id)
    assert stored is not None
    assert stored.password_hash == user.password_hash


def test_admin_cannot_delete_themselves(admin_client: SignedInClient) -> None:
    reply = admin_client.delete(f"{USERS}/{admin_client.user.id}")
    assert reply.status_code == 409
    assert "your own account" in reply.json()["detail"]


def test_admin_deletes_another_user(
    admin_client: SignedInClient, make_user: MakeUser, db_session: Session
) -> None:
    user = make_user()
    assert admin_client.delete(f"{USERS}/{user.id}").status_code == 204
    assert db_session.get(User, user.id) is None
    assert admin_client.delete(f"{USERS}/{user.id}").status_code == 404


def test_last_admin_cannot_demote_or_disable_themselves(admin_client: SignedInClient) -> None:
    me = f"{USERS}/{admin_client.user.id}"
    demote = admin_client.patch(me, json={"role": "operator"})
    assert demote.status_code == 409
    assert "last admin" in demote.json()["detail"]
    assert admin_client.get("/api/v1/auth/me").json()["role"] == "admin"


def test_an_admin_may_step_down_when_another_admin_exists(
    admin_client: SignedInClient, make_user: MakeUser, db_session: Session
) -> None:
    make_user(role=Role.admin)
    reply = admin_client.patch(f"{USERS}/{admin_client.user.id}", json={"role": "operator"})
    assert reply.status_code == 200
    assert reply.json()["role"] == "operator"
    # Own role change keeps the session, and the new role applies at once.
    assert admin_client.get(USERS).status_code == 403


def test_disabled_admins_do_not_count_as_remaining_admins(
    admin_client: SignedInClient, make_user: MakeUser
) -> None:
    make_user(role=Role.admin, disabled=True)
    reply = admin_client.patch(f"{USERS}/{admin_client.user.id}", json={"role": "viewer"})
    assert reply.status_code == 409


def test_disabling_a_user_ends_their_sessions(
    admin_client: SignedInClient, login_as: LoginAs, db_session: Session
) -> None:
    viewer = login_as(Role.viewer)
    reply = admin_client.patch(f"{USERS}/{viewer.user.id}", json={"disabled": True})
    assert reply.status_code == 200
    assert reply.json()["disabled"] is True
    assert viewer.get("/api/v1/auth/me").status_code == 401
    sessions = db_session.scalars(
        select(UserSession).where(UserSession.user_id == viewer.user.id)
    ).all()
    assert sessions == []
