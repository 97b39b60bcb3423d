"""Readable validation errors."""

from __future__ import annotations

from app.core.errors import add_error_handlers, describe_errors, field_path
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm.exc import StaleDataError


def test_field_path_renders_indexes_and_drops_body() -> None:
    assert field_path(("body", "samples", 2, "ts")) == "samples[2].ts"
    assert field_path(("query", "limit")) == "query.limit"
    assert field_path(("body",)) == "body"
    assert field_path(()) == "request"


def test_describe_errors() -> None:
    errors = [{"loc": ("body", "a", 0), "msg": "must be >= 0"}, {"loc": ("body", "b")}]
    assert describe_errors(errors) == ["a[0]: must be >= 0", "b: invalid value"]


def test_422_names_the_field_and_keeps_the_structure(client: TestClient) -> None:
    reply = client.post("/api/v1/auth/login", json={"username": "x"})
    assert reply.status_code == 422
    body = reply.json()
    assert body["detail"] == "password: Field required"
    assert body["errors"][0]["loc"] == ["body", "password"]


def test_invalid_json_is_explained(client: TestClient) -> None:
    reply = client.post(
        "/api/v1/auth/login", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert reply.status_code == 422
    assert "JSON" in reply.json()["detail"]


def _failing_app(error: Exception) -> TestClient:
    """An app with the project's error handlers and one route that raises error."""
    app = FastAPI()
    add_error_handlers(app)

    @app.post("/change")
    def change() -> None:
        raise error

    return TestClient(app, raise_server_exceptions=False)


def test_a_lost_race_the_service_did_not_lock_against_is_a_409() -> None:
    failing = _failing_app(StaleDataError("UPDATE expected to update 1 row(s); 0 were matched"))
    answer = failing.post("/change")
    assert answer.status_code == 409
    assert "at the same time" in answer.json()["detail"]


def test_a_pool_timeout_is_a_503_with_retry_after() -> None:
    answer = _failing_app(PoolTimeoutError("QueuePool limit reached")).post("/change")
    assert answer.status_code == 503
    assert int(answer.headers["retry-after"]) > 0
