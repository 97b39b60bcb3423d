"""Periodic tasks of the configs domain."""

from __future__ import annotations

from typing import Any

from app.worker.queues import Queue

REANALYZE_INTERVAL_S = 300
ACK_EXPIRY_INTERVAL_S = 60

# `expires`: a run still queued when the next one is due is dropped, so runs never pile up.
CONFIGS_SCHEDULE: dict[str, dict[str, Any]] = {
    "configs-reanalyze-fleet": {
        "task": "configs.reanalyze_fleet",
        "schedule": REANALYZE_INTERVAL_S,
        "options": {"queue": Queue.analysis.value, "expires": REANALYZE_INTERVAL_S},
    },
    "configs-apply-expired-acks": {
        "task": "configs.apply_expired_acks",
        "schedule": ACK_EXPIRY_INTERVAL_S,
        "options": {"queue": Queue.analysis.value, "expires": ACK_EXPIRY_INTERVAL_S},
    },
}
