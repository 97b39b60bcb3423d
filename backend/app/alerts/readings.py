"""Signal values per host over a window, each source read for the whole fleet in one query."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, func, select
from sqlalchemy.orm import Session

from app.access_log import figures
from app.access_log.fields import CACHE_COUNTERS, STATUS_CLASSES
from app.access_log.models import AccessLogRecent
from app.access_log.window import counters_by_host
from app.alerts.signals import SIGNALS, Source
from app.changes.models import Change, ChangeStatus
from app.configs.models import AnalysisStatus, ConfigAnalysis
from app.findings.models import Finding
from app.hosts.models import Host, HostFacts
from app.metrics.models import Sample

# Counter deltas need the sample before the window's first one: read this much further back.
LAG_MARGIN = timedelta(minutes=2)
# Older access-log figures mean the rollups stopped: they no longer describe the recent past.
RECENT_MAX_AGE = timedelta(minutes=5)
# A host silent for this many push intervals has no current nginx state.
STALE_INTERVALS = 3
FAILED_APPLY_STATUSES = (ChangeStatus.failed, ChangeStatus.rolled_back)


@dataclass
class Reading:
    """One host's value of one signal; value None means no data."""

    value: float | None
    # Requests behind a rate-style value (None when the signal has no volume).
    requests: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


Readings = dict[int, Reading]


@dataclass
class HostRow:
    """The host columns rules and notifications need."""

    id: int
    hostname: str
    labels: dict[str, str]
    last_seen_at: datetime | None
    nginx_up: bool | None


def load_hosts(session: Session) -> list[HostRow]:
    """Every host with the columns evaluation reads."""
    query = select(Host.id, Host.hostname, Host.labels, Host.last_seen_at, Host.nginx_up)
    return [
        HostRow(r.id, r.hostname, dict(r.labels or {}), r.last_seen_at, r.nginx_up)
        for r in session.execute(query.order_by(Host.id))
    ]


def _delta(expression: Any) -> Any:
    """The growth of a counter since the host's previous sample (its value after a reset)."""
    previous = func.lag(expression).over(partition_by=Sample.host_id, order_by=Sample.ts)
    return case(
        (previous.is_(None), None),
        (expression >= previous, expression - previous),
        else_=expression,
    )


# What sample_windows aggregates per window: (name, aggregate, column of the inner query).
WINDOW_FIGURES = (
    ("dropped", func.sum, "dropped"),
    ("accepted", func.sum, "accepted"),
    ("kernel_drops", func.sum, "kernel_drops"),
    ("fds_pct", func.max, "fds_pct"),
    ("active_max", func.max, "active"),
    ("workers", func.max, "workers"),
    ("errlog_severe", func.sum, "errlog_severe"),
    ("wc_not_enough", func.sum, "errlog_wc_not_enough"),
    ("too_many_open_files", func.sum, "errlog_nofile"),
)


def sample_windows(
    session: Session, *, now: datetime, windows: Iterable[int]
) -> dict[int, dict[int, dict[str, Any]]]:
    """Per window, per host: the sample-based signals and the drop alert's evidence.

    One scan of the longest window serves every window (conditional aggregates), because
    rules of one fleet usually look back over a few different spans of the same rows."""
    spans = sorted(set(windows))
    if not spans:
        return {}
    gap = func.coalesce(Sample.accepts, 0) - func.coalesce(Sample.handled, 0)
    kernel_drops = func.coalesce(Sample.listen_drops, Sample.listen_overflows)
    fds_pct = case(
        (Sample.fds_limit > 0, Sample.worker_fds_max * 100.0 / Sample.fds_limit), else_=None
    )
    oldest = now - timedelta(seconds=spans[-1])
    inner = (
        select(
            Sample.host_id,
            Sample.ts,
            case((Sample.accepts.is_(None), None), else_=_delta(gap)).label("dropped"),
            _delta(Sample.accepts).label("accepted"),
            _delta(kernel_drops).label("kernel_drops"),
            fds_pct.label("fds_pct"),
            Sample.active,
            Sample.workers,
            Sample.errlog_severe,
            Sample.errlog_wc_not_enough,
            Sample.errlog_nofile,
        )
        .where(Sample.ts > oldest - LAG_MARGIN, Sample.ts <= now)
        .subquery()
    )
    columns: list[Any] = [inner.c.host_id]
    for index, span in enumerate(spans):
        inside = inner.c.ts > now - timedelta(seconds=span)
        columns.append(func.count(case((inside, 1))).label(f"samples_{index}"))
        for name, aggregate, source in WINDOW_FIGURES:
            columns.append(aggregate(case((inside, inner.c[source]))).label(f"{name}_{index}"))
    query = select(*columns).where(inner.c.ts > oldest).group_by(inner.c.host_id)
    result: dict[int, dict[int, dict[str, Any]]] = {span: {} for span in spans}
    names = ("samples", *(name for name, _, _ in WINDOW_FIGURES))
    for row in session.execute(query):
        values = row._mapping
        for index, span in enumerate(spans):
            if values[f"samples_{index}"]:
                result[span][row.host_id] = {name: values[f"{name}_{index}"] for name in names}
    return result


