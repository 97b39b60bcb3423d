"""Periodic tasks of the hosts domain."""

from __future__ import annotations

from typing import Any

from app.hosts.latest import SORTED_COPY_MAX_AGE
from app.worker.queues import Queue

SORTED_COPIES_INTERVAL_S = int(SORTED_COPY_MAX_AGE.total_seconds())

HOSTS_SCHEDULE: dict[str, dict[str, Any]] = {
    # A host that stopped pushing keeps copies up to SORTED_COPY_MAX_AGE behind its last figures
    # until this runs: its place in the fleet's order matches its figures within two periods.
    "hosts-refresh-sorted-copies": {
        "task": "hosts.refresh_sorted_copies",
        "schedule": SORTED_COPIES_INTERVAL_S,
        "options": {"queue": Queue.maintenance.value, "expires": SORTED_COPIES_INTERVAL_S},
    },
}
