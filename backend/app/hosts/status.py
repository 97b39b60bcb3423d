"""A host's status as the fleet view shows it."""

from __future__ import annotations

from datetime import datetime, timedelta

from app.hosts.schemas import HostStatus

# A host is stale after this many push intervals without a push: one or two lost pushes are
# normal retries, three in a row mean the agent or the network is gone.
STALE_AFTER_INTERVALS = 3


def _duration(span: timedelta) -> str:
    """A rough human duration: 45 s, 12 min, 3 h, 2 d."""
    seconds = int(span.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def host_status(
    *,
    last_seen_at: datetime | None,
    nginx_up: bool | None,
    stub_status_available: bool | None,
    stub_status_error: str | None,
    now: datetime,
    push_interval_s: int,
) -> tuple[HostStatus, str | None]:
    """(status, reason): new, stale, down or up, in that order of precedence."""
    if last_seen_at is None:
        return "new", "enrolled, waiting for the first push"
    silent = now - last_seen_at
    if silent > timedelta(seconds=STALE_AFTER_INTERVALS * push_interval_s):
        return "stale", f"no push for {_duration(silent)}"
    if nginx_up is False:
        return "down", "nginx is not running"
    if stub_status_available is False:
        return "up", f"stub_status unreadable: {stub_status_error or 'no reason given'}"
    return "up", None
