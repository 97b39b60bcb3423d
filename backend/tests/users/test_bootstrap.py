"""The admin created from the environment on first start."""

from __future__ import annotations

import logging

import pytest
from app.core.config import Settings
from app.core.security import verify_password
from app.users import service
from app.users.models import Role, User
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import MakeUser


def test_bootstrap_creates_the_configured_admin(settings: Settings, db_session: Session) -> None:
    configured = settings.model_copy(
        update={"admin_user": "root-admin", "admin_password": SecretStr("from the environment")}
    )
    created = service.bootstrap_admin(session=db_session, settings=configured)
    assert created is not None
    stored = db_session.scalars(select(User)).one()
    assert (stored.username, stored.role) == ("root-admin", Role.admin)
    assert verify_password("from the environment", stored.password_hash)


def test_bootstrap_does_nothing_when_users_exist(
    settings: Settings, db_session: Session, make_user: MakeUser
) -> None:
    make_user(role=Role.viewer)
    assert service.bootstrap_admin(session=db_session, settings=settings) is None
    assert len(db_session.scalars(select(User)).all()) == 1


def test_bootstrap_without_password_logs_a_generated_one(
    settings: Settings, db_session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="app.users.service"):
        created = service.bootstrap_admin(session=db_session, settings=settings)
    assert created is not None
    password = caplog.records[-1].args[1]  # type: ignore[index]
    assert isinstance(password, str)
    assert verify_password(password, created.password_hash)


def test_app_start_bootstraps_the_admin(app: FastAPI, db_session: Session) -> None:
    with TestClient(app) as client:
        assert client.get("/api/v1/health").status_code == 200
    assert db_session.scalars(select(User.role)).all() == [Role.admin]
