"""Periodic tasks of the notify domain (added to the beat schedule by app.worker.beat)."""

from __future__ import annotations

from typing import Any

from app.worker.queues import Queue

REDISPATCH_INTERVAL_S = 60

# `expires`: a run still queued when the next one is due is dropped, so runs never pile up.
NOTIFY_SCHEDULE: dict[str, dict[str, Any]] = {
    "notify-redispatch-overdue": {
        "task": "notify.redispatch_overdue",
        "schedule": REDISPATCH_INTERVAL_S,
        "options": {"queue": Queue.maintenance.value, "expires": REDISPATCH_INTERVAL_S - 5},
    },
}
