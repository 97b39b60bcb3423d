"""HTTP route of host series."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from sqlalchemy import select

from app.api.deps import SessionDep, ViewerUser
from app.core.db import utcnow
from app.core.errors import InvalidInputError, NotFoundError
from app.core.types import IdPath, Timestamp
from app.hosts.models import Host
from app.metrics.schemas import SeriesRead
from app.metrics.series import get_series

router = APIRouter(tags=["metrics"])

RangeName = Literal["15m", "1h", "6h", "24h", "7d"]
RANGES: dict[str, timedelta] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
# Hour rollups are kept a year by default; a little more leaves room for a custom retention.
MAX_SPAN = timedelta(days=800)


def resolve_range(
    *, range_name: str | None, start: datetime | None, end: datetime | None, now: datetime
) -> tuple[datetime, datetime]:
    """[start, end) from a preset or from/to; InvalidInputError when they contradict."""
    if range_name is not None and (start is not None or end is not None):
        raise InvalidInputError("give either range or from/to, not both")
    if start is None:
        if end is not None:
            raise InvalidInputError("to needs from")
        span = RANGES[range_name or "1h"]
        return now - span, now
    end = end or now
    if end <= start:
        raise InvalidInputError("to must be after from")
    if end - start > MAX_SPAN:
        raise InvalidInputError(f"the range may span at most {MAX_SPAN.days} days")
    return start, end


@router.get("/hosts/{host_id}/series", response_model=SeriesRead, response_model_by_alias=True)
def host_series(
    host_id: IdPath,
    session: SessionDep,
    _user: ViewerUser,
    range_name: Annotated[RangeName | None, Query(alias="range")] = None,
    start: Annotated[Timestamp | None, Query(alias="from")] = None,
    end: Annotated[Timestamp | None, Query(alias="to")] = None,
) -> Response:
    """A host's metrics over a preset range (default 1h) or from/to, in at most ~500 points."""
    if session.scalar(select(Host.id).where(Host.id == host_id)) is None:
        raise NotFoundError(f"host {host_id} does not exist")
    now = utcnow()
    start, end = resolve_range(range_name=range_name, start=start, end=end, now=now)
    series = get_series(session=session, host_id=host_id, start=start, end=end, now=now)
    # Serialised here: returned as a model, FastAPI would dump, validate and dump again its
    # ~500 points, which costs more than the query.
    return Response(series.model_dump_json(by_alias=True), media_type="application/json")
