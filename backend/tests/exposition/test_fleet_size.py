"""/metrics stays quick for a fleet of 10,000 hosts (one query, one pass)."""

from __future__ import annotations

import time
from datetime import timedelta

from app.core.db import SessionLocal, utcnow
from app.hosts.models import Host
from app.metrics.models import Sample
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import insert

from tests.conftest import SignedInClient
from tests.hosts.factories import sample_values

HOSTS = 10_000
# Generous for a small CI machine: about a second and a half on 2 cores, most of it
# prometheus_client writing the 130,000 lines.
MAX_SCRAPE_S = 5.0


def test_a_scrape_of_10000_hosts(client: TestClient, admin_client: SignedInClient) -> None:
    now = utcnow()
    hosts = [
        {
            "id": n,
            "agent_id": f"agent-{n}",
            "hostname": f"edge-{n}",
            "labels": {"env": "prod", "dc": f"dc{n % 7}"},
            "token_hash": f"{n:064x}",
            "last_seen_at": now - timedelta(seconds=5),
            "nginx_up": True,
            "stub_status_available": True,
            "last_seq": 1,
        }
        for n in range(1, HOSTS + 1)
    ]
    samples = [
        sample_values(n, 1, now - timedelta(seconds=5), active=n % 97, reading=1, writing=2,
                      waiting=n % 95, req_per_s=10.5, accepts_per_s=1.0, drops_per_s=0.0,
                      fds_open=100, fds_limit=1024)
        for n in range(1, HOSTS + 1)
    ]  # fmt: skip
    with SessionLocal() as session:
        session.execute(insert(Host), hosts)
        session.execute(insert(Sample), samples)
        session.commit()
    token = admin_client.post("/api/v1/metrics-token").json()["token"]
    started = time.monotonic()
    reply = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    elapsed = time.monotonic() - started
    assert reply.status_code == 200
    families = {f.name: f.samples for f in text_string_to_metric_families(reply.text)}
    assert len(families["nginx_fleet_host_connections_active"]) == HOSTS
    assert [s.value for s in families["nginx_fleet_hosts_up"]] == [HOSTS]
    assert elapsed < MAX_SCRAPE_S, f"{elapsed:.2f} s for {HOSTS} hosts"
