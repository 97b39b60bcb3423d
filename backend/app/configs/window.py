"""The metrics window the rules see: figures over a host's last hour of samples."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import pairwise

from nginx_fleet_analyzer.facts import MetricsWindow
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.metrics.models import Sample

WINDOW = timedelta(hours=1)


def counter_growth(values: Sequence[int | None]) -> float | None:
    """Sum of the increases of a cumulative counter; a decrease means it restarted from zero.

    None when fewer than two readings are known (no growth can be measured)."""
    known = [value for value in values if value is not None]
    if len(known) < 2:
        return None
    growth = 0
    for before, now in pairwise(known):
        growth += now - before if now >= before else now
    return float(growth)


def paired_growth(
    pairs: Sequence[tuple[int | None, int | None]],
) -> tuple[float | None, float | None]:
    """Growth of accepts and handled over the same readings, restart-aware as one counter set.

    nginx resets both together, so a decrease of either one marks a restart for both."""
    known = [(a, h) for a, h in pairs if a is not None and h is not None]
    if len(known) < 2:
        return None, None
    accepts = handled = 0
    for (a0, h0), (a1, h1) in pairwise(known):
        restarted = a1 < a0 or h1 < h0
        accepts += a1 if restarted else a1 - a0
        handled += h1 if restarted else h1 - h0
    return float(accepts), float(handled)


def _mean(values: Sequence[float | int | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


def metrics_window(*, session: Session, host_id: int, now: datetime) -> MetricsWindow | None:
    """Figures over the hour before `now`; None when the host sent no sample in it.

    Cache hit ratio, upstream request rates and status ratios are not collected yet, so they
    stay None and the rules that need them stay silent."""
    rows = session.execute(
        select(
            Sample.active,
            Sample.waiting,
            Sample.accepts,
            Sample.handled,
            Sample.req_per_s,
            Sample.cpu_pct,
            Sample.listen_overflows,
            Sample.listen_drops,
        )
        .where(Sample.host_id == host_id, Sample.ts > now - WINDOW, Sample.ts <= now)
        .order_by(Sample.seq)
    ).all()
    if not rows:
        return None
    active = [row.active for row in rows if row.active is not None]
    both = [(row.active, row.waiting) for row in rows if None not in (row.active, row.waiting)]
    active_sum = sum(a for a, _ in both)
    accepts, handled = paired_growth([(row.accepts, row.handled) for row in rows])
    return MetricsWindow(
        peak_active=float(max(active)) if active else None,
        avg_active=_mean(active),
        avg_waiting=_mean([row.waiting for row in rows]),
        waiting_ratio=sum(w for _, w in both) / active_sum if active_sum > 0 else None,
        accepts_delta=accepts,
        handled_delta=handled,
        req_per_s=_mean([row.req_per_s for row in rows]),
        cpu_pct=_mean([row.cpu_pct for row in rows]),
        listen_overflows_delta=counter_growth([row.listen_overflows for row in rows]),
        listen_drops_delta=counter_growth([row.listen_drops for row in rows]),
    )
