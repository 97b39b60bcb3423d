"""When a failed delivery is tried again: exponential backoff, or what the receiver asked."""

from __future__ import annotations

from app.notify.channels.base import SendResult

MAX_ATTEMPTS = 6
FIRST_DELAY_S = 10.0
FACTOR = 3.0
# A receiver asking for less than this (Retry-After: 0) still gets a moment to recover.
MIN_DELAY_S = 1.0
MAX_DELAY_S = 3600.0


def backoff_delay(attempts_made: int) -> float:
    """Seconds before the next attempt after attempts_made failures: 10, 30, 90, 270, 810."""
    return min(FIRST_DELAY_S * FACTOR ** (attempts_made - 1), MAX_DELAY_S)


def next_delay(result: SendResult, attempts_made: int) -> float | None:
    """Seconds until the next attempt, or None when the delivery has failed for good."""
    if result.ok or result.permanent or attempts_made >= MAX_ATTEMPTS:
        return None
    if result.retry_after_s is not None:
        return min(max(result.retry_after_s, MIN_DELAY_S), MAX_DELAY_S)
    return backoff_delay(attempts_made)
