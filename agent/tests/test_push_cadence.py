"""The cadence hint: a reply's `next_push_s` brings the next push forward, once per reply."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from nginx_fleet_agent.agent import Agent, hinted_wait_s
from nginx_fleet_agent.state import AgentState

from tests.conftest import agent_config_for
from tests.fake_control_plane import HOST_TOKEN, FakeControlPlane
from tests.nginx_instance import NginxInstance

INTERVAL_S = 30.0


@pytest.fixture
def plane() -> Iterator[FakeControlPlane]:
    server = FakeControlPlane(push_interval_s=INTERVAL_S)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def running_agent(nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path) -> Iterator[Agent]:
    """The agent's run loop in a thread, at a 30 s interval, stopped after the test."""
    config = agent_config_for(nginx, tmp_path / "state", push_interval_s=INTERVAL_S)
    state = AgentState(agent_id="agent-1", host_id=7, host_token=HOST_TOKEN, server=plane.url)
    agent = Agent(config, state)
    thread = threading.Thread(target=agent.run)
    thread.start()
    yield agent
    agent.stop_event.set()
    thread.join(timeout=10)
    assert not thread.is_alive()


def _wait_for_pushes(plane: FakeControlPlane, count: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while len(plane.pushes()) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(plane.pushes()) >= count, f"{len(plane.pushes())} push(es) in {timeout_s} s"


@pytest.mark.parametrize(
    ("value", "wait"),
    [
        (2, 2.0),
        (1.5, 1.5),
        (0.01, 1.0),  # never below 1 s
        (29.9, 29.9),
        (30, None),  # not shorter than the interval: nothing to bring forward
        (3600, None),
        (0, None),
        (-2, None),
        (float("nan"), None),
        (float("inf"), None),
        ("2", None),
        (True, None),
        (None, None),
        ([2], None),
    ],
)
def test_only_a_sane_hint_is_followed(value: object, wait: float | None) -> None:
    assert hinted_wait_s(value, INTERVAL_S) == wait


def test_the_loop_waits_the_hinted_time_then_goes_back_to_its_interval(
    plane: FakeControlPlane, running_agent: Agent
) -> None:
    plane.next_push_s = 1
    _wait_for_pushes(plane, 4, timeout_s=8)
    plane.next_push_s = None
    settled = len(plane.pushes()) + 1  # a push may be on its way while the hint is withdrawn
    time.sleep(2.5)
    pushes = plane.pushes()
    assert len(pushes) <= settled
    gaps = [b.at - a.at for a, b in pairwise(pushes[:4])]
    assert all(0.9 <= gap <= 1.6 for gap in gaps), gaps
    # Sampling keeps its interval: the hinted pushes re-send the last delivered sample.
    assert {s["seq"] for p in pushes for s in p.body["samples"]} == {1}
    assert running_agent.interval_s == INTERVAL_S


@pytest.mark.parametrize("value", [-1, 0, "soon", True, 3600])
def test_an_absurd_hint_leaves_the_interval_alone(
    plane: FakeControlPlane, running_agent: Agent, value: object
) -> None:
    plane.next_push_s = value
    _wait_for_pushes(plane, 1, timeout_s=5)
    time.sleep(1.5)
    assert len(plane.pushes()) == 1


def test_a_tiny_hint_still_waits_one_second(plane: FakeControlPlane, running_agent: Agent) -> None:
    plane.next_push_s = 0.001
    _wait_for_pushes(plane, 3, timeout_s=5)
    pushes = plane.pushes()
    assert all(b.at - a.at >= 0.95 for a, b in pairwise(pushes))


def test_a_failed_hinted_push_backs_off_instead(
    plane: FakeControlPlane, running_agent: Agent
) -> None:
    """The hint is for the next wait only: a failure falls back to the jittered backoff, and
    the samples' own cadence."""
    plane.next_push_s = 1
    _wait_for_pushes(plane, 1, timeout_s=5)
    plane.push_statuses = [503]
    _wait_for_pushes(plane, 2, timeout_s=5)
    time.sleep(2.0)
    # The failed push did not set another hinted push; only the backoff retries (none here:
    # the spool is empty and the next sample is 30 s away).
    assert len(plane.pushes()) == 2
