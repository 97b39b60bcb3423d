"""Analysing a snapshot: run the engine with the host's inputs, store analysis and findings."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from nginx_fleet_analyzer import ParsedConfig, parse_dump
from nginx_fleet_analyzer.engine import ENGINE_VERSION, Report, analyze
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.configs.inputs import AnalysisInputs, gather_inputs
from app.configs.models import (
    AnalysisStatus,
    ConfigAnalysis,
    ConfigSnapshot,
    ParseStatus,
)
from app.configs.rescoring import apply_tally, rescore, tally
from app.findings.models import Finding
from app.findings.muting import active_acks
from app.hosts.models import Host

log = logging.getLogger(__name__)

# Where ConfigAnalysis.inputs records the version of the engine that made the analysis.
ENGINE_KEY = "engine_version"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What analysing a snapshot did: 'created', 'replaced', 'unchanged', 'current' (the latest
    analysis still holds: the engine did not run) or 'skipped'."""

    action: str
    analysis_id: int | None


def record_summary(snapshot: ConfigSnapshot, parsed: ParsedConfig, now: datetime) -> None:
    """Store the snapshot's file count, line count and parse problems."""
    snapshot.file_count = len(parsed.files)
    snapshot.line_count = len(snapshot.dump.splitlines())
    if parsed.errors:
        snapshot.parse_status = ParseStatus.error
        snapshot.parse_errors = "\n".join(
            f"{error.file}:{error.line}:{error.column}: {error.message}" for error in parsed.errors
        )
    else:
        snapshot.parse_status = ParseStatus.parsed
        snapshot.parse_errors = None
    snapshot.analyzed_at = now


def _run_engine(snapshot: ConfigSnapshot, inputs: AnalysisInputs, now: datetime) -> Report | str:
    """The engine's report, or the error text when the engine itself crashed."""
    try:
        parsed = parse_dump(snapshot.dump)
        record_summary(snapshot, parsed, now)
        return analyze(parsed, inputs.facts, inputs.metrics)
    # An engine bug must become a visible failed analysis, not a retry loop.
    except Exception as exc:
        log.exception("analysis engine crashed on config snapshot %d", snapshot.id)
        snapshot.parse_status = ParseStatus.error
        snapshot.parse_errors = f"internal error of the analysis engine: {exc!r}"
        snapshot.analyzed_at = now
        return f"{type(exc).__name__}: {exc}"


def _latest(session: Session, host_id: int) -> ConfigAnalysis | None:
    # populate_existing: read again after the host lock, what a concurrent analysis wrote.
    return session.scalar(
        select(ConfigAnalysis)
        .where(ConfigAnalysis.host_id == host_id)
        .order_by(ConfigAnalysis.id.desc())
        .limit(1)
        .execution_options(populate_existing=True)
    )


def _still_current(
    latest: ConfigAnalysis, snapshot: ConfigSnapshot, inputs: AnalysisInputs
) -> bool:
    """Whether the engine would find again what the latest analysis holds: same snapshot, inputs
    digest and engine version, and a clean run (a crash or a failed rule may be transient)."""
    return (
        latest.snapshot_id == snapshot.id
        and latest.inputs_digest == inputs.digest()
        and latest.inputs.get(ENGINE_KEY) == ENGINE_VERSION
        and latest.status is AnalysisStatus.ok
        and latest.error is None
    )


def _mark_current(
    session: Session, snapshot: ConfigSnapshot, latest: ConfigAnalysis, now: datetime
) -> Outcome:
    """Leave the latest analysis as a full run would, without the engine; commits.

    The findings rows stay (their ids too); the times move to `now` (the UI's "analysed at",
    the periodic round's due check), and the score is taken again from the acks in force now,
    which differ from those it was scored with when an ack expired since (before
    apply_expired_acks ran) or was made while the analysis that scored it ran."""
    snapshot.analyzed_at = now
    latest.analyzed_at = now
    rescore(session=session, analyses=[latest], now=now)
    session.commit()
    return Outcome("current", latest.id)


