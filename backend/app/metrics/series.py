"""A host's metrics over a time range, bucketed in SQL."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import Row, Select, and_, bindparam, case, func, literal, or_, select, union_all
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from app.metrics.bucketing import SeriesSource, plan_series
from app.metrics.fields import CHARTED_FIELDS, MAX_FIELDS
from app.metrics.gaps import gaps_between
from app.metrics.models import Sample, SampleRollup
from app.metrics.schemas import SeriesPoint, SeriesRead
from app.metrics.settings import get_retention
from app.metrics.sql import as_float, dialect_name, epoch_bucket, epoch_bucket_for

# Minutes older than this before now have been rolled up (the rollup task runs every minute,
# re-aggregating the last five); newer ones are read from the raw samples.
ROLLED_UP_AFTER = timedelta(minutes=3)
MINUTE = timedelta(minutes=1)
# A series row is (bucket, *CHARTED_FIELDS); a point names the bucket ts.
_POINT_FIELDS = ("ts", *CHARTED_FIELDS)
_POINTS = TypeAdapter(list[SeriesPoint])


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


def _minute_ceil(moment: datetime) -> datetime:
    """moment rounded up to a whole minute."""
    floor = moment.replace(second=0, microsecond=0)
    return floor if floor == moment else floor + MINUTE


@lru_cache(maxsize=32)
def _blended_statement(dialect: str, step_s: int) -> Select[Any]:
    """The statement of blended_rows, built once per dialect and width (it is read often)."""
    rollups, samples = SampleRollup.__table__, Sample.__table__
    host_id: BindParameter[int] = bindparam("host_id")
    rollup_rows = select(
        rollups.c.bucket_start.label("at"),
        rollups.c.sample_count.label("n"),
        *(rollups.c[f"{name}_avg"].label(f"{name}_avg") for name in CHARTED_FIELDS),
        *(rollups.c[f"{name}_max"].label(f"{name}_max") for name in MAX_FIELDS),
    ).where(
        rollups.c.host_id == host_id,
        rollups.c.resolution == SeriesSource.minute.value,
        rollups.c.bucket_start >= bindparam("first_minute"),
        rollups.c.bucket_start < bindparam("cutoff"),
    )
    raw_rows = select(
        samples.c.ts.label("at"),
        literal(1).label("n"),
        *(as_float(samples.c[name]).label(f"{name}_avg") for name in CHARTED_FIELDS),
        *(as_float(samples.c[name]).label(f"{name}_max") for name in MAX_FIELDS),
    ).where(
        samples.c.host_id == host_id,
        or_(
            and_(samples.c.ts >= bindparam("start"), samples.c.ts < bindparam("head_end")),
            and_(samples.c.ts >= bindparam("cutoff"), samples.c.ts < bindparam("end")),
        ),
    )
    rows = union_all(rollup_rows, raw_rows).subquery()
    bucket = epoch_bucket_for(dialect, rows.c.at, step_s).label("bucket")
    aggregates = [
        (
            func.max(rows.c[f"{name}_max"])
            if name in MAX_FIELDS
            else weighted_avg(rows.c[f"{name}_avg"], rows.c.n)
        ).label(name)
        for name in CHARTED_FIELDS
    ]
    return select(bucket, *aggregates).group_by(bucket).order_by(bucket)


def blended_rows(
    session: Session,
    *,
    host_id: int,
    start: datetime,
    end: datetime,
    step_s: int,
    now: datetime,
) -> Sequence[Row[Any]]:
    """Rows (bucket, <aggregates>) read from 1-minute rollups where whole rolled-up minutes
    cover the range, from raw samples for the partial first minute and the last few minutes
    not rolled up yet.

    Buckets of whole minutes aggregate the same samples either way: a rollup row carries its
    averages with their sample count, a raw row is an average of one."""
    first_minute = _minute_ceil(start)
    cutoff = max(min(end, now.replace(second=0, microsecond=0) - ROLLED_UP_AFTER), first_minute)
    statement = _blended_statement(dialect_name(session), step_s)
    values = {
        "host_id": host_id,
        "start": start,
        "head_end": min(first_minute, end),
        "first_minute": first_minute,
        "cutoff": cutoff,
        "end": end,
    }
    return session.execute(statement, values).all()


def get_series(
    *, session: Session, host_id: int, start: datetime, end: datetime, now: datetime
) -> SeriesRead:
    """Points of one host between start and end, at most ~500 of them."""
    retention = get_retention()
    plan = plan_series(
        start, end, now=now, raw_retention=retention.raw, minute_retention=retention.minute
    )
    rows: Sequence[Row[Any]]
    if plan.source is SeriesSource.raw and plan.step_s % SeriesSource.minute.resolution_s == 0:
        # Whole minutes per bucket: the 1-minute rollups answer with a sixth of the rows.
        rows = blended_rows(
            session, host_id=host_id, start=start, end=end, step_s=plan.step_s, now=now
        )
    else:
        query = series_query(
            session, host_id=host_id, start=start, end=end, source=plan.source, step_s=plan.step_s
        )
        rows = session.execute(query).all()
    # Validated as one list: pydantic-core checks ~500 dicts faster than ~500 constructor calls
    # (which cost more than the query); a bucket's epoch seconds are read as a UTC datetime.
    points = _POINTS.validate_python([dict(zip(_POINT_FIELDS, row, strict=True)) for row in rows])
    return SeriesRead(
        host_id=host_id,
        from_=start,
        to=end,
        step_s=plan.step_s,
        points=points,
        gaps=gaps_between(session, host_id=host_id, start=start, end=end),
    )
