"""GET /metrics for Prometheus (bearer token), and the admin's /metrics-token endpoints."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Response, status
from fastapi.responses import JSONResponse
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from app.api.deps import AdminUser, SessionDep
from app.core.config import get_settings
from app.core.errors import NotAuthenticatedError
from app.exposition import service
from app.exposition.collector import render
from app.exposition.schemas import MetricsTokenCreated, MetricsTokenState

# Under the API prefix, for the UI.
router = APIRouter(prefix="/metrics-token", tags=["metrics token"])
# At the root, where Prometheus looks by default.
scrape_router = APIRouter(tags=["metrics"])


@router.get("", response_model=MetricsTokenState)
def token_state(session: SessionDep, _admin: AdminUser) -> MetricsTokenState:
    """Whether a scrape token is set, and since when."""
    return service.token_state(session=session)


@router.post("", response_model=MetricsTokenCreated, status_code=status.HTTP_201_CREATED)
def create_token(session: SessionDep, admin: AdminUser) -> MetricsTokenCreated:
    """A new scrape token, shown in this reply only; the previous one stops working."""
    return MetricsTokenCreated(token=service.create_token(session=session, actor=admin))


@router.delete("", status_code=status.HTTP_204_NO_CONTENT)
def delete_token(session: SessionDep, admin: AdminUser) -> Response:
    """Remove the scrape token: /metrics refuses every scrape until a new one is made."""
    service.delete_token(session=session, actor=admin)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


# Outside the API document: read by Prometheus, not by the UI's generated client.
@scrape_router.get("/metrics", include_in_schema=False)
def metrics(session: SessionDep, authorization: Annotated[str | None, Header()] = None) -> Response:
    """The fleet's figures in the Prometheus text format."""
    try:
        service.check_scrape(session=session, authorization=authorization)
    except NotAuthenticatedError as error:
        return JSONResponse(
            {"detail": error.detail},
            status_code=status.HTTP_401_UNAUTHORIZED,
            headers={"WWW-Authenticate": 'Bearer realm="nginx-fleet metrics"'},
        )
    figures = service.fleet_figures(session=session, push_interval_s=get_settings().push_interval_s)
    return Response(
        render(figures),
        media_type=CONTENT_TYPE_PLAIN_0_0_4,
        headers={"Cache-Control": "no-store"},
    )
