"""Access-log figures as the API returns them (docs/access-log.md, section 3)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

MissingReason = Literal[
    "not_applicable",
    "no_access_log",
    "format_lacks_field",
    "file_unreadable",
    "lines_do_not_match",
    "no_traffic",
]


class AccessLogFigures(BaseModel):
    """Figures over a bucket or a whole range; null when not measured (`missing` says why).

    Counts are sums over the requests the agents read; shares and ratios are computed from the
    sums, percentiles from the merged sketches: within 1% of the exact one over a range read
    from 10 s rows (those of the raw retention, 3 h by default), within 2% over one that reads
    1-minute or 1-hour rollups."""

    requests: int | None = Field(description="requests logged; null when no log figures at all")
    req_per_s: float | None = Field(
        description="requests / the time the rows cover (a bucket's at most its width)"
    )
    status_1xx: int | None
    status_2xx: int | None
    status_3xx: int | None
    status_4xx: int | None
    status_5xx: int | None
    status_499: int | None = Field(description="also counted in status_4xx")
    status_500: int | None = Field(description="also counted in status_5xx, as 502, 503, 504")
    status_502: int | None
    status_503: int | None
    status_504: int | None
    share_5xx: float | None = Field(description="5xx / requests that had a status, 0..1")
    share_499: float | None = Field(description="499 / requests that had a status, 0..1")
    bytes_sent: int | None
    get_2xx: int | None = Field(description="GET and HEAD requests answered 2xx")
    cache_hit: int | None
    cache_miss: int | None
    cache_expired: int | None
    cache_stale: int | None
    cache_updating: int | None
    cache_revalidated: int | None
    cache_bypass: int | None
    hit_ratio: float | None = Field(
        description="(HIT + STALE + UPDATING + REVALIDATED) / requests with a cache status "
        "(HIT, MISS, EXPIRED, STALE, UPDATING, REVALIDATED, BYPASS), 0..1"
    )
    upstream_errors: int | None
    request_time_p50_s: float | None
    request_time_p90_s: float | None
    request_time_p95_s: float | None
    request_time_p99_s: float | None
    upstream_time_p50_s: float | None = Field(
        description="per request that went upstream: the sum of its attempts' times"
    )
    upstream_time_p90_s: float | None
    upstream_time_p95_s: float | None
    upstream_time_p99_s: float | None


class AccessLogPoint(AccessLogFigures):
    """One bucket of the series, starting at ts."""

    ts: datetime


class UpstreamRead(BaseModel):
    """One upstream address over the range (its sites summed, or the chosen site's)."""

    upstream: str
    attempts: int
    errors: int
    error_share: float | None = Field(description="errors / attempts, 0..1")
    response_time_p50_s: float | None
    response_time_p95_s: float | None
    response_time_p99_s: float | None


class SiteRead(BaseModel):
    """A site the host logged in the range, for the site picker."""

    site: str
    requests: int


class AccessLogFileRead(BaseModel):
    """One access-log target in the host's newest files report (docs/access-log.md, 2)."""

    path: str
    formats: list[str]
    state: str = Field(description="ok, missing, unreadable or unsupported")
    reason: str | None
    lines: int
    unparsed: int
    unparsed_sample: str | None
    unparsed_format: str | None
    missing_fields: list[str]
    site_field: str | None
    conditional: bool


class MissingFigure(BaseModel):
    """Why a figure is missing, with what the UI needs to explain it."""

    reason: MissingReason
    message: str = Field(description="one sentence for the banner")
    variable: str | None = Field(
        default=None, description="format_lacks_field: the variable, e.g. $upstream_cache_status"
    )
    formats: list[str] = Field(
        default_factory=list, description="format_lacks_field: the formats that lack it"
    )
    rule: str | None = Field(
        default=None, description="format_lacks_field: the rule whose fix adds it"
    )
    finding_id: int | None = Field(
        default=None, description="that rule's finding in the host's latest analysis, if any"
    )
    finding_key: str | None = Field(
        default=None, description="its key, for POST /hosts/{id}/changes/preview"
    )
    path: str | None = Field(default=None, description="file_unreadable: the file")
    file_reason: str | None = Field(default=None, description="file_unreadable: why")
    sample_line: str | None = Field(
        default=None, description="lines_do_not_match: one redacted line"
    )
    sample_format: str | None = Field(
        default=None, description="lines_do_not_match: the format it was matched against"
    )


class MissingFigures(BaseModel):
    """Per figure, null when it was measured, else why not."""

    hit_ratio: MissingFigure | None
    latency: MissingFigure | None
    upstream_latency: MissingFigure | None
    status: MissingFigure | None


class TopPathRead(BaseModel):
    """A path among the most frequent or slowest over the range (IDs collapsed to :id).

    Summed from each interval's top list, so a path below the cut-off in some intervals is
    undercounted; off unless the agent sets access_log_top_paths."""

    site: str
    path: str
    requests: int
    time_sum_s: float
    time_max_s: float
    time_mean_s: float | None


class HostAccessLogRead(BaseModel):
    """GET /hosts/{id}/access-log: the host's access-log figures over [start, end)."""

    host_id: int
    start: datetime
    end: datetime
    step_s: int = Field(description="width of each point's bucket")
    site: str | None = Field(description="the site chosen, null for all sites summed")
    points: list[AccessLogPoint] = Field(description="buckets with data, oldest first")
    totals: AccessLogFigures
    upstreams: list[UpstreamRead] = Field(description="most attempts first")
    sites: list[SiteRead] = Field(description="every site of the range, most requests first")
    files: list[AccessLogFileRead] = Field(description="the newest files report")
    files_reported_at: datetime | None
    missing: MissingFigures
    top_paths: list[TopPathRead] | None = Field(
        description="null when the agent sent none in the range"
    )


class AccessLogSummaryRead(BaseModel):
    """GET /access-log/summary: totals over any set of hosts and sites."""

    start: datetime
    end: datetime
    host_ids: list[int] = Field(description="the hosts asked for; empty: the whole fleet")
    sites: list[str] = Field(description="the sites asked for; empty: every site")
    hosts_with_data: int
    totals: AccessLogFigures
