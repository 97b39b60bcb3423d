"""HTTP routes the agents call: enrol, push, ping."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from app.agents import service
from app.agents.batch_ingest import UNKNOWN_TOKEN, PushRequest, unauthorized
from app.agents.batcher import push_batcher
from app.agents.payload import PayloadRejected, read_limited
from app.agents.schemas import EnrollReply, EnrollRequest, PingReply, PushReply
from app.core.config import get_settings
from app.core.db import SessionLocal, utcnow
from app.core.deps import SessionDep

router = APIRouter(prefix="/agent", tags=["agent"])

_bearer = HTTPBearer(auto_error=False, description="The host token (nfh_…) from enrolment")


BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _require_token(credentials: HTTPAuthorizationCredentials | None) -> str:
    """The raw bearer token, or 401 when the request has none."""
    if credentials is None:
        raise unauthorized("missing host token (Authorization: Bearer nfh_…)")
    return credentials.credentials


async def _read_body(request: Request, max_bytes: int) -> bytes:
    """The raw body, refused with 413 as soon as it is known to exceed max_bytes."""
    try:
        declared = int(request.headers.get("content-length", "0"))
    except ValueError:
        declared = 0
    try:
        if declared > max_bytes:
            raise PayloadRejected(
                413, f"request body is larger than the limit of {max_bytes} bytes"
            )
        return await read_limited(request.stream(), max_bytes=max_bytes)
    except PayloadRejected as rejected:
        raise HTTPException(rejected.status_code, rejected.detail) from rejected


@router.post(
    "/enroll",
    response_model=EnrollReply,
    status_code=status.HTTP_201_CREATED,
    responses={401: {"description": "The enrolment token is unknown, expired, revoked or used up"}},
)
def enroll(body: EnrollRequest, session: SessionDep) -> EnrollReply:
    """Exchange an enrolment token for a host token (a known agent_id gets a new token)."""
    enrolled = service.enroll(session=session, request=body, now=utcnow())
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
                    "schema": {
                        "type": "object",
                        "description": "The push body of docs/agent-protocol.md; may be sent "
                        "with Content-Encoding: gzip. Read and validated by the route itself, "
                        "so that the size limit holds while the body streams in.",
                    }
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
    return await push_batcher().submit(
        PushRequest(
            token=token, body=body, content_encoding=request.headers.get("content-encoding")
        )
    )


def _ping(token: str) -> PingReply:
    """Authenticate a token (runs in a worker thread)."""
    with SessionLocal() as session:
        host = service.authenticate(session=session, token=token)
        if host is None:
            raise unauthorized(UNKNOWN_TOKEN)
        return PingReply(ok=True, host_id=host.id)


@router.post("/ping", response_model=PingReply)
async def ping(credentials: BearerDep) -> PingReply:
    """Check a host token without sending data."""
    return await run_in_threadpool(_ping, _require_token(credentials))
