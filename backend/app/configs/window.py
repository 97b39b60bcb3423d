"""The metrics window the rules see: figures over a host's last hour of samples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import pairwise

from nginx_fleet_analyzer.facts import MetricsWindow
from nginx_fleet_analyzer.latency_sketch import Sketch, exact_quantile
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access_log.fields import STATUS_CLASSES
from app.access_log.figures import cached_requests, hit_ratio, status_share
from app.access_log.window import window_counters, window_request_time
from app.hosts.models import HostFacts
from app.metrics.models import Sample

WINDOW = timedelta(hours=1)
# A p95 needs at least 20 samples to stand for the top 5% rather than the single highest one.
MIN_P95_SAMPLES = 20
# C-hit-ratio judges a cache only over this many requests with a cache status in the hour: the
# few MISSes after a restart or a purge, or a cache nobody uses yet, are no ratio to act on.
MIN_CACHED_REQUESTS = 100
# C-microcache likewise wants this many logged requests before calling them "mostly GET 2xx".
MIN_LOGGED_REQUESTS = 100


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


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (share 0.95 = p95); None with fewer than MIN_P95_SAMPLES.

    Below that many samples the p95 is one reading, a spike rather than a sustained figure."""
    if len(values) < MIN_P95_SAMPLES:
        return None
    return exact_quantile(values, share)


def nginx_cpu_shares(
    readings: Sequence[tuple[int | None, float | None, float | None]], cpu_count: int | None
) -> tuple[list[float], str | None]:
    """nginx's CPU per sample in % of all cores, and whose it is ('workers' or 'master+workers').

    readings: (cores counted in the sample, workers' CPU, master+workers' CPU) per sample. The
    agent reports % of one core; the sample's own core count or the facts' cpu_count turns it
    into a share of the host. Workers alone are preferred; samples of older agents that send
    only the master+workers total are used when no sample has them."""
    workers: list[float] = []
    everything: list[float] = []
    for sample_cores, worker_cpu, nginx_cpu in readings:
        cores = sample_cores or cpu_count
        if not cores:
            continue
        for value, into in ((worker_cpu, workers), (nginx_cpu, everything)):
            if value is not None:
                into.append(min(100.0, float(value) / cores))
    if workers:
        return workers, "workers"
    if everything:
        return everything, "master+workers"
    return [], None


def log_ratios(
    counters: Mapping[str, int | None], request_time: Sketch | None = None
) -> dict[str, float | None]:
    """cache_hit_ratio, status_2xx_get_ratio, share_5xx and request_time_p95_s of summed
    access-log counters and merged request times, each None below its minimum of requests (or
    when the log format does not record what it needs)."""
    cached = cached_requests(counters) or 0
    logged = counters["get_2xx_requests"] or 0
    get_2xx = counters["get_2xx"]
    with_status = sum(counters[name] or 0 for name in STATUS_CLASSES)
    timed = request_time.count if request_time is not None else 0
    return {
        "share_5xx": (
            status_share(counters, "status_5xx") if with_status >= MIN_LOGGED_REQUESTS else None
        ),
        "request_time_p95_s": (
            request_time.quantile(0.95)
            if request_time is not None and timed >= MIN_LOGGED_REQUESTS
            else None
        ),
        "cache_hit_ratio": hit_ratio(counters) if cached >= MIN_CACHED_REQUESTS else None,
        "status_2xx_get_ratio": (
            get_2xx / logged if get_2xx is not None and logged >= MIN_LOGGED_REQUESTS else None
        ),
    }


def metrics_window(*, session: Session, host_id: int, now: datetime) -> MetricsWindow | None:
    """Figures over the hour before `now`; None when the host sent no sample in it.

    The cache hit ratio, the share of GET/HEAD 2xx, the 5xx share and the p95 request time
    come from the access logs; upstream request rates are not collected yet, so they stay None
    and the rule that needs them (K-upstream-pool) stays silent."""
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
            Sample.cpu_cores,
            Sample.worker_cpu_pct,
            Sample.nginx_cpu_pct,
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
    cpu_count = session.scalar(select(HostFacts.cpu_count).where(HostFacts.host_id == host_id))
    shares, source = nginx_cpu_shares(
        [(row.cpu_cores, row.worker_cpu_pct, row.nginx_cpu_pct) for row in rows], cpu_count
    )
    logs = window_counters(session=session, host_id=host_id, start=now - WINDOW, end=now)
    times = window_request_time(session=session, host_id=host_id, start=now - WINDOW, end=now)
    ratios = log_ratios(logs, times)
    return MetricsWindow(
        peak_active=float(max(active)) if active else None,
        avg_active=_mean(active),
        active_p95=percentile([float(value) for value in active], 0.95),
        avg_waiting=_mean([row.waiting for row in rows]),
        waiting_ratio=sum(w for _, w in both) / active_sum if active_sum > 0 else None,
        accepts_delta=accepts,
        handled_delta=handled,
        req_per_s=_mean([row.req_per_s for row in rows]),
        cpu_pct=_mean([row.cpu_pct for row in rows]),
        listen_overflows_delta=counter_growth([row.listen_overflows for row in rows]),
        listen_drops_delta=counter_growth([row.listen_drops for row in rows]),
        nginx_cpu_pct_mean=_mean(shares),
        nginx_cpu_pct_p95=percentile(shares, 0.95),
        nginx_cpu_source=source,
        cache_hit_ratio=ratios["cache_hit_ratio"],
        status_2xx_get_ratio=ratios["status_2xx_get_ratio"],
        request_time_p95_s=ratios["request_time_p95_s"],
        share_5xx=ratios["share_5xx"],
    )