def _from_samples(rows: Mapping[int, dict[str, Any]], signal: str) -> Readings:
    """The readings of one sample-based signal out of sample_window's rows."""
    column = {
        "dropped_connections": "dropped",
        "fds_used_pct": "fds_pct",
        "listen_drops": "kernel_drops",
        "error_log_severe": "errlog_severe",
    }[signal]
    readings: Readings = {}
    for host_id, row in rows.items():
        value = row[column]
        # The row itself is the evidence: copied only for the few pairs that fire.
        readings[host_id] = Reading(None if value is None else float(value), evidence=row)
    return readings


def _from_hosts(hosts: Iterable[HostRow], signal: str, now: datetime, interval_s: int) -> Readings:
    """silent_s and nginx_down from the hosts' own columns."""
    readings: Readings = {}
    for host in hosts:
        if host.last_seen_at is None:
            continue
        silent = (now - host.last_seen_at).total_seconds()
        if signal == "silent_s":
            readings[host.id] = Reading(max(silent, 0.0))
        elif silent <= STALE_INTERVALS * interval_s and host.nginx_up is not None:
            readings[host.id] = Reading(0.0 if host.nginx_up else 1.0)
    return readings


def _from_access_log(session: Session, signal: str, now: datetime, window_s: int) -> Readings:
    """5xx share and cache hit ratio over the window, summed over every site of a host."""
    names = ("requests", *STATUS_CLASSES, *CACHE_COUNTERS)
    sums = counters_by_host(
        session=session, names=names, start=now - timedelta(seconds=window_s), end=now, now=now
    )
    readings: Readings = {}
    for host_id, counters in sums.items():
        if signal == "share_5xx_pct":
            share = figures.status_share(counters, "status_5xx")
            volume = counters["requests"]
        else:
            share = figures.hit_ratio(counters)
            volume = figures.cached_requests(counters)
        readings[host_id] = Reading(
            None if share is None else 100.0 * share, requests=volume, evidence=counters
        )
    return readings


def _from_recent(session: Session, now: datetime) -> Readings:
    """p95 request time of the last 15 minutes, as the rollups last computed it."""
    readings: Readings = {}
    rows = session.execute(
        select(
            AccessLogRecent.host_id,
            AccessLogRecent.requests,
            AccessLogRecent.request_time_p95_s,
        ).where(AccessLogRecent.computed_at >= now - RECENT_MAX_AGE)
    )
    for row in rows:
        p95 = row.request_time_p95_s
        readings[row.host_id] = Reading(
            None if p95 is None else 1000.0 * p95, requests=int(row.requests)
        )
    return readings


def _parse_time(value: object) -> datetime | None:
    """An RFC 3339 string from the agent's facts, or None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _from_certificates(session: Session, now: datetime) -> Readings:
    """Days until the soonest expiry among the certificates each host's config names."""
    readings: Readings = {}
    rows = session.execute(select(HostFacts.host_id, HostFacts.facts))
    for row in rows:
        certificates = (row.facts or {}).get("tls_certificates")
        if not isinstance(certificates, list):
            continue
        soonest: tuple[datetime, dict[str, Any]] | None = None
        for cert in certificates:
            if not isinstance(cert, dict):
                continue
            not_after = _parse_time(cert.get("not_after"))
            if not_after is not None and (soonest is None or not_after < soonest[0]):
                soonest = (not_after, cert)
        if soonest is None:
            continue
        not_after, cert = soonest
        readings[row.host_id] = Reading(
            (not_after - now).total_seconds() / 86400,
            evidence={
                "path": cert.get("path"),
                "subject": cert.get("subject"),
                "not_after": cert.get("not_after"),
                "certificates": len(certificates),
            },
        )
    return readings


