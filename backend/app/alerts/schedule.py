"""Periodic tasks of the alerts domain."""

from __future__ import annotations

from typing import Any

from app.worker.queues import Queue

EVALUATE_INTERVAL_S = 15

# `expires`: an evaluation still queued when the next one is due is dropped (the next one
# sees the same data and more), so evaluations never pile up behind a slow worker.
ALERTS_SCHEDULE: dict[str, dict[str, Any]] = {
    "alerts-evaluate": {
        "task": "alerts.evaluate",
        "schedule": EVALUATE_INTERVAL_S,
        "options": {"queue": Queue.default.value, "expires": EVALUATE_INTERVAL_S},
    },
}
