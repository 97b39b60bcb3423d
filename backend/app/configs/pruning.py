"""Pruning analyses, findings and config snapshots down to what the UI can show.

Kept: each host's latest analysis and the latest one of its current snapshot (the config tab,
the fleet page, top findings); every analysis of the last 24 hours and, older, the last
successful one per hour up to 7 days and per day up to 30 days (the score chart shows 24 h and
7 days, the API up to 30 days, thinned to the last point per slice); analyses whose finding an
alert incident links to; the first analysis after each change (its measured score after). Only
the kept analyses of the config tab and of incidents keep their findings: the chart needs the
scores and counts alone. Snapshots are kept while a host runs them, an analysis refers to them
or a change was made against them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, delete, exists, func, or_, select
from sqlalchemy.orm import Session, aliased

from app.alerts.models import Incident
from app.changes.models import Change
from app.configs.models import AnalysisStatus, ConfigAnalysis, ConfigSnapshot
from app.findings.models import Finding
from app.hosts.models import Host
from app.metrics.sql import dialect_name, epoch_bucket

HOUR_S = 3600
DAY_S = 24 * HOUR_S
# The 24 h score chart shows every analysis.
KEEP_EVERY = timedelta(hours=24)
# (older than, one per bucket of seconds): the 7-day chart and the API's 30-day range.
HOURLY_UNTIL = timedelta(days=7)
DAILY_UNTIL = timedelta(days=30)
# A snapshot just received may not be analysed yet (or is being so).
SNAPSHOT_GRACE = timedelta(hours=24)
# Rows per DELETE, and DELETEs per kind per run: bounded time and locks per transaction.
BATCH_ROWS = 1000
MAX_BATCHES = 20


@dataclass(frozen=True, slots=True)
class Pruned:
    """How many rows of each kind a run deleted."""

    analyses: int
    findings: int
    snapshots: int

    def as_dict(self) -> dict[str, int]:
        """Counts by kind, for logs and task results."""
        return asdict(self)


def _newer_of_host(analysis: type[ConfigAnalysis]) -> ColumnElement[bool]:
    newer = aliased(ConfigAnalysis)
    return exists().where(newer.host_id == analysis.host_id, newer.id > analysis.id)


def _latest_of_current_snapshot(analysis: type[ConfigAnalysis]) -> ColumnElement[bool]:
    """The analysis the config tab shows: the latest of the snapshot its host runs now."""
    newer = aliased(ConfigAnalysis)
    current = (
        select(ConfigSnapshot.id)
        .join(Host, (Host.id == ConfigSnapshot.host_id) & (Host.config_hash == ConfigSnapshot.hash))
        .where(ConfigSnapshot.id == analysis.snapshot_id)
    )
    return and_(
        current.exists(),
        ~exists().where(newer.snapshot_id == analysis.snapshot_id, newer.id > analysis.id),
    )


def _linked_by_incidents() -> Select[int]:
    """Analyses holding a finding an alert incident links to ({rule, finding_id, url})."""
    finding_ids = select(Incident.finding["finding_id"].as_integer()).where(
        Incident.finding.is_not(None)
    )
    return select(Finding.analysis_id).where(Finding.id.in_(finding_ids))


def _score_after_changes() -> Select[int]:
    """The analysis each change's impact reads as its score after (app.changes.impact)."""
    after = aliased(ConfigAnalysis)
    since = func.coalesce(Change.sent_at, Change.approved_at, Change.created_at)
    return (
        select(func.min(after.id))
        .select_from(Change)
        .join(
            after,
            (after.host_id == Change.host_id)
            & (after.status == AnalysisStatus.ok)
            & (after.snapshot_id != Change.base_snapshot_id)
            & (after.analyzed_at >= since),
        )
        .group_by(Change.id)
    )


def _history_only(analysis: type[ConfigAnalysis], now: datetime) -> ColumnElement[bool]:
    """Older than a day, not the latest, not shown by the config tab, not linked by an alert."""
    return and_(
        analysis.analyzed_at < now - KEEP_EVERY,
        _newer_of_host(analysis),
        ~_latest_of_current_snapshot(analysis),
        analysis.id.not_in(_linked_by_incidents()),
    )


def _bucket_end(session: Session, ts: Any, width_s: int) -> ColumnElement[Any]:
    """End of the width_s-wide time bucket (aligned to the epoch) holding ts, as a timestamp."""
    end = epoch_bucket(session, ts, width_s) + width_s
    if dialect_name(session) == "postgresql":
        return func.to_timestamp(end)
    # The text SQLAlchemy stores SQLite datetimes as, so that they compare as instants.
    return func.strftime("%Y-%m-%d %H:%M:%S.000000", end, "unixepoch")


