"""GET /events over a real server: a host page gets its host's samples, the fleet a delta."""

from __future__ import annotations

import time

import httpx
import orjson
import pytest
from app.core import pubsub
from app.core.config import Settings
from app.events import hub
from app.users.models import Role
from fastapi import FastAPI

from tests.agents.payloads import push_body, recent, sample
from tests.conftest import MakeUser
from tests.events.live_server import serve
from tests.events.sse import EVENTS, SseReader, sign_in
from tests.hosts.factories import HostWithToken, make_host


def push(agent: httpx.Client, host: HostWithToken, seq: int) -> None:
    """One accepted push of one sample, as the host's agent sends it."""
    body = push_body([sample(seq, recent(1), active=5)], agent_id=host.agent_id)
    reply = agent.post(
        "/api/v1/agent/push",
        content=orjson.dumps(body),
        headers={"Authorization": f"Bearer {host.token}"},
    )
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize("broker", ["redis", "in-process"])
def test_a_host_page_gets_its_samples_and_the_fleet_page_a_delta(
    app: FastAPI,
    make_user: MakeUser,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    broker: str,
) -> None:
    if broker == "in-process":
        monkeypatch.setattr(settings, "redis_url", None)
    else:
        assert settings.redis_url
    user = make_user(role=Role.viewer)
    shown, other = make_host(hostname="old-name"), make_host(hostname="web-2")
    with serve(app) as base_url:
        cookies = sign_in(base_url, user)
        fleet = SseReader(base_url, cookies).start()
        host_page = SseReader(base_url, cookies, params={"host_id": shown.id}).start()
        assert (fleet.status, host_page.status) == (200, 200)
        with httpx.Client(base_url=base_url, timeout=10) as agent:
            # The shared subscription starts with the first stream: push until both see it.
            for seq in range(1, 31):
                push(agent, other, seq)
                push(agent, shown, seq)
                if fleet.delta_host_ids() == {shown.id, other.id} and host_page.named("sample"):
                    break
                time.sleep(0.3)
    assert fleet.delta_host_ids() == {shown.id, other.id}
    for delta in fleet.named("fleet"):
        assert delta.data["changed"] == len(delta.data["host_ids"])
        assert delta.data["truncated"] is False
    assert fleet.named("sample") == []
    samples = host_page.named("sample")
    assert samples, "the host page got no sample"
    assert {event.data["host_id"] for event in samples} == {shown.id}
    assert host_page.named("fleet") == []
    first = samples[0].data
    # The agent reports its current hostname with every push.
    assert first["host"]["hostname"] == "web-1"
    assert first["host"]["status"] == "up"
    assert first["point"]["active"] == 5
    assert first["point"]["cpu_pct"] == 12.5
    # Every stream left the shared subscription when the server stopped.
    assert hub._hubs == {}
    assert pubsub.local_broadcast.subscriber_count == 0


def test_host_and_change_events_reach_the_streams_they_concern(
    app: FastAPI, make_user: MakeUser
) -> None:
    user = make_user(role=Role.viewer)
    shown, other = make_host(), make_host(hostname="web-2")
    with serve(app) as base_url:
        cookies = sign_in(base_url, user)
        fleet = SseReader(base_url, cookies).start()
        host_page = SseReader(base_url, cookies, params={"host_id": shown.id}).start()
        for attempt in range(30):
            pubsub.publish("host", {"host_id": other.id})
            pubsub.publish("change", {"id": attempt, "host_id": shown.id, "status": "sent"})
            if fleet.wait_for("change", timeout=0.3) and host_page.named("change"):
                break
        assert fleet.wait_for("host", timeout=1) is not None
    assert {event.data["host_id"] for event in fleet.named("host")} == {other.id}
    assert host_page.named("host") == []
    assert {event.data["host_id"] for event in host_page.named("change")} == {shown.id}


def test_a_host_page_stream_of_an_unknown_host_is_404(app: FastAPI, make_user: MakeUser) -> None:
    user = make_user(role=Role.viewer)
    with serve(app) as base_url:
        reply = httpx.get(
            f"{base_url}{EVENTS}",
            params={"host_id": 999_999},
            cookies=sign_in(base_url, user),
            timeout=5,
        )
    assert reply.status_code == 404
    assert reply.json()["detail"] == "host 999999 does not exist"


@pytest.mark.parametrize("host_id", ["web-1", "0", "1.5", str(2**31)])
def test_a_host_id_that_is_no_id_is_422_naming_it(
    app: FastAPI, make_user: MakeUser, host_id: str
) -> None:
    user = make_user(role=Role.viewer)
    with serve(app) as base_url:
        reply = httpx.get(
            f"{base_url}{EVENTS}",
            params={"host_id": host_id},
            cookies=sign_in(base_url, user),
            timeout=5,
        )
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("query.host_id: "), reply.text


@pytest.mark.parametrize("params", [{}, {"host_id": 1}])
def test_events_need_a_session(app: FastAPI, params: dict[str, int]) -> None:
    with serve(app) as base_url:
        reply = httpx.get(f"{base_url}{EVENTS}", params=params, timeout=5)
    assert reply.status_code == 401
