"""The audit log: recording from services and reading it as an admin."""

from __future__ import annotations

from app.audit import service
from sqlalchemy.orm import Session

from tests.conftest import MakeUser, SignedInClient


def test_record_names_the_actor(db_session: Session, make_user: MakeUser) -> None:
    user = make_user()
    by_user = service.record(
        session=db_session,
        actor=user,
        action="host.update",
        target="host:3",
        detail={"labels": {"env": "prod"}},
    )
    by_system = service.record(session=db_session, actor=None, action="x", target="y")
    by_agent = service.record(session=db_session, actor="agent:6f1c", action="x", target="y")
    db_session.commit()
    assert (by_user.actor, by_system.actor, by_agent.actor) == (
        user.username,
        "system",
        "agent:6f1c",
    )
    assert by_user.detail == {"labels": {"env": "prod"}}
    assert by_system.detail == {}


def test_record_is_stored_only_with_the_callers_commit(db_session: Session) -> None:
    service.record(session=db_session, actor=None, action="dropped", target="t")
    db_session.rollback()
    assert service.list_entries(session=db_session) == []


def test_admin_reads_newest_first_with_limit(
    admin_client: SignedInClient, db_session: Session
) -> None:
    for n in range(5):
        service.record(session=db_session, actor=None, action=f"test.{n}", target="t")
    db_session.commit()
    reply = admin_client.get("/api/v1/audit", params={"limit": 3})
    assert reply.status_code == 200
    entries = reply.json()
    assert [e["action"] for e in entries] == ["test.4", "test.3", "test.2"]
    assert set(entries[0]) == {"id", "ts", "actor", "action", "target", "detail"}
    assert entries[0]["ts"].endswith(("Z", "+00:00"))


def test_limit_out_of_range_is_refused(admin_client: SignedInClient) -> None:
    reply = admin_client.get("/api/v1/audit", params={"limit": 0})
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("query.limit:")


def test_viewer_cannot_read_the_audit_log(viewer_client: SignedInClient) -> None:
    assert viewer_client.get("/api/v1/audit").status_code == 403
