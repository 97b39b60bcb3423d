"""Alert rules, incidents and silences: the logic behind the alerts API."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.alerts.engine import Condition, window_of
from app.alerts.models import (
    OPEN_INCIDENT_STATES,
    AlertRule,
    AlertState,
    Incident,
    PairState,
    Silence,
)
from app.alerts.readings import ReadingCache, load_hosts
from app.alerts.rules_file import RulesFileError, dump_rules, parse_rules
from app.alerts.schemas import (
    AlertPeriod,
    AlertSummary,
    Cause,
    IncidentDetail,
    IncidentPage,
    IncidentRead,
    LinkedFinding,
    PreviewHost,
    PreviewRead,
    RuleRead,
    RulesFileResult,
    RuleWrite,
    SignalRead,
    SilenceCreate,
    SilenceRead,
)
from app.alerts.signals import SIGNALS
from app.alerts.silences import scope_matches
from app.audit import service as audit
from app.core.config import get_settings
from app.core.errors import ConflictError, InvalidInputError, NotFoundError
from app.hosts.models import Host
from app.notify import service as notify_service
from app.users.models import User

MAX_SILENCE = timedelta(days=90)
MAX_PAGE = 500


def list_signals() -> list[SignalRead]:
    """Every signal a rule can watch."""
    return [
        SignalRead(
            name=s.name,
            title=s.title,
            unit=s.unit,
            kind=s.kind,
            default_op=s.default_op,
            needs_requests=s.needs_requests,
            fixed_window_s=s.fixed_window_s,
        )
        for s in SIGNALS.values()
    ]


def _firing_counts(session: Session) -> dict[int, int]:
    rows = session.execute(
        select(Incident.rule_id, func.count())
        .where(Incident.state.in_(OPEN_INCIDENT_STATES))
        .group_by(Incident.rule_id)
    )
    return {rule_id: count for rule_id, count in rows}


def _rule_read(rule: AlertRule, firing: int) -> RuleRead:
    read = RuleRead.model_validate(rule)
    read.firing = firing
    return read


def list_rules(*, session: Session) -> list[RuleRead]:
    """Every rule, with how many incidents each has open."""
    firing = _firing_counts(session)
    rules = session.scalars(select(AlertRule).order_by(AlertRule.id))
    return [_rule_read(rule, firing.get(rule.id, 0)) for rule in rules]


def get_rule(*, session: Session, rule_id: int) -> AlertRule:
    """One rule, or NotFoundError."""
    rule = session.get(AlertRule, rule_id)
    if rule is None:
        raise NotFoundError(f"alert rule {rule_id} does not exist")
    return rule


def rule_read(*, session: Session, rule: AlertRule) -> RuleRead:
    """A rule as the API shows it."""
    return _rule_read(rule, _firing_counts(session).get(rule.id, 0))


def _check_channels(session: Session, channel_ids: Sequence[int]) -> None:
    known = set(notify_service.channel_names(session=session))
    unknown = [str(i) for i in channel_ids if i not in known]
    if unknown:
        raise InvalidInputError(f"channel_ids: no channel with id {', '.join(unknown)}")


def _assign(rule: AlertRule, body: RuleWrite, now: datetime) -> None:
    for name, value in body.model_dump().items():
        setattr(rule, name, value)
    rule.updated_at = now


def create_rule(*, session: Session, body: RuleWrite, actor: User, now: datetime) -> AlertRule:
    """Add a rule; its key must be new."""
    _check_channels(session, body.channel_ids)
    if session.scalar(select(AlertRule.id).where(AlertRule.key == body.key)) is not None:
        raise ConflictError(f"a rule with key {body.key!r} exists already")
    rule = AlertRule(created_at=now)
    _assign(rule, body, now)
    session.add(rule)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise ConflictError(f"a rule with key {body.key!r} exists already") from None
    audit.record(session=session, actor=actor, action="alert_rule.create", target=body.key)
    session.commit()
    return rule


def update_rule(
    *, session: Session, rule_id: int, body: RuleWrite, actor: User, now: datetime
) -> AlertRule:
    """Replace a rule's fields; the next evaluation applies them (open incidents stay open)."""
    rule = get_rule(session=session, rule_id=rule_id)
    _check_channels(session, body.channel_ids)
    clash = session.scalar(
        select(AlertRule.id).where(AlertRule.key == body.key, AlertRule.id != rule_id)
    )
    if clash is not None:
        raise ConflictError(f"a rule with key {body.key!r} exists already")
    _assign(rule, body, now)
    audit.record(session=session, actor=actor, action="alert_rule.update", target=body.key)
    session.commit()
    return rule


def delete_rule(*, session: Session, rule_id: int, actor: User) -> None:
    """Remove a rule with its states, incidents and silences."""
    rule = get_rule(session=session, rule_id=rule_id)
    audit.record(session=session, actor=actor, action="alert_rule.delete", target=rule.key)
    session.delete(rule)
    session.commit()


