"""`celery worker --nice N`: a worker whose work can wait yields the CPU to the API and the
database (the analysis worker in docker-compose.yml: a re-analysis round of a big fleet would
otherwise take a fair share of every core from the pushes and the pages)."""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery, bootsteps
from click import Option

log = logging.getLogger(__name__)

NICE_OPTION = Option(
    ("--nice",),
    type=int,
    default=0,
    show_default=True,
    help="Raise the worker's niceness by N (0-19) before its pool starts; its children inherit it.",
)


class Niceness(bootsteps.StartStopStep):
    """Applies --nice in the worker's main process, before the pool forks its children."""

    def __init__(self, parent: Any, nice: int = 0, **options: Any) -> None:
        super().__init__(parent, **options)
        if not 0 <= nice <= 19:
            raise ValueError(f"--nice must be within 0-19, got {nice}")
        if nice:
            niceness = os.nice(nice)
            log.info("worker niceness raised by %d to %d", nice, niceness)


def add_nice_option(app: Celery) -> None:
    """Give `celery worker` of this app the --nice option."""
    app.user_options["worker"].add(NICE_OPTION)
    app.steps["worker"].add(Niceness)
