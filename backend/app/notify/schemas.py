"""Channels and deliveries as the API shows them (docs/alerts.md, section 5)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.core.types import Text, bounded_json, refuse_nul
from app.notify.kinds import ChannelKind
from app.notify.models import DeliveryStatus
from app.notify.notification import NotificationEvent

MAX_SECRET_CHARS = 4096

# Constraints first: on Text (itself Annotated), stripping would run after the length check.
ChannelName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    AfterValidator(refuse_nul),
]
SecretName = Annotated[Text, StringConstraints(min_length=1, max_length=64)]
SecretValue = Annotated[Text, StringConstraints(max_length=MAX_SECRET_CHARS)]


class ChannelWrite(BaseModel):
    """Body of POST and PUT /alerts/channels: the whole channel; secrets are write-only."""

    model_config = ConfigDict(extra="forbid")

    name: ChannelName
    kind: ChannelKind
    enabled: bool = True
    settings: Annotated[dict[str, Any], AfterValidator(bounded_json)] = Field(
        default_factory=dict, description="by kind: see docs/alerts.md"
    )
    secrets: dict[SecretName, SecretValue] = Field(
        default_factory=dict,
        max_length=8,
        description="an omitted secret keeps its value, an empty string clears it",
    )


class ChannelRead(BaseModel):
    """A channel without its secrets: only the names of those that are set."""

    id: int
    name: str
    kind: ChannelKind
    enabled: bool
    settings: dict[str, Any]
    secrets_set: list[str]


class DeliveryAttemptRead(BaseModel):
    """One attempt of a delivery."""

    model_config = ConfigDict(from_attributes=True)

    n: int
    at: datetime
    ok: bool
    status_code: int | None
    error: str | None
    duration_ms: int


class DeliveryRead(BaseModel):
    """A notification to one channel, with its attempts."""

    id: int
    channel_id: int
    channel_name: str
    kind: ChannelKind
    event: NotificationEvent
    rule_key: str
    incident_ids: list[int]
    status: DeliveryStatus
    created_at: datetime
    attempts: list[DeliveryAttemptRead]
