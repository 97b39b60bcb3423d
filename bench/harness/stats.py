"""Percentiles and the formatting of figures the benchmarks print."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(values: Sequence[float], pct: float) -> float:
    """The `pct` percentile of `values`, linearly interpolated between closest ranks."""
    if not values:
        raise ValueError("percentile of an empty list")
    if not 0.0 <= pct <= 100.0:
        raise ValueError(f"percentile must be within 0..100, got {pct}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Timings:
    """Median, p95, p99 and max of a list of durations in seconds."""

    count: int
    median_s: float
    p95_s: float
    p99_s: float
    max_s: float

    @classmethod
    def of(cls, durations_s: Sequence[float]) -> Timings:
        """Summarise durations in seconds."""
        return cls(
            count=len(durations_s),
            median_s=percentile(durations_s, 50),
            p95_s=percentile(durations_s, 95),
            p99_s=percentile(durations_s, 99),
            max_s=max(durations_s),
        )

    def line(self) -> str:
        """One printable line in milliseconds."""
        return (
            f"n={self.count}  median {ms(self.median_s)}  p95 {ms(self.p95_s)}  "
            f"p99 {ms(self.p99_s)}  max {ms(self.max_s)}"
        )


def ms(seconds: float) -> str:
    """Seconds as milliseconds with two decimals."""
    return f"{seconds * 1000:.2f} ms"


def verdict(met: bool) -> str:
    """MET / NOT MET, for target lines."""
    return "MET" if met else "NOT MET"
