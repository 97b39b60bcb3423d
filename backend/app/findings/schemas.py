"""Acknowledgements and fleet-wide findings as the API shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.core.types import DbId, Text, Timestamp, TrimmedText

SeverityName = Literal["error", "warning", "info"]


class AckCreate(BaseModel):
    """Body of POST /acks: mute a rule, or one finding of it, on one host or fleet-wide."""

    model_config = ConfigDict(extra="forbid")

    rule: Annotated[TrimmedText, StringConstraints(min_length=1, max_length=64)]
    host_id: DbId | None = Field(default=None, description="null: every host of the fleet")
    finding_key: Annotated[Text, StringConstraints(min_length=1, max_length=1200)] | None = Field(
        default=None, description="null: every finding of the rule in scope"
    )
    reason: Annotated[TrimmedText, StringConstraints(min_length=3, max_length=500)]
    expires_at: Timestamp | None = None


class AckRead(BaseModel):
    """An acknowledgement."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    rule: str
    host_id: int | None
    finding_key: str | None
    reason: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None


class TopFinding(BaseModel):
    """One rule across the fleet: how many hosts and findings it hits (muted left out)."""

    rule: str
    severity: SeverityName
    category: str
    hosts: int
    findings: int
    example_message: str
    doc_url: str
