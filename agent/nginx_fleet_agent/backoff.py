"""Jittered exponential backoff ("full jitter"): a delay drawn uniformly below a growing cap."""

from __future__ import annotations

import random

from nginx_fleet_agent import defaults


class Backoff:
    """Delays for successive failed attempts; `reset` after a success."""

    def __init__(
        self,
        base_s: float = defaults.BACKOFF_BASE_S,
        cap_s: float = defaults.BACKOFF_CAP_S,
        rng: random.Random | None = None,
    ) -> None:
        if base_s <= 0 or cap_s < base_s:
            raise ValueError("backoff needs 0 < base_s <= cap_s")
        self._base_s = base_s
        self._cap_s = cap_s
        self._rng = rng or random.Random()  # jitter only: no need for a CSPRNG
        self.failures = 0

    def ceiling(self) -> float:
        """The upper bound of the next delay: base * 2^failures, capped."""
        # Bound the exponent so the float never overflows after days of failures.
        return min(self._cap_s, self._base_s * 2.0 ** min(self.failures, 62))

    def next_delay(self) -> float:
        """Record one more failure and return the delay to wait before retrying."""
        delay = self._rng.uniform(0, self.ceiling())
        self.failures += 1
        return delay

    def reset(self) -> None:
        """Forget the failures after a successful attempt."""
        self.failures = 0
