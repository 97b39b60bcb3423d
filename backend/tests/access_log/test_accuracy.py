"""Rollup sketches at 2%: stored rollups, mixed with rows and rollups of 1% bins, give every
quantile within the bound the bins' math gives, against the exact quantile of all values."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest
from app.access_log.aggregate import ROLLUP_LEVEL, SketchCounts
from app.access_log.packed import level_of, pack, pack_protocol
from nginx_fleet_analyzer.latency_sketch import (
    ALPHA,
    Sketch,
    coarser_bins,
    exact_quantile,
    level_alpha,
    nearest_rank,
)

from tests.access_log.factories import sketch_json

# A protocol bin holds (g^(i-1), g^i], g = (1+ALPHA)/(1-ALPHA); a rollup bin two of them, so
# the ratio of its bounds is G = g^2. Its value 2G^j/(G+1) is the harmonic mean of its bounds
# (G^(j-1), G^j]: (G-1)/(G+1) above the lower one and below the upper one, so within that of
# anything in the bin, and the nearest-rank quantile lies in the bin whose value is read.
G = ((1 + ALPHA) / (1 - ALPHA)) ** 2
BOUND = (G - 1) / (G + 1)
# Bin bounds are powers computed in floating point.
ROUNDING = 1e-9
QUANTILES = (0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0)
# Requests of a site in one 10 s row, rows per minute.
PER_ROW, ROWS_PER_MINUTE = 60, 6


def heavy_tailed(rng: random.Random) -> float:
    """Pareto (shape 1.1) from 5 ms, logged to the millisecond as nginx does."""
    return round(0.005 * rng.paretovariate(1.1), 3)


def bimodal(rng: random.Random) -> float:
    """Cache hits around 2 ms and upstream answers around 1.5 s."""
    median = 0.002 if rng.random() < 0.7 else 1.5
    return median * rng.lognormvariate(0, 0.3)


def all_equal(rng: random.Random) -> float:
    return 0.25


def tiny(rng: random.Random) -> float:
    """Microseconds: negative bin indexes far from 0."""
    return 3e-6 * rng.lognormvariate(0, 1)


def mostly_zero(rng: random.Random) -> float:
    """Answers from memory logged as 0.000, now and then a slow one."""
    return 0.0 if rng.random() < 0.97 else rng.uniform(0.01, 3.0)


def all_zero(rng: random.Random) -> float:
    return 0.0


def wide(rng: random.Random) -> float:
    """Log-uniform over 10^-4 to 10^3 s: every bin of the range is filled."""
    return 10 ** rng.uniform(-4, 3)


DISTRIBUTIONS: dict[str, Callable[[random.Random], float]] = {
    "heavy-tailed": heavy_tailed,
    "bimodal": bimodal,
    "all-equal": all_equal,
    "tiny": tiny,
    "mostly-zero": mostly_zero,
    "all-zero": all_zero,
    "wide": wide,
}


def raw_rows(values: list[float]) -> list[bytes]:
    """The sketches of the values as raw rows store them: PER_ROW values a row, 1% bins."""
    return [
        pack_protocol(sketch_json(values[at : at + PER_ROW]))
        for at in range(0, len(values), PER_ROW)
    ]


def minute_rollups(rows: list[bytes], *, before: bool) -> list[bytes]:
    """Each minute's rows summed as the rollups store them now, or (`before`) as they were
    stored before ROLLUP_LEVEL: 1% bins, deflated."""
    minutes = []
    for at in range(0, len(rows), ROWS_PER_MINUTE):
        counts = SketchCounts()
        for row in rows[at : at + ROWS_PER_MINUTE]:
            counts.add(row)
        stored = pack(counts.zero, counts.bins, deflate=True) if before else counts.packed()
        assert stored is not None
        minutes.append(stored)
    return minutes


def summed(stored: list[bytes]) -> SketchCounts:
    """Stored sketches added up as every reader does."""
    counts = SketchCounts()
    for data in stored:
        counts.add(data)
    return counts


def assert_within_bound(sketch: Sketch, values: list[float]) -> None:
    """Every tested quantile is within BOUND of the exact one over the values."""
    assert sketch.count == len(values)
    for q in QUANTILES:
        estimate, truth = sketch.quantile(q), exact_quantile(values, q)
        assert estimate is not None and truth is not None
        assert abs(estimate - truth) <= BOUND * truth * (1 + ROUNDING), (q, estimate, truth)


def test_the_bound_is_twice_alpha_over_one_plus_alpha_squared() -> None:
    assert math.isclose(BOUND, 2 * ALPHA / (1 + ALPHA**2), rel_tol=1e-12)
    assert math.isclose(level_alpha(ROLLUP_LEVEL), BOUND, rel_tol=1e-12)
    assert 0.0199 < BOUND < 0.02


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_an_hour_of_mixed_rollups_gives_every_quantile_within_the_bound(name: str) -> None:
    rng = random.Random(name)
    draw = DISTRIBUTIONS[name]
    # An hour: 60 minutes of 6 rows of 60 requests.
    values = [draw(rng) for _ in range(60 * ROWS_PER_MINUTE * PER_ROW)]
    rows = raw_rows(values)
    # The first 20 minutes were rolled up before ROLLUP_LEVEL (1% bins), the rest after it.
    split = 20 * ROWS_PER_MINUTE
    minutes = minute_rollups(rows[:split], before=True) + minute_rollups(rows[split:], before=False)
    assert {level_of(data) for data in minutes} == {0, ROLLUP_LEVEL}
    hour = summed(minutes).packed()
    assert hour is not None and level_of(hour) == ROLLUP_LEVEL
    read = summed([hour]).sketch()
    assert_within_bound(read, values)
    # Exact at the rollups' level: the same counts as every value added to one sketch.
    direct = Sketch(level=ROLLUP_LEVEL)
    for value in values:
        direct.add(value)
    assert (read.zero, read.bins) == (direct.zero, direct.bins)


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_minutes_stitched_to_the_newest_raw_rows_stay_within_the_bound(name: str) -> None:
    """A series reads rollups up to a few minutes ago and raw rows after, in either order."""
    rng = random.Random(name)
    draw = DISTRIBUTIONS[name]
    values = [draw(rng) for _ in range(30 * ROWS_PER_MINUTE * PER_ROW)]
    rows = raw_rows(values)
    split = 27 * ROWS_PER_MINUTE
    minutes = minute_rollups(rows[:split], before=False)
    for stored in (minutes + rows[split:], rows[split:] + minutes):
        counts = summed(stored)
        assert counts.level == ROLLUP_LEVEL
        assert_within_bound(counts.sketch(), values)
    # Sums merged (a range's buckets into its totals) likewise, whichever level comes first.
    fine, coarse = summed(rows[split:]), summed(minutes)
    fine.merge(coarse)
    assert fine.level == ROLLUP_LEVEL
    assert_within_bound(fine.sketch(), values)


def test_the_bound_is_nearly_reached_and_the_bins_halved() -> None:
    """The rollup bins are really coarser than the protocol's: a test that holds for 2% must
    not be passing on 1% bins."""
    rng = random.Random(5)
    values = [wide(rng) for _ in range(20_000)]
    counts = summed(raw_rows(values))
    fine_bins = len(counts.bins)
    stored = counts.packed()
    assert stored is not None
    read = summed([stored]).sketch()
    ordered = sorted(values)
    errors = []
    for step in range(1, 1000):
        truth = ordered[nearest_rank(step / 1000, len(ordered))]
        estimate = read.quantile(step / 1000)
        assert estimate is not None
        errors.append(abs(estimate - truth) / truth)
    assert ALPHA < max(errors) <= BOUND * (1 + ROUNDING)
    assert len(read.bins) <= math.ceil(fine_bins / 2) + 1


def test_coarsening_commutes_with_adding_counts() -> None:
    rng = random.Random(9)
    left = {rng.randint(-900, 900): rng.randint(1, 50) for _ in range(300)}
    right = {rng.randint(-900, 900): rng.randint(1, 50) for _ in range(300)}
    both = dict(left)
    for index, count in right.items():
        both[index] = both.get(index, 0) + count
    merged = coarser_bins(left, 1)
    for index, count in coarser_bins(right, 1).items():
        merged[index] = merged.get(index, 0) + count
    assert merged == coarser_bins(both, 1)
    # Bin i goes to ceil(i/2): (-3, -2) -> -1, (-1, 0) -> 0, (1, 2) -> 1.
    assert coarser_bins({-3: 1, -2: 1, -1: 1, 0: 1, 1: 1, 2: 1}, 1) == {-1: 2, 0: 2, 1: 2}
