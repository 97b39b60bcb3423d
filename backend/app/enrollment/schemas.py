"""API shapes of enrolment tokens."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.agents.labels import Labels
from app.downloads.schemas import AgentWheelRead

MAX_EXPIRY_HOURS = 24 * 365


class EnrollmentTokenCreate(BaseModel):
    """Options of a new enrolment token."""

    labels: Labels = Field(default_factory=dict)
    expires_in_hours: int = Field(default=24, ge=1, le=MAX_EXPIRY_HOURS)
    max_uses: int = Field(default=1, ge=1, le=100_000)


class EnrollmentTokenRead(BaseModel):
    """A token without its secret."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    labels: dict[str, str]
    created_at: datetime
    expires_at: datetime
    uses: int
    max_uses: int
    revoked: bool


class EnrollmentTokenCreated(BaseModel):
    """A new token with its secret (shown only in this reply) and the commands that use it."""

    id: int
    token: str
    expires_at: datetime
    max_uses: int
    labels: dict[str, str]
    agent_wheel: AgentWheelRead | None = Field(
        description="The agent's wheel served by this server; null when it is not built"
    )
    install_command: str | None = Field(
        description="Installs the agent from agent_wheel, checking its SHA-256; null without it"
    )
    enroll_command: str
