"""HTTP endpoints of enrolment tokens (admin)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from app.api.deps import AdminUser, SessionDep
from app.core.config import get_settings
from app.core.types import IdPath
from app.downloads import service as downloads
from app.downloads.schemas import AgentWheelRead
from app.enrollment import service
from app.enrollment.schemas import (
    EnrollmentTokenCreate,
    EnrollmentTokenCreated,
    EnrollmentTokenRead,
)

router = APIRouter(prefix="/enrollment-tokens", tags=["enrollment"])


def _server_url(request: Request) -> str:
    """The address agents should use: NGINX_FLEET_PUBLIC_URL, else how this request came in."""
    return get_settings().public_url or str(request.base_url)


@router.post("", response_model=EnrollmentTokenCreated, status_code=status.HTTP_201_CREATED)
def create_token(
    body: EnrollmentTokenCreate, request: Request, admin: AdminUser, session: SessionDep
) -> EnrollmentTokenCreated:
    """Issue an enrolment token; its secret is in this reply only."""
    issued = service.issue_token(
        session=session,
        actor=admin,
        labels=body.labels,
        expires_in_hours=body.expires_in_hours,
        max_uses=body.max_uses,
    )
    server_url = _server_url(request)
    wheel = downloads.find_agent_wheel(downloads_dir=get_settings().downloads_dir)
    wheel_read = (
        None
        if wheel is None
        else AgentWheelRead(
            filename=wheel.filename,
            version=wheel.version,
            url=wheel.url(server_url=server_url),
            sha256=wheel.sha256,
            size_bytes=wheel.size_bytes,
        )
    )
    return EnrollmentTokenCreated(
        id=issued.row.id,
        token=issued.token,
        expires_at=issued.row.expires_at,
        max_uses=issued.row.max_uses,
        labels=issued.row.labels,
        agent_wheel=wheel_read,
        install_command=(
            None
            if wheel_read is None
            else service.install_command(wheel_url=wheel_read.url, sha256=wheel_read.sha256)
        ),
        enroll_command=service.enroll_command(server_url=server_url, token=issued.token),
    )


@router.get("", response_model=list[EnrollmentTokenRead])
def list_tokens(_admin: AdminUser, session: SessionDep) -> list[EnrollmentTokenRead]:
    """Every token, without secrets."""
    return [EnrollmentTokenRead.model_validate(row) for row in service.list_tokens(session=session)]


@router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(token_id: IdPath, admin: AdminUser, session: SessionDep) -> Response:
    """Revoke a token."""
    service.revoke_token(session=session, actor=admin, token_id=token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
