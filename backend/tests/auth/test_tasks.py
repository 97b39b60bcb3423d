"""The periodic purge task, called the way a worker calls it."""

from __future__ import annotations

from datetime import timedelta

from app.auth.models import LoginAttempts, UserSession
from app.auth.tasks import purge_expired_sessions
from app.core.db import utcnow
from app.users.models import Role
from app.worker.celery_app import celery_app
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import LoginAs


def test_task_is_registered_under_its_public_name() -> None:
    registered = celery_app.tasks["auth.purge_expired_sessions"]
    assert registered.run.__module__ == purge_expired_sessions.run.__module__ == "app.auth.tasks"


def test_task_purges_expired_sessions_and_old_failures(
    login_as: LoginAs, db_session: Session
) -> None:
    login_as(Role.viewer)
    row = db_session.scalars(select(UserSession)).one()
    row.expires_at = utcnow() - timedelta(seconds=1)
    ended = utcnow() - timedelta(hours=1)
    db_session.add(LoginAttempts(key_hash="a" * 64, window_start=ended, attempts=3))
    db_session.add(LoginAttempts(key_hash="b" * 64, window_start=utcnow(), attempts=3))
    db_session.commit()
    assert purge_expired_sessions.apply().get() == 1
    db_session.expire_all()
    assert db_session.scalars(select(UserSession)).all() == []
    kept = db_session.scalars(select(LoginAttempts.key_hash)).all()
    assert "a" * 64 not in kept
    assert "b" * 64 in kept
