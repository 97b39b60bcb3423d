"""Full-jitter exponential backoff."""

from __future__ import annotations

import random

import pytest
from nginx_fleet_agent.backoff import Backoff


def test_delays_stay_under_a_doubling_capped_ceiling() -> None:
    backoff = Backoff(base_s=1.0, cap_s=30.0, rng=random.Random(7))
    for failures in range(40):
        ceiling = min(30.0, 2.0**failures)
        assert backoff.ceiling() == ceiling
        assert 0.0 <= backoff.next_delay() <= ceiling


def test_jitter_spreads_delays_over_the_whole_range() -> None:
    delays = []
    for seed in range(200):
        backoff = Backoff(base_s=1.0, cap_s=8.0, rng=random.Random(seed))
        backoff.failures = 10
        delays.append(backoff.next_delay())
    assert min(delays) < 1.0
    assert max(delays) > 7.0
    assert max(delays) <= 8.0


def test_reset_returns_to_the_base_delay() -> None:
    backoff = Backoff(base_s=0.5, cap_s=60.0)
    for _ in range(5):
        backoff.next_delay()
    assert backoff.ceiling() == 16.0
    backoff.reset()
    assert backoff.failures == 0
    assert backoff.next_delay() <= 0.5


def test_ceiling_survives_very_long_outages() -> None:
    backoff = Backoff(base_s=1.0, cap_s=300.0)
    backoff.failures = 10_000
    assert backoff.ceiling() == 300.0


@pytest.mark.parametrize(("base", "cap"), [(0.0, 1.0), (2.0, 1.0)])
def test_bad_bounds_are_refused(base: float, cap: float) -> None:
    with pytest.raises(ValueError, match="backoff"):
        Backoff(base_s=base, cap_s=cap)
