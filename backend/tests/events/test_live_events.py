"""GET /events delivers a `sample` event after a push, through Redis and in-process."""

from __future__ import annotations

import queue
import threading
from typing import Any

import httpx
import orjson
import pytest
from app.core import pubsub
from app.core.config import Settings
from app.users.models import Role
from fastapi import FastAPI

from tests.agents.payloads import push_body, recent, sample
from tests.conftest import TEST_PASSWORD, MakeUser
from tests.events.live_server import serve
from tests.hosts.factories import HostWithToken, make_host


def read_events(
    base_url: str, cookies: httpx.Cookies, host_id: int, found: queue.Queue[dict[str, Any]]
) -> None:
    """Follow the event stream until a `sample` event of host_id arrives; put it in found."""
    with (
        httpx.Client(base_url=base_url, cookies=cookies, timeout=30) as client,
        client.stream("GET", "/api/v1/events") as stream,
    ):
        found.put({"status": stream.status_code})
        name = None
        for line in stream.iter_lines():
            if line.startswith("event:"):
                name = line.partition(":")[2].strip()
            elif line.startswith("data:") and name == "sample":
                data = orjson.loads(line.partition(":")[2])
                if data["host_id"] == host_id:
                    found.put(data)
                    return


def push_until_event(
    base_url: str, host: HostWithToken, found: queue.Queue[dict[str, Any]]
) -> dict[str, Any]:
    """Push one sample at a time until the stream reports one (the subscription is async)."""
    with httpx.Client(base_url=base_url, timeout=10) as agent:
        for seq in range(1, 21):
            body = push_body([sample(seq, recent(1), active=5)], agent_id=host.agent_id)
            reply = agent.post(
                "/api/v1/agent/push",
                content=orjson.dumps(body),
                headers={"Authorization": f"Bearer {host.token}"},
            )
            assert reply.status_code == 200, reply.text
            try:
                return found.get(timeout=1)
            except queue.Empty:
                continue
    raise AssertionError("no sample event within 20 pushes")


def run_scenario(app: FastAPI, make_user: MakeUser) -> dict[str, Any]:
    """Sign in, open /events, push, and return the event data received."""
    user = make_user(role=Role.viewer)
    host = make_host(hostname="old-name")
    with serve(app) as base_url:
        with httpx.Client(base_url=base_url) as browser:
            login = browser.post(
                "/api/v1/auth/login", json={"username": user.username, "password": TEST_PASSWORD}
            )
            assert login.status_code == 200, login.text
            cookies = browser.cookies
        found: queue.Queue[dict[str, Any]] = queue.Queue()
        reader = threading.Thread(
            target=read_events, args=(base_url, cookies, host.id, found), daemon=True
        )
        reader.start()
        assert found.get(timeout=10) == {"status": 200}
        event = push_until_event(base_url, host, found)
        reader.join(timeout=10)
    return event


def assert_sample_event(event: dict[str, Any]) -> None:
    """The event carries the host's fleet row and a series point."""
    # The agent reports its current hostname with every push.
    assert event["fleet_host"]["hostname"] == "web-1"
    assert event["fleet_host"]["status"] == "up"
    assert event["fleet_host"]["active"] == 5
    assert event["point"]["active"] == 5
    assert event["point"]["cpu_pct"] == 12.5


def test_sample_event_through_redis(app: FastAPI, make_user: MakeUser, settings: Settings) -> None:
    assert settings.redis_url
    assert_sample_event(run_scenario(app, make_user))


def test_sample_event_in_process(
    app: FastAPI, make_user: MakeUser, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "redis_url", None)
    assert_sample_event(run_scenario(app, make_user))
    assert pubsub.local_broadcast.subscriber_count == 0


def test_events_need_a_session(app: FastAPI) -> None:
    with serve(app) as base_url:
        reply = httpx.get(f"{base_url}/api/v1/events", timeout=5)
    assert reply.status_code == 401
