"""Live event streams bound to the session that opened them, and bounded per user."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from anyio import to_thread

from app.auth import service as auth_service
from app.core import pubsub
from app.core.config import get_settings
from app.core.db import SessionLocal
from app.core.errors import DATABASE_UNAVAILABLE_ERRORS
from app.events.hub import hub

log = logging.getLogger(__name__)

# Sent as the last event when the session ended (logout, user disabled or deleted, expiry).
SESSION_ENDED = pubsub.Event(name="session_ended", data="{}")


class TooManyStreamsError(Exception):
    """The user already has the most live streams allowed in this process."""


@dataclass
class StreamLease:
    """One open stream of a user; released exactly once, whoever ends the stream first."""

    slots: StreamSlots
    user_id: int
    released: bool = False

    def release(self) -> None:
        """Give the place back (idempotent)."""
        self.slots.release(self)


@dataclass
class StreamSlots:
    """How many streams each user has open in this API process."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open: dict[int, int] = field(default_factory=dict)

    def lease(self, *, user_id: int, limit: int) -> StreamLease:
        """A place for one more stream, or TooManyStreamsError at the limit."""
        with self._lock:
            count = self._open.get(user_id, 0)
            if count >= limit:
                raise TooManyStreamsError
            self._open[user_id] = count + 1
        return StreamLease(slots=self, user_id=user_id)

    def release(self, lease: StreamLease) -> None:
        """Give a lease's place back (only once)."""
        with self._lock:
            if lease.released:
                return
            lease.released = True
            remaining = self._open.get(lease.user_id, 0) - 1
            if remaining > 0:
                self._open[lease.user_id] = remaining
            else:
                self._open.pop(lease.user_id, None)

    def open_streams(self, user_id: int) -> int:
        """How many streams the user has open here."""
        with self._lock:
            return self._open.get(user_id, 0)


stream_slots = StreamSlots()


def session_is_live(session_id: str) -> bool:
    """True while the session cookie still signs a user in (not logged out, disabled, deleted).

    Read-only: an open stream (a forgotten background tab) must not keep its session alive
    past the idle expiry; only requests the user makes slide it forward."""
    with SessionLocal() as session:
        return auth_service.find_live_session(session=session, session_id=session_id) is not None


async def session_bound_events(
    *, session_id: str, lease: StreamLease, recheck_s: float, host_id: int | None = None
) -> AsyncIterator[pubsub.Event]:
    """Live events of one scope (the fleet, or host_id) for as long as the session lives.

    The session is re-checked every recheck_s seconds; the stream ends with SESSION_ENDED once
    it is gone. The lease is released however the stream ends."""
    shared = hub(coalesce_s=get_settings().events_coalesce_s)
    subscription = shared.join(host_id=host_id)
    pending: asyncio.Future[pubsub.Event | None] | None = None
    try:
        next_check = time.monotonic() + recheck_s
        while True:
            if pending is None:
                pending = asyncio.ensure_future(subscription.queue.get())
            timeout = max(0.0, next_check - time.monotonic())
            done, _ = await asyncio.wait({pending}, timeout=timeout)
            if done:
                event = pending.result()
                pending = None
                if event is None:
                    return
                yield event
            if time.monotonic() >= next_check:
                try:
                    live = await to_thread.run_sync(session_is_live, session_id)
                except DATABASE_UNAVAILABLE_ERRORS:
                    # The headers are sent: no 503 possible. Keep the stream; check next time.
                    log.warning("live stream: database unreachable, session re-check deferred")
                    live = True
                if not live:
                    yield SESSION_ENDED
                    return
                next_check = time.monotonic() + recheck_s
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pending
        shared.leave(subscription)
        lease.release()
