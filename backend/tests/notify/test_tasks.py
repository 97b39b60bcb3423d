"""The notify tasks are registered with the retry policy, and the sweep's schedule expires."""

from __future__ import annotations

from app.notify.schedule import NOTIFY_SCHEDULE
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_ERRORS


def test_tasks_are_registered_ack_late_and_retry_only_transient_errors() -> None:
    celery_app.loader.import_default_modules()
    for name in ("notify.deliver", "notify.redispatch_overdue"):
        task = celery_app.tasks[name]
        assert task.acks_late is True
        assert tuple(getattr(task, "autoretry_for", ())) == TRANSIENT_ERRORS


def test_the_sweep_is_scheduled_and_never_piles_up() -> None:
    celery_app.loader.import_default_modules()
    [entry] = NOTIFY_SCHEDULE.values()
    assert entry["task"] in celery_app.tasks
    assert entry["options"]["expires"] <= entry["schedule"]
