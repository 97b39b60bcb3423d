"""Fixtures shared by every backend test: a real PostgreSQL database, the app, users and clients.

- ``database_url`` (session): a fresh PostgreSQL database ``nf_test_<random>`` created from
  ``TEST_DATABASE_URL`` (default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``), migrated
  with ``alembic upgrade head``, dropped at the end. Settings are pointed at it, at
  ``TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/15``) and at a temporary data dir.
- Every test starts with empty tables: they are truncated after each test (autouse).
- ``settings``: the ``Settings`` the app uses during the test session.
- ``redis_url``: the Redis URL the app was given (not flushed: other suites may share it).
- ``db_session``: a SQLAlchemy session on the test database for calling services directly.
- ``app``: a fresh ``create_app()``; ``client``: a ``TestClient`` without a session. The lifespan
  (bootstrap admin) is not run unless a test enters ``with client:``.
- ``make_user(role=Role.viewer, username=None, password=TEST_PASSWORD, disabled=False)``:
  creates a user in the database and returns it.
- ``login_as(role)``: a new ``TestClient`` signed in as a new user of that role, with the
  ``X-CSRF-Token`` header set; the ``User`` is at ``client.user``.
- ``admin_client``, ``operator_client``, ``viewer_client``: ``login_as`` for each role.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from app.auth.cookies import CSRF_COOKIE, CSRF_HEADER
from app.core.config import Settings, get_settings
from app.core.db import SessionLocal, get_engine, reset_db_caches
from app.core.security import hash_password
from app.main import create_app
from app.models import Base
from app.users.models import Role, User
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

REPO_ROOT = Path(__file__).resolve().parents[2]
TEST_DATABASE_URL = os.environ.get(
    "TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
TEST_PASSWORD = "correct horse battery staple"

# Hashing costs ~50 ms; factories reuse one hash of the default password.
_TEST_PASSWORD_HASH = hash_password(TEST_PASSWORD)


class SignedInClient(TestClient):
    """A TestClient carrying the session cookie, the CSRF header and the user it signed in as."""

    user: User


def alembic_config(database_url: str) -> Config:
    """The repository's Alembic config aimed at database_url."""
    config = Config(str(REPO_ROOT / "alembic.ini"))
    config.attributes["database_url"] = database_url
    config.attributes["configure_logging"] = False
    return config


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A new migrated PostgreSQL database for this test session, with settings pointed at it."""
    server_url = make_url(TEST_DATABASE_URL)
    name = f"nf_test_{secrets.token_hex(6)}"
    server = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = server_url.set(database=name).render_as_string(hide_password=False)
    data_dir = tmp_path_factory.mktemp("data")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DATABASE_URL", url)
        env.setenv("REDIS_URL", TEST_REDIS_URL)
        env.setenv("NGINX_FLEET_DATA_DIR", str(data_dir))
        # Tests that need a built UI make their own; a real frontend/dist must not change routing.
        env.setenv("NGINX_FLEET_UI_DIR", str(data_dir / "no-ui"))
        # Likewise the agent wheel: tests that serve one build their own.
        env.setenv("NGINX_FLEET_DOWNLOADS_DIR", str(data_dir / "no-downloads"))
        env.setenv("NGINX_FLEET_ENV", "development")
        env.delenv("NGINX_FLEET_PUBLIC_URL", raising=False)
        env.delenv("NGINX_FLEET_ADMIN_PASSWORD", raising=False)
        get_settings.cache_clear()
        reset_db_caches()
        try:
            command.upgrade(alembic_config(url), "head")
            yield url
        finally:
            reset_db_caches()
            get_settings.cache_clear()
            with server.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            server.dispose()


@pytest.fixture(autouse=True)
def _empty_tables_after_test(database_url: str) -> Iterator[None]:
    """Truncate every table after each test, so no state leaks into the next one."""
    yield
    tables = ", ".join(f'"{table.name}"' for table in Base.metadata.sorted_tables)
    with get_engine().begin() as connection:
        connection.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))


@pytest.fixture
def settings(database_url: str) -> Settings:
    """The settings the app runs with in tests."""
    return get_settings()


@pytest.fixture
def redis_url(database_url: str) -> str:
    """The Redis URL the app was given."""
    return TEST_REDIS_URL


@pytest.fixture
def db_session(database_url: str) -> Iterator[Session]:
    """A session on the test database."""
    with SessionLocal() as session:
        yield session


@pytest.fixture
def app(database_url: str) -> FastAPI:
    """A freshly built application."""
    return create_app()


@pytest.fixture
def client(app: FastAPI) -> TestClient:
    """A client without a session."""
    return TestClient(app)


MakeUser = Callable[..., User]


@pytest.fixture
def make_user(database_url: str) -> MakeUser:
    """Factory: make_user(role=, username=, password=, disabled=) creates and returns a User."""

    def make(
        role: Role = Role.viewer,
        username: str | None = None,
        password: str = TEST_PASSWORD,
        disabled: bool = False,
    ) -> User:
        password_hash = (
            _TEST_PASSWORD_HASH if password == TEST_PASSWORD else hash_password(password)
        )
        user = User(
            username=username or f"{role.value}-{secrets.token_hex(4)}",
            password_hash=password_hash,
            role=role,
            disabled=disabled,
        )
        with SessionLocal() as session:
            session.add(user)
            session.commit()
        return user

    return make


LoginAs = Callable[[Role], SignedInClient]


@pytest.fixture
def login_as(app: FastAPI, make_user: MakeUser) -> LoginAs:
    """Factory: a client signed in as a new user of the given role, CSRF header set."""

    def sign_in(role: Role) -> SignedInClient:
        user = make_user(role=role)
        signed_in = SignedInClient(app)
        reply = signed_in.post(
            "/api/v1/auth/login", json={"username": user.username, "password": TEST_PASSWORD}
        )
        assert reply.status_code == 200, reply.text
        signed_in.headers[CSRF_HEADER] = signed_in.cookies[CSRF_COOKIE]
        signed_in.user = user
        return signed_in

    return sign_in


@pytest.fixture
def admin_client(login_as: LoginAs) -> SignedInClient:
    """A client signed in as an admin."""
    return login_as(Role.admin)


@pytest.fixture
def operator_client(login_as: LoginAs) -> SignedInClient:
    """A client signed in as an operator."""
    return login_as(Role.operator)


@pytest.fixture
def viewer_client(login_as: LoginAs) -> SignedInClient:
    """A client signed in as a viewer."""
    return login_as(Role.viewer)
