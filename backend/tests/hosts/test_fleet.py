"""Fleet summary, labels, host detail, relabelling and removal."""

from __future__ import annotations

from datetime import timedelta

from app.audit.models import AuditEntry
from app.configs.models import ConfigSnapshot
from app.core.db import utcnow
from app.hosts.models import Host, HostFacts
from app.metrics.models import Sample
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.hosts.factories import insert_samples, make_host, sample_values


def test_statuses_new_up_down_stale(viewer_client: TestClient) -> None:
    now = utcnow()
    make_host(hostname="a-new")
    make_host(
        hostname="b-up",
        last_seen_at=now,
        nginx_up=True,
        last_seq=2,
        active=7,
        reading=1,
        writing=2,
        waiting=4,
        req_per_s=12.5,
        drops_per_s=0.0,
        cpu_pct=20.0,
        mem_used_pct=25.0,
        fds_open=40,
        fds_limit=1024,
        fds_used_pct=40 / 1024 * 100,
    )
    make_host(hostname="c-down", last_seen_at=now, nginx_up=False, stub_status_available=False)
    make_host(hostname="d-stale", last_seen_at=now - timedelta(seconds=31), nginx_up=True)
    reply = viewer_client.get("/api/v1/fleet")
    assert reply.status_code == 200
    assert reply.json()["total"] == 4
    fleet = {host["hostname"]: host for host in reply.json()["items"]}
    assert {name: host["status"] for name, host in fleet.items()} == {
        "a-new": "new",
        "b-up": "up",
        "c-down": "down",
        "d-stale": "stale",
    }
    assert fleet["d-stale"]["status_reason"].startswith("no push for 3")
    assert fleet["c-down"]["status_reason"] == "nginx is not running"
    assert fleet["b-up"]["active"] == 7
    assert fleet["b-up"]["req_per_s"] == 12.5
    assert fleet["b-up"]["mem_used_pct"] == 25.0
    assert fleet["b-up"]["fds_limit"] == 1024
    assert fleet["a-new"]["active"] is None


def test_up_host_reports_unreadable_stub_status(viewer_client: TestClient) -> None:
    make_host(
        last_seen_at=utcnow(), nginx_up=True, stub_status_available=False,
        stub_status_error="HTTP 403",
    )  # fmt: skip
    [host] = viewer_client.get("/api/v1/fleet").json()["items"]
    assert host["status"] == "up"
    assert host["status_reason"] == "stub_status unreadable: HTTP 403"


def test_label_filter(viewer_client: TestClient) -> None:
    make_host(hostname="prod-edge", labels={"env": "prod", "role": "edge"})
    make_host(hostname="prod-app", labels={"env": "prod", "role": "app"})
    make_host(hostname="staging-edge", labels={"env": "staging", "role": "edge"})

    def names(*filters: str) -> list[str]:
        reply = viewer_client.get("/api/v1/fleet", params=[("label", f) for f in filters])
        assert reply.status_code == 200, reply.text
        return [host["hostname"] for host in reply.json()["items"]]

    assert names("env:prod") == ["prod-app", "prod-edge"]
    assert names("env:prod", "role:edge") == ["prod-edge"]
    assert names("env:prod", "env:staging", "role:edge") == ["prod-edge", "staging-edge"]
    assert names("env:nowhere") == []


def test_malformed_label_filter_is_422(viewer_client: TestClient) -> None:
    reply = viewer_client.get("/api/v1/fleet", params={"label": "envprod"})
    assert reply.status_code == 422
    assert "key:value" in reply.json()["detail"]


def test_fleet_needs_a_session(client: TestClient) -> None:
    assert client.get("/api/v1/fleet").status_code == 401


def test_labels_listing(viewer_client: TestClient) -> None:
    make_host(labels={"env": "prod", "role": "edge"})
    make_host(labels={"env": "dev"})
    assert viewer_client.get("/api/v1/fleet/labels").json() == {
        "env": ["dev", "prod"],
        "role": ["edge"],
    }


def test_host_detail_includes_agent_and_facts(
    viewer_client: TestClient, db_session: Session
) -> None:
    host = make_host(agent_version="0.1.0")
    db_session.add(HostFacts(host_id=host.id, facts={"os": "Debian"}, nginx_version="1.22.1"))
    db_session.commit()
    detail = viewer_client.get(f"/api/v1/hosts/{host.id}").json()
    assert detail["agent_id"] == host.agent_id
    assert detail["agent_version"] == "0.1.0"
    assert detail["nginx_version"] == "1.22.1"
    assert detail["facts"] == {"os": "Debian"}
    assert detail["status"] == "new"


def test_unknown_host_is_404(viewer_client: TestClient) -> None:
    reply = viewer_client.get("/api/v1/hosts/999")
    assert reply.status_code == 404
    assert reply.json()["detail"] == "host 999 does not exist"


def test_operator_relabels_and_it_is_audited(
    operator_client: TestClient, db_session: Session
) -> None:
    host = make_host(labels={"env": "prod"})
    reply = operator_client.patch(
        f"/api/v1/hosts/{host.id}", json={"labels": {"env": "staging", "team": "web"}}
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["labels"] == {"env": "staging", "team": "web"}
    entry = db_session.scalars(
        select(AuditEntry).where(AuditEntry.action == "host.update_labels")
    ).one()
    assert entry.target == f"host:{host.id}"
    assert entry.detail["before"] == {"env": "prod"}


def test_viewer_cannot_relabel(viewer_client: TestClient, db_session: Session) -> None:
    host = make_host(labels={"env": "prod"})
    reply = viewer_client.patch(f"/api/v1/hosts/{host.id}", json={"labels": {"env": "x"}})
    assert reply.status_code == 403
    row = db_session.get(Host, host.id)
    assert row is not None
    assert row.labels == {"env": "prod"}


def test_bad_label_is_422(operator_client: TestClient) -> None:
    host = make_host()
    reply = operator_client.patch(f"/api/v1/hosts/{host.id}", json={"labels": {"e:v": "x"}})
    assert reply.status_code == 422


def test_admin_deletes_host_with_its_data(admin_client: TestClient, db_session: Session) -> None:
    host = make_host()
    keep = make_host(hostname="keep")
    now = utcnow()
    insert_samples(db_session, [sample_values(host.id, 1, now), sample_values(keep.id, 1, now)])
    db_session.add(ConfigSnapshot(host_id=host.id, hash="a" * 64, dump="events {}\n"))
    db_session.commit()
    reply = admin_client.delete(f"/api/v1/hosts/{host.id}")
    assert reply.status_code == 204
    assert db_session.get(Host, host.id) is None
    assert db_session.scalar(select(func.count()).select_from(Sample)) == 1
    assert db_session.scalar(select(func.count()).select_from(ConfigSnapshot)) == 0
    actions = db_session.scalars(select(AuditEntry.action)).all()
    assert "host.delete" in actions
    ping = admin_client.post(
        "/api/v1/agent/ping", headers={"Authorization": f"Bearer {host.token}"}
    )
    assert ping.status_code == 401


def test_operator_cannot_delete(operator_client: TestClient, db_session: Session) -> None:
    host = make_host()
    assert operator_client.delete(f"/api/v1/hosts/{host.id}").status_code == 403
    assert db_session.get(Host, host.id) is not None
