"""The figures read off summed counters and merged sketches: hit ratio, shares, percentiles."""

from __future__ import annotations

from collections.abc import Mapping

from nginx_fleet_analyzer.latency_sketch import Sketch

from app.access_log.fields import CACHE_COUNTERS, CACHE_HITS, QUANTILES, STATUS_CLASSES


def _known_sum(counters: Mapping[str, int | None], names: tuple[str, ...]) -> int | None:
    """Sum of the named counters that are known; None when none of them is."""
    known = [counters[name] for name in names if counters[name] is not None]
    return sum(v for v in known if v is not None) if known else None


def cached_requests(counters: Mapping[str, int | None]) -> int | None:
    """Requests that had a cache status (HIT, MISS, EXPIRED, STALE, UPDATING, REVALIDATED,
    BYPASS); None when the log format does not record it."""
    return _known_sum(counters, CACHE_COUNTERS)


def hit_ratio(counters: Mapping[str, int | None]) -> float | None:
    """(HIT + STALE + UPDATING + REVALIDATED) / requests with a cache status; None without any.

    A `-` status (no cache involved) is never counted by the agent, so it weighs nothing."""
    total = cached_requests(counters)
    if not total:
        return None
    return (_known_sum(counters, CACHE_HITS) or 0) / total


def status_share(counters: Mapping[str, int | None], name: str) -> float | None:
    """Share of `name` (status_5xx, status_499, ...) among the requests that had a status."""
    total = _known_sum(counters, STATUS_CLASSES)
    value = counters[name]
    if not total or value is None:
        return None
    return value / total


def get_2xx_share(counters: Mapping[str, int | None]) -> float | None:
    """GET/HEAD requests answered 2xx as a share of all requests; None when not recorded."""
    value, total = counters["get_2xx"], counters["requests"]
    if value is None or not total:
        return None
    return value / total


def percentiles(sketch: Sketch | None) -> dict[float, float | None]:
    """p50, p90, p95 and p99 of a merged sketch (None each when it holds no value)."""
    if sketch is None:
        return dict.fromkeys(QUANTILES)
    return {q: sketch.quantile(q) for q in QUANTILES}
