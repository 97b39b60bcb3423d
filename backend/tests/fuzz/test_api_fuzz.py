"""Property-based fuzzing of the whole API against its own OpenAPI document (schemathesis).

The real app on a fresh PostgreSQL database (and the test Redis), signed in as an admin, with a
host that has samples, a config with findings and an acknowledgement, so that reads find data.
Every operation gets generated requests, valid and invalid; the run fails on any 5xx and on
any reply the document does not describe (status, content type, body). Derandomized and
bounded, so that CI sees the same run each time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import schemathesis
from app.access_log.models import AccessLogFiles
from app.auth.cookies import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE
from app.configs.analyzer import analyze_snapshot
from app.core.config import get_settings
from app.core.db import SessionLocal, get_engine, utcnow
from app.main import create_app
from app.users.models import Role
from fastapi import FastAPI
from hypothesis import HealthCheck, Phase, settings
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import text

from tests.access_log.factories import insert_log_rows, log_file, log_row, sketch_json
from tests.configs.factories import BROKEN_DUMP, add_counter_samples, host_with_config, set_facts
from tests.conftest import LoginAs

# Examples per operation: the 41 operations take about 3 minutes on a 2-core machine.
MAX_EXAMPLES = 200
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]
PUSH_PATH = "/api/v1/agent/push"
# The admin's id is set far from the small ids the fuzzer tries first, so that generated
# requests do not demote, disable or delete the account the whole run is signed in with.
ADMIN_ID = 900_000


@pytest.fixture
def signed_in(login_as: LoginAs) -> dict[str, Any]:
    """Cookies and headers of an admin session, and a host with data to read."""
    with get_engine().begin() as connection:
        connection.execute(text("SELECT setval('users_id_seq', :id, false)"), {"id": ADMIN_ID})
    admin = login_as(Role.admin)
    with get_engine().begin() as connection:
        connection.execute(text("SELECT setval('users_id_seq', 1, false)"))
    host, snapshot_id = host_with_config()
    set_facts(host.id, {"nginx_version": "1.22.1", "cpu_count": 2, "custom": {"a": [1, 2]}})
    add_counter_samples(host.id, [(100, 100), (160, 160), (220, 219)])
    _add_access_log(host.id)
    _broken, broken_snapshot = host_with_config(BROKEN_DUMP, hostname="web-2")
    with SessionLocal() as session:
        analyze_snapshot(session=session, snapshot_id=snapshot_id, now=utcnow())
        analyze_snapshot(session=session, snapshot_id=broken_snapshot, now=utcnow())
        session.commit()
    created = admin.post(
        "/api/v1/acks",
        json={
            "rule": "gzip",
            "reason": "fuzz fixture",
            "host_id": host.id,
            "expires_at": (utcnow() + timedelta(days=1)).isoformat(),
        },
    )
    assert created.status_code == 201, created.text
    return {
        "cookies": {
            SESSION_COOKIE: admin.cookies[SESSION_COOKIE],
            CSRF_COOKIE: admin.cookies[CSRF_COOKIE],
        },
        # Pushes must name the token's agent_id to get past the 403 and into ingest.
        "agent_id": host.agent_id,
        # The host token too, so that agent routes get past authentication (others ignore it).
        "headers": {
            CSRF_HEADER: admin.cookies[CSRF_COOKIE],
            "Authorization": f"Bearer {host.token}",
        },
    }


def _add_access_log(host_id: int) -> None:
    """Access-log figures of two sites with an upstream and top paths, and a files report."""
    now = utcnow()
    insert_log_rows(
        [
            log_row(host_id, now - timedelta(minutes=m), m, site_name, times=[0.01, 0.2, 0.0],
                    upstream_times=[0.2], status_2xx=3, cache_hit=2, cache_miss=1,
                    top_paths=[["/api/:id", 2, 0.3, 0.2]])
            for m in (1, 2)
            for site_name in ("shop.example.com", "static.example.com")
        ],
        [
            {"host_id": host_id, "ts": now - timedelta(minutes=1), "seq": 1,
             "site": "shop.example.com", "upstream": "10.0.0.7:8080", "attempts": 2,
             "errors": 1, "response_time": sketch_json([0.1, 0.3])},
        ],
    )  # fmt: skip
    with SessionLocal() as session:
        session.add(AccessLogFiles(host_id=host_id, ts=now, seq=2, files=[log_file()]))
        session.commit()


def _document() -> dict[str, Any]:
    """The OpenAPI document the app serves (built without touching a database)."""
    document = create_app().openapi()
    get_settings.cache_clear()  # the fixtures point the settings at the test database
    return document


schema = (
    schemathesis.openapi.from_dict(_document())
    # An endless stream: the fuzzer would wait for the end of a reply that never ends.
    .exclude(path="/api/v1/events")
    # Ends the session every other request needs.
    .exclude(path="/api/v1/auth/logout")
)


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_every_reply_is_what_the_document_says(
    case: Case, app: FastAPI, signed_in: dict[str, Any]
) -> None:
    if case.path == PUSH_PATH and isinstance(case.body, dict):
        # Otherwise nearly every generated push is refused as another host's (403).
        case.body["agent_id"] = signed_in["agent_id"]
        # And every generated sample time lies outside the accepted window: bring the first
        # sample's into it, so that generated counters and stats reach the store and the rates.
        samples = case.body.get("samples")
        if isinstance(samples, list) and samples and isinstance(samples[0], dict):
            samples[0]["ts"] = utcnow().isoformat()
    case.call_and_validate(
        app=app, headers=signed_in["headers"], cookies=signed_in["cookies"], checks=CHECKS
    )
