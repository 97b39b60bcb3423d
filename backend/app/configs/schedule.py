"""Periodic tasks of the configs domain."""

from __future__ import annotations

from typing import Any

from app.worker.queues import Queue

REANALYZE_INTERVAL_S = 300
ACK_EXPIRY_INTERVAL_S = 60
PRUNE_INTERVAL_S = 600

# `expires`: a run still queued when the next one is due is dropped, so runs never pile up.
# On the maintenance queue, not behind the analysis backlog they feed or would wait for.
CONFIGS_SCHEDULE: dict[str, dict[str, Any]] = {
    "configs-reanalyze-fleet": {
        "task": "configs.reanalyze_fleet",
        "schedule": REANALYZE_INTERVAL_S,
        "options": {"queue": Queue.maintenance.value, "expires": REANALYZE_INTERVAL_S},
    },
    "configs-apply-expired-acks": {
        "task": "configs.apply_expired_acks",
        "schedule": ACK_EXPIRY_INTERVAL_S,
        "options": {"queue": Queue.maintenance.value, "expires": ACK_EXPIRY_INTERVAL_S},
    },
    "configs-prune": {
        "task": "configs.prune",
        "schedule": PRUNE_INTERVAL_S,
        "options": {"queue": Queue.maintenance.value, "expires": PRUNE_INTERVAL_S},
    },
}
