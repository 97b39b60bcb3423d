"""Per-second rates derived from two consecutive stub_status counter readings."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

# Beyond this gap the previous reading says little about the current one: nginx may have
# restarted and counted back past its old totals (a reset we cannot see), and an average over
# hours would draw a flat line where the traffic had peaks. A gap in the chart is more honest.
MAX_RATE_GAP = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class CounterReading:
    """The stub_status counters of one sample; None when stub_status could not be read."""

    ts: datetime
    accepts: int | None
    handled: int | None
    requests: int | None

    def counters(self) -> tuple[int, int, int] | None:
        """(accepts, handled, requests), or None when any of them is unknown."""
        if self.accepts is None or self.handled is None or self.requests is None:
            return None
        return self.accepts, self.handled, self.requests


@dataclass(frozen=True, slots=True)
class Rates:
    """Requests, accepted and dropped connections per second; None when not derivable."""

    req_per_s: float | None
    accepts_per_s: float | None
    drops_per_s: float | None


NO_RATES = Rates(req_per_s=None, accepts_per_s=None, drops_per_s=None)


def _delta(previous: int, current: int, *, restarted: bool) -> int:
    """Counter growth; after a restart the counter started from zero, so growth is its value."""
    return current if restarted else current - previous


def derive_rates(
    previous: CounterReading | None,
    current: CounterReading,
    *,
    max_gap: timedelta = MAX_RATE_GAP,
) -> Rates:
    """Rates over the interval from previous to current (the average when samples were missed)."""
    if previous is None:
        return NO_RATES
    old, new = previous.counters(), current.counters()
    if old is None or new is None:
        return NO_RATES
    elapsed = (current.ts - previous.ts).total_seconds()
    if elapsed <= 0 or elapsed > max_gap.total_seconds():
        return NO_RATES
    # The counters only grow while the master lives; any of them going down means a restart.
    restarted = any(now < before for before, now in zip(old, new, strict=True))
    accepted, handled, requests = (
        _delta(before, now, restarted=restarted) for before, now in zip(old, new, strict=True)
    )
    # handled can outgrow accepts by a connection accepted between the two reads of one page.
    dropped = max(accepted - handled, 0)
    return Rates(
        req_per_s=requests / elapsed,
        accepts_per_s=accepted / elapsed,
        drops_per_s=dropped / elapsed,
    )


def derive_rate_series(
    readings: Iterable[CounterReading],
    *,
    before: CounterReading | None = None,
    max_gap: timedelta = MAX_RATE_GAP,
) -> Iterator[Rates]:
    """Rates of each reading against the one before it (the first against `before`)."""
    previous = before
    for reading in readings:
        yield derive_rates(previous, reading, max_gap=max_gap)
        previous = reading
