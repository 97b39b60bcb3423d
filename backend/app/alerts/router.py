"""HTTP routes of alert rules, incidents, silences and chart marks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from app.alerts import service
from app.alerts.models import AlertRule
from app.alerts.schemas import (
    AlertPeriod,
    AlertSummary,
    IncidentDetail,
    IncidentPage,
    PreviewRead,
    RuleRead,
    RulesFileResult,
    RuleWrite,
    SignalRead,
    SilenceCreate,
    SilenceRead,
)
from app.api.deps import AdminUser, OperatorUser, SessionDep, ViewerUser
from app.core.db import utcnow
from app.core.errors import InvalidInputError
from app.core.types import DbId, IdPath, Timestamp

router = APIRouter(tags=["alerts"])

MAX_RULES_FILE_BYTES = 1_000_000


class YamlResponse(PlainTextResponse):
    """A rules file."""

    media_type = "application/yaml"


NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No such row"}}


@router.get("/alerts/summary", response_model=AlertSummary)
def alert_summary(session: SessionDep, _user: ViewerUser) -> AlertSummary:
    """How many incidents are open, by severity, for the navigation badge."""
    return service.summary(session=session)


@router.get("/alerts/incidents", response_model=IncidentPage)
def list_incidents(
    session: SessionDep,
    _user: ViewerUser,
    state: Literal["active", "resolved", "all"] = "active",
    host_id: Annotated[DbId | None, Query()] = None,
    rule_id: Annotated[DbId | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    before_id: Annotated[DbId | None, Query()] = None,
) -> IncidentPage:
    """Incidents newest first: open (`active`), `resolved` or `all`; page with before_id."""
    return service.list_incidents(
        session=session,
        state=state,
        host_id=host_id,
        rule_id=rule_id,
        limit=limit,
        before_id=before_id,
    )


@router.get("/alerts/incidents/{incident_id}", response_model=IncidentDetail, responses=NOT_FOUND)
def incident_detail(incident_id: IdPath, session: SessionDep, _user: ViewerUser) -> IncidentDetail:
    """One incident, its cause, and each delivery of the notifications that named it."""
    return service.incident_detail(session=session, incident_id=incident_id)


@router.get("/hosts/{host_id}/alert-periods", response_model=list[AlertPeriod], responses=NOT_FOUND)
def alert_periods(
    host_id: IdPath,
    session: SessionDep,
    _user: ViewerUser,
    start: Annotated[Timestamp, Query(alias="from")],
    end: Annotated[Timestamp, Query(alias="to")],
) -> list[AlertPeriod]:
    """When the host's alerts fired within [from, to], for marks on its charts."""
    if end <= start:
        raise InvalidInputError("to: must be after from")
    return service.alert_periods(session=session, host_id=host_id, start=start, end=end)


@router.get("/alerts/signals", response_model=list[SignalRead])
def list_signals(_user: ViewerUser) -> list[SignalRead]:
    """The host signals a rule can watch, with their units."""
    return service.list_signals()


@router.get("/alerts/rules", response_model=list[RuleRead])
def list_rules(session: SessionDep, _user: ViewerUser) -> list[RuleRead]:
    """Every rule."""
    return service.list_rules(session=session)


@router.post(
    "/alerts/rules",
    response_model=RuleRead,
    status_code=status.HTTP_201_CREATED,
    responses={409: {"description": "The key is taken"}},
)
def create_rule(body: RuleWrite, session: SessionDep, user: AdminUser) -> RuleRead:
    """Add a rule."""
    rule = service.create_rule(session=session, body=body, actor=user, now=utcnow())
    return service.rule_read(session=session, rule=rule)


@router.post("/alerts/rules/preview", response_model=PreviewRead)
def preview_rule(body: RuleWrite, session: SessionDep, _user: OperatorUser) -> PreviewRead:
    """Which hosts the rule would match now (before `for`, hysteresis and silences)."""
    return service.preview(session=session, body=body, now=utcnow())


