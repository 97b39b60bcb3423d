"""HTTP routes of the access-log figures (docs/access-log.md, section 3)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import AfterValidator, Field, StringConstraints

from app.access_log import service
from app.access_log.schemas import AccessLogSummaryRead, HostAccessLogRead
from app.api.deps import SessionDep, ViewerUser
from app.core.db import utcnow
from app.core.errors import InvalidInputError
from app.core.types import INT4_MAX, IdPath, Timestamp, refuse_nul
from app.metrics.router import MAX_SPAN, RANGES, RangeName

router = APIRouter(tags=["access-log"])

# The length is checked on the plain string, so the message counts characters, not items.
SiteName = Annotated[
    str, StringConstraints(min_length=1, max_length=255), AfterValidator(refuse_nul)
]
HostId = Annotated[int, Field(ge=1, le=INT4_MAX)]
# Enough for any page's selection; a longer URL would be refused by proxies anyway.
MAX_SELECTED = 500

RangeQuery = Annotated[
    RangeName | None, Query(alias="range", description="a preset instead of start/end")
]
StartQuery = Annotated[
    Timestamp | None, Query(description="RFC 3339 with offset; default: end minus the range")
]
EndQuery = Annotated[Timestamp | None, Query(description="RFC 3339 with offset; default: now")]


def resolve_range(
    *, range_name: str | None, start: datetime | None, end: datetime | None, now: datetime
) -> tuple[datetime, datetime]:
    """[start, end) from a preset (default 1h before end) or start/end; 422 when they clash."""
    if range_name is not None and start is not None:
        raise InvalidInputError("give either range or start, not both")
    end = end or now
    if start is None:
        try:
            start = end - RANGES[range_name or "1h"]
        except OverflowError:
            raise InvalidInputError("end is too early for the range before it") from None
    if end <= start:
        raise InvalidInputError("end must be after start")
    if end - start > MAX_SPAN:
        raise InvalidInputError(f"the range may span at most {MAX_SPAN.days} days")
    return start, end


@router.get("/hosts/{host_id}/access-log", response_model=HostAccessLogRead)
def host_access_log(
    host_id: IdPath,
    session: SessionDep,
    _user: ViewerUser,
    start: StartQuery = None,
    end: EndQuery = None,
    range_name: RangeQuery = None,
    site: Annotated[SiteName | None, Query(description="one site; default: all summed")] = None,
) -> HostAccessLogRead:
    """A host's access-log series and totals, upstreams, sites, files and missing figures."""
    now = utcnow()
    start, end = resolve_range(range_name=range_name, start=start, end=end, now=now)
    return service.host_access_log(
        session=session, host_id=host_id, start=start, end=end, site=site, now=now
    )


@router.get(
    "/access-log/summary",
    response_model=AccessLogSummaryRead,
    responses={404: {"description": "A host does not exist"}},
)
def access_log_summary(
    session: SessionDep,
    _user: ViewerUser,
    host_id: Annotated[
        list[HostId], Query(max_length=MAX_SELECTED, description="repeat; none: every host")
    ] = [],  # noqa: B006 - FastAPI copies defaults per request
    site: Annotated[
        list[SiteName], Query(max_length=MAX_SELECTED, description="repeat; none: every site")
    ] = [],  # noqa: B006
    start: StartQuery = None,
    end: EndQuery = None,
    range_name: RangeQuery = None,
) -> AccessLogSummaryRead:
    """Access-log totals over any set of hosts and sites (none given: the whole fleet)."""
    now = utcnow()
    start, end = resolve_range(range_name=range_name, start=start, end=end, now=now)
    return service.access_log_summary(
        session=session, host_ids=host_id, sites=site, start=start, end=end, now=now
    )
