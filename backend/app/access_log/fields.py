"""Names of the stored access-log figures, shared by ingest, rollups and queries."""

from __future__ import annotations

STATUS_COUNTERS = (
    "status_1xx",
    "status_2xx",
    "status_3xx",
    "status_4xx",
    "status_5xx",
    "status_499",
    "status_500",
    "status_502",
    "status_503",
    "status_504",
)
STATUS_CLASSES = STATUS_COUNTERS[:5]
CACHE_COUNTERS = (
    "cache_hit",
    "cache_miss",
    "cache_expired",
    "cache_stale",
    "cache_updating",
    "cache_revalidated",
    "cache_bypass",
)
# Served from the cache: STALE and UPDATING outright, REVALIDATED after the upstream's 304.
CACHE_HITS = ("cache_hit", "cache_stale", "cache_updating", "cache_revalidated")
# Every counter of a site row, in column order; `requests` is never NULL.
SITE_COUNTERS = (
    "requests",
    *STATUS_COUNTERS,
    "bytes_sent",
    "get_2xx",
    *CACHE_COUNTERS,
    "upstream_errors",
)
SITE_SKETCHES = ("request_time", "upstream_time")
UPSTREAM_COUNTERS = ("attempts", "errors")
UPSTREAM_SKETCHES = ("response_time",)
QUANTILES = (0.5, 0.9, 0.95, 0.99)
