"""A mergeable latency sketch with a relative-error bound (logarithmic bins, as in DDSketch).

The agent fills one per interval and site; the control plane merges them across intervals,
hosts and sites by adding counts, and reads quantiles off the merged bins. Every quantile is
within ALPHA of a value that was added: bin i holds the values in (g^(i-1), g^i], and its
representative 2g^i/(g+1) is within ALPHA of both ends. Zero gets a count of its own: nginx
logs times at millisecond resolution and a response served from memory is `0.000`.
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


def bin_value(index: int) -> float:
    """The value a bin stands for, within ALPHA of everything in it."""
    return 2 * GAMMA**index / (GAMMA + 1)


class Sketch:
    """Counts of zero values and of positive values per logarithmic bin."""

    __slots__ = ("bins", "zero")

    def __init__(self, zero: int = 0, bins: dict[int, int] | None = None) -> None:
        self.zero = zero
        self.bins: dict[int, int] = {} if bins is None else bins

    @property
    def count(self) -> int:
        """How many values were added."""
        return self.zero + sum(self.bins.values())

    def add(self, value: float, count: int = 1) -> None:
        """Add a value (negative values, which nginx never logs, count as zero)."""
        if value <= 0:
            self.zero += count
            return
        index = bin_index(value)
        self.bins[index] = self.bins.get(index, 0) + count

    def add_bin(self, index: int, count: int) -> None:
        """Add `count` values already known to fall in bin `index`."""
        self.bins[index] = self.bins.get(index, 0) + count

    def merge(self, other: Sketch) -> None:
        """Add every value of another sketch."""
        self.zero += other.zero
        bins = self.bins
        for index, count in other.bins.items():
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
                return bin_value(index)
        return bin_value(max(self.bins))  # unreachable: the counts add up to total

    def to_json(self) -> dict[str, object]:
        """The protocol form: {"zero": z, "bins": {"i": c}}."""
        return {"zero": self.zero, "bins": {str(i): c for i, c in self.bins.items() if c}}

    @classmethod
    def from_json(cls, data: Mapping[str, object] | None) -> Sketch:
        """Read the protocol form (already validated by the caller); None is an empty sketch."""
        if not data:
            return cls()
        zero = data.get("zero", 0)
        bins = data.get("bins") or {}
        assert isinstance(zero, int) and isinstance(bins, Mapping)
        return cls(int(zero), {int(i): int(c) for i, c in bins.items()})

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
