"""A push writes its newest sample's figures onto the host row, on both ingest paths."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from app.agents.batch_ingest import PushRequest, store_batch
from app.agents.schemas import PushReply
from app.hosts.latest import latest_figures
from app.metrics.models import Sample
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.agents.payloads import push_body, recent, sample
from tests.hosts.factories import HostWithToken, make_host


def push(host: HostWithToken, samples: list[dict[str, Any]]) -> None:
    """Store one push through the group-commit path, which hands rare pushes to the other."""
    body = orjson.dumps(push_body(samples, agent_id=host.agent_id))
    [outcome] = store_batch([PushRequest(token=host.token, body=body, content_encoding=None)])
    assert isinstance(outcome, PushReply), repr(outcome)
    assert outcome.accepted == len(samples)


def fleet_row(client: TestClient) -> dict[str, Any]:
    """The only host of the fleet page."""
    [row] = client.get("/api/v1/fleet").json()["items"]
    assert isinstance(row, dict)
    return row


def test_each_push_leaves_the_newest_figures_on_the_host(
    viewer_client: TestClient, db_session: Session
) -> None:
    host = make_host()
    # A plain append: the group commit.
    push(host, [sample(1, recent(30), requests=100, active=3),
                sample(2, recent(20), requests=300, active=5)])  # fmt: skip
    row = fleet_row(viewer_client)
    assert row["active"] == 5 and row["waiting"] == 4
    assert row["req_per_s"] == pytest.approx(20.0, rel=0.01)
    assert row["mem_used_pct"] == pytest.approx(25.0)  # 2 GB of 8 GB
    assert (row["fds_open"], row["fds_limit"]) == (40, 1024)
    # Reaching back (seq 0 arrives late) takes the per-push path; seq 4 is the newest.
    push(host, [sample(0, recent(40), requests=50), sample(4, recent(1), requests=700, active=9)])
    assert fleet_row(viewer_client)["active"] == 9
    # A late sample alone does not replace the newest figures.
    push(host, [sample(3, recent(10), requests=500, active=2)])
    row = fleet_row(viewer_client)
    assert row["active"] == 9
    newest = db_session.execute(
        select(Sample).where(Sample.host_id == host.id, Sample.seq == 4)
    ).scalar_one()
    columns = {column.name: getattr(newest, column.name) for column in Sample.__table__.columns}
    assert row["req_per_s"] == pytest.approx(latest_figures(columns)["req_per_s"])


def test_figures_of_a_host_with_nginx_down_are_unknown(viewer_client: TestClient) -> None:
    host = make_host()
    push(host, [sample(1, recent(20), active=3), sample(2, recent(10), up=False)])
    row = fleet_row(viewer_client)
    assert row["status"] == "down"
    assert row["active"] is None and row["fds_open"] is None
