"""Access-log counters summed over a window: a host's for the rules' metrics window (its hour
of raw rows, always kept), every host's for the alert rules (windows up to a day)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from nginx_fleet_analyzer.latency_sketch import Sketch
from sqlalchemy import LargeBinary, case, func, select, type_coerce, union_all
from sqlalchemy.orm import Session

from app.access_log.aggregate import SketchCounts
from app.access_log.fields import SITE_COUNTERS
from app.access_log.models import LogStats, LogStatsRollup
from app.access_log.rollups import bucket_of
from app.access_log.series import RAW_TAIL
from app.access_log.settings import get_log_retention
from app.metrics.bucketing import SeriesSource


def window_counters(
    *, session: Session, host_id: int, start: datetime, end: datetime
) -> dict[str, int | None]:
    """Every site counter summed over (start, end] (None where no row had it), plus
    `get_2xx_requests`: the requests of the rows that recorded get_2xx (its denominator)."""
    columns = LogStats.__table__.c
    sums = [func.sum(columns[name]).label(name) for name in SITE_COUNTERS]
    with_get = func.sum(case((columns.get_2xx.is_not(None), columns.requests)))
    row = session.execute(
        select(*sums, with_get.label("get_2xx_requests")).where(
            columns.host_id == host_id, columns.ts > start, columns.ts <= end
        )
    ).one()
    return {
        name: None if row._mapping[name] is None else int(row._mapping[name])
        for name in (*SITE_COUNTERS, "get_2xx_requests")
    }


def window_request_time(
    *, session: Session, host_id: int, start: datetime, end: datetime
) -> Sketch | None:
    """The host's request times over (start, end] merged into one sketch (None: none logged)."""
    counts = SketchCounts()
    # The packed bytes themselves: SketchCounts reads them without the protocol form.
    packed = type_coerce(LogStats.request_time, LargeBinary)
    query = select(packed).where(
        LogStats.host_id == host_id,
        LogStats.ts > start,
        LogStats.ts <= end,
        LogStats.request_time.is_not(None),
    )
    for (data,) in session.execute(query):
        counts.add(data)
    return counts.sketch() if counts else None


def counters_by_host(
    *, session: Session, names: Sequence[str], start: datetime, end: datetime, now: datetime
) -> dict[int, dict[str, int | None]]:
    """The named site counters of every host summed over (start, end] (None where no row had
    one): raw rows while they are kept, else the 1-minute rollups up to the last few minutes
    (which the rollup task may not have finished) and raw rows after them. The older end of a
    window read from rollups is rounded to whole minutes."""
    raw = LogStats.__table__.c
    cut = bucket_of(now - RAW_TAIL, SeriesSource.minute.resolution_s)
    if start >= now - get_log_retention().raw or cut <= start:
        cut = start
    parts = [select(raw.host_id, *(raw[name] for name in names)).where(raw.ts > cut, raw.ts <= end)]
    if cut > start:
        rollups = LogStatsRollup.__table__.c
        parts.append(
            select(rollups.host_id, *(rollups[name] for name in names)).where(
                rollups.resolution == SeriesSource.minute.value,
                rollups.bucket_start >= start,
                rollups.bucket_start < cut,
            )
        )
    rows = union_all(*parts).subquery()
    query = select(rows.c.host_id, *(func.sum(rows.c[name]).label(name) for name in names))
    return {
        row.host_id: {
            name: None if row._mapping[name] is None else int(row._mapping[name]) for name in names
        }
        for row in session.execute(query.group_by(rows.c.host_id))
    }