# The file's shape for the OpenAPI document; RuleWrite's fields with durations as "2m".
RULES_FILE_SCHEMA = {
    "type": "object",
    "required": ["rules"],
    "properties": {"rules": {"type": "array", "items": {"type": "object"}}},
}


@router.get(
    "/alerts/rules/file",
    response_class=YamlResponse,
    responses={200: {"content": {"application/yaml": {"schema": RULES_FILE_SCHEMA}}}},
)
def export_rules(session: SessionDep, _user: AdminUser) -> YamlResponse:
    """Every rule as a YAML rules file (channels by name)."""
    return YamlResponse(service.export_rules(session=session))


@router.put(
    "/alerts/rules/file",
    response_model=RulesFileResult,
    responses={413: {}, 422: {}},
    openapi_extra={"requestBody": {"content": {"application/yaml": {"schema": RULES_FILE_SCHEMA}}}},
)
async def import_rules(request: Request, session: SessionDep, user: AdminUser) -> RulesFileResult:
    """Create or replace rules by key from a YAML rules file; rules not named are kept."""
    body = await request.body()
    if len(body) > MAX_RULES_FILE_BYTES:
        raise InvalidInputError(f"the rules file must be at most {MAX_RULES_FILE_BYTES} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("the rules file must be UTF-8 text") from None
    if "\x00" in text:
        raise InvalidInputError("the rules file must not contain NUL characters")
    return await run_in_threadpool(
        service.import_rules, session=session, text=text, actor=user, now=utcnow()
    )


@router.get("/alerts/rules/{rule_id}", response_model=RuleRead, responses=NOT_FOUND)
def get_rule(rule_id: IdPath, session: SessionDep, _user: ViewerUser) -> RuleRead:
    """One rule."""
    rule: AlertRule = service.get_rule(session=session, rule_id=rule_id)
    return service.rule_read(session=session, rule=rule)


@router.put("/alerts/rules/{rule_id}", response_model=RuleRead, responses=NOT_FOUND)
def update_rule(rule_id: IdPath, body: RuleWrite, session: SessionDep, user: AdminUser) -> RuleRead:
    """Replace a rule; open incidents follow the new rule from the next evaluation."""
    rule = service.update_rule(
        session=session, rule_id=rule_id, body=body, actor=user, now=utcnow()
    )
    return service.rule_read(session=session, rule=rule)


@router.delete(
    "/alerts/rules/{rule_id}", status_code=status.HTTP_204_NO_CONTENT, responses=NOT_FOUND
)
def delete_rule(rule_id: IdPath, session: SessionDep, user: AdminUser) -> None:
    """Remove a rule with its incidents and silences."""
    service.delete_rule(session=session, rule_id=rule_id, actor=user)


@router.get("/alerts/silences", response_model=list[SilenceRead])
def list_silences(session: SessionDep, _user: ViewerUser, active: bool = True) -> list[SilenceRead]:
    """Silences newest first; `active=false` includes ended ones."""
    return service.list_silences(session=session, active_only=active, now=utcnow())


@router.post(
    "/alerts/silences",
    response_model=SilenceRead,
    status_code=status.HTTP_201_CREATED,
    responses=NOT_FOUND,
)
def create_silence(body: SilenceCreate, session: SessionDep, user: OperatorUser) -> SilenceRead:
    """Mute notifications of a rule and/or hosts matching labels until ends_at."""
    return service.create_silence(session=session, body=body, actor=user, now=utcnow())


@router.delete(
    "/alerts/silences/{silence_id}", status_code=status.HTTP_204_NO_CONTENT, responses=NOT_FOUND
)
def expire_silence(silence_id: IdPath, session: SessionDep, user: OperatorUser) -> None:
    """End a silence now."""
    service.expire_silence(session=session, silence_id=silence_id, actor=user, now=utcnow())
