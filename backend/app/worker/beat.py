"""The beat schedule, assembled from each domain's own periodic tasks."""

from __future__ import annotations

from typing import Any

from app.alerts.schedule import ALERTS_SCHEDULE
from app.changes.schedule import CHANGES_SCHEDULE
from app.configs.schedule import CONFIGS_SCHEDULE
from app.hosts.schedule import HOSTS_SCHEDULE
from app.metrics.schedule import METRICS_SCHEDULE
from app.notify.schedule import NOTIFY_SCHEDULE
from app.worker.queues import Queue

HOUR_S = 3600

# auth/ owns the task; its schedule entry lives here until auth ships a schedule module.
AUTH_SCHEDULE: dict[str, dict[str, Any]] = {
    "auth-purge-expired-sessions": {
        "task": "auth.purge_expired_sessions",
        "schedule": HOUR_S,
        "options": {"queue": Queue.maintenance.value, "expires": HOUR_S / 2},
    },
}


def build_beat_schedule() -> dict[str, dict[str, Any]]:
    """Every domain's periodic tasks; a duplicate name is a bug, so it raises."""
    schedule: dict[str, dict[str, Any]] = {}
    for domain_schedule in (
        METRICS_SCHEDULE,
        AUTH_SCHEDULE,
        CONFIGS_SCHEDULE,
        CHANGES_SCHEDULE,
        ALERTS_SCHEDULE,
        NOTIFY_SCHEDULE,
        HOSTS_SCHEDULE,
    ):
        clash = schedule.keys() & domain_schedule.keys()
        if clash:
            raise ValueError(f"beat schedule entries defined twice: {sorted(clash)}")
        schedule.update(domain_schedule)
    return schedule
