"""A real agent whose spool overflows while the API is down reports the loss as a gap record
that the API stores and shows with the host's series (real nginx, API process, PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app.metrics.models import SampleGap
from fastapi.testclient import TestClient
from nginx_fleet_agent.agent import Agent
from nginx_fleet_agent.config import AgentConfig
from nginx_fleet_agent.state import AgentState
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.agents.test_real_agent_outage import nginx, start_api, stop, stored_seqs
from tests.core.processes import free_port, stop_by_pid, wait_until_healthy
from tests.hosts.factories import make_host

__all__ = ["nginx"]  # the fixture, shared with the outage test


@pytest.mark.timeout(180)
def test_spool_overflow_reaches_the_api_as_a_gap(
    database_url: str,
    db_session: Session,
    viewer_client: TestClient,
    tmp_path: Path,
    nginx: int,
) -> None:
    host = make_host(hostname="overflow-test")
    api_port = free_port()
    base_url = f"http://127.0.0.1:{api_port}"
    config = AgentConfig(
        server_url=base_url,
        state_dir=tmp_path / "agent-state",
        hostname="overflow-test",
        stub_status_url=f"http://127.0.0.1:{nginx}/nginx_status",
        nginx_args=["-p", f"{tmp_path / 'nginx'}/", "-c", "conf/nginx.conf"],
        spool_max_samples=5,
        request_timeout_s=5,
    )
    state = AgentState(agent_id=host.agent_id, host_id=host.id, host_token=host.token, server="")
    agent = Agent(config, state)
    api = None
    try:
        # The API is not there yet: 12 samples, of which the spool keeps the newest 5.
        for _ in range(12):
            agent.collect_once()
        agent.push_pending()
        assert agent.spooled == 5

        api = start_api(api_port, tmp_path / "api.log")
        wait_until_healthy(base_url, api, timeout_s=60)
        agent._next_push_at = 0.0
        agent.push_pending()
        assert agent.spooled == 0
    finally:
        agent.close()
        if api is not None:
            stop(api)
            stop_by_pid([api.pid])

    assert stored_seqs(db_session) == [8, 9, 10, 11, 12]
    gaps = db_session.scalars(select(SampleGap).where(SampleGap.host_id == host.id)).all()
    assert [(g.from_seq, g.to_seq, g.reason) for g in gaps] == [(1, 7, "spool_overflow")]
    series = viewer_client.get(f"/api/v1/hosts/{host.id}/series", params={"range": "15m"})
    (shown,) = series.json()["gaps"]
    assert shown["samples_lost"] == 7
    assert shown["from_ts"] <= shown["to_ts"]
