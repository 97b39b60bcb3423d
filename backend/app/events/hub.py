"""One live-event subscription per API process, shared by its streams, scoped and coalesced.

Work per push is O(1) whatever the number of open streams: a `sample` marks its host as
changed and reaches only the streams scoped to that host. The fleet-scoped streams get one
`fleet` delta per coalescing interval, encoded once. Other events (host, change) are rare
and go to every stream they concern as they come."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from app.core import pubsub
from app.events.delta import ChangedHosts

log = logging.getLogger(__name__)

SAMPLE_EVENT = "sample"
# A stream that stops reading must not make the process hold every event for it forever.
STREAM_QUEUE_SIZE = 1000


@dataclass(eq=False)
class Subscription:
    """One stream's place in the hub: its scope and the events waiting for it.

    A None in the queue means the shared subscription ended: the stream ends too, and the
    browser reconnects and refetches what it missed."""

    host_id: int | None
    queue: asyncio.Queue[pubsub.Event | None] = field(
        default_factory=lambda: asyncio.Queue(maxsize=STREAM_QUEUE_SIZE)
    )
    dropped: int = 0

    def offer(self, event: pubsub.Event) -> None:
        """Queue an event; drop it (logged) when the stream fell STREAM_QUEUE_SIZE behind."""
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("live event %s dropped for a stream that is not reading", event.name)

    def end(self) -> None:
        """Tell the stream the shared subscription is gone."""
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(None)


class EventHub:
    """The streams of one event loop and the single subscription that feeds them."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop, coalesce_s: float) -> None:
        self.loop = loop
        self._coalesce_s = coalesce_s
        self._fleet: set[Subscription] = set()
        self._hosts: dict[int, set[Subscription]] = {}
        self._changed = ChangedHosts()
        self._last_flush = float("-inf")
        self._flush_timer: asyncio.TimerHandle | None = None
        self._reader: asyncio.Task[None] | None = None
        self.closed = False

    def join(self, *, host_id: int | None) -> Subscription:
        """A new stream: fleet-scoped (host_id None) or scoped to one host."""
        subscription = Subscription(host_id=host_id)
        if host_id is None:
            self._fleet.add(subscription)
        else:
            self._hosts.setdefault(host_id, set()).add(subscription)
        if self._reader is None:
            self._reader = self.loop.create_task(self._read(), name="live-events-hub")
        return subscription

    def leave(self, subscription: Subscription) -> None:
        """A stream ended; the last one to leave closes the shared subscription."""
        if subscription.host_id is None:
            self._fleet.discard(subscription)
        else:
            scoped = self._hosts.get(subscription.host_id)
            if scoped is not None:
                scoped.discard(subscription)
                if not scoped:
                    del self._hosts[subscription.host_id]
        if not self._fleet and not self._hosts:
            self.close()

    @property
    def stream_count(self) -> int:
        """How many streams this hub feeds."""
        return len(self._fleet) + sum(len(scoped) for scoped in self._hosts.values())

    def close(self) -> None:
        """Stop reading and flushing; the streams still open are ended."""
        if self.closed:
            return
        self.closed = True
        _hubs.pop(self.loop, None)
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        if self._reader is not None and self._reader is not asyncio.current_task(self.loop):
            self._reader.cancel()
        for subscription in [*self._fleet, *(s for scoped in self._hosts.values() for s in scoped)]:
            subscription.end()

    async def _read(self) -> None:
        """Route every published event until the hub closes or the subscription fails."""
        events = pubsub.subscribe()
        try:
            async for event in events:
                self.dispatch(event)
        except asyncio.CancelledError:
            raise
        except Exception:
            # Redis went away: end the streams, whose browsers reconnect and refetch.
            log.exception(
                "live events: the shared subscription failed; ending %d streams", self.stream_count
            )
            self.close()
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    def dispatch(self, event: pubsub.Event) -> None:
        """Hand one published event to the streams it concerns."""
        if event.name == SAMPLE_EVENT:
            if event.host_id is None:
                return
            if self._fleet:
                self._changed.add(event.host_id)
                self._schedule_flush()
            for subscription in self._hosts.get(event.host_id, ()):
                subscription.offer(event)
            return
        for subscription in self._fleet:
            subscription.offer(event)
        if event.host_id is None:
            for scoped in self._hosts.values():
                for subscription in scoped:
                    subscription.offer(event)
        else:
            for subscription in self._hosts.get(event.host_id, ()):
                subscription.offer(event)

    def _schedule_flush(self) -> None:
        """Send the delta now if the last one is an interval old, else when it will be."""
        if self._flush_timer is not None:
            return
        delay = max(0.0, self._last_flush + self._coalesce_s - self.loop.time())
        self._flush_timer = self.loop.call_later(delay, self._flush)

    def _flush(self) -> None:
        """One `fleet` event, encoded once, for every fleet-scoped stream."""
        self._flush_timer = None
        delta = self._changed.take()
        if delta is None:
            return
        self._last_flush = self.loop.time()
        for subscription in self._fleet:
            subscription.offer(delta)


_hubs: dict[asyncio.AbstractEventLoop, EventHub] = {}


def hub(*, coalesce_s: float) -> EventHub:
    """The hub of the running event loop (one per API process), made on first use."""
    loop = asyncio.get_running_loop()
    current = _hubs.get(loop)
    if current is None or current.closed:
        current = _hubs[loop] = EventHub(loop=loop, coalesce_s=coalesce_s)
    return current
