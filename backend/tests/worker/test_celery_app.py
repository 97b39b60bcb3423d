"""The Celery app's queues, routes, retry policy and beat schedule."""

from __future__ import annotations

import pytest
from app.worker import beat
from app.worker.celery_app import celery_app
from app.worker.queues import Queue
from app.worker.retry import TRANSIENT_ERRORS


def test_every_periodic_task_expires_and_is_registered() -> None:
    schedule = celery_app.conf.beat_schedule
    assert set(schedule) == {
        "metrics-rollup",
        "metrics-retention",
        "metrics-partitions",
        "metrics-seal-partitions",
        "auth-purge-expired-sessions",
        "configs-reanalyze-fleet",
        "configs-apply-expired-acks",
        "configs-prune",
        "changes-watch",
        "alerts-evaluate",
        "notify-redispatch-overdue",
        "hosts-refresh-sorted-copies",
    }
    celery_app.loader.import_default_modules()
    for entry in schedule.values():
        assert entry["options"]["expires"] <= entry["schedule"]
        assert entry["task"] in celery_app.tasks


def test_duplicate_schedule_names_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(beat, "AUTH_SCHEDULE", {"metrics-rollup": {}})
    with pytest.raises(ValueError, match="metrics-rollup"):
        beat.build_beat_schedule()


@pytest.mark.parametrize(
    ("task", "queue"),
    [
        ("configs.analyze_host", Queue.analysis),
        ("configs.reanalyze_fleet", Queue.maintenance),
        ("configs.apply_expired_acks", Queue.maintenance),
        ("configs.prune", Queue.maintenance),
        ("metrics.rollup", Queue.maintenance),
        ("metrics.apply_retention", Queue.maintenance),
        ("auth.purge_expired_sessions", Queue.maintenance),
        ("hosts.refresh_sorted_copies", Queue.maintenance),
    ],
)
def test_tasks_are_routed_to_their_queue(task: str, queue: Queue) -> None:
    route = celery_app.amqp.router.route({}, task)
    assert route["queue"].name == queue.value


def test_tasks_ack_late_and_retry_only_transient_errors() -> None:
    celery_app.loader.import_default_modules()
    for name in ("configs.analyze_host", "configs.prune", "metrics.rollup", "metrics.rollup_range"):
        task = celery_app.tasks[name]
        assert task.acks_late is True
        retried = tuple(getattr(task, "autoretry_for", ()))
        assert retried == TRANSIENT_ERRORS
        assert ValueError not in retried


def test_broker_follows_the_settings(redis_url: str) -> None:
    assert celery_app.conf.broker_url == redis_url
