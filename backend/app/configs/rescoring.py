"""Scores of stored findings with the acknowledgements in force, without re-running rules."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from nginx_fleet_analyzer import findings as engine
from nginx_fleet_analyzer.findings import Category, Severity
from nginx_fleet_analyzer.scoring import Score, score
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session, aliased

from app.configs.models import AnalysisStatus, ConfigAnalysis
from app.findings.models import Ack, Finding
from app.findings.muting import active_acks, matching_ack


@dataclass(frozen=True, slots=True)
class Tally:
    """Score and counts by severity of the findings that are not muted."""

    score: Score
    counts: dict[str, int]


def tally(
    findings: Iterable[tuple[str, engine.Finding]], *, host_id: int, acks: Sequence[Ack]
) -> Tally:
    """Score and count the (key, finding) pairs of one host, leaving out those an ack mutes."""
    counted = [
        f
        for key, f in findings
        if matching_ack(acks, host_id=host_id, rule=f.rule, key=key) is None
    ]
    by_severity = Counter(str(f.severity) for f in counted)
    return Tally(
        score=score(counted),
        counts={str(severity): by_severity[str(severity)] for severity in Severity},
    )


def as_engine_finding(row: Finding) -> engine.Finding:
    """The engine's view of a stored finding: enough to score it (its key is the row's)."""
    return engine.Finding(
        rule=row.rule,
        severity=Severity(row.severity),
        category=Category(row.category),
        file=row.file,
        line=row.line,
        message=row.message,
    )


def apply_tally(analysis: ConfigAnalysis, result: Tally) -> None:
    """Write a tally onto an analysis row."""
    analysis.score = result.score.overall
    analysis.category_scores = dict(result.score.categories)
    analysis.error_count = result.counts["error"]
    analysis.warning_count = result.counts["warning"]
    analysis.info_count = result.counts["info"]


def latest_analysis_ids() -> Select[int, int]:
    """SELECT host_id, id of each host's latest analysis."""
    return select(
        ConfigAnalysis.host_id, func.max(ConfigAnalysis.id).label("analysis_id")
    ).group_by(ConfigAnalysis.host_id)


def latest_analysis_id_of(host_id: ColumnElement[int]) -> ColumnElement[int]:
    """The id of the latest analysis of the host `host_id` names (a correlated subquery): one
    backward probe of ix_config_analyses_host_id_id per host, never a scan of every analysis."""
    # An alias, so that a query joining config_analyses itself does not correlate it.
    analyses = aliased(ConfigAnalysis)
    return select(func.max(analyses.id)).where(analyses.host_id == host_id).scalar_subquery()


def rescore_latest(*, session: Session, host_ids: Sequence[int] | None, now: datetime) -> int:
    """Re-score the latest analysis of the given hosts (all when None); returns how many.

    The caller commits."""
    latest = latest_analysis_ids()
    if host_ids is not None:
        latest = latest.where(ConfigAnalysis.host_id.in_(list(host_ids)))
    ids = [row.analysis_id for row in session.execute(latest)]
    analyses = session.scalars(
        select(ConfigAnalysis).where(
            ConfigAnalysis.id.in_(ids), ConfigAnalysis.status == AnalysisStatus.ok
        )
    ).all()
    rescore(session=session, analyses=analyses, now=now)
    return len(analyses)


def rescore(*, session: Session, analyses: Sequence[ConfigAnalysis], now: datetime) -> None:
    """Score successful analyses from their stored findings and the acks in force at `now`.

    The caller commits."""
    if not analyses:
        return
    acks = active_acks(session=session, now=now, host_ids=[a.host_id for a in analyses])
    rows_by_analysis: dict[int, list[Finding]] = {a.id: [] for a in analyses}
    for row in session.scalars(
        select(Finding).where(Finding.analysis_id.in_(list(rows_by_analysis)))
    ):
        rows_by_analysis[row.analysis_id].append(row)
    for analysis in analyses:
        findings = [(row.key, as_engine_finding(row)) for row in rows_by_analysis[analysis.id]]
        apply_tally(analysis, tally(findings, host_id=analysis.host_id, acks=acks))
