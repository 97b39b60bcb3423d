"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.access_log.router import router as access_log_router
from app.agents.router import router as agents_router
from app.agents.schemas import PushBody
from app.alerts.router import router as alerts_router
from app.api.client_address import trusted_proxies
from app.api.deps import SessionDep
from app.api.middleware import CSRFMiddleware, RequestBodyMiddleware, SecurityHeadersMiddleware
from app.audit.router import router as audit_router
from app.auth.router import router as auth_router
from app.changes.router import router as changes_router
from app.configs.router import router as configs_router
from app.core.config import get_settings
from app.core.db import SessionLocal
from app.core.errors import (
    DATABASE_RETRY_AFTER_S,
    DATABASE_UNAVAILABLE_ERRORS,
    add_error_handlers,
)
from app.core.openapi import document_errors
from app.core.ui import mount_ui
from app.downloads.router import router as downloads_router
from app.enrollment.router import router as enrollment_router
from app.events.router import router as events_router
from app.exposition.router import router as metrics_token_router
from app.exposition.router import scrape_router as metrics_scrape_router
from app.findings.router import router as findings_router
from app.hosts.router import router as hosts_router
from app.metrics.router import router as metrics_router
from app.notify.router import router as notify_router
from app.users import service as users_service
from app.users.router import router as users_router

API_PREFIX = "/api/v1"

log = logging.getLogger(__name__)


class Health(BaseModel):
    """Liveness and database reachability."""

    status: Literal["ok", "degraded"]
    database: Literal["ok", "error"]
    mode: Literal["embedded", "production"]


health_router = APIRouter(tags=["health"])


@health_router.get(
    "/health",
    response_model=Health,
    responses={503: {"model": Health, "description": "The database is unreachable"}},
)
def health(session: SessionDep) -> JSONResponse:
    """Public: is the API up and can it reach its database."""
    try:
        session.execute(text("SELECT 1"))
        database: Literal["ok", "error"] = "ok"
    except SQLAlchemyError:
        log.exception("health check: database unreachable")
        database = "error"
    body = Health(
        status="ok" if database == "ok" else "degraded",
        database=database,
        mode=get_settings().mode,
    )
    if database == "ok":
        return JSONResponse(body.model_dump())
    return JSONResponse(
        body.model_dump(),
        status_code=503,
        headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
    )


def _bootstrap_admin() -> None:
    """Create the bootstrap admin from the environment when no user exists yet."""
    with SessionLocal() as session:
        users_service.bootstrap_admin(session=session, settings=get_settings())


async def _bootstrap_when_database_is_back() -> None:
    """Retry the bootstrap until the database answers (the API serves 503s meanwhile)."""
    while True:
        await asyncio.sleep(DATABASE_RETRY_AFTER_S)
        try:
            await asyncio.to_thread(_bootstrap_admin)
        except DATABASE_UNAVAILABLE_ERRORS:
            continue
        except Exception:
            # What would have stopped the start (a weak bootstrap password, ...): say so.
            log.exception("bootstrap of the admin failed once the database was back")
            return
        log.info("database reachable again: bootstrap done")
        return


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Bootstrap the admin; an API started during a database outage still starts."""
    retry: asyncio.Task[None] | None = None
    try:
        await asyncio.to_thread(_bootstrap_admin)
    except DATABASE_UNAVAILABLE_ERRORS:
        log.warning("database unreachable at start: answering 503 until it is back")
        retry = asyncio.create_task(_bootstrap_when_database_is_back())
    yield
    if retry is not None:
        retry.cancel()


def create_app() -> FastAPI:
    """Build the API (and the UI when it is built) with its middleware."""
    settings = get_settings()
    app = FastAPI(
        title="nginx-fleet",
        version="0.1.0",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    add_error_handlers(app)
    document_errors(app, body_models=(PushBody,))
    # Routes are matched in order: the agents' pushes, most of all requests, are found first.
    routers = (
        health_router,
        agents_router,
        auth_router,
        users_router,
        audit_router,
        enrollment_router,
        hosts_router,
        metrics_router,
        access_log_router,
        configs_router,
        findings_router,
        changes_router,
        alerts_router,
        events_router,
        notify_router,
        metrics_token_router,
    )
    for router in routers:
        app.include_router(router, prefix=API_PREFIX)
    app.include_router(downloads_router)
    app.include_router(metrics_scrape_router)
    # Middleware added last runs first: headers wrap everything, CSRF runs before routing.
    app.add_middleware(RequestBodyMiddleware)
    app.add_middleware(CSRFMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    # Outermost: every layer sees the client's address, taken from X-Forwarded-For only when
    # the peer is a configured proxy (the right-most hop it did not add itself).
    app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=trusted_proxies())
    if settings.ui_dir.is_dir():
        mount_ui(app, settings.ui_dir)
    return app
