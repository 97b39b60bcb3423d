"""Dependency outages: Redis down never fails a committed write; PostgreSQL down is a 503."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from app.audit.models import AuditEntry
from app.core import pubsub
from app.core.config import get_settings
from app.core.db import reset_db_caches
from app.enrollment.models import EnrollmentToken
from app.enrollment.service import issue_token
from app.hosts.models import Host
from app.main import create_app
from app.users.models import Role
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from tests.conftest import LoginAs
from tests.core.processes import free_port
from tests.hosts.factories import make_host


def point_at(monkeypatch: pytest.MonkeyPatch, variable: str, url: str) -> None:
    """Make the app use url for variable from now on (settings re-read)."""
    monkeypatch.setenv(variable, url)
    get_settings.cache_clear()


@pytest.fixture
def forget_redis_failures() -> Iterator[None]:
    """Leave the publisher unpaused for the next test, whatever this one broke."""
    yield
    get_settings.cache_clear()
    pubsub.redis_publisher.reset()


@pytest.fixture
def redis_down(monkeypatch: pytest.MonkeyPatch, forget_redis_failures: None) -> None:
    """The app's Redis is a port where nothing listens."""
    point_at(monkeypatch, "REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")


def enroll(client: TestClient, token: str) -> Any:
    """POST /agent/enroll for a new agent."""
    return client.post(
        "/api/v1/agent/enroll",
        json={"enrollment_token": token, "agent_id": "agent-outage", "hostname": "web-1"},
    )


@pytest.mark.usefixtures("redis_down")
def test_enrolment_succeeds_while_redis_is_down(client: TestClient, db_session: Session) -> None:
    issued = issue_token(session=db_session, actor=None, labels={}, expires_in_hours=1, max_uses=1)
    reply = enroll(client, issued.token)
    assert reply.status_code == 201, reply.text
    assert pubsub.redis_publisher.dropped == 1
    # The token was spent on a host the agent can use, not on an orphan.
    ping = client.post(
        "/api/v1/agent/ping", headers={"Authorization": f"Bearer {reply.json()['host_token']}"}
    )
    assert ping.status_code == 200, ping.text
    db_session.expire_all()
    assert db_session.get(EnrollmentToken, issued.row.id).uses == 1  # type: ignore[union-attr]
    assert len(db_session.scalars(select(Host)).all()) == 1


@pytest.mark.usefixtures("redis_down")
def test_label_edit_succeeds_while_redis_is_down(login_as: LoginAs, db_session: Session) -> None:
    operator = login_as(Role.operator)
    host = make_host(labels={"env": "prod"})
    reply = operator.patch(f"/api/v1/hosts/{host.id}", json={"labels": {"env": "staging"}})
    assert reply.status_code == 200, reply.text
    assert reply.json()["labels"] == {"env": "staging"}
    again = operator.patch(f"/api/v1/hosts/{host.id}", json={"labels": {"env": "dev"}})
    assert again.status_code == 200, again.text
    stored = db_session.get(Host, host.id)
    assert stored is not None and stored.labels == {"env": "dev"}
    actions = db_session.scalars(select(AuditEntry.action)).all()
    assert actions.count("host.update_labels") == 2


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A redis-server of this test only, on loopback; stopped by its PID at the end."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (Debian package redis-server)")
    port = free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if redis.Redis.from_url(url).ping():
                    break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield server, url
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_redis_stopping_between_two_edits_fails_neither(
    login_as: LoginAs,
    db_session: Session,
    monkeypatch: pytest.MonkeyPatch,
    private_redis: tuple[subprocess.Popen[bytes], str],
    forget_redis_failures: None,
) -> None:
    server, url = private_redis
    point_at(monkeypatch, "REDIS_URL", url)
    operator = login_as(Role.operator)
    host = make_host(labels={"env": "prod"})
    first = operator.patch(f"/api/v1/hosts/{host.id}", json={"labels": {"env": "a"}})
    assert first.status_code == 200, first.text
    assert pubsub.redis_publisher.dropped == 0
    server.terminate()
    server.wait(timeout=10)
    # The pooled connection is now dead: the publish after this commit fails.
    second = operator.patch(f"/api/v1/hosts/{host.id}", json={"labels": {"env": "b"}})
    assert second.status_code == 200, second.text
    assert pubsub.redis_publisher.dropped == 1
    stored = db_session.get(Host, host.id)
    assert stored is not None and stored.labels == {"env": "b"}


