"""The whole agent: access-log aggregates ride the push and the spool, exactly once across
restarts (the read positions are stored in the same transaction as the sample)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nginx_fleet_agent.agent import Agent
from nginx_fleet_agent.state import AgentState

from tests.conftest import agent_config_for
from tests.fake_control_plane import HOST_TOKEN, FakeControlPlane
from tests.log_traffic import run_load
from tests.nginx_instance import NginxInstance

TIMED_SERVER = """
    log_format timed '$remote_addr [$time_local] "$request" $status $body_bytes_sent '
                     'host=$host rt=$request_time';
    server {
        listen 127.0.0.1:{port};
        server_name status.test;
        access_log logs/timed.log timed;
        location = /nginx_status {
            stub_status;
            access_log off;
        }
        location / {
            return 200 "hello\\n";
        }
        location /gone {
            return 404;
        }
    }
"""


@pytest.fixture
def plane() -> Iterator[FakeControlPlane]:
    server = FakeControlPlane()
    server.start()
    yield server
    server.stop()


def make_agent(nginx: NginxInstance, plane: FakeControlPlane, state_dir: Path) -> Agent:
    """An agent watching `nginx` with its state (and spool) in `state_dir`."""
    config = agent_config_for(nginx, state_dir)
    state = AgentState(agent_id="agent-1", host_id=7, host_token=HOST_TOKEN, server=plane.url)
    return Agent(config, state)


def pushed_requests(plane: FakeControlPlane) -> tuple[int, list[dict[str, object]]]:
    """Requests counted over every pushed sample's access_log, and the last files report."""
    total, files = 0, []
    for push in plane.pushes():
        for sample in push.body["samples"]:
            access_log = sample.get("access_log")
            if access_log:
                total += sum(site["requests"] for site in access_log["sites"])
                files = access_log["files"]
    return total, files


def test_aggregates_ride_the_push_and_a_restart_neither_rereads_nor_skips(
    nginx_factory: Callable[..., NginxInstance], plane: FakeControlPlane, tmp_path: Path
) -> None:
    nginx = nginx_factory(TIMED_SERVER)
    state_dir = tmp_path / "state"
    first = make_agent(nginx, plane, state_dir)
    first.collect_once()  # opens the log at its end
    paths = [("GET", "/", {}), ("GET", "/gone", {})] * 60
    run_load(nginx.base_url, paths)
    first.collect_once()
    first.push_pending()
    run_load(nginx.base_url, paths[:50])
    first.collect_once()  # spooled, not pushed: the next agent pushes it
    first.close()
    # Written while no agent runs: the next one reads them from where the last sample ended.
    run_load(nginx.base_url, paths[:30])
    second = make_agent(nginx, plane, state_dir)
    second.collect_once()
    run_load(nginx.base_url, paths[:10])
    second.collect_once()
    second.push_pending()
    second.close()
    total, files = pushed_requests(plane)
    assert total == len(paths) + 50 + 30 + 10
    (report,) = files
    assert report["path"] == str(nginx.prefix / "logs" / "timed.log")
    assert report["formats"] == ["timed"] and report["state"] == "ok"
    # $request_time is there; the cache status and upstream fields are not.
    assert "request_time" not in report["missing_fields"]
    assert "upstream_cache_status" in report["missing_fields"]
    statuses = [
        site["status"]
        for push in plane.pushes()
        for sample in push.body["samples"]
        for site in (sample.get("access_log") or {"sites": []})["sites"]
    ]
    assert sum(s["4xx"] for s in statuses) == (len(paths) + 50 + 30 + 10) // 2


def test_an_agent_with_access_logs_off_sends_none(
    nginx_factory: Callable[..., NginxInstance], plane: FakeControlPlane, tmp_path: Path
) -> None:
    nginx = nginx_factory(TIMED_SERVER)
    config = agent_config_for(nginx, tmp_path / "state", access_logs=False)
    state = AgentState(agent_id="agent-1", host_id=7, host_token=HOST_TOKEN, server=plane.url)
    agent = Agent(config, state)
    agent.collect_once()
    run_load(nginx.base_url, [("GET", "/", {})] * 5)
    agent.collect_once()
    agent.push_pending()
    agent.close()
    assert all("access_log" not in s for p in plane.pushes() for s in p.body["samples"])
