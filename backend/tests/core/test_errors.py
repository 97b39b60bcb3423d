"""Readable validation errors."""

from __future__ import annotations

from app.core.errors import describe_errors, field_path
from fastapi.testclient import TestClient


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