def preview(*, session: Session, body: RuleWrite, now: datetime) -> PreviewRead:
    """Which hosts in the rule's scope would match now, matching hosts first."""
    rule = AlertRule()
    _assign(rule, body, now)
    hosts = [h for h in load_hosts(session) if scope_matches(body.scope, h.labels)]
    cache = ReadingCache(session, now, hosts, get_settings().push_interval_s)
    readings = cache.readings(rule.signal, window_of(rule))
    condition = Condition.of(rule)
    rows = []
    for host in hosts:
        reading = readings.get(host.id)
        matches = condition.judge(reading, PairState.inactive)
        rows.append(
            PreviewHost(
                host_id=host.id,
                hostname=host.hostname,
                labels=host.labels,
                value=reading.value if reading else None,
                matches=bool(matches),
                no_data=matches is None,
            )
        )
    rows.sort(key=lambda r: (not r.matches, r.no_data, r.hostname))
    return PreviewRead(evaluated=len(rows), matching=sum(r.matches for r in rows), hosts=rows)


def export_rules(*, session: Session) -> str:
    """Every rule as a rules file."""
    names = notify_service.channel_names(session=session)
    rules = session.scalars(select(AlertRule).order_by(AlertRule.id))
    bodies = [
        RuleWrite.model_validate({name: getattr(r, name) for name in RuleWrite.model_fields})
        for r in rules
    ]
    return dump_rules(bodies, names)


def import_rules(
    *, session: Session, text: str, actor: User | str, now: datetime
) -> RulesFileResult:
    """Create or replace the file's rules by key (rules not in the file are kept)."""
    names = notify_service.channel_names(session=session)
    try:
        bodies = parse_rules(text, {name: channel_id for channel_id, name in names.items()})
    except RulesFileError as error:
        raise InvalidInputError(str(error)) from None
    existing = {r.key: r for r in session.scalars(select(AlertRule))}
    created = updated = 0
    for body in bodies:
        rule = existing.get(body.key)
        if rule is None:
            rule = AlertRule(created_at=now)
            session.add(rule)
            created += 1
        else:
            updated += 1
        _assign(rule, body, now)
    audit.record(
        session=session,
        actor=actor,
        action="alert_rule.import",
        target="rules file",
        detail={"created": created, "updated": updated},
    )
    session.commit()
    return RulesFileResult(created=created, updated=updated)


def _incident_read(incident: Incident, host: Host | None, rule_signal: str | None) -> IncidentRead:
    signal = SIGNALS.get(rule_signal or "")
    return IncidentRead(
        id=incident.id,
        rule_id=incident.rule_id,
        rule_key=incident.rule_key,
        rule_name=incident.rule_name,
        severity=incident.severity,
        host_id=incident.host_id,
        hostname=host.hostname if host else f"host {incident.host_id}",
        labels=dict(host.labels or {}) if host else {},
        state=incident.state.value,
        started_at=incident.started_at,
        fired_at=incident.fired_at,
        resolved_at=incident.resolved_at,
        value=incident.value,
        peak_value=incident.peak_value,
        unit=signal.unit if signal else "",
        summary=incident.summary,
        cause=Cause.model_validate(incident.cause) if incident.cause else None,
        finding=LinkedFinding.model_validate(incident.finding) if incident.finding else None,
        silenced_by=incident.silenced_by,
        last_notified_at=incident.last_notified_at,
        url=f"/alerts/incidents/{incident.id}",
    )


def _reads(session: Session, incidents: Sequence[Incident]) -> list[IncidentRead]:
    host_ids = {i.host_id for i in incidents}
    rule_ids = {i.rule_id for i in incidents}
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(host_ids)))}
    signals = dict(
        session.execute(
            select(AlertRule.id, AlertRule.signal).where(AlertRule.id.in_(rule_ids))
        ).all()
    )
    return [_incident_read(i, hosts.get(i.host_id), signals.get(i.rule_id)) for i in incidents]


def list_incidents(
    *,
    session: Session,
    state: str,
    host_id: int | None,
    rule_id: int | None,
    limit: int,
    before_id: int | None,
) -> IncidentPage:
    """Incidents newest first: open ones, resolved ones or all, one page at a time."""
    query = select(Incident).order_by(Incident.id.desc()).limit(min(limit, MAX_PAGE) + 1)
    if state == "active":
        query = query.where(Incident.state.in_(OPEN_INCIDENT_STATES))
    elif state == "resolved":
        query = query.where(Incident.state.not_in(OPEN_INCIDENT_STATES))
    if host_id is not None:
        query = query.where(Incident.host_id == host_id)
    if rule_id is not None:
        query = query.where(Incident.rule_id == rule_id)
    if before_id is not None:
        query = query.where(Incident.id < before_id)
    incidents = list(session.scalars(query))
    more = len(incidents) > min(limit, MAX_PAGE)
    incidents = incidents[: min(limit, MAX_PAGE)]
    return IncidentPage(
        items=_reads(session, incidents), next_before_id=incidents[-1].id if more else None
    )


