"""Reading a host's config with its latest analysis, and its score history."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from nginx_fleet_analyzer.dump import is_dump, split_dump
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.configs.models import AnalysisStatus, ConfigAnalysis, ConfigSnapshot
from app.configs.schemas import (
    AnalysisRead,
    ConfigFileRead,
    FindingCounts,
    FindingRead,
    HostConfigRead,
    ScoreHistory,
    ScorePoint,
    SnapshotRead,
)
from app.core.errors import NotFoundError
from app.findings.models import Finding
from app.findings.muting import active_acks, matching_ack
from app.hosts.models import Host

ScoreRange = Literal["24h", "7d", "30d"]
RANGES: dict[str, timedelta] = {
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
MAX_POINTS = 500


def _files(dump: str) -> list[ConfigFileRead]:
    """The dump's files in dump order (a lone file without headers is shown as one file)."""
    sections = split_dump(dump) if is_dump(dump) else [("nginx.conf", dump)]
    return [
        ConfigFileRead(path=path, text=text, line_count=len(text.splitlines()))
        for path, text in sections
    ]


def _latest_of_snapshot(session: Session, snapshot_id: int) -> ConfigAnalysis | None:
    return session.scalar(
        select(ConfigAnalysis)
        .where(ConfigAnalysis.snapshot_id == snapshot_id)
        .order_by(ConfigAnalysis.id.desc())
        .limit(1)
    )


def _analysis_read(session: Session, analysis: ConfigAnalysis, now: datetime) -> AnalysisRead:
    rows = session.scalars(
        select(Finding).where(Finding.analysis_id == analysis.id).order_by(Finding.id)
    ).all()
    acks = active_acks(session=session, now=now, host_ids=[analysis.host_id])
    findings = []
    for row in rows:
        ack = matching_ack(acks, host_id=analysis.host_id, rule=row.rule, key=row.key)
        findings.append(
            FindingRead(
                id=row.id,
                key=row.key,
                rule=row.rule,
                severity=row.severity,
                category=row.category,
                file=row.file,
                line=row.line,
                place=row.place,
                directive=row.directive,
                message=row.message,
                evidence=row.evidence,
                fix=row.fix,
                doc_url=row.doc_url,
                muted=ack is not None,
                ack_id=ack.id if ack is not None else None,
            )
        )
    return AnalysisRead(
        id=analysis.id,
        analyzed_at=analysis.analyzed_at,
        status=analysis.status.value,
        score=analysis.score,
        categories=analysis.category_scores,
        counts=FindingCounts(
            error=analysis.error_count, warning=analysis.warning_count, info=analysis.info_count
        ),
        error=analysis.error,
        findings=findings,
    )


def host_config(*, session: Session, host_id: int, now: datetime) -> HostConfigRead:
    """The host's current snapshot, its files and latest analysis; NotFoundError when no host."""
    host = session.get(Host, host_id)
    if host is None:
        raise NotFoundError(f"host {host_id} does not exist")
    snapshot = session.scalar(
        select(ConfigSnapshot).where(
            ConfigSnapshot.host_id == host_id, ConfigSnapshot.hash == host.config_hash
        )
    )
    if snapshot is None:
        return HostConfigRead(host_id=host_id, snapshot=None, files=[], analysis=None)
    analysis = _latest_of_snapshot(session, snapshot.id)
    return HostConfigRead(
        host_id=host_id,
        snapshot=SnapshotRead(id=snapshot.id, hash=snapshot.hash, received_at=snapshot.received_at),
        files=_files(snapshot.dump),
        analysis=_analysis_read(session, analysis, now) if analysis is not None else None,
    )


def _thin(points: list[ScorePoint], limit: int) -> list[ScorePoint]:
    """At most `limit` points: the last point of each of `limit` equal time slices."""
    if len(points) <= limit:
        return points
    start, end = points[0].ts, points[-1].ts
    width = (end - start) / limit
    kept: dict[int, ScorePoint] = {}
    for point in points:
        kept[min(int((point.ts - start) / width), limit - 1)] = point
    return list(kept.values())


def score_history(
    *, session: Session, host_id: int, range_: ScoreRange, now: datetime
) -> ScoreHistory:
    """One point per successful analysis in the range, oldest first, at most ~500."""
    if session.get(Host, host_id) is None:
        raise NotFoundError(f"host {host_id} does not exist")
    rows = session.execute(
        select(
            ConfigAnalysis.analyzed_at,
            ConfigAnalysis.score,
            ConfigAnalysis.error_count,
            ConfigAnalysis.warning_count,
            ConfigAnalysis.info_count,
        )
        .where(
            ConfigAnalysis.host_id == host_id,
            ConfigAnalysis.status == AnalysisStatus.ok,
            ConfigAnalysis.analyzed_at >= now - RANGES[range_],
        )
        .order_by(ConfigAnalysis.analyzed_at, ConfigAnalysis.id)
    ).all()
    points = [
        ScorePoint(
            ts=row.analyzed_at,
            score=row.score,
            errors=row.error_count,
            warnings=row.warning_count,
            infos=row.info_count,
        )
        for row in rows
        if row.score is not None
    ]
    return ScoreHistory(points=_thin(points, MAX_POINTS))
