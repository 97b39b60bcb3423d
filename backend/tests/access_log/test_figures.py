"""The figures read off summed counters: the hit ratio's definition, shares, absent counters."""

from __future__ import annotations

import pytest
from app.access_log.fields import CACHE_COUNTERS, STATUS_COUNTERS
from app.access_log.figures import get_2xx_share, hit_ratio, status_share

SERVED_FROM_CACHE = ("cache_hit", "cache_stale", "cache_updating", "cache_revalidated")


def counters(**values: int | None) -> dict[str, int | None]:
    """Every counter absent unless given."""
    known: dict[str, int | None] = dict.fromkeys(
        ("requests", "get_2xx", *STATUS_COUNTERS, *CACHE_COUNTERS)
    )
    known.update(values)
    return known


@pytest.mark.parametrize("name", CACHE_COUNTERS)
def test_each_cache_status_counts_as_a_hit_or_not(name: str) -> None:
    ratio = hit_ratio(counters(**{name: 1, "cache_miss": 3 if name != "cache_miss" else 4}))
    assert ratio == (0.25 if name in SERVED_FROM_CACHE else 0.0)


def test_no_cache_status_is_no_ratio() -> None:
    # The format has $upstream_cache_status but every request was "-" (no cache involved):
    # the agent counts none of them, and a ratio over nothing is not 0%.
    assert hit_ratio(counters(cache_hit=0, cache_miss=0)) is None
    assert hit_ratio(counters()) is None


def test_shares_are_over_the_requests_that_had_a_status() -> None:
    figures = counters(requests=120, status_2xx=90, status_4xx=5, status_5xx=5, status_499=2)
    assert status_share(figures, "status_5xx") == pytest.approx(0.05)
    assert status_share(figures, "status_499") == pytest.approx(0.02)
    assert status_share(counters(requests=10), "status_5xx") is None
    assert get_2xx_share(counters(requests=200, get_2xx=150)) == pytest.approx(0.75)
    assert get_2xx_share(counters(requests=200)) is None
