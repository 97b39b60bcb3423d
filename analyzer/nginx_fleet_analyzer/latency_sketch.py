"""A mergeable latency sketch with a relative-error bound (logarithmic bins, as in DDSketch).

The agent fills one per interval and site; the control plane merges them across intervals,
hosts and sites by adding counts, and reads quantiles off the merged bins. Every quantile is
within ALPHA of a value that was added: bin i holds the values in (g^(i-1), g^i], and its
representative 2g^i/(g+1) is within ALPHA of both ends. Zero gets a count of its own: nginx
logs times at millisecond resolution and a response served from memory is `0.000`.

A sketch can be made coarser to be stored for long: each `level` collapses adjacent pairs of
bins, index i -> ceil(i/2). Bin j at level L then holds exactly (G^(j-1), G^j] with
G = g^(2^L): the same kind of bin for a larger gamma, so the same representative and bound
hold with G, and every quantile is within (G-1)/(G+1) of the exact one (level_alpha). Level 1
gives 2*ALPHA/(1+ALPHA^2): 1.9998% at ALPHA 0.01. (ceil, not floor, keeps the bounds at powers
of G, so bin_value serves every level.) Coarsening commutes with adding counts: sketches of
different levels merge exactly at the coarser level of the two.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

ALPHA = 0.01
GAMMA = (1 + ALPHA) / (1 - ALPHA)
_LOG_GAMMA = math.log(GAMMA)
# Bin indexes the protocol accepts: g^±5000 spans 1e-43 s to 1e43 s, far beyond any latency.
MAX_INDEX = 5000


def bin_index(value: float) -> int:
    """The bin of a positive value: ceil(log_g(value))."""
    return math.ceil(math.log(value) / _LOG_GAMMA)


def level_gamma(level: int) -> float:
    """The ratio of a bin's upper to its lower bound at `level`: GAMMA ** (2 ** level)."""
    return GAMMA ** (1 << level)


def level_alpha(level: int) -> float:
    """The relative accuracy of a sketch at `level`: (G-1)/(G+1), G = level_gamma(level)."""
    gamma = level_gamma(level)
    return (gamma - 1) / (gamma + 1)


def bin_value(index: int, level: int = 0) -> float:
    """The value a bin of `level` stands for, within level_alpha(level) of everything in it."""
    gamma = level_gamma(level)
    return 2 * gamma**index / (gamma + 1)


def coarser_index(index: int, levels: int) -> int:
    """The bin `levels` levels coarser holding bin `index`: ceil(index / 2**levels)."""
    # An arithmetic shift floors (negative indexes too); negating around it takes the ceiling.
    return -(-index >> levels)


def coarser_bins(bins: Mapping[int, int], levels: int) -> dict[int, int]:
    """The counts of `bins` in the bins `levels` levels coarser (a new dict)."""
    if not levels:
        return dict(bins)
    coarse: dict[int, int] = {}
    for index, count in bins.items():
        into = coarser_index(index, levels)
        coarse[into] = coarse.get(into, 0) + count
    return coarse


class Sketch:
    """Counts of zero values and of positive values per logarithmic bin of `level`."""

    __slots__ = ("bins", "level", "zero")

    def __init__(self, zero: int = 0, bins: dict[int, int] | None = None, level: int = 0) -> None:
        self.zero = zero
        self.bins: dict[int, int] = {} if bins is None else bins
        self.level = level

    @property
    def count(self) -> int:
        """How many values were added."""
        return self.zero + sum(self.bins.values())

    def add(self, value: float, count: int = 1) -> None:
        """Add a value (negative values, which nginx never logs, count as zero)."""
        if value <= 0:
            self.zero += count
            return
        index = coarser_index(bin_index(value), self.level)
        self.bins[index] = self.bins.get(index, 0) + count

    def add_bin(self, index: int, count: int) -> None:
        """Add `count` values already known to fall in bin `index` (of the sketch's level)."""
        self.bins[index] = self.bins.get(index, 0) + count

    def coarsen(self, level: int) -> None:
        """Collapse the bins to `level` (no finer than the sketch's own)."""
        if level < self.level:
            raise ValueError(f"a sketch of level {self.level} cannot be made level {level}")
        self.bins = coarser_bins(self.bins, level - self.level)
        self.level = level

    def merge(self, other: Sketch) -> None:
        """Add every value of another sketch, at the coarser level of the two."""
        if other.level > self.level:
            self.coarsen(other.level)
        self.zero += other.zero
        bins = self.bins
        added = other.bins
        if other.level < self.level:
            added = coarser_bins(added, self.level - other.level)
        for index, count in added.items():
            bins[index] = bins.get(index, 0) + count

    def quantile(self, q: float) -> float | None:
        """The nearest-rank quantile: the ceil(q*n)-th smallest value (1-based); None if empty.

        The same definition as the metrics window's percentiles: a p95 of a handful of values
        is their largest, never their smallest."""
        total = self.count
        if total == 0:
            return None
        rank = nearest_rank(q, total)
        if rank < self.zero:
            return 0.0
        seen = self.zero
        for index in sorted(self.bins):
            seen += self.bins[index]
            if seen > rank:
                return bin_value(index, self.level)
        return bin_value(max(self.bins), self.level)  # unreachable: the counts add up to total

    def to_json(self) -> dict[str, object]:
        """The protocol form: {"zero": z, "bins": {"i": c}}, plus "level" when coarsened."""
        data: dict[str, object] = {
            "zero": self.zero,
            "bins": {str(i): c for i, c in self.bins.items() if c},
        }
        if self.level:
            data["level"] = self.level
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object] | None) -> Sketch:
        """Read the protocol form (already validated by the caller); None is an empty sketch."""
        if not data:
            return cls()
        zero = data.get("zero", 0)
        bins = data.get("bins") or {}
        level = data.get("level", 0)
        assert isinstance(zero, int) and isinstance(bins, Mapping) and isinstance(level, int)
        return cls(int(zero), {int(i): int(c) for i, c in bins.items()}, level)

    @classmethod
    def merged(cls, sketches: Iterable[Sketch]) -> Sketch:
        """One sketch holding the values of all."""
        total = cls()
        for sketch in sketches:
            total.merge(sketch)
        return total


def nearest_rank(q: float, n: int) -> int:
    """The 0-based index of the nearest-rank q-quantile among n sorted values."""
    return max(0, math.ceil(min(max(q, 0.0), 1.0) * n) - 1)


def exact_quantile(values: Iterable[float], q: float) -> float | None:
    """The exact quantile with the sketch's rank definition, for tests and benches."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[nearest_rank(q, len(ordered))]
