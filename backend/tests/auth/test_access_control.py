"""Every route needs a session unless it is public; roles gate what a session may do."""

from __future__ import annotations

import re
from typing import Any

import pytest
from app.api.deps import OperatorUser
from app.users.models import Role
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import LoginAs

PUBLIC = {("GET", "/api/v1/health"), ("POST", "/api/v1/auth/login")}
PUBLIC_PREFIXES = ("/api/v1/agent/",)
ADMIN_ONLY = [
    ("GET", "/api/v1/users"),
    ("POST", "/api/v1/users"),
    ("PATCH", "/api/v1/users/1"),
    ("DELETE", "/api/v1/users/1"),
    ("GET", "/api/v1/audit"),
    ("GET", "/api/v1/enrollment-tokens"),
    ("POST", "/api/v1/enrollment-tokens"),
    ("DELETE", "/api/v1/enrollment-tokens/1"),
]


def _operations(app: FastAPI) -> list[tuple[str, str]]:
    """Every (method, concrete path) in the OpenAPI document, path parameters set to 1."""
    operations = []
    for path, methods in app.openapi()["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        operations += [(method.upper(), concrete) for method in methods]
    return operations


def test_the_document_lists_the_routes_of_this_part(app: FastAPI) -> None:
    operations = set(_operations(app))
    assert set(ADMIN_ONLY) <= operations
    assert ("GET", "/api/v1/auth/me") in operations


def test_every_non_public_route_requires_a_session(app: FastAPI, client: TestClient) -> None:
    checked = 0
    for method, path in _operations(app):
        if (method, path) in PUBLIC or path.startswith(PUBLIC_PREFIXES):
            continue
        body: dict[str, Any] | None = {} if method in {"POST", "PUT", "PATCH"} else None
        reply = client.request(method, path, json=body)
        assert reply.status_code == 401, f"{method} {path} answered {reply.status_code}"
        checked += 1
    assert checked >= len(ADMIN_ONLY)


@pytest.mark.parametrize("role", [Role.viewer, Role.operator])
def test_admin_routes_refuse_lower_roles(login_as: LoginAs, role: Role) -> None:
    signed_in = login_as(role)
    for method, path in ADMIN_ONLY:
        reply = signed_in.request(method, path, json={} if method in {"POST", "PATCH"} else None)
        assert reply.status_code == 403, f"{role} {method} {path} answered {reply.status_code}"
        assert "admin role" in reply.json()["detail"]


def test_operator_dependency_orders_roles(app: FastAPI, login_as: LoginAs) -> None:
    @app.get("/api/v1/test-operator-only")
    def operator_only(user: OperatorUser) -> dict[str, str]:
        return {"username": user.username}

    assert login_as(Role.viewer).get("/api/v1/test-operator-only").status_code == 403
    assert login_as(Role.operator).get("/api/v1/test-operator-only").status_code == 200
    assert login_as(Role.admin).get("/api/v1/test-operator-only").status_code == 200
