"""The retry policy shared by tasks: retry only what a later attempt can fix."""

from __future__ import annotations

from typing import Any

import redis.exceptions
import sqlalchemy.exc

# Lost connections and timeouts heal on their own; bugs and bad data do not, so they fail fast.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    sqlalchemy.exc.TimeoutError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ConnectionError,
    TimeoutError,
)

# Keyword arguments of @celery_app.task for every task of this project.
TRANSIENT_RETRY_POLICY: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": 5,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 5,
}
