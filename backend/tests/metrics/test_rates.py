"""Rates derived from consecutive stub_status counters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from app.metrics.rates import (
    MAX_RATE_GAP,
    NO_RATES,
    CounterReading,
    Rates,
    derive_rate_series,
    derive_rates,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def reading(
    seconds: float, accepts: int | None, handled: int | None, requests: int | None
) -> CounterReading:
    """A reading `seconds` after T0."""
    return CounterReading(
        ts=T0 + timedelta(seconds=seconds), accepts=accepts, handled=handled, requests=requests
    )


def test_steady_growth_gives_per_second_rates() -> None:
    rates = derive_rates(reading(0, 100, 100, 500), reading(10, 150, 150, 800))
    assert rates == Rates(req_per_s=30.0, accepts_per_s=5.0, drops_per_s=0.0)


def test_drops_are_accepted_minus_handled_growth() -> None:
    rates = derive_rates(reading(0, 1000, 900, 5000), reading(10, 1400, 1000, 5100))
    assert rates.drops_per_s == pytest.approx(30.0)
    assert rates.accepts_per_s == pytest.approx(40.0)


def test_drops_never_negative_when_handled_outgrows_accepts() -> None:
    rates = derive_rates(reading(0, 100, 99, 10), reading(10, 101, 101, 12))
    assert rates.drops_per_s == 0.0


def test_no_previous_sample_gives_no_rates() -> None:
    assert derive_rates(None, reading(0, 1, 1, 1)) == NO_RATES


@pytest.mark.parametrize("current_missing", [True, False])
def test_missing_counters_give_no_rates(current_missing: bool) -> None:
    full = reading(0, 10, 10, 10)
    partial = reading(10, None, None, None)
    pair = (full, partial) if current_missing else (reading(-10, None, 5, 5), full)
    assert derive_rates(*pair) == NO_RATES


@pytest.mark.parametrize("seconds", [0, -5])
def test_non_positive_interval_gives_no_rates(seconds: float) -> None:
    assert derive_rates(reading(0, 1, 1, 1), reading(seconds, 2, 2, 2)) == NO_RATES


def test_restart_counts_new_values_from_zero() -> None:
    # nginx restarted: every counter is below its old value and started again at zero.
    rates = derive_rates(reading(0, 5000, 5000, 20000), reading(10, 20, 20, 100))
    assert rates == Rates(req_per_s=10.0, accepts_per_s=2.0, drops_per_s=0.0)


def test_one_counter_lower_is_enough_to_detect_a_restart() -> None:
    # requests went down while accepts happened to pass its old value: still a restart.
    rates = derive_rates(reading(0, 100, 100, 10_000), reading(10, 300, 280, 600))
    assert rates.req_per_s == pytest.approx(60.0)
    assert rates.accepts_per_s == pytest.approx(30.0)
    assert rates.drops_per_s == pytest.approx(2.0)


def test_gap_averages_over_the_whole_interval() -> None:
    # Two missed samples: 30 s elapsed, the growth is spread over all of it.
    rates = derive_rates(reading(0, 0, 0, 0), reading(30, 300, 300, 900))
    assert rates.req_per_s == pytest.approx(30.0)


def test_gap_beyond_the_limit_gives_no_rates() -> None:
    beyond = MAX_RATE_GAP.total_seconds() + 1
    assert derive_rates(reading(0, 0, 0, 0), reading(beyond, 10, 10, 10)) == NO_RATES


def test_gap_exactly_at_the_limit_still_has_rates() -> None:
    limit = MAX_RATE_GAP.total_seconds()
    rates = derive_rates(reading(0, 0, 0, 0), reading(limit, 60, 60, 600))
    assert rates.req_per_s == pytest.approx(600 / limit)


def test_custom_max_gap_is_honoured() -> None:
    rates = derive_rates(reading(0, 0, 0, 0), reading(20, 1, 1, 1), max_gap=timedelta(seconds=15))
    assert rates == NO_RATES


def test_series_chains_each_reading_to_the_one_before() -> None:
    readings = [reading(10, 10, 10, 10), reading(20, 20, 20, 30), reading(30, 5, 5, 5)]
    rates = list(derive_rate_series(readings, before=reading(0, 0, 0, 0)))
    assert [r.req_per_s for r in rates] == [1.0, 2.0, 0.5]


def test_series_without_a_before_reading_starts_without_rates() -> None:
    rates = list(derive_rate_series([reading(0, 0, 0, 0), reading(10, 10, 10, 10)]))
    assert rates[0] == NO_RATES
    assert rates[1].req_per_s == 1.0
