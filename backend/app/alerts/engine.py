"""One evaluation of every rule over every host: pair states, incidents, notifications.

Idempotent and restart-safe: every state lives in the database and one evaluation is one
transaction, so a worker that dies mid-way leaves the previous evaluation's state in force."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from app.alerts import cause, notifications
from app.alerts.models import (
    OPEN_INCIDENT_STATES,
    AlertRule,
    AlertState,
    Incident,
    IncidentState,
    PairState,
)
from app.alerts.readings import HostRow, Reading, ReadingCache, load_hosts
from app.alerts.rules_file import format_duration
from app.alerts.signals import SIGNALS, Source, compare
from app.alerts.silences import active_silences, host_labels, scope_matches, silence_for
from app.alerts.states import HAS_INCIDENT, INACTIVE, Pair, Step, Timing, step
from app.core.config import get_settings

log = logging.getLogger(__name__)

# Any constant shared by every evaluator: two workers never evaluate at the same time.
ADVISORY_LOCK_KEY = 0x6E66_616C  # "nfal"


@dataclass
class Outcome:
    """What one evaluation did."""

    skipped: bool = False
    rules: int = 0
    pairs: int = 0
    fired: int = 0
    resolved: int = 0
    delivery_ids: list[int] = field(default_factory=list)
    seconds: float = 0.0


def window_of(rule: AlertRule) -> int:
    """The window a rule's signal is read over (fixed for some signals)."""
    return SIGNALS[rule.signal].fixed_window_s or rule.window_s


@dataclass(frozen=True)
class Condition:
    """A rule's condition as plain values: read once per evaluation, judged per host."""

    op: str
    threshold: float
    clear_threshold: float | None
    # None unless the signal has a request volume and the rule asks for a minimum.
    min_requests: int | None

    @classmethod
    def of(cls, rule: AlertRule) -> Condition:
        """The condition of a rule."""
        needs = SIGNALS[rule.signal].needs_requests
        return cls(
            rule.op, rule.threshold, rule.clear_threshold, rule.min_requests if needs else None
        )

    def judge(self, reading: Reading | None, state: PairState) -> bool | None:
        """Whether the condition holds for one host: None is no data.

        Once firing, the pair clears only past clear_threshold (hysteresis); a rate below
        the rule's minimum request volume is judged fine, so quiet hosts never page."""
        if reading is None:
            return None
        if self.min_requests and (reading.requests or 0) < self.min_requests:
            return False
        if reading.value is None:
            return None
        threshold = self.threshold
        if self.clear_threshold is not None and state in (PairState.firing, PairState.recovering):
            threshold = self.clear_threshold
        return compare(reading.value, self.op, threshold)


def summarize(rule: AlertRule, value: float | None) -> str:
    """One line for notifications: what was seen against what the rule allows."""
    signal = SIGNALS[rule.signal]
    if value is None:
        return f"{rule.name}: no data"
    unit = f" {signal.unit}" if signal.unit and signal.unit != "%" else signal.unit
    shown = f"{value:.1f}" if abs(value) < 100 and value != int(value) else f"{value:.0f}"
    threshold = f"{rule.threshold:g}{unit}"
    over = f" over {format_duration(window_of(rule))}" if signal.kind != "gauge" else ""
    return f"{rule.name}: {shown}{unit}{over} ({rule.op} {threshold})"


