"""The Celery queues, named in one place."""

from __future__ import annotations

import enum


class Queue(enum.StrEnum):
    """Queues a worker consumes; split so slow analysis never delays housekeeping."""

    default = "default"
    analysis = "analysis"
    maintenance = "maintenance"