# A request per kind of endpoint, each valid enough to reach the database.
PAGE_AND_AGENT_REQUESTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/api/v1/auth/me", None),
    ("GET", "/api/v1/events", None),
    ("GET", "/api/v1/events?host_id=1", None),
    ("GET", "/api/v1/fleet", None),
    ("GET", "/api/v1/hosts/1", None),
    ("PATCH", "/api/v1/hosts/1", {"labels": {}}),
    ("GET", "/api/v1/hosts/1/series", None),
    ("GET", "/api/v1/hosts/1/access-log", None),
    ("GET", "/api/v1/access-log/summary", None),
    ("GET", "/api/v1/findings/top", None),
    ("POST", "/api/v1/acks", {"rule": "gzip", "reason": "known issue"}),
    ("GET", "/api/v1/users", None),
    ("GET", "/api/v1/audit", None),
    ("POST", "/api/v1/enrollment-tokens", {}),
]


def assert_unavailable(reply: Any) -> None:
    """503, a Retry-After in seconds and a detail saying why."""
    assert reply.status_code == 503, reply.text
    assert int(reply.headers["retry-after"]) > 0
    assert "database" in reply.json()["detail"]


def test_every_kind_of_endpoint_answers_503_while_the_database_is_down(
    login_as: LoginAs, app: FastAPI, database_url: str
) -> None:
    admin = login_as(Role.admin)
    host = make_host()
    admin._transport.raise_server_exceptions = False  # type: ignore[attr-defined]
    anonymous = TestClient(app, raise_server_exceptions=False)
    with pytest.MonkeyPatch.context() as outage:
        closed = make_url(database_url).set(port=free_port())
        point_at(outage, "DATABASE_URL", closed.render_as_string(hide_password=False))
        reset_db_caches()
        try:
            for method, path, body in PAGE_AND_AGENT_REQUESTS:
                assert_unavailable(admin.request(method, path, json=body))
            assert_unavailable(
                anonymous.post("/api/v1/auth/login", json={"username": "a", "password": "b"})
            )
            agent = {"Authorization": f"Bearer {host.token}"}
            assert_unavailable(anonymous.post("/api/v1/agent/ping", headers=agent))
            assert_unavailable(anonymous.post("/api/v1/agent/push", headers=agent, content=b"{}"))
            assert_unavailable(
                anonymous.post(
                    "/api/v1/agent/enroll",
                    json={"enrollment_token": "nfe_x", "agent_id": "a-1", "hostname": "web-1"},
                )
            )
            assert_unavailable(admin.post("/api/v1/auth/logout"))
            health = anonymous.get("/api/v1/health")
            assert health.status_code == 503
            assert int(health.headers["retry-after"]) > 0
        finally:
            get_settings.cache_clear()
            reset_db_caches()
    get_settings.cache_clear()
    reset_db_caches()
    # Back up: the same session works again.
    assert admin.get("/api/v1/auth/me").status_code == 200


def test_an_api_started_during_a_database_outage_starts_and_answers_503(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by a hostile probe: the start-up bootstrap needed the database, so the process
    # exited instead of serving 503s until the database came back.
    closed = make_url(database_url).set(port=free_port())
    point_at(monkeypatch, "DATABASE_URL", closed.render_as_string(hide_password=False))
    reset_db_caches()
    try:
        with TestClient(create_app(), raise_server_exceptions=False) as started:
            health = started.get("/api/v1/health")
            assert health.status_code == 503
            assert int(health.headers["retry-after"]) > 0
            assert_unavailable(
                started.post("/api/v1/auth/login", json={"username": "a", "password": "b"})
            )
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
        reset_db_caches()
