"""API shapes of downloads."""

from __future__ import annotations

from pydantic import BaseModel


class AgentWheelRead(BaseModel):
    """The agent's wheel as an nginx host fetches it: where, and the SHA-256 to check."""

    filename: str
    version: str
    url: str
    sha256: str
    size_bytes: int
