"""While PostgreSQL is down, every notify and exposition endpoint answers 503, never 500."""

from __future__ import annotations

import pytest
from app.core.config import get_settings
from app.core.db import reset_db_caches
from app.users.models import Role
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from tests.conftest import LoginAs
from tests.core.processes import free_port
from tests.core.test_outages import assert_unavailable, point_at

SLACK = {"name": "s", "kind": "slack", "secrets": {"webhook_url": "https://h.example/x"}}
REQUESTS = [
    ("GET", "/api/v1/alerts/channels", None),
    ("POST", "/api/v1/alerts/channels", SLACK),
    ("GET", "/api/v1/alerts/channels/1", None),
    ("PUT", "/api/v1/alerts/channels/1", SLACK),
    ("DELETE", "/api/v1/alerts/channels/1", None),
    ("POST", "/api/v1/alerts/channels/1/test", None),
    ("GET", "/api/v1/alerts/channels/1/deliveries", None),
    ("GET", "/api/v1/alerts/deliveries?incident_id=1", None),
    ("GET", "/api/v1/metrics-token", None),
    ("POST", "/api/v1/metrics-token", None),
    ("DELETE", "/api/v1/metrics-token", None),
]


def test_every_endpoint_answers_503_while_the_database_is_down(
    login_as: LoginAs, app: FastAPI, database_url: str
) -> None:
    admin = login_as(Role.admin)
    admin._transport.raise_server_exceptions = False
    anonymous = TestClient(app, raise_server_exceptions=False)
    with pytest.MonkeyPatch.context() as outage:
        closed = make_url(database_url).set(port=free_port())
        point_at(outage, "DATABASE_URL", closed.render_as_string(hide_password=False))
        reset_db_caches()
        try:
            for method, path, body in REQUESTS:
                assert_unavailable(admin.request(method, path, json=body))
            assert_unavailable(anonymous.get("/metrics", headers={"Authorization": "Bearer x"}))
        finally:
            get_settings.cache_clear()
            reset_db_caches()
    get_settings.cache_clear()
    reset_db_caches()
    assert admin.get("/api/v1/alerts/channels").status_code == 200
