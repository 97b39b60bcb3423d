"""The whole agent: error-log counts ride each sample, certificates ride the facts, and the
error logs' read positions survive a restart like the access logs' do."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nginx_fleet_agent.agent import Agent
from nginx_fleet_agent.state import AgentState

from tests.certificates import key_fragments, make_certificate, write_pair
from tests.conftest import agent_config_for
from tests.error_traffic import HangingUpstream, error_server, request_missing
from tests.fake_control_plane import HOST_TOKEN, FakeControlPlane
from tests.nginx_instance import NginxInstance, free_port


@pytest.fixture
def plane() -> Iterator[FakeControlPlane]:
    server = FakeControlPlane()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def hanging() -> Iterator[HangingUpstream]:
    upstream = HangingUpstream()
    yield upstream
    upstream.close()


def make_agent(nginx: NginxInstance, plane: FakeControlPlane, state_dir: Path) -> Agent:
    config = agent_config_for(nginx, state_dir)
    state = AgentState(agent_id="agent-1", host_id=7, host_token=HOST_TOKEN, server=plane.url)
    return Agent(config, state)


def test_error_counts_and_certificates_are_pushed_exactly_once_across_a_restart(
    nginx_factory: Callable[..., NginxInstance],
    plane: FakeControlPlane,
    hanging: HangingUpstream,
    tmp_path: Path,
) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    made = make_certificate("edge.test", ["edge.test", "www.edge.test"], days=10)
    cert_path, key_path = write_pair(certs, "edge", made)
    tls_server = (
        f"listen 127.0.0.1:{free_port()} ssl;\n"
        f"        ssl_certificate {cert_path};\n"
        f"        ssl_certificate_key {key_path};"
    )
    nginx = nginx_factory(error_server(hanging.port, tls_server))
    state_dir = tmp_path / "state"
    first = make_agent(nginx, plane, state_dir)
    first.collect_once()  # opens the error log at its end
    request_missing(nginx.base_url, 12, "a")
    first.collect_once()
    first.push_pending()
    request_missing(nginx.base_url, 5, "b")
    first.collect_once()  # spooled, not pushed: the next agent pushes it
    first.close()
    request_missing(nginx.base_url, 8, "c")  # while no agent runs
    second = make_agent(nginx, plane, state_dir)
    second.collect_once()
    second.push_pending()
    second.close()

    samples = [s for push in plane.pushes() for s in push.body["samples"]]
    assert len(samples) == 4
    assert all("error_log" in s for s in samples)
    assert sum(s["error_log"]["levels"]["error"] for s in samples) == 12 + 5 + 8
    assert samples[-1]["error_log"]["files"] == [
        {"path": str(nginx.prefix / "logs" / "error.log"), "readable": True, "error": None}
    ]
    facts = plane.pushes()[0].body["facts"]
    (certificate,) = facts["tls_certificates"]
    assert certificate["path"] == str(cert_path)
    assert certificate["subject"] == "CN=edge.test,O=Test Org,C=US"
    assert certificate["dns_names"] == ["edge.test", "www.edge.test"]
    assert certificate["not_after"] == made.not_after.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert certificate["error"] is None
    pushed = json.dumps([push.body for push in plane.pushes()])
    assert all(fragment not in pushed for fragment in key_fragments(made.key_pem))
