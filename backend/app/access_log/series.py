"""Reading access-log rows of a range from the table the range calls for, into figures."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Result, Table, and_, func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from app.access_log.aggregate import (
    PathTotals,
    Totals,
    site_totals,
    stored_columns,
    upstream_totals,
)
from app.access_log.fields import SITE_COUNTERS
from app.access_log.figures import hit_ratio, percentiles, status_share
from app.access_log.models import LogStats, LogStatsRollup, LogUpstreamRollup, LogUpstreamStats
from app.access_log.rollups import bucket_of
from app.access_log.schemas import AccessLogFigures, AccessLogPoint, TopPathRead, UpstreamRead
from app.core.config import get_settings
from app.metrics.bucketing import SeriesPlan, SeriesSource, plan_series
from app.metrics.settings import get_retention
from app.metrics.sql import table_of

_TABLES = {
    ("site", True): table_of(LogStats),
    ("site", False): table_of(LogStatsRollup),
    ("upstream", True): table_of(LogUpstreamStats),
    ("upstream", False): table_of(LogUpstreamRollup),
}


def plan(start: datetime, end: datetime, now: datetime) -> SeriesPlan:
    """The source table and bucket width of a range, chosen as for the host series."""
    retention = get_retention()
    return plan_series(
        start, end, now=now, raw_retention=retention.raw, minute_retention=retention.minute
    )


def range_figures(chosen: SeriesPlan) -> RangeFigures:
    """An empty RangeFigures for the plan's buckets and the time each of its rows covers."""
    raw = chosen.source is SeriesSource.raw
    interval_s = get_settings().push_interval_s if raw else chosen.source.resolution_s
    return RangeFigures(step_s=chosen.step_s, interval_s=interval_s)


def _selection(
    kind: str,
    source: SeriesSource,
    *,
    host_ids: Sequence[int] | None,
    sites: Sequence[str],
    start: datetime,
    end: datetime,
) -> tuple[Table, ColumnElement[datetime], list[ColumnElement[bool]]]:
    """The table of `kind` rows for `source`, its time column and the range's conditions."""
    raw = source is SeriesSource.raw
    table = _TABLES[(kind, raw)]
    ts: ColumnElement[datetime] = table.c.ts if raw else table.c.bucket_start
    conditions: list[ColumnElement[bool]] = [ts >= start, ts < end]
    if not raw:
        conditions.append(table.c.resolution == source.value)
    if host_ids is not None:
        conditions.append(table.c.host_id.in_(host_ids))
    if sites:
        conditions.append(table.c.site.in_(sites))
    return table, ts, conditions


def rows_of(
    session: Session,
    kind: str,
    source: SeriesSource,
    *,
    host_ids: Sequence[int] | None,
    sites: Sequence[str] = (),
    start: datetime,
    end: datetime,
) -> Result[Any]:
    """Site ('site') or upstream ('upstream') rows of the range, their time as `at`."""
    table, ts, conditions = _selection(
        kind, source, host_ids=host_ids, sites=sites, start=start, end=end
    )
    return session.execute(select(*stored_columns(table), ts.label("at")).where(and_(*conditions)))


def site_requests(
    session: Session,
    source: SeriesSource,
    *,
    host_ids: Sequence[int] | None,
    start: datetime,
    end: datetime,
) -> list[tuple[str, int]]:
    """Every site of the range with its requests, most first (no sketch is read)."""
    table, _ts, conditions = _selection(
        "site", source, host_ids=host_ids, sites=(), start=start, end=end
    )
    total = func.sum(table.c.requests)
    query = (
        select(table.c.site, total)
        .where(and_(*conditions))
        .group_by(table.c.site)
        .order_by(total.desc(), table.c.site)
    )
    return [(site, int(requests)) for site, requests in session.execute(query)]


