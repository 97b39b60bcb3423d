"""The measured effect of an applied change: equal windows before and after, and the gate."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.changes.models import Change
from app.configs.models import AnalysisStatus, ConfigAnalysis
from app.metrics.models import Sample

# A difference counts when it exceeds this many standard errors of the two windows' means.
SIGNIFICANCE_Z = 2.0
# Fewer samples than this in a window say nothing about its variation.
MIN_SAMPLES = 3


def _worker_cpu(sample: Sample) -> float | None:
    # Older agents send only the master+workers total.
    return sample.worker_cpu_pct if sample.worker_cpu_pct is not None else sample.nginx_cpu_pct


def _waiting_share(sample: Sample) -> float | None:
    if sample.active is None or sample.waiting is None or sample.active <= 0:
        return None
    return 100.0 * sample.waiting / sample.active


def _memory(sample: Sample) -> float | None:
    rss = sample.nginx_rss_bytes
    return float(rss) if rss is not None else None


# (name, label, unit, how to read it from a sample, whether higher is better or None)
FIGURES: Sequence[tuple[str, str, str, Callable[[Sample], float | None], bool | None]] = (
    ("req_per_s", "requests/s", "req/s", lambda s: s.req_per_s, None),
    ("waiting_share", "Waiting share of Active", "%", _waiting_share, None),
    ("drops_per_s", "dropped connections/s", "conn/s", lambda s: s.drops_per_s, False),
    ("worker_cpu_pct", "nginx workers' CPU", "% of a core", _worker_cpu, False),
    ("rss_bytes", "nginx memory (RSS)", "bytes", _memory, False),
)


def _samples(session: Session, host_id: int, start: datetime, end: datetime) -> Sequence[Sample]:
    return session.scalars(
        select(Sample)
        .where(Sample.host_id == host_id, Sample.ts >= start, Sample.ts < end)
        .order_by(Sample.ts)
    ).all()


def compare(before: list[float], after: list[float]) -> dict[str, Any] | None:
    """Means of two windows, their relative change and whether it exceeds normal variation."""
    if len(before) < MIN_SAMPLES or len(after) < MIN_SAMPLES:
        return None
    mean_before, mean_after = statistics.fmean(before), statistics.fmean(after)
    error = math.sqrt(
        statistics.variance(before) / len(before) + statistics.variance(after) / len(after)
    )
    delta = mean_after - mean_before
    # Flat series (e.g. zero drops before and after) have no variation: any change counts.
    significant = abs(delta) > SIGNIFICANCE_Z * error if error > 0 else delta != 0
    change_pct = 100.0 * delta / abs(mean_before) if mean_before else None
    return {
        "before": round(mean_before, 4),
        "after": round(mean_after, 4),
        "change_pct": round(change_pct, 1) if change_pct is not None else None,
        "significant": significant,
    }


def _statement(label: str, result: dict[str, Any]) -> str:
    if not result["significant"]:
        figures = f"{result['before']:g} → {result['after']:g}"
        return f"{label}: no change beyond the normal variation ({figures})"
    direction = "rose" if result["after"] > result["before"] else "fell"
    pct = f" ({result['change_pct']:+g}%)" if result["change_pct"] is not None else ""
    return f"{label} {direction} from {result['before']:g} to {result['after']:g}{pct}"


def _score_after(session: Session, change: Change) -> int | None:
    """The config score of the first analysis of the config the change put in place.

    That is the first analysis, made after the change was sent, of a snapshot other than the
    change's base: the agent pushes the patched config (and the analysis may finish before the
    verified outcome is recorded, so the outcome's time is no bound).
    """
    since = change.sent_at or change.approved_at or change.created_at
    return session.scalar(
        select(ConfigAnalysis.score)
        .where(
            ConfigAnalysis.host_id == change.host_id,
            ConfigAnalysis.status == AnalysisStatus.ok,
            ConfigAnalysis.snapshot_id != change.base_snapshot_id,
            ConfigAnalysis.analyzed_at >= since,
        )
        .order_by(ConfigAnalysis.id)
        .limit(1)
    )


def measure(
    *, session: Session, change: Change, window: timedelta, now: datetime
) -> dict[str, Any]:
    """The impact card of a verified change: `waiting` until the after-window has passed."""
    applied = change.finished_at
    assert applied is not None
    before_range = (applied - window, applied)
    after_range = (applied, applied + window)
    card: dict[str, Any] = {
        "window_s": int(window.total_seconds()),
        "before": [before_range[0].isoformat(), before_range[1].isoformat()],
        "after": [after_range[0].isoformat(), after_range[1].isoformat()],
        "score_before": change.score_before,
        "score_after": _score_after(session, change),
        "metrics": [],
    }
    if now < after_range[1]:
        return {**card, "status": "waiting", "summary": "measuring: the after-window is not over"}
    before = _samples(session, change.host_id, *before_range)
    after = _samples(session, change.host_id, *after_range)
    statements = []
    for name, label, unit, read, _better in FIGURES:
        values_before = [v for v in map(read, before) if v is not None]
        values_after = [v for v in map(read, after) if v is not None]
        result = compare(values_before, values_after)
        if result is None:
            continue
        statement = _statement(label, result)
        card["metrics"].append(
            {"name": name, "label": label, "unit": unit, **result, "statement": statement}
        )
        if result["significant"]:
            statements.append(statement)
    if not card["metrics"]:
        return {
            **card,
            "status": "insufficient_data",
            "summary": f"too few samples around the apply (need {MIN_SAMPLES} in each window)",
        }
    summary = "; ".join(statements) if statements else "no figure moved beyond its normal variation"
    return {**card, "status": "measured", "summary": summary}


def gate_check(
    *,
    session: Session,
    change: Change,
    rules: dict[str, Any],
    since: datetime,
    now: datetime,
    window: timedelta,
) -> str | None:
    """Why the metric gate fails over (since, now] for an applied change, or None when it passes.

    `rules` is a rollout's auto_rollback: `drops` (any dropped connection fails) and
    `max_rise_pct` (a figure's mean rising more than that above its mean in the window before
    the apply fails)."""
    applied = change.finished_at
    assert applied is not None
    recent = _samples(session, change.host_id, since, now)
    if rules.get("drops", True):
        dropped = [s.drops_per_s for s in recent if s.drops_per_s]
        if dropped:
            return f"dropped connections appeared ({max(dropped):g}/s) after the apply"
    limits: dict[str, float] = rules.get("max_rise_pct") or {}
    if not limits:
        return None
    before = _samples(session, change.host_id, applied - window, applied)
    for name, label, _unit, read, _better in FIGURES:
        limit = limits.get(name)
        values_before = [v for v in map(read, before) if v is not None]
        values_now = [v for v in map(read, recent) if v is not None]
        if limit is None or not values_before or not values_now:
            continue
        level, current = statistics.fmean(values_before), statistics.fmean(values_now)
        if level > 0 and 100.0 * (current - level) / level > limit:
            rise = 100.0 * (current - level) / level
            return (
                f"{label} rose {rise:.0f}% above its level before the apply "
                f"({level:g} → {current:g}; limit {limit:g}%)"
            )
    return None
