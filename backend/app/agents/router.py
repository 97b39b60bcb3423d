"""HTTP routes the agents call: enrol, push, ping."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.agents import service
from app.agents.ingest import AgentMismatchError, ingest_push
from app.agents.payload import PayloadRejected, decode_body, parse_push_payload, read_limited
from app.agents.schemas import EnrollReply, EnrollRequest, PingReply, PushPayload, PushReply
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.deps import SessionDep

router = APIRouter(prefix="/agent", tags=["agent"])

_bearer = HTTPBearer(auto_error=False, description="The host token (nfh_…) from enrolment")


def authenticated_host(
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> service.AuthenticatedHost:
    """The host of the request's bearer token; 401 when missing or unknown."""
    if credentials is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing host token (Authorization: Bearer nfh_…)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    host = service.authenticate(session=session, token=credentials.credentials)
    if host is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "unknown or revoked host token; enrol the agent again",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return host


HostDep = Annotated[service.AuthenticatedHost, Depends(authenticated_host)]


async def push_payload(request: Request) -> PushPayload:
    """The push body, size-limited while it streams in, gunzipped within the limit, validated."""
    max_bytes = get_settings().ingest_max_bytes
    try:
        declared = int(request.headers.get("content-length", "0"))
    except ValueError:
        declared = 0
    try:
        if declared > max_bytes:
            raise PayloadRejected(
                413, f"request body is larger than the limit of {max_bytes} bytes"
            )
        body = await read_limited(request.stream(), max_bytes=max_bytes)
        raw = decode_body(
            body, content_encoding=request.headers.get("content-encoding"), max_bytes=max_bytes
        )
        return parse_push_payload(raw)
    except PayloadRejected as rejected:
        raise HTTPException(rejected.status_code, rejected.detail) from rejected


@router.post("/enroll", response_model=EnrollReply, status_code=status.HTTP_201_CREATED)
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
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/PushPayload"}}
            },
        }
    },
)
def push(
    session: SessionDep,
    host: HostDep,
    payload: Annotated[PushPayload, Depends(push_payload)],
) -> PushReply:
    """Store samples (idempotent on agent_id + seq), facts and config; reply pending work."""
    try:
        return ingest_push(session=session, host=host, payload=payload, now=utcnow())
    except AgentMismatchError as mismatch:
        raise HTTPException(status.HTTP_403_FORBIDDEN, str(mismatch)) from mismatch


@router.post("/ping", response_model=PingReply)
def ping(host: HostDep) -> PingReply:
    """Check a host token without sending data."""
    return PingReply(ok=True, host_id=host.id)