def figures(totals: Totals, seconds: float) -> dict[str, Any]:
    """The AccessLogFigures fields of summed site rows spanning `seconds`."""
    counters = totals.counters
    values: dict[str, Any] = {name: counters[name] for name in SITE_COUNTERS}
    requests = counters["requests"]
    values["req_per_s"] = requests / seconds if requests is not None and seconds > 0 else None
    values["share_5xx"] = status_share(counters, "status_5xx")
    values["share_499"] = status_share(counters, "status_499")
    values["hit_ratio"] = hit_ratio(counters)
    for name in ("request_time", "upstream_time"):
        for q, value in percentiles(totals.sketch(name)).items():
            values[f"{name}_p{round(q * 100)}_s"] = value
    return values


class RangeFigures:
    """Points and totals of site rows over a range, and its top paths.

    A rate divides by the time the bucket's rows cover: a row stands for the `interval_s`
    before its time (a sample's interval, or a rollup's minute or hour), so the bucket still
    filling up and the one that starts before the range are neither diluted nor inflated."""

    def __init__(self, *, step_s: int, interval_s: int) -> None:
        self.step_s, self.interval_s = step_s, interval_s
        self.buckets: dict[datetime, Totals] = {}
        # First and last row time per bucket.
        self.spans: dict[datetime, list[datetime]] = {}
        self.paths = PathTotals()
        self.hosts: set[int] = set()

    def add(self, row: Any) -> None:
        """Add one row selected by rows_of('site', …)."""
        values = row._mapping
        at = values["at"]
        bucket = bucket_of(at, self.step_s)
        totals = self.buckets.get(bucket)
        if totals is None:
            totals = self.buckets[bucket] = site_totals()
            self.spans[bucket] = [at, at]
        totals.add(values)
        span = self.spans[bucket]
        span[0], span[1] = min(span[0], at), max(span[1], at)
        self.hosts.add(values["host_id"])
        if values["top_paths"]:
            self.paths.add(values["site"], values["top_paths"])

    def _seconds(self, bucket: datetime) -> float:
        """The time the rows of a bucket cover, at most its width."""
        first, last = self.spans[bucket]
        return min(float(self.step_s), (last - first).total_seconds() + self.interval_s)

    def points(self) -> list[AccessLogPoint]:
        """One point per bucket with data, oldest first."""
        return [
            AccessLogPoint(ts=bucket, **figures(self.buckets[bucket], self._seconds(bucket)))
            for bucket in sorted(self.buckets)
        ]

    def total(self) -> tuple[Totals, AccessLogFigures]:
        """Every bucket summed, and its figures over the time the rows cover."""
        totals = site_totals()
        for bucket_totals in self.buckets.values():
            totals.merge(bucket_totals)
        seconds = sum(self._seconds(bucket) for bucket in self.buckets)
        return totals, AccessLogFigures(**figures(totals, seconds))

    def top_paths(self) -> list[TopPathRead] | None:
        """The merged top paths, or None when the rows carried none."""
        if not self.paths:
            return None
        return [
            TopPathRead(
                site=site,
                path=path,
                requests=int(requests),
                time_sum_s=time_sum,
                time_max_s=time_max,
                time_mean_s=time_sum / requests if requests else None,
            )
            for site, path, requests, time_sum, time_max in self.paths.top()
        ]


def upstream_figures(rows: Result[Any]) -> list[UpstreamRead]:
    """Upstream rows summed per address, most attempts first."""
    by_address: dict[str, Totals] = {}
    for row in rows:
        values = row._mapping
        totals = by_address.get(values["upstream"])
        if totals is None:
            totals = by_address[values["upstream"]] = upstream_totals()
        totals.add(values)
    upstreams = []
    for address, totals in by_address.items():
        attempts = totals.counters["attempts"] or 0
        errors = totals.counters["errors"] or 0
        quantiles = percentiles(totals.sketch("response_time"))
        upstreams.append(
            UpstreamRead(
                upstream=address,
                attempts=attempts,
                errors=errors,
                error_share=errors / attempts if attempts else None,
                response_time_p50_s=quantiles[0.5],
                response_time_p95_s=quantiles[0.95],
                response_time_p99_s=quantiles[0.99],
            )
        )
    return sorted(upstreams, key=lambda item: (-item.attempts, item.upstream))
