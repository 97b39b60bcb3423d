"""HTTP routes the agents call: enrol, push, ping."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from app.agents import service
from app.agents.batch_ingest import PushRequest
from app.agents.batcher import push_batcher
from app.agents.errors import MISSING_TOKEN, UNKNOWN_TOKEN, HostTokenError
from app.agents.payload import read_limited, too_large
from app.agents.schemas import EnrollReply, EnrollRequest, PingReply, PushBody, PushReply
from app.api.deps import SessionDep
from app.core.config import get_settings
from app.core.db import SessionLocal, utcnow

router = APIRouter(prefix="/agent", tags=["agent"])

_bearer = HTTPBearer(auto_error=False, description="The host token (nfh_…) from enrolment")


BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _unauthorized(detail: str) -> HTTPException:
    """A 401 that tells the client to use a bearer token."""
    return HTTPException(
        status.HTTP_401_UNAUTHORIZED, detail, headers={"WWW-Authenticate": "Bearer"}
    )


def _require_token(credentials: HTTPAuthorizationCredentials | None) -> str:
    """The raw bearer token, or 401 when the request has none."""
    if credentials is None:
        raise _unauthorized(MISSING_TOKEN)
    return credentials.credentials


async def _read_body(request: Request, max_bytes: int) -> bytes:
    """The raw body, refused with 413 as soon as it is known to exceed max_bytes."""
    try:
        declared = int(request.headers.get("content-length", "0"))
    except ValueError:
        declared = 0
    if declared > max_bytes:
        raise too_large(max_bytes, "request body")
    return await read_limited(request.stream(), max_bytes=max_bytes)


@router.post(
    "/enroll",
    response_model=EnrollReply,
    status_code=status.HTTP_201_CREATED,
    responses={
        401: {"description": "The enrolment token is unknown, expired, revoked or used up"},
        409: {"description": "The agent_id is enrolled and the host's current token is missing"},
    },
)
def enroll(body: EnrollRequest, session: SessionDep, credentials: BearerDep) -> EnrollReply:
    """Exchange an enrolment token for a host token.

    Re-enrolling a known agent_id rotates its token only with the host's current token as
    Authorization: Bearer nfh_… (or after an admin reset its enrolment); otherwise 409."""
    enrolled = service.enroll(
        session=session,
        request=body,
        presented_host_token=credentials.credentials if credentials else None,
        now=utcnow(),
    )
    return EnrollReply(
        host_id=enrolled.host_id,
        host_token=enrolled.host_token,
        push_interval_s=get_settings().push_interval_s,
    )


@router.post(
    "/push",
    response_model=PushReply,
    responses={
        403: {"description": "The token belongs to another agent_id"},
        413: {"description": "The body (or its decompressed form) is larger than the limit"},
        422: {"description": "The body is not a valid push; detail names the fields"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    # Read and validated by the route itself, so that the size limit holds
                    # while the body streams in (it may be sent with Content-Encoding: gzip).
                    "schema": {"$ref": f"#/components/schemas/{PushBody.__name__}"}
                }
            },
        }
    },
)
async def push(request: Request, credentials: BearerDep) -> PushReply:
    """Store samples (idempotent on agent_id + seq), facts and config; reply pending work."""
    # The hot path of the fleet: concurrent pushes are stored together, one worker thread hop
    # and one commit per batch instead of per push (group commit).
    token = _require_token(credentials)
    body = await _read_body(request, get_settings().ingest_max_bytes)
    try:
        return await push_batcher().submit(
            PushRequest(
                token=token, body=body, content_encoding=request.headers.get("content-encoding")
            )
        )
    except HostTokenError as refused:
        raise _unauthorized(refused.detail) from refused


def _ping(token: str) -> PingReply:
    """Authenticate a token (runs in a worker thread)."""
    with SessionLocal() as session:
        host = service.authenticate(session=session, token=token)
        if host is None:
            raise HostTokenError(UNKNOWN_TOKEN)
        return PingReply(ok=True, host_id=host.id)


@router.post("/ping", response_model=PingReply)
async def ping(credentials: BearerDep) -> PingReply:
    """Check a host token without sending data."""
    try:
        return await run_in_threadpool(_ping, _require_token(credentials))
    except HostTokenError as refused:
        raise _unauthorized(refused.detail) from refused