def incident_detail(*, session: Session, incident_id: int) -> IncidentDetail:
    """One incident with the deliveries of the notifications that named it."""
    incident = session.get(Incident, incident_id)
    if incident is None:
        raise NotFoundError(f"incident {incident_id} does not exist")
    read = _reads(session, [incident])[0]
    deliveries = notify_service.deliveries_for_incident(
        session=session,
        incident_id=incident.id,
        rule_key=incident.rule_key,
        since=incident.fired_at,
    )
    return IncidentDetail(
        **read.model_dump(), deliveries=[d.model_dump(mode="json") for d in deliveries]
    )


def summary(*, session: Session) -> AlertSummary:
    """Open incidents (and pending pairs) for the navigation badge."""
    by_severity = {"critical": 0, "warning": 0, "info": 0}
    rows = session.execute(
        select(Incident.severity, func.count())
        .where(Incident.state.in_(OPEN_INCIDENT_STATES))
        .group_by(Incident.severity)
    )
    for severity, count in rows:
        by_severity[severity] = count
    pending = session.scalar(
        select(func.count()).select_from(AlertState).where(AlertState.state == PairState.pending)
    )
    return AlertSummary(
        firing=sum(by_severity.values()), pending=pending or 0, by_severity=by_severity
    )


def alert_periods(
    *, session: Session, host_id: int, start: datetime, end: datetime
) -> list[AlertPeriod]:
    """The incidents of a host that overlap [start, end], for marks on its charts."""
    if session.get(Host, host_id) is None:
        raise NotFoundError(f"host {host_id} does not exist")
    incidents = session.scalars(
        select(Incident)
        .where(
            Incident.host_id == host_id,
            Incident.fired_at <= end,
            (Incident.resolved_at.is_(None)) | (Incident.resolved_at >= start),
        )
        .order_by(Incident.fired_at)
        .limit(MAX_PAGE)
    )
    return [
        AlertPeriod(
            incident_id=i.id,
            rule_key=i.rule_key,
            rule_name=i.rule_name,
            severity=i.severity,
            start=i.fired_at,
            end=i.resolved_at,
        )
        for i in incidents
    ]


def _silence_read(silence: Silence, keys: dict[int, str], now: datetime) -> SilenceRead:
    read = SilenceRead.model_validate(silence)
    read.rule_key = keys.get(silence.rule_id) if silence.rule_id else None
    read.active = silence.starts_at <= now < silence.ends_at
    return read


def list_silences(*, session: Session, active_only: bool, now: datetime) -> list[SilenceRead]:
    """Silences newest first; only those in force when active_only."""
    query = select(Silence).order_by(Silence.id.desc()).limit(MAX_PAGE)
    if active_only:
        query = query.where(Silence.ends_at > now)
    keys = dict(session.execute(select(AlertRule.id, AlertRule.key)).all())
    return [_silence_read(s, keys, now) for s in session.scalars(query)]


def create_silence(
    *, session: Session, body: SilenceCreate, actor: User, now: datetime
) -> SilenceRead:
    """Mute notifications of a rule and/or matching hosts until ends_at."""
    if body.ends_at <= now:
        raise InvalidInputError("ends_at: must be in the future")
    if body.ends_at - now > MAX_SILENCE:
        raise InvalidInputError(f"ends_at: a silence lasts at most {MAX_SILENCE.days} days")
    if body.rule_id is not None and session.get(AlertRule, body.rule_id) is None:
        raise NotFoundError(f"alert rule {body.rule_id} does not exist")
    silence = Silence(
        rule_id=body.rule_id,
        matchers=[m.model_dump() for m in body.matchers],
        starts_at=now,
        ends_at=body.ends_at,
        reason=body.reason,
        created_by=actor.username,
        created_at=now,
    )
    session.add(silence)
    session.flush()
    audit.record(
        session=session,
        actor=actor,
        action="alert_silence.create",
        target=f"silence {silence.id}",
        detail={"rule_id": body.rule_id, "matchers": silence.matchers, "reason": body.reason},
    )
    session.commit()
    keys = dict(session.execute(select(AlertRule.id, AlertRule.key)).all())
    return _silence_read(silence, keys, now)


def expire_silence(*, session: Session, silence_id: int, actor: User, now: datetime) -> None:
    """End a silence now (an ended one stays as it is)."""
    silence = session.get(Silence, silence_id)
    if silence is None:
        raise NotFoundError(f"silence {silence_id} does not exist")
    if silence.ends_at > now:
        silence.ends_at = max(now, silence.starts_at)
    audit.record(
        session=session, actor=actor, action="alert_silence.expire", target=f"silence {silence.id}"
    )
    session.commit()
