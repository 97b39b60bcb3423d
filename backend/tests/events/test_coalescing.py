"""At 200 pushes/s a fleet page gets about one delta per second naming every host that pushed,
and a host page only its host's samples (real server, real Redis or the in-process broadcast)."""

from __future__ import annotations

import itertools
import time

import pytest
from app.core import pubsub
from app.core.config import Settings
from app.events.delta import ChangedHosts
from app.users.models import Role
from fastapi import FastAPI

from tests.conftest import MakeUser
from tests.events.live_server import serve
from tests.events.sse import SseReader, sign_in
from tests.hosts.factories import make_host

RATE = 200
SECONDS = 3.0
# Published ids far above the test database's: they need no host row (only host pages check).
FIRST_ID = 100_000


def publish_sample(host_id: int) -> None:
    """A push's event as ingest publishes it (the point's figures do not matter here)."""
    assert pubsub.publish("sample", {"host_id": host_id, "host": {}, "point": {"active": 1}})


@pytest.mark.parametrize("broker", ["redis", "in-process"])
def test_pushes_are_coalesced_for_the_fleet_and_scoped_for_a_host(
    app: FastAPI,
    make_user: MakeUser,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    broker: str,
) -> None:
    if broker == "in-process":
        monkeypatch.setattr(settings, "redis_url", None)
    assert settings.events_coalesce_s == 1.0
    user = make_user(role=Role.viewer)
    watched = make_host()
    with serve(app) as base_url:
        cookies = sign_in(base_url, user)
        fleet = SseReader(base_url, cookies).start()
        host_page = SseReader(base_url, cookies, params={"host_id": watched.id}).start()
        # The shared subscription starts with the first stream: warm up until it delivers.
        deadline = time.monotonic() + 10
        while not (fleet.delta_host_ids() and host_page.named("sample")):
            assert time.monotonic() < deadline, "the streams got nothing within 10 s"
            publish_sample(watched.id)
            time.sleep(0.1)
        time.sleep(1.2)  # the warm-up's last delta is out
        warm_deltas, warm_samples = len(fleet.named("fleet")), len(host_page.named("sample"))

        published: list[int] = []
        start = time.monotonic()
        for index in range(int(RATE * SECONDS)):
            # Every 20th push is the watched host's; the others are all distinct hosts.
            host_id = watched.id if index % 20 == 0 else FIRST_ID + index
            published.append(host_id)
            publish_sample(host_id)
            time.sleep(max(0.0, start + (index + 1) / RATE - time.monotonic()))
        elapsed = time.monotonic() - start
        time.sleep(1.5)  # the last delta is at most one interval away
    deltas = fleet.named("fleet")[warm_deltas:]
    # At most one per interval (plus the leading one); without coalescing there would be 600.
    assert 2 <= len(deltas) <= elapsed / settings.events_coalesce_s + 2, len(deltas)
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(deltas)]
    assert min(gaps) >= 0.8 * settings.events_coalesce_s, gaps
    assert set(published) <= fleet.delta_host_ids()
    assert not any(delta.data["truncated"] for delta in deltas)
    assert fleet.named("sample") == []
    samples = host_page.named("sample")[warm_samples:]
    assert [event.data["host_id"] for event in samples] == [watched.id] * published.count(
        watched.id
    )
    assert host_page.named("fleet") == []


def test_a_delta_names_at_most_max_ids_and_says_it_was_cut() -> None:
    changed = ChangedHosts(max_ids=3)
    assert changed.take() is None
    for host_id in (5, 1, 5, 9, 7):
        changed.add(host_id)
    delta = changed.take()
    assert delta is not None
    assert delta.name == "fleet"
    assert delta.data == '{"host_ids":[5,1,9],"changed":4,"truncated":true}'
    assert changed.take() is None
    changed.add(2)
    second = changed.take()
    assert second is not None
    assert second.data == '{"host_ids":[2],"changed":1,"truncated":false}'