def _from_analyses(session: Session, signal: str, now: datetime, window_s: int) -> Readings:
    """score_drop / new_error_findings: the latest analysis against what was in force before.

    Only hosts analysed within the window can have changed; every other analysed host reads 0."""
    start = now - timedelta(seconds=window_s)
    ok = ConfigAnalysis.status == AnalysisStatus.ok
    latest_ids = (
        select(func.max(ConfigAnalysis.id).label("id")).where(ok).group_by(ConfigAnalysis.host_id)
    ).subquery()
    latest = {
        row.host_id: row
        for row in session.execute(
            select(ConfigAnalysis.id, ConfigAnalysis.host_id, ConfigAnalysis.score).where(
                ConfigAnalysis.id.in_(select(latest_ids.c.id))
            )
        )
    }
    recent = session.execute(
        select(ConfigAnalysis.id, ConfigAnalysis.host_id, ConfigAnalysis.score)
        .where(ok, ConfigAnalysis.analyzed_at > start)
        .order_by(ConfigAnalysis.host_id, ConfigAnalysis.id)
    ).all()
    recent_by_host: dict[int, list[Any]] = {}
    for row in recent:
        recent_by_host.setdefault(row.host_id, []).append(row)
    changed_hosts = set(recent_by_host)
    # The analysis each changed host had in force when the window opened.
    before_ids = (
        select(func.max(ConfigAnalysis.id).label("id"))
        .where(ok, ConfigAnalysis.analyzed_at <= start, ConfigAnalysis.host_id.in_(changed_hosts))
        .group_by(ConfigAnalysis.host_id)
    ).subquery()
    baseline = {
        row.host_id: row
        for row in session.execute(
            select(ConfigAnalysis.id, ConfigAnalysis.host_id, ConfigAnalysis.score).where(
                ConfigAnalysis.id.in_(select(before_ids.c.id))
            )
        )
    }
    readings: Readings = {host_id: Reading(0.0) for host_id in latest}
    if signal == "score_drop":
        for host_id in changed_hosts:
            scores = [r.score for r in recent_by_host[host_id] if r.score is not None]
            if host_id in baseline and baseline[host_id].score is not None:
                scores.append(baseline[host_id].score)
            current = latest[host_id].score
            if scores and current is not None:
                readings[host_id] = Reading(
                    float(max(scores) - current),
                    evidence={"score": current, "highest_in_window": max(scores)},
                )
        return readings
    # A host first analysed within the window compares with its first analysis: the errors it
    # came with are not news, those its config gained since are.
    for host_id in changed_hosts - set(baseline):
        baseline[host_id] = recent_by_host[host_id][0]
    analysis_ids = [latest[h].id for h in changed_hosts] + [b.id for b in baseline.values()]
    keys: dict[int, set[str]] = {}
    rules: dict[tuple[int, str], str] = {}
    for finding in session.execute(
        select(Finding.analysis_id, Finding.key, Finding.rule).where(
            Finding.analysis_id.in_(analysis_ids), Finding.severity == "error"
        )
    ):
        keys.setdefault(finding.analysis_id, set()).add(finding.key)
        rules[(finding.analysis_id, finding.key)] = finding.rule
    for host_id in changed_hosts:
        now_id = latest[host_id].id
        before = keys.get(baseline[host_id].id, set())
        new = keys.get(now_id, set()) - before
        readings[host_id] = Reading(
            float(len(new)),
            evidence={"rules": sorted({rules[(now_id, key)] for key in new})},
        )
    return readings


def _from_changes(session: Session, now: datetime, window_s: int) -> Readings:
    """Changes that failed or were rolled back within the window, per host (0 for the rest)."""
    readings: Readings = {}
    query = (
        select(Change.host_id, func.count().label("n"), func.max(Change.id).label("last_id"))
        .where(
            and_(
                Change.status.in_(FAILED_APPLY_STATUSES),
                Change.finished_at > now - timedelta(seconds=window_s),
            )
        )
        .group_by(Change.host_id)
    )
    for row in session.execute(query):
        readings[row.host_id] = Reading(float(row.n), evidence={"change_id": row.last_id})
    return readings


@dataclass
class ReadingCache:
    """Readings computed once per evaluation and shared by rules with the same inputs."""

    session: Session
    now: datetime
    hosts: list[HostRow]
    push_interval_s: int
    _samples: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)
    _readings: dict[tuple[str, int], Readings] = field(default_factory=dict)

    def prepare_samples(self, windows: Iterable[int]) -> None:
        """Read the sample-based figures of all these windows in one query."""
        missing = set(windows) - set(self._samples)
        self._samples.update(sample_windows(self.session, now=self.now, windows=missing))

    def samples(self, window_s: int) -> dict[int, dict[str, Any]]:
        """Per host, the sample-based figures of this window."""
        if window_s not in self._samples:
            self.prepare_samples([window_s])
        return self._samples[window_s]

    def readings(self, signal: str, window_s: int) -> Readings:
        """The readings of one signal over one window, for every host that has data."""
        key = (signal, window_s)
        if key not in self._readings:
            self._readings[key] = self._compute(signal, window_s)
        return self._readings[key]

    def _compute(self, signal: str, window_s: int) -> Readings:
        source = SIGNALS[signal].source
        if source is Source.samples:
            return _from_samples(self.samples(window_s), signal)
        if source is Source.host:
            return _from_hosts(self.hosts, signal, self.now, self.push_interval_s)
        if source is Source.access_log:
            return _from_access_log(self.session, signal, self.now, window_s)
        if source is Source.access_log_recent:
            return _from_recent(self.session, self.now)
        if source is Source.certificates:
            return _from_certificates(self.session, self.now)
        if source is Source.analyses:
            return _from_analyses(self.session, signal, self.now, window_s)
        return _from_changes(self.session, self.now, window_s)
