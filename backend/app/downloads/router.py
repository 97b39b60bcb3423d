"""GET /downloads/<file>: the agent's wheel, public (an nginx host has no session; no secret)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import FileResponse

from app.core.config import get_settings
from app.downloads import service

router = APIRouter(prefix=service.DOWNLOADS_PATH, tags=["downloads"])


# Outside the API document like the UI's files: fetched by pip and curl, not by the UI client.
@router.api_route(
    "/{filename}", methods=["GET", "HEAD"], response_class=FileResponse, include_in_schema=False
)
def download(filename: str) -> FileResponse:
    """The agent's wheel; 404 for any other name."""
    wheel = service.agent_wheel_for_download(
        downloads_dir=get_settings().downloads_dir, filename=filename
    )
    return FileResponse(
        wheel.path,
        media_type="application/octet-stream",
        filename=wheel.filename,
        # The name carries the version, but a rebuild of the same version changes the bytes.
        headers={"Cache-Control": "no-cache"},
    )
