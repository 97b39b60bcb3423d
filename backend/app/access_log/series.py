"""Reading access-log rows of a range from the table the range calls for, into figures.

A range read from the 1-minute rollups takes its last minutes from the raw rows instead: the
rollup task rebuilds the newest minutes every minute (app.access_log.rollups), so the rollups
of the last RAW_TAIL may be missing or partial, and the raw rows of that span always exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, func, select
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
from app.access_log.rollups import LOG_MINUTE_LOOKBACK, bucket_of
from app.access_log.schemas import AccessLogFigures, AccessLogPoint, TopPathRead, UpstreamRead
from app.access_log.settings import get_log_retention
from app.core.config import get_settings
from app.metrics.bucketing import SeriesPlan, SeriesSource, plan_series
from app.metrics.sql import table_of

_TABLES = {
    ("site", True): table_of(LogStats),
    ("site", False): table_of(LogStatsRollup),
    ("upstream", True): table_of(LogUpstreamStats),
    ("upstream", False): table_of(LogUpstreamRollup),
}


# Minutes the rollup task may not have rolled up (completely) yet: its lookback and one more.
RAW_TAIL = LOG_MINUTE_LOOKBACK + timedelta(minutes=1)


def plan(start: datetime, end: datetime, now: datetime) -> SeriesPlan:
    """The source table and bucket width of a range, chosen as for the host series but by the
    access-log tables' own retention: a range the raw rows no longer cover reads minutes, one
    the minutes no longer cover (or too long for them) hours."""
    retention = get_log_retention()
    return plan_series(
        start, end, now=now, raw_retention=retention.raw, minute_retention=retention.minute
    )


def raw_tail_start(source: SeriesSource, end: datetime, now: datetime) -> datetime | None:
    """Where a range read from minute rollups switches to raw rows (None: it does not)."""
    if source is not SeriesSource.minute:
        return None
    cut = bucket_of(now - RAW_TAIL, SeriesSource.minute.resolution_s)
    return cut if end > cut else None


def range_figures(chosen: SeriesPlan) -> RangeFigures:
    """An empty RangeFigures for the plan's buckets and the time each of its rows covers."""
    rollup_s = 0 if chosen.source is SeriesSource.raw else chosen.source.resolution_s
    return RangeFigures(
        step_s=chosen.step_s, raw_s=get_settings().push_interval_s, rollup_s=rollup_s
    )


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


def _parts(
    source: SeriesSource, start: datetime, end: datetime, now: datetime
) -> list[tuple[SeriesSource, datetime, datetime]]:
    """The (source, start, end) pieces a range is read from: the planned source, and raw rows
    for the tail of a range read from minutes."""
    cut = raw_tail_start(source, end, now)
    if cut is None:
        return [(source, start, end)]
    if cut <= start:
        return [(SeriesSource.raw, start, end)]
    return [(source, start, cut), (SeriesSource.raw, cut, end)]


def rows_of(
    session: Session,
    kind: str,
    source: SeriesSource,
    *,
    host_ids: Sequence[int] | None,
    sites: Sequence[str] = (),
    start: datetime,
    end: datetime,
    now: datetime,
) -> Iterator[Any]:
    """Site ('site') or upstream ('upstream') rows of the range, their time as `at`."""
    for part, part_start, part_end in _parts(source, start, end, now):
        table, ts, conditions = _selection(
            kind, part, host_ids=host_ids, sites=sites, start=part_start, end=part_end
        )
        yield from session.execute(
            select(*stored_columns(table), ts.label("at")).where(and_(*conditions))
        )


def site_requests(
    session: Session,
    source: SeriesSource,
    *,
    host_ids: Sequence[int] | None,
    start: datetime,
    end: datetime,
    now: datetime,
) -> list[tuple[str, int]]:
    """Every site of the range with its requests, most first (no sketch is read)."""
    totals: dict[str, int] = {}
    for part, part_start, part_end in _parts(source, start, end, now):
        table, _ts, conditions = _selection(
            "site", part, host_ids=host_ids, sites=(), start=part_start, end=part_end
        )
        query = select(table.c.site, func.sum(table.c.requests)).where(and_(*conditions))
        for site, requests in session.execute(query.group_by(table.c.site)):
            totals[site] = totals.get(site, 0) + int(requests)
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


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

    A rate divides by the time the bucket's rows cover: a raw row stands for the `raw_s` (a
    sample's interval) before its time, a rollup row for the `rollup_s` (minute or hour) from
    its start, so the bucket still filling up and the one that starts before the range are
    neither diluted nor inflated."""

    def __init__(self, *, step_s: int, raw_s: int, rollup_s: int) -> None:
        self.step_s = step_s
        self.raw_s, self.rollup_s = timedelta(seconds=raw_s), timedelta(seconds=rollup_s)
        self.buckets: dict[datetime, Totals] = {}
        # Start and end of the time the rows of each bucket cover.
        self.spans: dict[datetime, list[datetime]] = {}
        self.paths = PathTotals()
        self.hosts: set[int] = set()

    def add(self, row: Any) -> None:
        """Add one row selected by rows_of('site', …)."""
        values = row._mapping
        at = values["at"]
        bucket = bucket_of(at, self.step_s)
        begins, ends = (at, at + self.rollup_s) if "resolution" in values else (at - self.raw_s, at)
        totals = self.buckets.get(bucket)
        if totals is None:
            totals = self.buckets[bucket] = site_totals()
            self.spans[bucket] = [begins, ends]
        totals.add(values)
        span = self.spans[bucket]
        span[0], span[1] = min(span[0], begins), max(span[1], ends)
        self.hosts.add(values["host_id"])
        if values["top_paths"]:
            self.paths.add(values["site"], values["top_paths"])

    def _seconds(self, bucket: datetime) -> float:
        """The time the rows of a bucket cover, at most its width."""
        begins, ends = self.spans[bucket]
        return min(float(self.step_s), (ends - begins).total_seconds())

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


def upstream_figures(rows: Iterable[Any]) -> list[UpstreamRead]:
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
