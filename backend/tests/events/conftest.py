"""Each test of the live streams listens on a Redis channel of its own.

Pub/sub channels are shared by every database of a Redis server, so other test sessions on the
same server would otherwise publish into these tests (with host ids that collide)."""

from __future__ import annotations

import secrets

import pytest
from app.core.config import Settings


@pytest.fixture(autouse=True)
def private_channel(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> str:
    """A channel name no other test or session publishes on."""
    channel = f"{settings.events_channel}:test-{secrets.token_hex(6)}"
    monkeypatch.setattr(settings, "events_channel", channel)
    return channel
