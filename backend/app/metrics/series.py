"""A host's metrics over a time range, bucketed in SQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, and_, case, func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from app.metrics.bucketing import SeriesSource, plan_series
from app.metrics.fields import CHARTED_FIELDS, MAX_FIELDS
from app.metrics.gaps import gaps_between
from app.metrics.models import Sample, SampleRollup
from app.metrics.schemas import SeriesPoint, SeriesRead
from app.metrics.settings import get_retention
from app.metrics.sql import as_float, epoch_bucket


def weighted_avg(average: Any, count: Any) -> ColumnElement[float]:
    """Average of bucket averages weighted by their sample counts (NULL averages left out).

    A bucket's count includes samples where this one figure was missing (a rate right after a
    gap), which slightly over-weights it; exact per-figure counts would double the columns."""
    weight = case((average.is_not(None), count))
    return as_float(func.sum(average * count)) / func.nullif(func.sum(weight), 0)


def raw_aggregates() -> list[ColumnElement[Any]]:
    """One aggregate per charted field over raw samples, labelled with the field's name."""
    columns = Sample.__table__.c
    return [
        (
            func.max(columns[name]) if name in MAX_FIELDS else as_float(func.avg(columns[name]))
        ).label(name)
        for name in CHARTED_FIELDS
    ]


def rollup_aggregates() -> list[ColumnElement[Any]]:
    """One aggregate per charted field over rollup rows, labelled with the field's name."""
    columns = SampleRollup.__table__.c
    return [
        (
            func.max(columns[f"{name}_max"])
            if name in MAX_FIELDS
            else weighted_avg(columns[f"{name}_avg"], columns.sample_count)
        ).label(name)
        for name in CHARTED_FIELDS
    ]


def series_query(
    session: Session,
    *,
    host_id: int,
    start: datetime,
    end: datetime,
    source: SeriesSource,
    step_s: int,
) -> Select[Any]:
    """SELECT bucket, <aggregates> for one host, range and source."""
    if source is SeriesSource.raw:
        table = Sample.__table__
        ts = table.c.ts
        where = and_(table.c.host_id == host_id, ts >= start, ts < end)
        aggregates = raw_aggregates()
    else:
        table = SampleRollup.__table__
        ts = table.c.bucket_start
        where = and_(
            table.c.host_id == host_id,
            table.c.resolution == source.value,
            ts >= start,
            ts < end,
        )
        aggregates = rollup_aggregates()
    bucket = epoch_bucket(session, ts, step_s).label("bucket")
    return select(bucket, *aggregates).where(where).group_by(bucket).order_by(bucket)


def get_series(
    *, session: Session, host_id: int, start: datetime, end: datetime, now: datetime
) -> SeriesRead:
    """Points of one host between start and end, at most ~500 of them."""
    retention = get_retention()
    plan = plan_series(
        start, end, now=now, raw_retention=retention.raw, minute_retention=retention.minute
    )
    query = series_query(
        session, host_id=host_id, start=start, end=end, source=plan.source, step_s=plan.step_s
    )
    points = [
        SeriesPoint(
            ts=datetime.fromtimestamp(int(row.bucket), UTC),
            **{name: getattr(row, name) for name in CHARTED_FIELDS},
        )
        for row in session.execute(query)
    ]
    return SeriesRead(
        host_id=host_id,
        from_=start,
        to=end,
        step_s=plan.step_s,
        points=points,
        gaps=gaps_between(session, host_id=host_id, start=start, end=end),
    )
