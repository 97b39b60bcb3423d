"""Pushing to a real HTTP server on loopback: encoding, retries, replay, drops and stops."""

from __future__ import annotations

import gzip
import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nginx_fleet_agent.agent import Agent
from nginx_fleet_agent.state import AgentState

from tests.conftest import agent_config_for
from tests.fake_control_plane import HOST_TOKEN, FakeControlPlane
from tests.nginx_instance import NginxInstance


@pytest.fixture
def plane() -> Iterator[FakeControlPlane]:
    server = FakeControlPlane()
    server.start()
    yield server
    server.stop()


_open_agents: list[Agent] = []


@pytest.fixture(autouse=True)
def _close_agents() -> Iterator[None]:
    yield
    while _open_agents:
        _open_agents.pop().close()


def _agent(nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, **kw: object) -> Agent:
    """An agent watching `nginx` and pushing to `plane`; closed after the test."""
    config = agent_config_for(nginx, tmp_path / "state", **kw)
    state = AgentState(agent_id="agent-1", host_id=7, host_token=HOST_TOKEN, server=plane.url)
    agent = Agent(config, state)
    _open_agents.append(agent)
    return agent


def test_push_is_gzip_json_with_bearer_token(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    agent = _agent(nginx, plane, tmp_path)
    agent.collect_once()
    agent.push_pending()
    agent.collect_once()
    agent.push_pending()
    first, second = plane.pushes()
    assert first.headers["authorization"] == f"Bearer {HOST_TOKEN}"
    assert first.headers["content-encoding"] == "gzip"
    assert first.headers["content-type"] == "application/json"
    assert json.loads(gzip.decompress(first.raw_body)) == first.body
    assert first.body["agent_id"] == "agent-1"
    assert first.body["labels"] == {"env": "test"}
    assert first.body["facts"]["nginx_version"] == "1.22.1"
    assert first.body["config"]["hash"] == first.body["config_hash"]
    sample = first.body["samples"][0]
    assert sample["seq"] == 1
    assert sample["nginx"]["up"] is True
    assert sample["stub_status"]["available"] is True
    # Facts and the dump go once; the hash goes every time so the server can ask again.
    assert "facts" not in second.body
    assert "config" not in second.body
    assert second.body["config_hash"] == first.body["config_hash"]
    assert [s["seq"] for s in second.body["samples"]] == [2]
    assert agent.spooled == 0


def test_config_wanted_makes_the_next_push_carry_the_dump(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    agent = _agent(nginx, plane, tmp_path)
    plane.config_wanted = True
    agent.collect_once()
    agent.push_pending()
    plane.config_wanted = False
    agent.collect_once()
    agent.push_pending()
    agent.collect_once()
    agent.push_pending()
    assert ["config" in push.body for push in plane.pushes()] == [True, True, False]


def test_retry_while_down_then_replay_in_order(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.stop()
    agent = _agent(nginx, plane, tmp_path)
    for _ in range(3):
        agent.collect_once()
        agent.push_pending()
    assert agent.spooled == 3
    assert agent._backoff.failures == 3
    plane.start()
    agent.collect_once()
    agent.push_pending()
    (push,) = plane.pushes()
    assert [s["seq"] for s in push.body["samples"]] == [1, 2, 3, 4]
    assert agent.spooled == 0
    assert agent._backoff.failures == 0


def test_server_error_is_retried_without_duplicates(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.push_statuses = [503, 500]
    agent = _agent(nginx, plane, tmp_path)
    for _ in range(3):
        agent.collect_once()
        agent.push_pending()
    answered = [[s["seq"] for s in p.body["samples"]] for p in plane.pushes()]
    assert answered == [[1], [1, 2], [1, 2, 3]]
    assert sorted(key[1] for key in plane.seen) == [1, 2, 3]
    assert agent.spooled == 0


def test_restart_replays_the_spool_and_continues_seq(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.stop()
    agent = _agent(nginx, plane, tmp_path)
    agent.collect_once()
    agent.collect_once()
    agent.push_pending()
    agent.close()
    plane.start()
    restarted = _agent(nginx, plane, tmp_path)
    restarted.collect_once()
    restarted.push_pending()
    (push,) = plane.pushes()
    assert [s["seq"] for s in push.body["samples"]] == [1, 2, 3]


def test_a_refused_envelope_keeps_the_samples_and_backs_off(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plane.push_statuses = [422]
    agent = _agent(nginx, plane, tmp_path)
    agent.collect_once()
    agent.collect_once()
    agent.push_pending()
    assert agent.spooled == 2
    assert agent._backoff.failures == 1
    assert "HTTP 422" in caplog.text
    agent._next_push_at = 0.0
    agent.collect_once()
    agent.push_pending()
    refused, accepted = plane.pushes()
    assert [s["seq"] for s in refused.body["samples"]] == [1, 2]
    assert [s["seq"] for s in accepted.body["samples"]] == [1, 2, 3]
    assert agent.spooled == 0


def test_one_refused_sample_costs_only_itself(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plane.stop()
    agent = _agent(nginx, plane, tmp_path)
    for _ in range(300):
        agent.collect_once()
    plane.refused_seqs = {137}
    plane.start()
    with caplog.at_level(logging.WARNING):
        agent.push_pending()
    (push,) = plane.pushes()
    assert len(push.body["samples"]) == 300
    assert sorted(seq for _, seq in plane.seen) == [s for s in range(1, 301) if s != 137]
    assert agent.spooled == 0
    assert "server refused sample seq 137: samples[136].ts: refused" in caplog.text


def test_spool_overflow_is_reported_as_a_gap_once(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.stop()
    agent = _agent(nginx, plane, tmp_path, spool_max_samples=5)
    for _ in range(12):
        agent.collect_once()
    plane.start()
    agent.push_pending()
    agent.collect_once()
    agent.push_pending()
    first, second = plane.pushes()
    assert [s["seq"] for s in first.body["samples"]] == [8, 9, 10, 11, 12]
    (gap,) = first.body["gaps"]
    assert (gap["from_seq"], gap["to_seq"], gap["reason"]) == (1, 7, "spool_overflow")
    assert gap["from_ts"] <= gap["to_ts"] <= first.body["samples"][0]["ts"]
    # Confirmed by the reply: not sent again.
    assert "gaps" not in second.body


def test_too_large_push_is_split_before_anything_is_dropped(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.push_statuses = [413, 413]
    agent = _agent(nginx, plane, tmp_path)
    for _ in range(4):
        agent.collect_once()
    agent.push_pending()
    pushes = plane.pushes()
    # 1st: the dump is left out; 2nd: the batch is halved; then everything goes through.
    assert ["config" in p.body for p in pushes[:2]] == [True, False]
    assert [len(p.body["samples"]) for p in pushes] == [4, 4, 2, 2]
    assert sorted(key[1] for key in plane.seen) == [1, 2, 3, 4]


def test_unauthorized_stops_pushing_but_keeps_samples(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plane.push_statuses = [401]
    agent = _agent(nginx, plane, tmp_path)
    agent.collect_once()
    agent.push_pending()
    agent.collect_once()
    agent.push_pending()
    assert agent.push_stopped is True
    assert agent.spooled == 2
    assert len(plane.pushes()) == 1
    assert "host token is not valid" in caplog.text


def test_batches_hold_at_most_500_samples(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.stop()
    agent = _agent(nginx, plane, tmp_path)
    agent.collect_once()
    sample = agent._spool.oldest(1)[0]
    del sample["seq"]
    for _ in range(1100):
        agent._spool.append(sample)
    plane.start()
    agent.push_pending()
    sizes = [len(p.body["samples"]) for p in plane.pushes()]
    assert sizes == [500, 500, 101]
    seqs = [s["seq"] for p in plane.pushes() for s in p.body["samples"]]
    assert seqs == list(range(1, 1102))


def test_run_loop_honours_server_interval_and_stops(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.push_interval_s = 1
    agent = _agent(nginx, plane, tmp_path, push_interval_s=30.0)
    thread = threading.Thread(target=agent.run)
    thread.start()
    deadline = time.monotonic() + 10
    while len(plane.seen) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    agent.stop_event.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    # At the configured 30 s there would be one sample; the server's 1 s brought more.
    assert len(plane.seen) >= 3
    assert agent.interval_s == 1.0