def _fingerprint(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(pairs)


def _stored_fingerprint(session: Session, analysis_id: int) -> list[tuple[str, str]]:
    rows = session.execute(
        select(Finding.key, Finding.severity).where(Finding.analysis_id == analysis_id)
    )
    return _fingerprint([(row.key, row.severity) for row in rows])


def _finding_rows(report: Report, analysis: ConfigAnalysis) -> list[Finding]:
    return [
        Finding(
            analysis_id=analysis.id,
            host_id=analysis.host_id,
            key=f.key,
            place=f.place,
            directive=f.directive,
            rule=f.rule,
            severity=str(f.severity),
            category=str(f.category),
            file=f.file,
            line=f.line,
            message=f.message,
            evidence=dict(f.evidence),
            fix=f.fix.to_dict() if f.fix is not None else None,
            doc_url=f.doc_url,
        )
        for f in report.findings
    ]


def _fill(
    session: Session,
    analysis: ConfigAnalysis,
    result: Report | str,
    inputs: AnalysisInputs,
    now: datetime,
) -> None:
    """Set the analysis's fields and findings from the engine's result."""
    analysis.analyzed_at = now
    analysis.inputs_digest = inputs.digest()
    # The engine's version sits next to the inputs, not in their digest (which stays a function
    # of what the host reported): after a deploy with a new one, a steady host's analysis is
    # re-run in place once ('replaced'), then current again.
    analysis.inputs = {**inputs.to_dict(), ENGINE_KEY: ENGINE_VERSION}
    if isinstance(result, str):
        analysis.status = AnalysisStatus.failed
        analysis.error = result
        analysis.score = None
        analysis.category_scores = {}
        analysis.error_count = analysis.warning_count = analysis.info_count = 0
        return
    analysis.status = AnalysisStatus.ok
    # A crashed rule is our bug; its name stays visible next to the other rules' findings.
    analysis.error = (
        "; ".join(f"rule {f.rule} failed: {f.error}" for f in result.failures)
        if result.failures
        else None
    )
    acks = active_acks(session=session, now=now, host_ids=[analysis.host_id])
    keyed = [(f.key, f) for f in result.findings]
    apply_tally(analysis, tally(keyed, host_id=analysis.host_id, acks=acks))
    session.flush()
    session.add_all(_finding_rows(result, analysis))


def _same_findings(session: Session, latest: ConfigAnalysis, result: Report | str) -> bool:
    """Whether a clean run found what latest (clean too) holds: the same keys and severities."""
    return (
        latest.status is AnalysisStatus.ok
        and not isinstance(result, str)
        and _stored_fingerprint(session, latest.id)
        == _fingerprint([(f.key, str(f.severity)) for f in result.findings])
    )


def analyze_snapshot(*, session: Session, snapshot_id: int, now: datetime) -> Outcome:
    """Analyse a snapshot with its host's facts and last hour of metrics; commits.

    With the same snapshot, inputs and engine as the host's latest analysis, the engine does
    not run and that analysis is marked current. Otherwise a run of the same snapshot with the
    same inputs, or finding what the latest analysis holds, rewrites that analysis in place (no
    new point in the score history). An old snapshot (the host has a newer config) only gets
    its parse summary."""
    snapshot = session.get(ConfigSnapshot, snapshot_id)
    if snapshot is None:
        log.warning("config snapshot %d vanished before analysis", snapshot_id)
        return Outcome("skipped", None)
    # FOR KEY SHARE keeps the host from being deleted meanwhile without blocking the pushes'
    # updates of its row, which wait for no analysis (niced, its engine run may take long).
    host = session.get(Host, snapshot.host_id, with_for_update={"read": True, "key_share": True})
    if host is None:
        return Outcome("skipped", None)
    inputs = gather_inputs(session=session, host_id=host.id, now=now)
    latest = _latest(session, host.id)
    if (
        host.config_hash == snapshot.hash
        and latest is not None
        and _still_current(latest, snapshot, inputs)
    ):
        return _mark_current(session, snapshot, latest, now)
    result = _run_engine(snapshot, inputs, now)
    # Locking the host row for the writes makes two analyses of one host take turns (replace,
    # not duplicate); re-read, as a push may have brought a new config meanwhile.
    host = session.get(Host, host.id, with_for_update=True, populate_existing=True)
    if host is None or host.config_hash != snapshot.hash:
        session.commit()
        return Outcome("skipped", None)
    latest = _latest(session, host.id)
    if latest is not None and latest.snapshot_id == snapshot.id:
        same_inputs = latest.inputs_digest == inputs.digest()
        if same_inputs or _same_findings(session, latest, result):
            # Rewritten in place, so no new point in the score history; the new digest and
            # figures let the next round of a now-steady host find it current.
            session.execute(delete(Finding).where(Finding.analysis_id == latest.id))
            _fill(session, latest, result, inputs, now)
            session.commit()
            return Outcome("replaced" if same_inputs else "unchanged", latest.id)
    analysis = ConfigAnalysis(host_id=host.id, snapshot_id=snapshot.id)
    session.add(analysis)
    _fill(session, analysis, result, inputs, now)
    session.commit()
    return Outcome("created", analysis.id)


def current_snapshot_id(*, session: Session, host_id: int) -> int | None:
    """The id of the snapshot matching the host's current config hash, if stored."""
    return session.scalar(
        select(ConfigSnapshot.id)
        .join(Host, (Host.id == ConfigSnapshot.host_id) & (Host.config_hash == ConfigSnapshot.hash))
        .where(Host.id == host_id)
    )
