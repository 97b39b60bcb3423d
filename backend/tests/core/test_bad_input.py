"""Input PostgreSQL or datetime cannot hold is a 422 naming the field, and nothing is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest
from app.audit.models import AuditEntry
from app.auth.models import LoginAttempts
from app.findings.models import Ack
from app.hosts.models import HostFacts
from app.users.models import Role
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.agents.payloads import push_body, recent, sample
from tests.conftest import LoginAs
from tests.hosts.factories import HostWithToken, make_host

BEYOND_INT4 = 2**40
BEYOND_INT8 = 2**70


@pytest.fixture
def admin(login_as: LoginAs) -> TestClient:
    """An admin client that answers 500 instead of raising, as a real server would."""
    signed_in = login_as(Role.admin)
    signed_in._transport.raise_server_exceptions = False  # type: ignore[attr-defined]
    return signed_in


@pytest.fixture
def anonymous(app: FastAPI) -> TestClient:
    """A client without a session that answers 500 instead of raising."""
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture
def host(database_url: str) -> HostWithToken:
    """An enrolled host."""
    return make_host()


def count(session: Session, model: type[Any]) -> int:
    """Rows of a model's table."""
    return session.scalar(select(func.count()).select_from(model)) or 0


def assert_names(reply: Any, field: str) -> None:
    """A 422 whose detail starts with the field's name."""
    assert reply.status_code == 422, reply.text
    assert reply.json()["detail"].startswith(f"{field}:"), reply.json()["detail"]


def test_nul_in_a_login_name_is_refused_and_not_counted(
    anonymous: TestClient, db_session: Session
) -> None:
    reply = anonymous.post("/api/v1/auth/login", json={"username": "ad\x00min", "password": "x"})
    assert_names(reply, "username")
    assert "NUL" in reply.json()["detail"]
    assert count(db_session, LoginAttempts) == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [("rule", "gzip\x00"), ("reason", "known\x00 issue"), ("finding_key", "gzip@/etc/\x00:1")],
)
def test_nul_in_an_ack_field_is_refused(
    admin: TestClient, db_session: Session, field: str, value: str
) -> None:
    body = {"rule": "gzip", "reason": "known issue", field: value}
    assert_names(admin.post("/api/v1/acks", json=body), field)
    assert count(db_session, Ack) == 0
    assert db_session.scalar(select(AuditEntry).where(AuditEntry.action == "ack.create")) is None


@pytest.mark.parametrize("too_big", [BEYOND_INT4, BEYOND_INT8])
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/v1/hosts/{id}", None),
        ("PATCH", "/api/v1/hosts/{id}", {"labels": {}}),
        ("DELETE", "/api/v1/hosts/{id}", None),
        ("GET", "/api/v1/hosts/{id}/series", None),
        ("GET", "/api/v1/hosts/{id}/config", None),
        ("GET", "/api/v1/hosts/{id}/scores", None),
        ("DELETE", "/api/v1/acks/{id}", None),
        ("PATCH", "/api/v1/users/{id}", {}),
        ("DELETE", "/api/v1/users/{id}", None),
        ("DELETE", "/api/v1/enrollment-tokens/{id}", None),
    ],
)
def test_path_ids_beyond_the_id_column_are_refused(
    admin: TestClient, method: str, path: str, body: Any, too_big: int
) -> None:
    reply = admin.request(method, path.format(id=too_big), json=body)
    assert reply.status_code == 422, reply.text
    assert "id: Input should be less than or equal to 2147483647" in reply.json()["detail"]


@pytest.mark.parametrize("too_big", [BEYOND_INT4, BEYOND_INT8])
def test_body_ids_beyond_the_id_column_are_refused(
    admin: TestClient, db_session: Session, too_big: int
) -> None:
    body = {"rule": "gzip", "reason": "known issue", "host_id": too_big}
    assert_names(admin.post("/api/v1/acks", json=body), "host_id")
    assert count(db_session, Ack) == 0


EXTREME_TIMES = [
    "0001-01-01T00:00:00+01:00",  # year 0 in UTC: beyond what datetime can hold
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59-05:00",  # year 10000 in UTC
    "9999-12-31T23:59:59+05:00",
]


@pytest.mark.parametrize("moment", EXTREME_TIMES)
def test_extreme_ack_expiry_is_refused(admin: TestClient, db_session: Session, moment: str) -> None:
    body = {"rule": "gzip", "reason": "known issue", "expires_at": moment}
    assert_names(admin.post("/api/v1/acks", json=body), "expires_at")
    assert count(db_session, Ack) == 0


@pytest.mark.parametrize("moment", EXTREME_TIMES)
@pytest.mark.parametrize("parameter", ["from", "to"])
def test_extreme_series_bounds_are_refused(
    admin: TestClient, host: HostWithToken, moment: str, parameter: str
) -> None:
    params = {"from": "2026-01-01T00:00:00Z", parameter: moment}
    reply = admin.get(f"/api/v1/hosts/{host.id}/series", params=params)
    assert_names(reply, f"query.{parameter}")


