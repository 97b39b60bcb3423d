"""GET /metrics: bearer token only, the Prometheus text format, host series and fleet totals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from app.alerts.models import AlertRule, Incident, IncidentState
from app.audit.models import AuditEntry
from app.core.db import SessionLocal, utcnow
from app.exposition.models import MetricsToken
from app.hosts.models import Host
from app.users.models import Role
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tests.conftest import LoginAs, SignedInClient
from tests.hosts.factories import insert_samples, make_host, sample_values

TOKEN_PATH = "/api/v1/metrics-token"


def new_token(admin: TestClient) -> str:
    reply = admin.post(TOKEN_PATH)
    assert reply.status_code == 201, reply.text
    token: str = reply.json()["token"]
    return token


def scrape(client: TestClient, token: str) -> dict[str, list[Sample]]:
    """The samples of a scrape by metric name (fails unless it is a 200 in the text format)."""
    reply = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/plain; version=0.0.4")
    families = text_string_to_metric_families(reply.text)
    return {family.name: family.samples for family in families}


def by_host(samples: list[Sample]) -> dict[str, float]:
    return {sample.labels["host"]: sample.value for sample in samples}


def add_sample(host_id: int, seq: int, age_s: float, **figures: float) -> None:
    """A newest sample of the host, pushed age_s ago."""
    ts = utcnow() - timedelta(seconds=age_s)
    with SessionLocal() as session:
        insert_samples(session, [sample_values(host_id, seq, ts, **figures)])
        session.execute(
            update(Host)
            .where(Host.id == host_id)
            .values(last_seq=seq, last_seen_at=ts, nginx_up=True)
        )
        session.commit()


def test_without_a_configured_token_every_scrape_is_refused_with_how_to(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer anything"}):
        reply = client.get("/metrics", headers=headers)
        assert reply.status_code == 401
        assert "POST /api/v1/metrics-token" in reply.json()["detail"]
        assert reply.headers["www-authenticate"].startswith("Bearer")


def test_missing_or_wrong_tokens_are_401(client: TestClient, admin_client: SignedInClient) -> None:
    token = new_token(admin_client)
    for headers in (
        {},
        {"Authorization": "Bearer nfm_wrong"},
        {"Authorization": f"Basic {token}"},
        {"Authorization": "Bearer "},
        {"Authorization": token},
    ):
        reply = client.get("/metrics", headers=headers)
        assert reply.status_code == 401, headers
        assert "metrics token" in reply.json()["detail"]
    # A session is no credential for /metrics either.
    assert admin_client.get("/metrics").status_code == 401


def test_hosts_and_fleet_figures(client: TestClient, admin_client: SignedInClient) -> None:
    edge = make_host(hostname="edge-1", labels={"env": "prod", "team/x": "a"})
    add_sample(edge.id, 5, 4, active=31, reading=1, writing=3, waiting=27, req_per_s=120.5,
               accepts_per_s=12.0, drops_per_s=0.5, fds_open=80, fds_limit=1024)  # fmt: skip
    silent = make_host(hostname="old-1")
    add_sample(silent.id, 9, 3600, active=5)
    make_host(hostname="new-1")
    metrics = scrape(client, new_token(admin_client))
    assert by_host(metrics["nginx_fleet_host_up"]) == {"edge-1": 1.0, "old-1": 0.0, "new-1": 0.0}
    ages = by_host(metrics["nginx_fleet_host_last_seen_age_seconds"])
    assert set(ages) == {"edge-1", "old-1"}
    assert 4 <= ages["edge-1"] < 30 and ages["old-1"] >= 3600
    # The silent host's figures are an hour old: they are left out rather than shown as now.
    assert by_host(metrics["nginx_fleet_host_connections_active"]) == {"edge-1": 31.0}
    expected = {
        "nginx_fleet_host_connections_reading": 1,
        "nginx_fleet_host_connections_writing": 3,
        "nginx_fleet_host_connections_waiting": 27,
        "nginx_fleet_host_requests_per_second": 120.5,
        "nginx_fleet_host_accepts_per_second": 12,
        "nginx_fleet_host_drops_per_second": 0.5,
        "nginx_fleet_host_fds_open": 80,
        "nginx_fleet_host_fds_limit": 1024,
    }
    for name, value in expected.items():
        assert by_host(metrics[name]) == {"edge-1": value}, name
    [up] = metrics["nginx_fleet_host_up"][:1]
    assert up.labels == {"host": "edge-1", "host_id": str(edge.id)}
    labels = {s.labels["host"]: s.labels for s in metrics["nginx_fleet_host_labels"]}
    assert labels["edge-1"] == {
        "host": "edge-1",
        "host_id": str(edge.id),
        "label_env": "prod",
        "label_team_x": "a",
    }
    assert [s.value for s in metrics["nginx_fleet_hosts"]] == [3]
    assert [s.value for s in metrics["nginx_fleet_hosts_up"]] == [1]
    assert [s.value for s in metrics["nginx_fleet_hosts_silent"]] == [2]
    assert {s.labels["severity"]: s.value for s in metrics["nginx_fleet_alerts_firing"]} == {
        "critical": 0,
        "warning": 0,
        "info": 0,
    }


def test_firing_alerts_by_severity(client: TestClient, admin_client: SignedInClient) -> None:
    host = make_host()
    now = utcnow()
    with SessionLocal() as session:
        rule = AlertRule(
            key="r",
            name="R",
            signal="silent_s",
            op=">",
            threshold=1,
            window_s=60,
            severity="critical",
        )
        session.add(rule)
        session.flush()
        for severity, state in [
            ("critical", IncidentState.firing),
            ("critical", IncidentState.recovering),
            ("warning", IncidentState.firing),
            ("warning", IncidentState.resolved),
            ("info", IncidentState.nodata),
        ]:
            session.add(
                Incident(rule_id=rule.id, host_id=host.id, rule_key="r", rule_name="R",
                         severity=severity, state=state, started_at=now, fired_at=now)
            )  # fmt: skip
        session.commit()
    metrics = scrape(client, new_token(admin_client))
    firing = {s.labels["severity"]: s.value for s in metrics["nginx_fleet_alerts_firing"]}
    assert firing == {"critical": 2, "warning": 1, "info": 0}


def test_the_token_is_shown_once_replaced_and_deleted(
    client: TestClient, admin_client: SignedInClient, db_session: Session
) -> None:
    assert admin_client.get(TOKEN_PATH).json() == {"set": False, "created_at": None}
    first = new_token(admin_client)
    state = admin_client.get(TOKEN_PATH).json()
    assert state["set"] is True and state["created_at"] is not None
    assert first.startswith("nfm_") and first not in admin_client.get(TOKEN_PATH).text
    stored = db_session.scalars(select(MetricsToken.token_hash)).all()
    assert len(stored) == 1 and first not in stored[0]
    second = new_token(admin_client)
    assert client.get("/metrics", headers={"Authorization": f"Bearer {first}"}).status_code == 401
    scrape(client, second)
    assert admin_client.delete(TOKEN_PATH).status_code == 204
    assert admin_client.delete(TOKEN_PATH).status_code == 204
    refused = client.get("/metrics", headers={"Authorization": f"Bearer {second}"})
    assert refused.status_code == 401 and "no metrics token is configured" in refused.text
    actions = db_session.scalars(
        select(AuditEntry.action).where(AuditEntry.action.startswith("metrics_token."))
    ).all()
    assert actions == ["metrics_token.create", "metrics_token.create", "metrics_token.delete"]


@pytest.mark.parametrize("role", [Role.viewer, Role.operator])
def test_only_admins_manage_the_token(login_as: LoginAs, role: Role) -> None:
    user = login_as(role)
    for method in ("GET", "POST", "DELETE"):
        assert user.request(method, TOKEN_PATH).status_code == 403


def test_signed_out_token_management_is_401(client: TestClient) -> None:
    assert client.get(TOKEN_PATH).status_code == 401
