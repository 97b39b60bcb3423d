"""Live events for the UI: Redis pub/sub when configured (any replica serves any browser),
an in-process broadcast otherwise.

Publishing is best-effort: events announce work already committed, so a Redis outage is
logged and counted, never raised into the request that did the work."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
import redis
import redis.asyncio as aioredis

from app.core.config import get_settings

log = logging.getLogger(__name__)

# The default channel (settings.events_channel).
CHANNEL = "nginx-fleet:events"
# A browser that stops reading must not make the process hold every event for it forever.
SUBSCRIBER_QUEUE_SIZE = 1000
# An unreachable Redis must not add seconds to every request that publishes.
REDIS_TIMEOUT_S = 1.0
# After a failure, events are dropped without trying Redis for this long (one log line each).
PAUSE_AFTER_FAILURE_S = 5.0


@dataclass(frozen=True, slots=True)
class Event:
    """One live event: its SSE name, its data already encoded as JSON, and the host it concerns.

    host_id travels beside the data so that routing an event to the streams of one host never
    decodes the data."""

    name: str
    data: str
    host_id: int | None = None


class LocalBroadcast:
    """Fan-out to the subscribers of this process, callable from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[Event]]] = set()

    def publish(self, event: Event) -> None:
        """Hand the event to every subscriber's queue on its own event loop."""
        with self._lock:
            subscribers = list(self._subscribers)
        for loop, queue in subscribers:
            try:
                loop.call_soon_threadsafe(_offer, queue, event)
            except RuntimeError:
                # The subscriber's loop closed without unsubscribing (process shutting down).
                self._discard(loop, queue)

    def _discard(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Event]) -> None:
        with self._lock:
            self._subscribers.discard((loop, queue))

    async def subscribe(self) -> AsyncIterator[Event]:
        """Yield events published after the call until the consumer stops."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=SUBSCRIBER_QUEUE_SIZE)
        with self._lock:
            self._subscribers.add((loop, queue))
        try:
            while True:
                yield await queue.get()
        finally:
            self._discard(loop, queue)

    @property
    def subscriber_count(self) -> int:
        """How many consumers are listening in this process."""
        with self._lock:
            return len(self._subscribers)


def _offer(queue: asyncio.Queue[Event], event: Event) -> None:
    """Queue an event, dropping it for a subscriber that fell SUBSCRIBER_QUEUE_SIZE behind."""
    try:
        queue.put_nowait(event)
    except asyncio.QueueFull:
        log.warning("live event %s dropped for a subscriber that is not reading", event.name)


local_broadcast = LocalBroadcast()


@lru_cache(maxsize=4)
def _redis_client(url: str) -> redis.Redis:
    """One connection pool per Redis URL for publishing from request threads."""
    return redis.Redis.from_url(
        url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S
    )


class RedisPublisher:
    """Publishes to the Redis channel; on failure logs, counts and pauses instead of raising."""

    def __init__(self, pause_s: float = PAUSE_AFTER_FAILURE_S) -> None:
        self._pause_s = pause_s
        self._lock = threading.Lock()
        self._paused_until = 0.0
        self.dropped = 0

    def publish(self, url: str, message: Event) -> bool:
        """True when Redis took the event; False (logged, counted) when it was dropped."""
        return self.publish_many(url, [message]) == 1

    def publish_many(self, url: str, messages: Sequence[Event]) -> int:
        """Send the events in one round trip (a pipeline); how many Redis took (all or none)."""
        if not messages:
            return 0
        with self._lock:
            if time.monotonic() < self._paused_until:
                self.dropped += len(messages)
                return 0
        channel = get_settings().events_channel
        try:
            if len(messages) == 1:
                _redis_client(url).publish(channel, _envelope(messages[0]))
            else:
                # One round trip for a batch of pushes instead of one per push.
                pipeline = _redis_client(url).pipeline(transaction=False)
                for message in messages:
                    pipeline.publish(channel, _envelope(message))
                pipeline.execute()
        except (redis.RedisError, OSError) as error:
            with self._lock:
                self.dropped += len(messages)
                self._paused_until = time.monotonic() + self._pause_s
                dropped = self.dropped
            log.warning(
                "live event %s not published, Redis failed: %s; live events are dropped for "
                "%.0fs (%d dropped so far); browsers catch up on their next refresh",
                messages[0].name,
                error,
                self._pause_s,
                dropped,
            )
            return 0
        return len(messages)

    def reset(self) -> None:
        """Forget a past failure (tests, or a Redis known to be back)."""
        with self._lock:
            self._paused_until = 0.0
            self.dropped = 0


redis_publisher = RedisPublisher()


def _envelope(message: Event) -> bytes:
    """The Redis message carrying an event."""
    return orjson.dumps({"event": message.name, "data": message.data, "host_id": message.host_id})


def encode(event: str, data: dict[str, Any]) -> Event:
    """Encode data once, whatever number of browsers receive it; its `host_id` routes it."""
    host_id = data.get("host_id")
    return Event(
        name=event,
        data=orjson.dumps(data).decode("utf-8"),
        host_id=host_id if isinstance(host_id, int) else None,
    )


def publish(event: str, data: dict[str, Any]) -> bool:
    """Send an event to every live subscriber (of every replica when Redis is configured).

    Best-effort, for callers that have committed: False when the event was dropped."""
    return publish_many(event, [data]) == 1


def publish_many(event: str, datas: Sequence[dict[str, Any]]) -> int:
    """publish() for several events of one kind at once; how many were sent."""
    messages = [encode(event, data) for data in datas]
    redis_url = get_settings().redis_url
    if redis_url:
        return redis_publisher.publish_many(redis_url, messages)
    for message in messages:
        local_broadcast.publish(message)
    return len(messages)


def _decode_envelope(raw: bytes) -> Event | None:
    """The Event in a Redis message, or None (logged) when it is not one of ours."""
    try:
        envelope = orjson.loads(raw)
        host_id = envelope.get("host_id")
        return Event(
            name=str(envelope["event"]),
            data=str(envelope["data"]),
            host_id=host_id if isinstance(host_id, int) else None,
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        log.warning("ignored a malformed live event message on Redis")
        return None


async def _subscribe_redis(url: str, name: str) -> AsyncIterator[Event]:
    """Yield events from the Redis channel until the consumer stops."""
    client = aioredis.Redis.from_url(url)
    channel = client.pubsub(ignore_subscribe_messages=True)
    try:
        await channel.subscribe(name)
        async for message in channel.listen():
            if message.get("type") != "message":
                continue
            event = _decode_envelope(message["data"])
            if event is not None:
                yield event
    finally:
        await channel.aclose()  # type: ignore[no-untyped-call]
        await client.aclose()


def subscribe() -> AsyncIterator[Event]:
    """Events published from now on, from Redis or from this process.

    One subscription per API process is enough: app.events.hub shares it among the streams."""
    settings = get_settings()
    if settings.redis_url:
        return _subscribe_redis(settings.redis_url, settings.events_channel)
    return local_broadcast.subscribe()
