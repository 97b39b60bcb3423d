"""Choice of source table and bucket width for series."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from app.metrics.bucketing import MAX_POINTS, SeriesSource, nice_step, plan_series

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
RAW_KEEP = timedelta(days=2)
MINUTE_KEEP = timedelta(days=30)


def plan(span: timedelta, *, ago: timedelta = timedelta(0)) -> tuple[SeriesSource, int]:
    """Plan a range of length span that ends `ago` before NOW."""
    end = NOW - ago
    result = plan_series(
        end - span, end, now=NOW, raw_retention=RAW_KEEP, minute_retention=MINUTE_KEEP
    )
    return result.source, result.step_s


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        (timedelta(minutes=15), (SeriesSource.raw, 10)),
        (timedelta(hours=1), (SeriesSource.raw, 10)),
        (timedelta(hours=6), (SeriesSource.raw, 60)),
        (timedelta(hours=24), (SeriesSource.raw, 180)),
        (timedelta(days=7), (SeriesSource.minute, 1800)),
        (timedelta(days=30), (SeriesSource.hour, 7200)),
        (timedelta(days=365), (SeriesSource.hour, 86400)),
    ],
)
def test_presets_pick_expected_source_and_step(
    span: timedelta, expected: tuple[SeriesSource, int]
) -> None:
    assert plan(span) == expected


@pytest.mark.parametrize(
    "minutes", [1, 7, 15, 61, 359, 1440, 4321, 10080, 43200, 525600, 2_000_000]
)
def test_any_span_fits_in_max_points(minutes: int) -> None:
    span = timedelta(minutes=minutes)
    _source, step = plan(span)
    assert math.ceil(span.total_seconds() / step) <= MAX_POINTS


@pytest.mark.parametrize("minutes", [15, 600, 4321, 43200, 525600])
def test_step_is_a_whole_multiple_of_the_source_resolution(minutes: int) -> None:
    source, step = plan(timedelta(minutes=minutes))
    assert step % source.resolution_s == 0


def test_old_short_range_falls_back_to_minute_rollups() -> None:
    assert plan(timedelta(hours=1), ago=timedelta(days=5)) == (SeriesSource.minute, 60)


def test_range_older_than_minute_retention_reads_hour_rollups() -> None:
    assert plan(timedelta(hours=1), ago=timedelta(days=60)) == (SeriesSource.hour, 3600)


def test_nice_step_never_below_minimum() -> None:
    assert nice_step(timedelta(seconds=30)) == 10
    assert nice_step(timedelta(seconds=30), minimum_s=60) == 60


def test_nice_step_beyond_the_table_uses_whole_weeks() -> None:
    step = nice_step(timedelta(days=3650))
    assert step % 604800 == 0
    assert timedelta(days=3650).total_seconds() / step <= MAX_POINTS
