"""Edits racing a delete of the same row: the loser gets a 404, never a 500 or half a change."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from app.audit.models import AuditEntry
from app.core.db import get_engine
from app.findings.models import Ack
from app.users.models import Role
from sqlalchemy import Connection, func, select, text
from sqlalchemy.orm import Session

from tests.conftest import LoginAs, MakeUser, SignedInClient
from tests.hosts.factories import make_host


def waiting_on_locks(connection: Connection) -> int:
    """Backends of this database blocked on a row or table lock right now."""
    waiting: int = connection.execute(
        text(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
    ).scalar_one()
    # pg_stat_activity is a snapshot per transaction: end it so that the next call looks again.
    connection.rollback()
    return waiting


@contextmanager
def uncommitted(statement: str, **params: Any) -> Iterator[Callable[[], None]]:
    """Run statement in an open transaction; yields the function that commits it."""
    with get_engine().connect() as connection:
        transaction = connection.begin()
        connection.execute(text(statement), params)
        yield transaction.commit
        if transaction.is_active:
            transaction.rollback()


def race(request: Callable[[], Any], statement: str, **params: Any) -> Any:
    """Start request while statement holds its row lock; commit statement once request waits."""
    replies: list[Any] = []
    with uncommitted(statement, **params) as commit:
        thread = threading.Thread(target=lambda: replies.append(request()))
        thread.start()
        with get_engine().connect() as observer:
            deadline = time.monotonic() + 20
            while waiting_on_locks(observer) == 0:
                assert thread.is_alive(), "the request finished without waiting for the lock"
                assert time.monotonic() < deadline, "the request never reached the locked row"
                time.sleep(0.02)
        commit()
        thread.join(timeout=30)
    assert replies, "the request did not finish"
    return replies[0]


@pytest.fixture
def operator(login_as: LoginAs) -> SignedInClient:
    """An operator whose client answers 500 instead of raising, as a real server would."""
    signed_in = login_as(Role.operator)
    signed_in._transport.raise_server_exceptions = False  # type: ignore[attr-defined]
    return signed_in


@pytest.fixture
def admin(login_as: LoginAs) -> SignedInClient:
    """An admin whose client answers 500 instead of raising."""
    signed_in = login_as(Role.admin)
    signed_in._transport.raise_server_exceptions = False  # type: ignore[attr-defined]
    return signed_in


def test_a_label_edit_racing_a_delete_of_the_host_is_a_404(
    operator: SignedInClient, db_session: Session
) -> None:
    host = make_host(labels={"env": "prod"})
    reply = race(
        lambda: operator.patch(f"/api/v1/hosts/{host.id}", json={"labels": {"env": "dev"}}),
        "DELETE FROM hosts WHERE id = :id",
        id=host.id,
    )
    assert reply.status_code == 404, reply.text
    audited = select(func.count()).where(AuditEntry.action == "host.update_labels")
    assert db_session.scalar(audited) == 0


def test_an_ack_racing_a_delete_of_its_host_is_a_404(
    operator: SignedInClient, db_session: Session
) -> None:
    host = make_host()
    body = {"rule": "gzip", "reason": "known issue", "host_id": host.id}
    reply = race(
        lambda: operator.post("/api/v1/acks", json=body),
        "DELETE FROM hosts WHERE id = :id",
        id=host.id,
    )
    assert reply.status_code == 404, reply.text
    assert db_session.scalar(select(func.count()).select_from(Ack)) == 0


def test_a_user_edit_racing_a_delete_of_the_user_is_a_404(
    admin: SignedInClient, make_user: MakeUser
) -> None:
    user = make_user(role=Role.viewer)
    reply = race(
        lambda: admin.patch(f"/api/v1/users/{user.id}", json={"role": "operator"}),
        "DELETE FROM users WHERE id = :id",
        id=user.id,
    )
    assert reply.status_code == 404, reply.text


def test_an_ack_delete_racing_another_delete_is_a_404(
    operator: SignedInClient, db_session: Session
) -> None:
    created = operator.post("/api/v1/acks", json={"rule": "gzip", "reason": "known issue"})
    ack_id = created.json()["id"]
    reply = race(
        lambda: operator.delete(f"/api/v1/acks/{ack_id}"),
        "DELETE FROM acks WHERE id = :id",
        id=ack_id,
    )
    assert reply.status_code == 404, reply.text
