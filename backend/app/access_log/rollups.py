"""1-minute and 1-hour rollups of the access-log tables and the fleet's recent figures.

Counters are summed and sketches merged in Python (sketches cannot be merged in portable SQL).
Called from app.metrics.rollups inside its transactions, so samples and access-log figures are
rolled up and rebuilt after a replay together; app.metrics.partitioning expires both."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, delete, select
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
from app.access_log.figures import hit_ratio, status_share
from app.access_log.models import (
    AccessLogRecent,
    LogStats,
    LogStatsRollup,
    LogUpstreamRollup,
    LogUpstreamStats,
)
from app.access_log.settings import get_log_retention
from app.metrics.bucketing import SeriesSource
from app.metrics.sql import insert_for, table_of

# The fleet view's window of recent figures.
RECENT_WINDOW = timedelta(minutes=15)
# Rows arrive seconds after their time; later ones (a spool replay) get a rollup of their own
# (app.agents.ingest), so the periodic run looks back less far than the samples' SQL rollup:
# merging sketches in Python costs far more than averaging numbers in SQL.
LOG_MINUTE_LOOKBACK = timedelta(minutes=2)
# The current hour's row is provisional (only ranges beyond ~10 days read hours): it is rebuilt
# from its minutes every this many minutes, and once more when the hour has closed.
HOUR_REFRESH_MINUTES = 10

_stats = table_of(LogStats)
_stats_rollups = table_of(LogStatsRollup)
_upstreams = table_of(LogUpstreamStats)
_upstream_rollups = table_of(LogUpstreamRollup)
_recent = table_of(AccessLogRecent)


def raw_kept_since(now: datetime) -> datetime:
    """Start of the oldest minute whose raw rows are all still kept."""
    return bucket_of(now - get_log_retention().raw, 60) + timedelta(minutes=1)


def bucket_of(moment: datetime, step_s: int) -> datetime:
    """Start of the step_s-wide bucket (aligned to the epoch) holding moment, in UTC."""
    epoch = math.floor(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % step_s, UTC)


def _source_rows(
    session: Session,
    table: Table,
    *,
    resolution: SeriesSource,
    start: datetime,
    end: datetime,
    host_id: int | None,
) -> Any:
    """Rows feeding `resolution` buckets over [start, end): raw rows for minutes, minute
    rollups for hours, with their time as `at`."""
    if resolution is SeriesSource.minute:
        ts = table.c.ts
        conditions: list[ColumnElement[bool]] = [ts >= start, ts < end]
    else:
        ts = table.c.bucket_start
        conditions = [table.c.resolution == SeriesSource.minute.value, ts >= start, ts < end]
    if host_id is not None:
        conditions.append(table.c.host_id == host_id)
    return session.execute(select(*stored_columns(table), ts.label("at")).where(and_(*conditions)))


def _rollup(
    session: Session,
    *,
    source: Table,
    target: Table,
    keys: Sequence[str],
    new_totals: Callable[[], Totals],
    resolution: SeriesSource,
    start: datetime,
    end: datetime,
    host_id: int | None,
) -> int:
    """Sum the source rows of [start, end) into `resolution` buckets per key; upsert them."""
    step = resolution.resolution_s
    groups: dict[tuple[Any, ...], tuple[Totals, PathTotals]] = {}
    with_paths = "top_paths" in target.c
    for row in _source_rows(
        session, source, resolution=resolution, start=start, end=end, host_id=host_id
    ):
        values = row._mapping
        key = (bucket_of(values["at"], step), *(values[name] for name in keys))
        group = groups.get(key)
        if group is None:
            group = groups[key] = (new_totals(), PathTotals())
        group[0].add(values)
        if with_paths and values["top_paths"]:
            group[1].add(values["site"], values["top_paths"])
    if not groups:
        return 0
    rows = []
    for (bucket, *key_values), (totals, paths) in groups.items():
        row = {
            "resolution": resolution.value,
            "bucket_start": bucket,
            **dict(zip(keys, key_values, strict=True)),
            **totals.as_row(),
        }
        if with_paths:
            row["top_paths"] = [entry[1:] for entry in paths.top()] if paths else None
        rows.append(row)
    statement = insert_for(session, target)
    index = ["host_id", "resolution", "bucket_start", *keys[1:]]
    statement = statement.on_conflict_do_update(
        index_elements=index,
        set_={name: statement.excluded[name] for name in rows[0] if name not in index},
    )
    session.execute(statement, rows)
    return len(rows)


def _rollup_both(
    session: Session,
    *,
    resolution: SeriesSource,
    start: datetime,
    end: datetime,
    host_id: int | None,
) -> int:
    """Roll up site and upstream figures of [start, end) into `resolution` buckets."""
    from_minutes = resolution is SeriesSource.hour
    written = _rollup(
        session,
        source=_stats_rollups if from_minutes else _stats,
        target=_stats_rollups,
        keys=("host_id", "site"),
        new_totals=site_totals,
        resolution=resolution,
        start=start,
        end=end,
        host_id=host_id,
    )
    written += _rollup(
        session,
        source=_upstream_rollups if from_minutes else _upstreams,
        target=_upstream_rollups,
        keys=("host_id", "site", "upstream"),
        new_totals=upstream_totals,
        resolution=resolution,
        start=start,
        end=end,
        host_id=host_id,
    )
    return written


def rollup_logs(
    session: Session,
    *,
    start: datetime,
    end: datetime,
    now: datetime,
    host_id: int | None = None,
) -> tuple[int, int]:
    """Rebuild the minute buckets of [start, end) and the closed hour buckets holding them,
    e.g. after a spool replay; does not commit. Returns rows written (minutes, hours).

    The current hour is left to the periodic run: a host whose clock lags sends every sample
    "late", and rebuilding its whole hour on each push would cost far more than the push."""
    minute_start = bucket_of(start, SeriesSource.minute.resolution_s)
    hour_start = bucket_of(start, SeriesSource.hour.resolution_s)
    hour_end = bucket_of(end - timedelta(microseconds=1), SeriesSource.hour.resolution_s)
    hour_end = min(hour_end + timedelta(hours=1), bucket_of(now, SeriesSource.hour.resolution_s))
    # A minute is rebuilt only while all its raw rows are kept: rebuilt from fewer, it would
    # lose what the expired ones gave it (store_access_logs drops rows that old anyway).
    minute_start = max(minute_start, raw_kept_since(now))
    minutes = 0
    if end > minute_start:
        minutes = _rollup_both(
            session, resolution=SeriesSource.minute, start=minute_start, end=end, host_id=host_id
        )
    hours = 0
    if hour_end > hour_start:
        hours = _rollup_both(
            session, resolution=SeriesSource.hour, start=hour_start, end=hour_end, host_id=host_id
        )
    return minutes, hours


def rollup_recent_logs(session: Session, *, now: datetime) -> tuple[int, int]:
    """The periodic run: the last minutes of every host, the hours that just closed, the
    current hour every HOUR_REFRESH_MINUTES, then the fleet's recent figures; does not
    commit. Returns rows written (minutes, hours)."""
    minute_start = bucket_of(now - LOG_MINUTE_LOOKBACK, SeriesSource.minute.resolution_s)
    minutes = _rollup_both(
        session, resolution=SeriesSource.minute, start=minute_start, end=now, host_id=None
    )
    hour_start = bucket_of(minute_start, SeriesSource.hour.resolution_s)
    hour_end = bucket_of(now, SeriesSource.hour.resolution_s)
    if now.minute % HOUR_REFRESH_MINUTES == 0:
        hour_end += timedelta(hours=1)
    hours = 0
    if hour_end > hour_start:
        hours = _rollup_both(
            session, resolution=SeriesSource.hour, start=hour_start, end=hour_end, host_id=None
        )
    refresh_recent(session, now=now)
    return minutes, hours


def refresh_recent(session: Session, *, now: datetime) -> int:
    """Recompute every host's figures of the last RECENT_WINDOW from the minute rollups (the
    fleet view reads them in its one query); does not commit. Returns hosts with figures."""
    rows = session.execute(
        select(*stored_columns(_stats_rollups)).where(
            _stats_rollups.c.resolution == SeriesSource.minute.value,
            _stats_rollups.c.bucket_start >= bucket_of(now - RECENT_WINDOW, 60),
            _stats_rollups.c.bucket_start <= now,
        )
    )
    hosts: dict[int, Totals] = {}
    only_latency = ("request_time",)
    for row in rows:
        values = row._mapping
        totals = hosts.get(values["host_id"])
        if totals is None:
            totals = hosts[values["host_id"]] = Totals(SITE_COUNTERS, only_latency)
        totals.add(values)
    if hosts:
        statement = insert_for(session, _recent)
        statement = statement.on_conflict_do_update(
            index_elements=["host_id"],
            set_={
                column.name: statement.excluded[column.name]
                for column in _recent.c
                if column.name != "host_id"
            },
        )
        session.execute(
            statement,
            [
                {
                    "host_id": host_id,
                    "computed_at": now,
                    "requests": totals.counters["requests"] or 0,
                    "cache_hit_ratio": hit_ratio(totals.counters),
                    "request_time_p95_s": (
                        sketch.quantile(0.95)
                        if (sketch := totals.sketch("request_time")) is not None
                        else None
                    ),
                    "share_5xx": status_share(totals.counters, "status_5xx"),
                }
                for host_id, totals in sorted(hosts.items())
            ],
        )
    # Hosts without figures in the window lose theirs; an upsert, not delete-and-insert, so
    # that two overlapping runs cannot collide on a host.
    session.execute(delete(_recent).where(_recent.c.computed_at < now))
    return len(hosts)
