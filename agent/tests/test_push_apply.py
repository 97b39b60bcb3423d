"""Actions in push replies and step reports in push bodies, against a real HTTP server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from nginx_fleet_agent.agent import Agent
from nginx_fleet_agent.state import AgentState

from tests.apply_helpers import insert_after, make_action, site_conf
from tests.conftest import agent_config_for
from tests.fake_control_plane import HOST_TOKEN, FakeControlPlane
from tests.nginx_instance import NginxInstance

ADD_HEADER = ["            add_header X-Applied yes always;"]


@pytest.fixture
def plane() -> Iterator[FakeControlPlane]:
    server = FakeControlPlane()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def agents() -> Iterator[list[Agent]]:
    made: list[Agent] = []
    yield made
    for agent in made:
        agent.close()


def _agent(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, agents: list[Agent], **kw: Any
) -> Agent:
    config = agent_config_for(nginx, tmp_path / "state", apply_verify_s=1.0, **kw)
    state = AgentState(agent_id="agent-1", host_id=7, host_token=HOST_TOKEN, server=plane.url)
    agent = Agent(config, state)
    agents.append(agent)
    return agent


def _reports(plane: FakeControlPlane) -> list[dict[str, Any]]:
    return [r for push in plane.pushes() for r in push.body.get("action_reports", [])]


def test_reply_action_is_applied_and_reported_in_the_next_push(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, agents: list[Agent]
) -> None:
    agent = _agent(nginx, plane, tmp_path, agents, allow_apply=True)
    target = site_conf(nginx)
    plane.actions = [
        make_action(nginx, target, lambda t: insert_after(t, "location / {", ADD_HEADER), 17)
    ]
    agent.collect_once()
    agent.push_pending()
    first = plane.pushes()[0].body
    assert first["facts"]["apply_allowed"] is True
    assert "action_reports" not in first

    agent.apply.join(timeout=60)
    agent.push_pending()

    last = plane.pushes()[-1].body
    # Steps go out as they come: the first ones may already have ridden an earlier push.
    reports = _reports(plane)
    assert [r["seq"] for r in reports] == list(range(1, len(reports) + 1))
    assert {r["action_id"] for r in reports} == {17}
    assert reports[-1]["step"] == "outcome" and reports[-1]["status"] == "verified"
    fields = {"action_id", "seq", "step", "status", "at", "message", "detail"}
    assert all(set(r) == fields for r in reports)
    # The spool was empty: the last sample rides again (the server counts a duplicate).
    assert last["samples"] == first["samples"]
    # nginx -T was re-read at once: the push carries the config as it now is.
    assert "X-Applied" in last["config"]["dump"]
    assert last["config_hash"] != first["config_hash"]
    response = httpx.get(nginx.base_url, trust_env=False)
    assert response.headers["x-applied"] == "yes"
    # Confirmed by the 200 reply: sent once. The server still repeats the action: ignored.
    agent.collect_once()
    agent.push_pending()
    assert "action_reports" not in plane.pushes()[-1].body
    agent.apply.join(timeout=5)
    assert not agent.apply.store.has_pending()


def test_action_is_refused_when_apply_is_not_allowed(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, agents: list[Agent]
) -> None:
    agent = _agent(nginx, plane, tmp_path, agents)
    target = site_conf(nginx)
    before = target.read_bytes()
    plane.actions = [
        make_action(nginx, target, lambda t: insert_after(t, "location / {", ADD_HEADER), 5)
    ]
    agent.collect_once()
    agent.push_pending()
    assert plane.pushes()[0].body["facts"]["apply_allowed"] is False

    agent.push_pending()

    reports = plane.pushes()[-1].body["action_reports"]
    assert [(r["step"], r["status"]) for r in reports] == [
        ("received", "ok"),
        ("outcome", "refused"),
    ]
    assert reports[-1]["detail"] == {"reason": "not_allowed"}
    assert target.read_bytes() == before


def test_running_agent_pushes_every_step_as_it_happens(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, agents: list[Agent]
) -> None:
    agent = _agent(nginx, plane, tmp_path, agents, allow_apply=True)
    target = site_conf(nginx)
    plane.actions = [
        make_action(nginx, target, lambda t: insert_after(t, "location / {", ADD_HEADER), 3)
    ]
    loop = threading.Thread(target=agent.run, daemon=True)
    loop.start()
    try:
        deadline = time.monotonic() + 30
        while not any(r["step"] == "outcome" for r in _reports(plane)):
            assert time.monotonic() < deadline, "no outcome pushed within 30 s"
            time.sleep(0.05)
    finally:
        agent.stop_event.set()
        loop.join(timeout=30)
    agents.remove(agent)  # run() closed it

    reports = _reports(plane)
    assert [r["seq"] for r in reports] == list(range(1, len(reports) + 1))
    assert reports[-1]["status"] == "verified"
    # Not one push per interval (10 s): the steps before the verify watch (1 s) were pushed
    # while it ran, before the outcome.
    carrying = [
        [(r["step"], r["status"]) for r in p.body.get("action_reports", [])] for p in plane.pushes()
    ]
    started = next(i for i, steps in enumerate(carrying) if ("verify", "started") in steps)
    done = next(i for i, steps in enumerate(carrying) if ("outcome", "verified") in steps)
    assert started < done


def test_an_outcome_report_always_rides_with_the_config_as_it_now_is(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path, agents: list[Agent]
) -> None:
    """The applier stores the outcome, then flags a refresh: a push in between must re-read
    `nginx -T` all the same, or the control plane sees `verified` with the config it left."""
    agent = _agent(nginx, plane, tmp_path, agents, allow_apply=True)
    agent.collect_once()
    agent.push_pending()
    target = site_conf(nginx)
    text = target.read_text()
    target.write_text(text.replace("location / {", "location / {\n" + ADD_HEADER[0], 1))
    # The outcome is stored and no refresh was flagged yet (the race's window).
    agent.apply.store.report(17, "outcome", "verified", "", {})
    assert not agent.apply.take_refresh()
    agent.push_pending()
    last = plane.pushes()[-1].body
    assert [r["step"] for r in last["action_reports"]] == ["outcome"]
    assert "X-Applied" in last["config"]["dump"]
