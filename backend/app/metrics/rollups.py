"""1-minute rollups from raw samples, 1-hour rollups from 1-minute ones, and retention
(whole partitions dropped: app.metrics.partitioning).

The access-log figures (app.access_log.rollups) are rolled up and expired in the same runs."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, literal, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from app.access_log.rollups import rollup_logs, rollup_recent_logs
from app.core.db import utcnow
from app.core.partitions import Expired
from app.metrics import partitioning
from app.metrics.bucketing import SeriesSource
from app.metrics.fields import CHARTED_FIELDS, MAX_FIELDS
from app.metrics.models import Sample, SampleGap, SampleRollup
from app.metrics.series import weighted_avg
from app.metrics.settings import RetentionSettings
from app.metrics.sql import as_float, bucket_timestamp, insert_for, table_of

# Re-aggregated on every run, so samples that arrive a little late still land in their bucket.
MINUTE_LOOKBACK = timedelta(minutes=5)
HOUR_LOOKBACK = timedelta(hours=2)

_rollups = table_of(SampleRollup)
_samples = table_of(Sample)
_gaps = table_of(SampleGap)


def _floor(moment: datetime, step: timedelta) -> datetime:
    """moment rounded down to a multiple of step since the epoch."""
    seconds = int(step.total_seconds())
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, moment.tzinfo)


def _aggregate_columns(from_minutes: bool) -> dict[str, ColumnElement[Any]]:
    """Rollup column name -> aggregate over raw samples or over 1-minute rollups."""
    columns: dict[str, ColumnElement[Any]] = {}
    for name in CHARTED_FIELDS:
        if from_minutes:
            columns[f"{name}_avg"] = weighted_avg(
                _rollups.c[f"{name}_avg"], _rollups.c.sample_count
            )
        else:
            columns[f"{name}_avg"] = as_float(func.avg(_samples.c[name]))
        if name in MAX_FIELDS:
            source = _rollups.c[f"{name}_max"] if from_minutes else _samples.c[name]
            columns[f"{name}_max"] = as_float(func.max(source))
    return columns


def _upsert_rollups(
    session: Session,
    *,
    resolution: SeriesSource,
    start: datetime,
    end: datetime,
    host_id: int | None,
) -> int:
    """Aggregate [start, end) into `resolution` buckets and upsert them; returns rows written."""
    from_minutes = resolution is SeriesSource.hour
    if from_minutes:
        ts = _rollups.c.bucket_start
        conditions = [_rollups.c.resolution == SeriesSource.minute.value, ts >= start, ts < end]
        host_column = _rollups.c.host_id
        count: ColumnElement[Any] = func.sum(_rollups.c.sample_count)
    else:
        ts = _samples.c.ts
        conditions = [ts >= start, ts < end]
        host_column = _samples.c.host_id
        count = func.count()
    if host_id is not None:
        conditions.append(host_column == host_id)
    bucket = bucket_timestamp(session, ts, resolution.resolution_s)
    aggregates = _aggregate_columns(from_minutes)
    query = (
        select(
            host_column,
            literal(resolution.value),
            bucket,
            count,
            *aggregates.values(),
        )
        .where(and_(*conditions))
        .group_by(host_column, bucket)
    )
    target = ["host_id", "resolution", "bucket_start", "sample_count", *aggregates]
    statement = insert_for(session, _rollups).from_select(target, query)
    # Each run re-aggregates the last minutes and hours: only buckets whose figures changed
    # (a sample arrived, rates were recomputed) are rewritten. An unchanged bucket rewritten
    # every minute would leave a dead row version, and a new index entry, each time.
    changed = or_(
        *(_rollups.c[name].is_distinct_from(statement.excluded[name]) for name in target[3:])
    )
    statement = statement.on_conflict_do_update(
        index_elements=["host_id", "resolution", "bucket_start"],
        set_={name: statement.excluded[name] for name in target[3:]},
        where=changed,
    )
    result = session.execute(statement)
    return int(getattr(result, "rowcount", 0) or 0)


def rollup_recent(*, session: Session, now: datetime) -> tuple[int, int]:
    """Refresh the last few 1-minute and 1-hour buckets of every host; commits."""
    minute_start = _floor(now - MINUTE_LOOKBACK, timedelta(minutes=1))
    hour_start = _floor(now - HOUR_LOOKBACK, timedelta(hours=1))
    minutes = _upsert_rollups(
        session, resolution=SeriesSource.minute, start=minute_start, end=now, host_id=None
    )
    hours = _upsert_rollups(
        session, resolution=SeriesSource.hour, start=hour_start, end=now, host_id=None
    )
    rollup_recent_logs(session, now=now)
    session.commit()
    return minutes, hours


def rollup_range(*, session: Session, host_id: int, start: datetime, end: datetime) -> None:
    """Rebuild one host's rollups over [start, end), e.g. after a spool replay; commits."""
    minute_start = _floor(start, timedelta(minutes=1))
    hour_start = _floor(start, timedelta(hours=1))
    minute_end = _floor(end, timedelta(minutes=1)) + timedelta(minutes=1)
    hour_end = _floor(end, timedelta(hours=1)) + timedelta(hours=1)
    _upsert_rollups(
        session, resolution=SeriesSource.minute, start=minute_start, end=minute_end, host_id=host_id
    )
    _upsert_rollups(
        session, resolution=SeriesSource.hour, start=hour_start, end=hour_end, host_id=host_id
    )
    rollup_logs(session, start=minute_start, end=minute_end, now=utcnow(), host_id=host_id)
    session.commit()


def apply_retention(
    *, session: Session, now: datetime, retention: RetentionSettings
) -> dict[str, Expired]:
    """Drop the partitions (on SQLite delete the rows) older than each resolution's retention,
    samples and access-log figures alike; commits; returns what went, by kind."""
    expired = partitioning.expire_all(session=session, now=now, retention=retention)
    # A gap explains a hole in a chart; kept as long as the coarsest chart data (few rows).
    gaps = session.execute(delete(_gaps).where(_gaps.c.to_ts < now - retention.hour))
    expired["gaps"] = Expired(rows_deleted=int(getattr(gaps, "rowcount", 0) or 0))
    session.commit()
    partitioning.drop_expired(session=session)
    return expired
