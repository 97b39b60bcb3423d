"""Periodic metrics tasks: rollups every minute, retention every hour."""

from __future__ import annotations

from typing import Any

from app.worker.queues import Queue

MINUTE_S = 60
HOUR_S = 3600

# `expires` drops runs that waited longer than their period, so a stalled worker never
# finds a pile of identical rollups when it comes back.
METRICS_SCHEDULE: dict[str, dict[str, Any]] = {
    "metrics-rollup": {
        "task": "metrics.rollup",
        "schedule": MINUTE_S,
        "options": {"queue": Queue.maintenance.value, "expires": MINUTE_S - 5},
    },
    "metrics-retention": {
        "task": "metrics.apply_retention",
        "schedule": HOUR_S,
        "options": {"queue": Queue.maintenance.value, "expires": HOUR_S / 2},
    },
}
