"""Periodic tasks of the changes domain."""

from __future__ import annotations

from typing import Any

from app.worker.queues import Queue

WATCH_INTERVAL_S = 30

# `expires`: a run still queued when the next one is due is dropped, so runs never pile up.
CHANGES_SCHEDULE: dict[str, dict[str, Any]] = {
    "changes-watch": {
        "task": "changes.watch",
        "schedule": WATCH_INTERVAL_S,
        "options": {"queue": Queue.default.value, "expires": WATCH_INTERVAL_S},
    },
}
