"""A batch of pushes publishes its live events in one Redis round trip, in order; a Redis
outage drops them all, counted, without raising."""

from __future__ import annotations

import time
from collections.abc import Iterator

import orjson
import pytest
import redis
from app.core import pubsub
from app.core.config import Settings, get_settings

from tests.core.processes import free_port


@pytest.fixture
def channel(settings: Settings) -> Iterator[redis.client.PubSub]:
    """A subscription to the app's live-event channel on the test Redis."""
    assert settings.redis_url
    client = redis.Redis.from_url(settings.redis_url)
    subscription = client.pubsub(ignore_subscribe_messages=True)
    subscription.subscribe(settings.events_channel)
    yield subscription
    subscription.close()
    client.close()


def received(subscription: redis.client.PubSub, count: int) -> list[dict[str, object]]:
    """The next `count` envelopes on the channel (within 5 s)."""
    envelopes: list[dict[str, object]] = []
    deadline = time.monotonic() + 5
    while len(envelopes) < count and time.monotonic() < deadline:
        message = subscription.get_message(timeout=0.5)
        if message is not None:
            envelopes.append(orjson.loads(message["data"]))
    return envelopes


def test_a_batch_of_events_arrives_whole_and_in_order(channel: redis.client.PubSub) -> None:
    pubsub.redis_publisher.reset()
    events = [{"host_id": host_id, "point": {"active": host_id}} for host_id in (7, 3, 9)]
    assert pubsub.publish_many("sample", events) == 3
    envelopes = received(channel, 3)
    assert [(e["event"], e["host_id"]) for e in envelopes] == [
        ("sample", 7),
        ("sample", 3),
        ("sample", 9),
    ]
    assert orjson.loads(str(envelopes[1]["data"])) == events[1]
    assert pubsub.publish_many("sample", []) == 0


def test_a_batch_is_dropped_whole_and_counted_while_redis_is_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    get_settings.cache_clear()
    pubsub.redis_publisher.reset()
    try:
        assert pubsub.publish_many("sample", [{"host_id": 1}, {"host_id": 2}]) == 0
        assert pubsub.redis_publisher.dropped == 2
        # Paused after the failure: the next batch is dropped without trying Redis.
        assert pubsub.publish_many("sample", [{"host_id": 3}]) == 0
        assert pubsub.redis_publisher.dropped == 3
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
        pubsub.redis_publisher.reset()
