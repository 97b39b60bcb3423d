"""Periodic tasks of the auth domain, for the beat schedule in app.worker.beat."""

from __future__ import annotations

from typing import Any

from app.worker.queues import Queue

HOUR_S = 3600

AUTH_SCHEDULE: dict[str, dict[str, Any]] = {
    "auth-purge-expired-sessions": {
        "task": "auth.purge_expired_sessions",
        "schedule": HOUR_S,
        # A purge that waited an hour is superseded by the next one.
        "options": {"queue": Queue.maintenance.value, "expires": HOUR_S / 2},
    },
}
