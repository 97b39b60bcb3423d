"""Counter growth over the metrics window survives nginx restarts."""

from __future__ import annotations

from app.configs.window import counter_growth, paired_growth


def test_counter_growth_sums_increases() -> None:
    assert counter_growth([10, 15, 15, 40]) == 30.0


def test_counter_growth_after_a_restart_counts_from_zero() -> None:
    # 100 -> 120 (+20), restart, 5 (+5), 9 (+4).
    assert counter_growth([100, 120, 5, 9]) == 29.0


def test_counter_growth_needs_two_readings() -> None:
    assert counter_growth([None, 7, None]) is None


def test_paired_growth_restarts_both_counters_together() -> None:
    # Only accepts goes down, handled happens to be higher: still one restart of both.
    accepts, handled = paired_growth([(100, 90), (110, 95), (8, 100), (12, 104)])
    assert accepts == 10 + 8 + 4
    assert handled == 5 + 100 + 4
