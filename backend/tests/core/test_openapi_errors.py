"""The OpenAPI document describes the error replies the API really sends, and the UI's copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.openapi import ErrorBody, ValidationErrorBody
from app.main import create_app
from app.users.models import Role
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import LoginAs

UI_DOCUMENT = Path(__file__).resolve().parents[3] / "frontend" / "openapi.json"
PUBLIC = {("get", "/api/v1/health"), ("post", "/api/v1/auth/login")}


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path, operation) of every operation."""
    return [
        (method, path, operation)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    ]


def error_schema(operation: dict[str, Any], status: int) -> str:
    """The component the documented error body of a status refers to."""
    response = operation["responses"][str(status)]
    ref: str = response["content"]["application/json"]["schema"]["$ref"]
    return ref.rsplit("/", 1)[-1]


def test_the_ui_client_is_generated_from_the_current_document(database_url: str) -> None:
    committed = json.loads(UI_DOCUMENT.read_text())
    assert committed == create_app().openapi(), "run `make openapi` and commit the result"


def test_every_operation_documents_its_errors_with_the_shared_bodies(app: FastAPI) -> None:
    document = app.openapi()
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for method, path, operation in operations(document):
        statuses = {int(code) for code in operation["responses"]}
        where = f"{method.upper()} {path}"
        assert 503 in statuses, where
        if (method, path) not in PUBLIC and not path.startswith("/api/v1/agent/"):
            assert {401, 403} <= statuses, where
        if "{" in path:
            assert {404, 422} <= statuses, where
        if "requestBody" in operation:
            assert error_schema(operation, 422) == "ValidationErrorBody", where
        for status in statuses - {422, 200, 201, 204}:
            if (method, path, status) != ("get", "/api/v1/health", 503):
                assert error_schema(operation, status) == "ErrorBody", f"{where} {status}"


def test_real_error_replies_have_the_documented_shapes(app: FastAPI, login_as: LoginAs) -> None:
    anonymous = TestClient(app)
    operator = login_as(Role.operator)
    replies = {
        401: anonymous.get("/api/v1/fleet"),
        403: operator.get("/api/v1/users"),
        404: operator.get("/api/v1/hosts/12345"),
        422: operator.post("/api/v1/acks", json={"rule": "gzip"}),
    }
    for status, reply in replies.items():
        assert reply.status_code == status, reply.text
        model = ValidationErrorBody if status == 422 else ErrorBody
        model.model_validate(reply.json(), strict=True)
    assert replies[422].json()["errors"][0]["loc"] == ["body", "reason"]
