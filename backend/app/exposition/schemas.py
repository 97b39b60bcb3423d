"""API shapes of the metrics token."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class MetricsTokenState(BaseModel):
    """Whether a scrape token is set, and since when; never the token."""

    set: bool
    created_at: datetime | None


class MetricsTokenCreated(BaseModel):
    """A new scrape token, shown in this reply only."""

    token: str
