"""The one Celery app of nginx-fleet: broker, queues, routing and beat schedule."""

from __future__ import annotations

from typing import Any

from celery import Celery
from kombu import Queue as KombuQueue

from app.core.config import get_settings
from app.worker.beat import build_beat_schedule
from app.worker.priority import add_nice_option
from app.worker.queues import Queue

# app.models first: every mapped table must be known before a task's first query resolves
# foreign keys (a worker imports only these modules, not the API's routers).
TASK_MODULES = [
    "app.models",
    "app.auth.tasks",
    "app.configs.tasks",
    "app.metrics.tasks",
    "app.hosts.tasks",
    "app.changes.tasks",
    "app.alerts.tasks",
    "app.notify.tasks",
]


class CeleryConfig:
    """Celery settings; the broker is read from the app settings on every use, not at import,
    so that a process which changes its environment after importing this module (tests, the
    CLI) still talks to the right broker."""

    task_queues = [KombuQueue(queue.value) for queue in Queue]
    task_default_queue = Queue.default.value
    # Exact names are matched before globs: only the per-host analyses go to `analysis`, so the
    # periodic configs tasks are not queued behind a backlog of them.
    task_routes = {
        "configs.analyze_host": {"queue": Queue.analysis.value},
        "configs.*": {"queue": Queue.maintenance.value},
        "metrics.*": {"queue": Queue.maintenance.value},
        "auth.*": {"queue": Queue.maintenance.value},
        "hosts.*": {"queue": Queue.maintenance.value},
    }
    # Results live in the tables the tasks write; nothing reads Celery results.
    task_ignore_result = True
    task_acks_late = True
    task_reject_on_worker_lost = True
    # One message at a time: a long analysis must not hold back messages another worker could take.
    worker_prefetch_multiplier = 1
    task_serializer = "json"
    accept_content = ["json"]
    timezone = "UTC"
    enable_utc = True
    broker_connection_retry_on_startup = True

    @property
    def broker_url(self) -> str:
        """Redis in production, kombu's SQLAlchemy transport on SQLite when embedded."""
        return get_settings().celery_broker_url

    @property
    def beat_schedule(self) -> dict[str, dict[str, Any]]:
        """Every domain's periodic tasks."""
        return build_beat_schedule()


def create_celery_app() -> Celery:
    """Build the Celery app configured by CeleryConfig."""
    app = Celery("nginx_fleet", include=TASK_MODULES)
    app.config_from_object(CeleryConfig())
    add_nice_option(app)
    return app


celery_app = create_celery_app()