class Evaluator:
    """The state of one evaluation run, applied rule by rule."""

    def __init__(self, session: Session, now: datetime) -> None:
        self.session = session
        self.now = now
        settings = get_settings()
        self.hosts = load_hosts(session)
        self.cache = ReadingCache(session, now, self.hosts, settings.push_interval_s)
        self.states = {(s.rule_id, s.host_id): s for s in session.scalars(select(AlertState))}
        self.incidents = {
            i.id: i
            for i in session.scalars(
                select(Incident).where(Incident.state.in_(OPEN_INCIDENT_STATES))
            )
        }
        self.silences = active_silences(session, now)
        self.outcome = Outcome()
        self.closed: list[Incident] = []

    def run(self, rules: Iterable[AlertRule]) -> None:
        """Evaluate the enabled rules; close what disabled or deleted rules left open."""
        enabled = [rule for rule in rules if rule.enabled]
        enabled_ids = {rule.id for rule in enabled}
        self.cache.prepare_samples(
            window_of(rule) for rule in enabled if SIGNALS[rule.signal].source is Source.samples
        )
        for rule in enabled:
            self._evaluate_rule(rule)
        for (rule_id, host_id), row in list(self.states.items()):
            if rule_id not in enabled_ids:
                self._drop_pair(row)
                del self.states[(rule_id, host_id)]
        self.outcome.rules = len(enabled)

    def _evaluate_rule(self, rule: AlertRule) -> None:
        try:
            # A savepoint: a failed query must not abort the evaluation's transaction.
            with self.session.begin_nested():
                readings = self.cache.readings(rule.signal, window_of(rule))
        except OperationalError:
            raise  # the database is down: the task retries, nothing is half-applied
        except Exception as error:  # one broken rule must not stop the others
            log.exception("alert rule %s: its signal could not be computed", rule.key)
            rule.last_error = f"{type(error).__name__}: {error}"[:2000]
            for (rule_id, _host_id), stored in self.states.items():
                if rule_id == rule.id:
                    stored.error = rule.last_error
            return
        rule.last_error = None
        timing = Timing(rule.for_s, rule.keep_firing_s)
        condition = Condition.of(rule)
        rule_id, scope = rule.id, rule.scope
        # With these choices, no data leaves an inactive pair inactive.
        quiet_no_data = rule.no_data in ("ok", "keep")
        in_scope: set[int] = set()
        for host in self.hosts:
            if scope and not scope_matches(scope, host.labels):
                continue
            in_scope.add(host.id)
            row = self.states.get((rule_id, host.id))
            pair = INACTIVE if row is None else _pair_of(row)
            reading = readings.get(host.id)
            matches = condition.judge(reading, pair.state)
            if row is None and (matches is False or (matches is None and quiet_no_data)):
                continue  # the common case: an inactive pair stays inactive
            value = reading.value if reading is not None else None
            result = step(pair, matches=matches, no_data=rule.no_data, timing=timing, now=self.now)
            self._apply(rule, host, row, result, value)
        self.outcome.pairs += len(in_scope)
        for (state_rule_id, host_id), stored in list(self.states.items()):
            if state_rule_id == rule_id and host_id not in in_scope:
                self._drop_pair(stored)
                del self.states[(state_rule_id, host_id)]

    def _apply(
        self,
        rule: AlertRule,
        host: HostRow,
        row: AlertState | None,
        result: Step,
        value: float | None,
    ) -> None:
        """Store a pair's new state and open, move or close its incident."""
        if result.pair.state is PairState.inactive:
            if row is not None:
                if result.closes:
                    self._close(row.incident_id)
                self.session.delete(row)
                del self.states[(rule.id, host.id)]
            return
        if row is None:
            row = AlertState(rule_id=rule.id, host_id=host.id)
            self.session.add(row)
            self.states[(rule.id, host.id)] = row
        if row.state is not result.pair.state:
            row.evaluated_at = self.now
        row.state = result.pair.state
        row.pending_since = result.pair.pending_since
        row.recovering_since = result.pair.recovering_since
        row.value = value
        row.error = None
        if result.opens is not None:
            opened = self._open(rule, host, result.opens, value, result.pair.pending_since)
            row.incident_id = opened.id
        incident = self.incidents.get(row.incident_id) if row.incident_id else None
        if incident is None:
            return
        if result.moves_to is not None:
            incident.state = result.moves_to
        self._refresh(rule, host, incident, value)

    def _open(
        self,
        rule: AlertRule,
        host: HostRow,
        state: IncidentState,
        value: float | None,
        started_at: datetime | None,
    ) -> Incident:
        incident = Incident(
            rule_id=rule.id,
            host_id=host.id,
            rule_key=rule.key,
            rule_name=rule.name,
            severity=rule.severity,
            state=state,
            started_at=started_at or self.now,
            fired_at=self.now,
            value=value,
            peak_value=value,
        )
        self.session.add(incident)
        self.session.flush()
        self.incidents[incident.id] = incident
        self.outcome.fired += 1
        return incident

    def _refresh(
        self, rule: AlertRule, host: HostRow, incident: Incident, value: float | None
    ) -> None:
        """The incident's latest value, peak, summary, cause and silence."""
        incident.value = value
        if value is not None:
            worse = incident.peak_value is None or compare(value, rule.op, incident.peak_value)
            incident.peak_value = value if worse else incident.peak_value
        incident.summary = summarize(rule, value)
        if rule.signal in cause.CAUSE_SIGNALS and incident.state is IncidentState.firing:
            self._diagnose(rule, host, incident)
        silence = silence_for(
            self.silences, rule_id=rule.id, labels=host_labels(host.hostname, host.labels)
        )
        incident.silenced_by = silence.id if silence else None

    def _diagnose(self, rule: AlertRule, host: HostRow, incident: Incident) -> None:
        """The likely cause from this window's evidence; the config is read once per incident."""
        connections = (incident.cause or {}).get("evidence", {}).get("worker_connections")
        if connections is None:
            connections = cause.configured_worker_connections(self.session, host.id)
        evidence = self.cache.samples(window_of(rule)).get(host.id, {})
        diagnosis = cause.diagnose(evidence, connections)
        if rule.signal == "listen_drops":
            diagnosis = {**diagnosis, "code": "listen_queue", "title": "listen queue overflowing"}
        if incident.cause is None or incident.cause.get("code") != diagnosis["code"]:
            incident.finding = cause.matching_finding(self.session, host.id, diagnosis["code"])
        incident.cause = diagnosis

    def _close(self, incident_id: int | None) -> None:
        incident = self.incidents.pop(incident_id, None) if incident_id else None
        if incident is None:
            return
        incident.state = IncidentState.resolved
        incident.resolved_at = self.now
        self.closed.append(incident)
        self.outcome.resolved += 1

    def _drop_pair(self, row: AlertState) -> None:
        """A pair whose rule was disabled or whose host left the scope: resolve, forget."""
        if row.state in HAS_INCIDENT:
            self._close(row.incident_id)
        self.session.delete(row)


def _pair_of(row: AlertState) -> Pair:
    return Pair(row.state, row.pending_since, row.recovering_since)


def _try_lock(session: Session) -> bool:
    """Take the evaluation lock for this transaction (PostgreSQL); SQLite has one writer."""
    if session.get_bind().dialect.name != "postgresql":
        return True
    return bool(
        session.scalar(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
    )


def evaluate(*, session: Session, now: datetime) -> Outcome:
    """Evaluate every rule once at `now`, commit, and return the deliveries to dispatch."""
    started = time.perf_counter()
    if not _try_lock(session):
        session.rollback()
        return Outcome(skipped=True)
    rules = list(session.scalars(select(AlertRule).order_by(AlertRule.id)))
    evaluator = Evaluator(session, now)
    evaluator.run(rules)
    rules_by_id = {rule.id: rule for rule in rules}
    hosts_by_id = {host.id: host for host in evaluator.hosts}
    evaluator.outcome.delivery_ids = notifications.notify(
        session=session,
        now=now,
        rules=rules_by_id,
        hosts=hosts_by_id,
        open_incidents=list(evaluator.incidents.values()),
        closed=evaluator.closed,
    )
    session.commit()
    evaluator.outcome.seconds = time.perf_counter() - started
    return evaluator.outcome
