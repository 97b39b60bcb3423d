"""HTTP routes of alert channels (admin) and of deliveries."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response, status

from app.api.deps import AdminUser, SessionDep, ViewerUser
from app.core.config import get_settings
from app.core.types import INT4_MAX, IdPath
from app.notify import service
from app.notify.schemas import ChannelRead, ChannelWrite, DeliveryRead

router = APIRouter(prefix="/alerts", tags=["alert channels"])

Limit = Annotated[int, Query(ge=1, le=service.MAX_DELIVERY_LIMIT)]
NAME_TAKEN: dict[int | str, dict[str, Any]] = {
    409: {"description": "Another channel has this name"}
}


@router.get("/channels", response_model=list[ChannelRead])
def list_channels(session: SessionDep, _admin: AdminUser) -> list[ChannelRead]:
    """Every channel with its settings; secrets are never returned, only which are set."""
    return [service.channel_read(c) for c in service.list_channels(session=session)]


@router.post(
    "/channels",
    response_model=ChannelRead,
    status_code=status.HTTP_201_CREATED,
    responses=NAME_TAKEN,
)
def create_channel(body: ChannelWrite, session: SessionDep, admin: AdminUser) -> ChannelRead:
    """Create a channel; its secrets are stored encrypted."""
    return service.channel_read(service.create_channel(session=session, body=body, actor=admin))


@router.get("/channels/{channel_id}", response_model=ChannelRead)
def get_channel(channel_id: IdPath, session: SessionDep, _admin: AdminUser) -> ChannelRead:
    """One channel."""
    return service.channel_read(service.get_channel(session=session, channel_id=channel_id))


@router.put("/channels/{channel_id}", response_model=ChannelRead, responses=NAME_TAKEN)
def update_channel(
    channel_id: IdPath, body: ChannelWrite, session: SessionDep, admin: AdminUser
) -> ChannelRead:
    """Replace a channel; an omitted secret keeps its value, an empty string clears it."""
    channel = service.update_channel(session=session, channel_id=channel_id, body=body, actor=admin)
    return service.channel_read(channel)


@router.delete("/channels/{channel_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_channel(channel_id: IdPath, session: SessionDep, admin: AdminUser) -> Response:
    """Delete a channel and its delivery history."""
    service.delete_channel(session=session, channel_id=channel_id, actor=admin)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/channels/{channel_id}/test", response_model=DeliveryRead)
def test_channel(
    channel_id: IdPath, request: Request, session: SessionDep, admin: AdminUser
) -> DeliveryRead:
    """Send a test notification now (a few seconds at most); the delivery says how it went."""
    external_url = get_settings().public_url or str(request.base_url)
    delivery = service.send_test(
        session=session, channel_id=channel_id, actor=admin, external_url=external_url
    )
    return service.delivery_read(delivery)


@router.get("/channels/{channel_id}/deliveries", response_model=list[DeliveryRead])
def channel_deliveries(
    channel_id: IdPath,
    session: SessionDep,
    _admin: AdminUser,
    limit: Limit = service.DEFAULT_DELIVERY_LIMIT,
) -> list[DeliveryRead]:
    """A channel's deliveries with their attempts, newest first."""
    deliveries = service.channel_deliveries(session=session, channel_id=channel_id, limit=limit)
    return [service.delivery_read(d) for d in deliveries]


@router.get("/deliveries", response_model=list[DeliveryRead])
def incident_deliveries(
    session: SessionDep,
    _user: ViewerUser,
    incident_id: Annotated[int, Query(ge=1, le=INT4_MAX)],
    limit: Limit = service.DEFAULT_DELIVERY_LIMIT,
) -> list[DeliveryRead]:
    """The deliveries that carried an incident, newest first."""
    return service.deliveries_for_incident(session=session, incident_id=incident_id, limit=limit)
