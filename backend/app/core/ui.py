"""Serving the built single-page UI, with index.html for client-side routes."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse

from app.core.errors import NotFoundError

# Paths the UI never answers: API routes and downloads are the backend's, unknown ones are 404s.
UI_RESERVED_ROOTS = ("api", "downloads")


def mount_ui(app: FastAPI, ui_dir: Path) -> None:
    """Serve files from ui_dir at /, falling back to index.html for unknown non-API paths."""
    root = ui_dir.resolve()
    index = root / "index.html"

    @app.get("/{path:path}", include_in_schema=False)
    def serve_ui(path: str, request: Request) -> FileResponse:
        root_segment = path.split("/", 1)[0]
        if root_segment in UI_RESERVED_ROOTS:
            what = "API route" if root_segment == "api" else "download"
            raise NotFoundError(f"no {what} {request.url.path}")
        candidate = (root / path).resolve()
        if path and candidate.is_relative_to(root) and candidate.is_file():
            # Vite fingerprints everything under assets/, so those may be cached for good.
            cache = "public, max-age=31536000, immutable" if path.startswith("assets/") else None
            headers = {"Cache-Control": cache} if cache else {"Cache-Control": "no-cache"}
            return FileResponse(candidate, headers=headers)
        if not index.is_file():
            raise NotFoundError("the UI is not built (make build)")
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
