"""Which table and bucket width serve a time range in at most ~MAX_POINTS points."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

MAX_POINTS = 500
RAW_INTERVAL_S = 10
# Widths a chart axis reads well; each from 60 up divides into minutes, from 3600 into hours.
NICE_STEPS_S = (
    10, 15, 20, 30,
    60, 120, 180, 300, 600, 900, 1200, 1800,
    3600, 7200, 10800, 21600, 43200,
    86400, 172800, 604800,
)  # fmt: skip


class SeriesSource(enum.StrEnum):
    """Where the points of a series are read from."""

    raw = "raw"
    minute = "1m"
    hour = "1h"

    @property
    def resolution_s(self) -> int:
        """Width of one stored row of this source."""
        return {"raw": RAW_INTERVAL_S, "1m": 60, "1h": 3600}[self.value]


@dataclass(frozen=True, slots=True)
class SeriesPlan:
    """The source table and bucket width of one series query."""

    source: SeriesSource
    step_s: int


def nice_step(span: timedelta, *, minimum_s: int = RAW_INTERVAL_S) -> int:
    """The smallest readable bucket width that keeps span within MAX_POINTS buckets."""
    needed = max(math.ceil(span.total_seconds() / MAX_POINTS), minimum_s)
    for step in NICE_STEPS_S:
        if step >= needed:
            return step
    # Beyond a week per bucket: whole weeks, still a divisor-friendly width.
    return math.ceil(needed / NICE_STEPS_S[-1]) * NICE_STEPS_S[-1]


def plan_series(
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    raw_retention: timedelta,
    minute_retention: timedelta,
) -> SeriesPlan:
    """Pick raw samples while they are kept and fine enough, else the coarsest rollup needed."""
    span = end - start
    step = nice_step(span)
    # Raw rows are kept only so long; past that only rollups can answer.
    if step < SeriesSource.hour.resolution_s and start >= now - raw_retention:
        return SeriesPlan(SeriesSource.raw, step)
    if step < SeriesSource.hour.resolution_s and start >= now - minute_retention:
        return SeriesPlan(SeriesSource.minute, max(step, SeriesSource.minute.resolution_s))
    return SeriesPlan(SeriesSource.hour, max(step, SeriesSource.hour.resolution_s))
