"""Periodic metrics tasks: rollups every minute; retention, partitions ahead and sealing of
ended partitions every hour."""

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
    # Partitions exist days ahead (app.core.partitions.DEFAULT_AHEAD): hourly runs leave a
    # stopped beat days to come back before rows fall into the DEFAULT partitions.
    "metrics-partitions": {
        "task": "metrics.create_partitions",
        "schedule": HOUR_S,
        "options": {"queue": Queue.maintenance.value, "expires": HOUR_S / 2},
    },
    # A 6-hour samples partition at 10,000 hosts takes a minute or two to reindex: hourly runs
    # seal each one within the hour after SEAL_AFTER (app.metrics.partitioning).
    "metrics-seal-partitions": {
        "task": "metrics.seal_partitions",
        "schedule": HOUR_S,
        "options": {"queue": Queue.maintenance.value, "expires": HOUR_S / 2},
    },
}
