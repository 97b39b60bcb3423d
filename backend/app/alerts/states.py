"""The state machine of one (rule, host) pair: a pure function from one evaluation to the next."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from app.alerts.models import IncidentState, PairState


@dataclass(frozen=True)
class Timing:
    """How long a condition must hold before firing, and keep firing after it stops."""

    for_s: int
    keep_firing_s: int


@dataclass(frozen=True)
class Pair:
    """The stored part of a pair's state (inactive pairs have no row)."""

    state: PairState = PairState.inactive
    pending_since: datetime | None = None
    recovering_since: datetime | None = None


@dataclass(frozen=True)
class Step:
    """The pair after one evaluation, and what happens to its incident."""

    pair: Pair
    # Open a new incident in this state.
    opens: IncidentState | None = None
    # Move the open incident to this state.
    moves_to: IncidentState | None = None
    # Resolve the open incident.
    closes: bool = False


INACTIVE = Pair()
# What "no data" means, per rule.
NO_DATA_CHOICES = ("ok", "keep", "alerting", "nodata")
HAS_INCIDENT = (PairState.firing, PairState.recovering, PairState.nodata)


def _elapsed(since: datetime | None, now: datetime, seconds: int) -> bool:
    """Whether `seconds` have passed since `since` (a missing start counts as now)."""
    return (now - (since or now)) >= timedelta(seconds=seconds)


def _fire(pair: Pair, now: datetime) -> Step:
    """The pair fires: a new incident, or the open one again after recovering or no data."""
    firing = Pair(PairState.firing, pair.pending_since or now)
    if pair.state in HAS_INCIDENT:
        return Step(firing, moves_to=IncidentState.firing)
    return Step(firing, opens=IncidentState.firing)


def _holds(pair: Pair, timing: Timing, now: datetime) -> Step:
    """The condition holds at this evaluation."""
    if pair.state is PairState.firing:
        return Step(pair)
    if pair.state in (PairState.recovering, PairState.nodata):
        return _fire(pair, now)
    pending = Pair(PairState.pending, pair.pending_since or now)
    if _elapsed(pending.pending_since, now, timing.for_s):
        return _fire(pending, now)
    return Step(pending)


def _clear(pair: Pair, timing: Timing, now: datetime) -> Step:
    """The condition does not hold at this evaluation."""
    if pair.state is PairState.nodata:
        return Step(INACTIVE, closes=True)
    if pair.state in (PairState.firing, PairState.recovering):
        since = pair.recovering_since if pair.state is PairState.recovering else now
        if _elapsed(since, now, timing.keep_firing_s):
            return Step(INACTIVE, closes=True)
        recovering = Pair(PairState.recovering, pair.pending_since, since)
        if pair.state is PairState.firing:
            return Step(recovering, moves_to=IncidentState.recovering)
        return Step(recovering)
    return Step(INACTIVE)


def _no_data(pair: Pair) -> Step:
    """The `nodata` choice: the pair says so explicitly, and notifies like a firing."""
    nodata = Pair(PairState.nodata, pair.pending_since)
    if pair.state is PairState.nodata:
        return Step(pair)
    if pair.state in HAS_INCIDENT:
        return Step(nodata, moves_to=IncidentState.nodata)
    return Step(nodata, opens=IncidentState.nodata)


def step(pair: Pair, *, matches: bool | None, no_data: str, timing: Timing, now: datetime) -> Step:
    """The next state of a pair given whether its condition holds (None: no data)."""
    if matches is None:
        if no_data == "keep":
            return Step(pair)
        if no_data == "nodata":
            return _no_data(pair)
        matches = no_data == "alerting"
    if matches:
        return _holds(pair, timing, now)
    return _clear(pair, timing, now)
