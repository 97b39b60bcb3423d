"""HTTP routes of a host's config, its findings and its score history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import SessionDep, ViewerUser
from app.configs import reading
from app.configs.schemas import HostConfigRead, ScoreHistory
from app.core.db import utcnow
from app.core.types import IdPath

router = APIRouter(tags=["configs"])


@router.get("/hosts/{host_id}/config", response_model=HostConfigRead)
def get_host_config(host_id: IdPath, session: SessionDep, _user: ViewerUser) -> HostConfigRead:
    """The host's current config files with the findings of its latest analysis."""
    return reading.host_config(session=session, host_id=host_id, now=utcnow())


@router.get("/hosts/{host_id}/scores", response_model=ScoreHistory)
def get_host_scores(
    host_id: IdPath,
    session: SessionDep,
    _user: ViewerUser,
    range_: Annotated[reading.ScoreRange, Query(alias="range")] = "24h",
) -> ScoreHistory:
    """The host's config score over time, one point per stored analysis."""
    return reading.score_history(session=session, host_id=host_id, range_=range_, now=utcnow())
