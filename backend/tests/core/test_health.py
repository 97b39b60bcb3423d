"""The public health endpoint."""

from fastapi.testclient import TestClient


def test_health_reports_database_and_mode(client: TestClient) -> None:
    reply = client.get("/api/v1/health")
    assert reply.status_code == 200
    assert reply.json() == {"status": "ok", "database": "ok", "mode": "production"}


def test_api_replies_carry_security_headers(client: TestClient) -> None:
    reply = client.get("/api/v1/health")
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["x-frame-options"] == "DENY"
    assert reply.headers["cache-control"] == "no-store"
