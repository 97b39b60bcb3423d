"""Server-Sent Events that keep the UI live."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter
from sse_starlette import EventSourceResponse, ServerSentEvent

from app.api.deps import SessionDep, ViewerUser
from app.core import pubsub

router = APIRouter(tags=["events"])

KEEPALIVE_S = 15


async def _stream() -> AsyncIterator[ServerSentEvent]:
    """Every live event, as SSE, for as long as the browser listens."""
    async for event in pubsub.subscribe():
        yield ServerSentEvent(event=event.name, data=event.data)


@router.get(
    "/events",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "the event stream"}},
)
def events(session: SessionDep, _user: ViewerUser) -> EventSourceResponse:
    """`sample` after every accepted push, `host` when a host is enrolled, edited or deleted."""
    # The stream lives for hours; it must not hold the database connection the login check used.
    session.close()
    return EventSourceResponse(_stream(), ping=KEEPALIVE_S)
