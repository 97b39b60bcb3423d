"""Server-Sent Events that keep the UI live."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, HTTPException, Request, status
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask

from app.api.deps import CurrentSession, SessionDep, ViewerUser
from app.auth.cookies import SESSION_COOKIE
from app.core import pubsub
from app.core.config import get_settings
from app.events.stream import TooManyStreamsError, session_bound_events, stream_slots

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
        429: {"description": "this user has too many live streams open"},
    },
)
def events(
    request: Request, session: SessionDep, user_session: CurrentSession, _user: ViewerUser
) -> EventSourceResponse:
    """`sample` after every accepted push, `host` when a host is enrolled, edited or deleted;
    `session_ended` last, when the session ends (logout, user disabled or deleted)."""
    settings = get_settings()
    session_id = request.cookies[SESSION_COOKIE]
    user_id = user_session.user_id
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
        session_id=session_id, lease=lease, recheck_s=settings.events_recheck_s
    )
    # The lease is also released when the response ends before the stream ever started.
    return EventSourceResponse(
        _sse(stream), ping=KEEPALIVE_S, background=BackgroundTask(lease.release)
    )