def test_a_series_at_the_end_of_time_is_answered(admin: TestClient, host: HostWithToken) -> None:
    params = {"from": "9999-12-01T00:00:00Z", "to": "9999-12-29T23:00:00+00:30"}
    reply = admin.get(f"/api/v1/hosts/{host.id}/series", params=params)
    assert reply.status_code == 200, reply.text
    assert reply.json()["points"] == []


def push(client: TestClient, host: HostWithToken, body: dict[str, Any]) -> Any:
    """POST a push body (stdlib json: orjson refuses to write deep nesting)."""
    return client.post(
        "/api/v1/agent/push",
        content=json.dumps(body),
        headers={"Authorization": f"Bearer {host.token}"},
    )


@pytest.mark.parametrize("moment", EXTREME_TIMES[:3])
def test_extreme_sample_times_are_refused_alone(
    anonymous: TestClient, host: HostWithToken, moment: str
) -> None:
    first = sample(1, recent(5))
    first["ts"] = moment
    reply = push(anonymous, host, push_body([first], agent_id=host.agent_id))
    # A bad sample is refused alone (the push's other samples would be stored).
    assert reply.status_code == 200, reply.text
    assert reply.json()["accepted"] == 0
    assert [r["field"] for r in reply.json()["rejected"]] == ["samples[0].ts"]


def test_deeply_nested_facts_are_refused_naming_the_fact(
    anonymous: TestClient, db_session: Session, host: HostWithToken
) -> None:
    nested: Any = "bottom"
    for _ in range(300):
        nested = {"level": nested}
    body = push_body([sample(1, recent(5))], agent_id=host.agent_id)
    body["facts"] = {"nginx_version": "1.22.1", "custom": nested}
    reply = push(anonymous, host, body)
    assert reply.status_code == 422, reply.text
    assert reply.json()["detail"].startswith("facts.custom:")
    assert "nested" in reply.json()["detail"]
    assert count(db_session, HostFacts) == 0


def test_nul_in_fact_keys_and_values_is_stored_replaced_like_the_rest_of_a_push(
    anonymous: TestClient, db_session: Session, host: HostWithToken
) -> None:
    body = push_body([sample(1, recent(5))], agent_id=host.agent_id)
    body["facts"] = {"os": "Debian\x00", "ke\x00y": {"in\x00ner": ["v\x00"]}}
    reply = push(anonymous, host, body)
    assert reply.status_code == 200, reply.text
    facts = db_session.scalars(select(HostFacts)).one()
    assert facts.facts["os"] == "Debian\ufffd"
    assert facts.facts["ke\ufffdy"] == {"in\ufffdner": ["v\ufffd"]}


# JSON that Python's json module reads but is not what any client means (found by a hostile
# probe: each was a 500 where the reply tried to echo it back, or where it was stored).
NOT_STRICT_JSON = {
    "lone surrogate": b'{"username": "\\ud800", "password": "long enough pass", "role": "viewer"}',
    "NaN": b'{"username": NaN, "password": "long enough password", "role": "viewer"}',
    "Infinity": b'{"username": "x", "password": Infinity, "role": "viewer"}',
    "overflowing number": b"1e999999",
}


@pytest.mark.parametrize("body", NOT_STRICT_JSON.values(), ids=NOT_STRICT_JSON.keys())
def test_json_that_is_not_strict_is_a_422_and_creates_nothing(
    admin: TestClient, db_session: Session, body: bytes
) -> None:
    users_before = len(admin.get("/api/v1/users").json())
    reply = admin.post("/api/v1/users", content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == 422, reply.text
    assert reply.json()["detail"].startswith("request body is not valid JSON")
    assert len(admin.get("/api/v1/users").json()) == users_before


@pytest.mark.parametrize(
    ("path", "method"), [("/api/v1/hosts/{id}", "PATCH"), ("/api/v1/acks", "POST")]
)
def test_a_lone_surrogate_anywhere_in_a_body_is_a_422(
    admin: TestClient, host: HostWithToken, path: str, method: str
) -> None:
    body = b'{"labels": {"\\udc00": "x"}, "rule": "gzip", "reason": "\\ud83d"}'
    reply = admin.request(
        method,
        path.format(id=host.id),
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert reply.status_code == 422, reply.text


def test_an_oversized_body_is_a_413_and_creates_nothing(
    admin: TestClient, db_session: Session
) -> None:
    padding = "x" * (512 * 1024)
    reply = admin.post("/api/v1/enrollment-tokens", json={"max_uses": 1, "padding": padding})
    assert reply.status_code == 413, reply.text
    assert "larger than the limit" in reply.json()["detail"]
    assert admin.get("/api/v1/enrollment-tokens").json() == []


def test_a_refused_value_is_never_echoed_back(admin: TestClient) -> None:
    # A 422 names the field and the reason; the value itself may be a password.
    secret = "tooShort9"
    reply = admin.post(
        "/api/v1/users", json={"username": "newcomer", "password": secret, "role": "viewer"}
    )
    assert reply.status_code == 422, reply.text
    assert reply.json()["detail"].startswith("password:")
    assert secret not in reply.text