def _superseded_in_bucket(
    session: Session, analysis: type[ConfigAnalysis], width_s: int
) -> ColumnElement[bool]:
    """A later successful analysis of the host falls in the same width_s-wide time bucket.

    A range on (host_id, analyzed_at): the index finds the first such row or none at once."""
    later = aliased(ConfigAnalysis)
    return exists().where(
        later.host_id == analysis.host_id,
        later.analyzed_at >= analysis.analyzed_at,
        later.analyzed_at < _bucket_end(session, analysis.analyzed_at, width_s),
        later.id > analysis.id,
        later.status == AnalysisStatus.ok,
    )


def analyses_to_delete(*, session: Session, now: datetime, limit: int, after: int = 0) -> list[int]:
    """Ids above `after` of up to `limit` analyses the UI can no longer show, oldest first."""
    a = ConfigAnalysis
    thinned = or_(
        a.status != AnalysisStatus.ok,
        a.analyzed_at < now - DAILY_UNTIL,
        and_(a.analyzed_at >= now - HOURLY_UNTIL, _superseded_in_bucket(session, a, HOUR_S)),
        and_(a.analyzed_at < now - HOURLY_UNTIL, _superseded_in_bucket(session, a, DAY_S)),
    )
    statement = (
        select(a.id)
        .where(a.id > after, _history_only(a, now), a.id.not_in(_score_after_changes()), thinned)
        .order_by(a.id)
        .limit(limit)
    )
    return list(session.scalars(statement))


def findings_to_delete(*, session: Session, now: datetime, limit: int, after: int = 0) -> list[int]:
    """Ids above `after` of up to `limit` findings of analyses kept for the score chart alone."""
    a = ConfigAnalysis
    history = select(a.id).where(_history_only(a, now))
    statement = (
        select(Finding.id)
        .where(Finding.id > after, Finding.analysis_id.in_(history))
        .order_by(Finding.id)
        .limit(limit)
    )
    return list(session.scalars(statement))


def snapshots_to_delete(
    *, session: Session, now: datetime, limit: int, after: int = 0
) -> list[int]:
    """Ids above `after` of up to `limit` snapshots nothing runs or refers to."""
    s = ConfigSnapshot
    statement = (
        select(s.id)
        .where(
            s.id > after,
            s.received_at < now - SNAPSHOT_GRACE,
            ~exists().where(Host.id == s.host_id, Host.config_hash == s.hash),
            ~exists().where(ConfigAnalysis.snapshot_id == s.id),
            s.id.not_in(
                select(Change.base_snapshot_id).where(Change.base_snapshot_id.is_not(None))
            ),
        )
        .order_by(s.id)
        .limit(limit)
    )
    return list(session.scalars(statement))


def _delete_analyses(session: Session, ids: Sequence[int]) -> None:
    # Findings first: SQLite enforces the cascade only with foreign keys on; be explicit.
    session.execute(delete(Finding).where(Finding.analysis_id.in_(ids)))
    session.execute(delete(ConfigAnalysis).where(ConfigAnalysis.id.in_(ids)))


def _delete_findings(session: Session, ids: Sequence[int]) -> None:
    session.execute(delete(Finding).where(Finding.id.in_(ids)))


def _delete_snapshots(session: Session, ids: Sequence[int]) -> None:
    session.execute(delete(ConfigSnapshot).where(ConfigSnapshot.id.in_(ids)))


def _in_batches(
    session: Session,
    pick: Callable[..., list[int]],
    remove: Callable[[Session, Sequence[int]], None],
    *,
    now: datetime,
    batch_rows: int,
    max_batches: int,
) -> int:
    """Pick and delete batches, one transaction each, until none is left or the budget is spent.

    Each batch starts after the last id deleted, so the rows kept below it are not examined
    again: a run is at most one pass over the table."""
    deleted = 0
    after = 0
    for _ in range(max_batches):
        ids = pick(session=session, now=now, limit=batch_rows, after=after)
        if not ids:
            break
        remove(session, ids)
        session.commit()
        after = max(ids)
        deleted += len(ids)
        if len(ids) < batch_rows:
            break
    return deleted


def prune(
    *,
    session: Session,
    now: datetime,
    batch_rows: int = BATCH_ROWS,
    max_batches: int = MAX_BATCHES,
) -> Pruned:
    """Delete what the UI can no longer show, at most max_batches * batch_rows rows per kind;
    commits after each batch. A run with nothing left to prune deletes nothing."""
    budget: dict[str, Any] = {"now": now, "batch_rows": batch_rows, "max_batches": max_batches}
    analyses = _in_batches(session, analyses_to_delete, _delete_analyses, **budget)
    findings = _in_batches(session, findings_to_delete, _delete_findings, **budget)
    snapshots = _in_batches(session, snapshots_to_delete, _delete_snapshots, **budget)
    return Pruned(analyses=analyses, findings=findings, snapshots=snapshots)
