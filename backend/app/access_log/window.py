"""A host's access-log counters summed over a window, for the rules' metrics window."""

from __future__ import annotations

from datetime import datetime

from nginx_fleet_analyzer.latency_sketch import Sketch
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from app.access_log.aggregate import SketchCounts, decoded
from app.access_log.fields import SITE_COUNTERS
from app.access_log.models import LogStats


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
    query = select(LogStats.request_time).where(
        LogStats.host_id == host_id,
        LogStats.ts > start,
        LogStats.ts <= end,
        LogStats.request_time.is_not(None),
    )
    for (data,) in session.execute(query):
        counts.add(decoded(data))
    return counts.sketch() if counts.to_json() is not None else None
