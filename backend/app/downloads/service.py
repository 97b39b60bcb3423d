"""Finding the agent's wheel in the downloads directory and describing it (name, SHA-256)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from app.core.errors import NotFoundError

AGENT_WHEEL_GLOB = "nginx_fleet_agent-*-py3-none-any.whl"
DOWNLOADS_PATH = "/downloads"


class DownloadNotFoundError(NotFoundError):
    """No file of that name is offered for download."""


@dataclass(frozen=True)
class AgentWheel:
    """The agent's wheel as served at /downloads/<filename>."""

    path: Path
    filename: str
    version: str
    sha256: str
    size_bytes: int

    def url(self, *, server_url: str) -> str:
        """Where an nginx host downloads it from this server."""
        return f"{server_url.rstrip('/')}{DOWNLOADS_PATH}/{self.filename}"


@lru_cache(maxsize=8)
def _describe(path: Path, _mtime_ns: int, size: int) -> AgentWheel:
    """Hash a wheel once per version of the file (the cache key includes its mtime and size)."""
    digest = hashlib.sha256()
    with path.open("rb") as wheel:
        for chunk in iter(lambda: wheel.read(1 << 16), b""):
            digest.update(chunk)
    return AgentWheel(
        path=path,
        filename=path.name,
        version=path.name.split("-")[1],
        sha256=digest.hexdigest(),
        size_bytes=size,
    )


def find_agent_wheel(*, downloads_dir: Path) -> AgentWheel | None:
    """The agent's wheel in downloads_dir (the newest if several), or None when none is built."""
    candidates = [p for p in downloads_dir.glob(AGENT_WHEEL_GLOB) if p.is_file()]
    if not candidates:
        return None
    newest = max(candidates, key=lambda p: p.stat().st_mtime_ns)
    stat = newest.stat()
    return _describe(newest.resolve(), stat.st_mtime_ns, stat.st_size)


def agent_wheel_for_download(*, downloads_dir: Path, filename: str) -> AgentWheel:
    """The wheel to send for /downloads/<filename>; nothing else in the directory is served."""
    wheel = find_agent_wheel(downloads_dir=downloads_dir)
    if wheel is None or filename != wheel.filename:
        raise DownloadNotFoundError(f"no download named {filename!r} on this server")
    return wheel
