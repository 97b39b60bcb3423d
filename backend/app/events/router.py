"""Server-Sent Events that keep the UI live."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, status
from sqlalchemy import select
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask

from app.api.deps import CurrentSession, SessionDep, ViewerUser
from app.auth.cookies import SESSION_COOKIE
from app.core import pubsub
from app.core.config import get_settings
from app.core.errors import NotFoundError
from app.core.types import DbId
from app.events.stream import TooManyStreamsError, session_bound_events, stream_slots
from app.hosts.models import Host

router = APIRouter(tags=["events"])

KEEPALIVE_S = 15


async def _sse(events: AsyncIterator[pubsub.Event]) -> AsyncIterator[ServerSentEvent]:
    """Each live event as SSE."""
    async for event in events:
        yield ServerSentEvent(event=event.name, data=event.data)


@router.get(
    "/events",
    response_class=EventSourceResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "the event stream"},
        404: {"description": "host_id names no host"},
        429: {"description": "this user has too many live streams open"},
    },
)
def events(
    request: Request,
    session: SessionDep,
    user_session: CurrentSession,
    _user: ViewerUser,
    host_id: Annotated[
        DbId | None,
        Query(description="a host page's stream: that host's samples instead of fleet deltas"),
    ] = None,
) -> EventSourceResponse:
    """Without host_id (the fleet): `fleet` deltas, at most one per coalescing interval, naming
    the hosts that pushed. With host_id: `sample` after every push of that host. Both: `host`
    and `change` events (with host_id: those of that host), and `session_ended` last, when the
    session ends (logout, user disabled or deleted). docs/live-events.md has the contract."""
    settings = get_settings()
    session_id = request.cookies[SESSION_COOKIE]
    user_id = user_session.user_id
    if host_id is not None and session.scalar(select(Host.id).where(Host.id == host_id)) is None:
        raise NotFoundError(f"host {host_id} does not exist")
    # The stream lives for hours; it must not hold the database connection the login check used.
    session.close()
    try:
        lease = stream_slots.lease(user_id=user_id, limit=settings.events_max_streams_per_user)
    except TooManyStreamsError as exc:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"at most {settings.events_max_streams_per_user} live streams per user; "
            "close another tab or window",
            headers={"Retry-After": "30"},
        ) from exc
    stream = session_bound_events(
        session_id=session_id, lease=lease, recheck_s=settings.events_recheck_s, host_id=host_id
    )
    # The lease is also released when the response ends before the stream ever started.
    return EventSourceResponse(
        _sse(stream), ping=KEEPALIVE_S, background=BackgroundTask(lease.release)
    )
