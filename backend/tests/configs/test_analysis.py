"""Analysing a stored snapshot with the host's facts and metrics; storing findings and score."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from app.configs import analyzer, service
from app.configs.models import (
    AnalysisStatus,
    ConfigAnalysis,
    ConfigSnapshot,
    ParseStatus,
)
from app.core.db import utcnow
from app.findings.models import Finding
from app.hosts.models import Host
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.configs.factories import (
    BROKEN_DUMP,
    WORKER_CONNECTIONS_LINE,
    add_counter_samples,
    host_with_config,
    set_facts,
)

CONF = "/etc/nginx/nginx.conf"


def run(session: Session, snapshot_id: int) -> analyzer.Outcome:
    """Analyse a snapshot now."""
    return analyzer.analyze_snapshot(session=session, snapshot_id=snapshot_id, now=utcnow())


def findings_of(session: Session, analysis_id: int | None) -> list[tuple[str, str, int, str]]:
    """(rule, file, line, severity) of an analysis's stored findings."""
    rows = session.execute(
        select(Finding.rule, Finding.file, Finding.line, Finding.severity)
        .where(Finding.analysis_id == analysis_id)
        .order_by(Finding.id)
    )
    return [tuple(row) for row in rows]  # type: ignore[misc]


def rules_of(session: Session, analysis_id: int | None) -> set[str]:
    """Rule ids of an analysis's stored findings."""
    return {rule for rule, *_ in findings_of(session, analysis_id)}


def test_near_default_config_with_facts_stores_findings_at_their_lines(
    db_session: Session,
) -> None:
    host, snapshot_id = host_with_config()
    set_facts(host.id, {"nginx_version": "1.22.1", "cpu_count": 4})
    outcome = run(db_session, snapshot_id)
    assert outcome.action == "created"
    found = findings_of(db_session, outcome.analysis_id)
    assert ("W-connections", CONF, WORKER_CONNECTIONS_LINE, "warning") in found
    # The workers' real fd limit is not among these facts: only a note naming it.
    assert ("W-nofile", CONF, 1, "info") in found
    analysis = db_session.get(ConfigAnalysis, outcome.analysis_id)
    assert analysis is not None
    assert analysis.status is AnalysisStatus.ok
    assert analysis.score is not None and 0 < analysis.score < 100
    assert analysis.category_scores["workers"] < 100
    assert analysis.category_scores["tls"] == 100
    assert analysis.warning_count == sum(1 for *_, sev in found if sev == "warning")
    assert analysis.inputs["facts"]["cpu_count"] == 4
    assert analysis.inputs["metrics"] is None
    snapshot = db_session.get(ConfigSnapshot, snapshot_id)
    assert snapshot is not None and snapshot.parse_status is ParseStatus.parsed
    assert snapshot.file_count == 1


def test_facts_dependent_rules_speak_softly_without_facts(db_session: Session) -> None:
    _host, snapshot_id = host_with_config()
    outcome = run(db_session, snapshot_id)
    found = findings_of(db_session, outcome.analysis_id)
    assert ("W-connections", CONF, WORKER_CONNECTIONS_LINE, "info") in found
    assert ("W-nofile", CONF, 1, "info") in found


def test_broken_dump_becomes_validity_findings(db_session: Session) -> None:
    _host, snapshot_id = host_with_config(BROKEN_DUMP)
    outcome = run(db_session, snapshot_id)
    analysis = db_session.get(ConfigAnalysis, outcome.analysis_id)
    assert analysis is not None and analysis.status is AnalysisStatus.ok
    found = findings_of(db_session, outcome.analysis_id)
    validity = [(rule, line) for rule, _file, line, _sev in found if rule.startswith("V-")]
    assert ("V-args", 3) in validity
    assert analysis.error_count >= len(validity)
    snapshot = db_session.get(ConfigSnapshot, analysis.snapshot_id)
    assert snapshot is not None and snapshot.parse_status is ParseStatus.error


def test_drops_in_the_last_hour_fire_w_drops(db_session: Session) -> None:
    host, snapshot_id = host_with_config()
    # accepts grew by 300, handled by 250: 50 connections dropped.
    add_counter_samples(host.id, [(1000, 1000), (1200, 1150), (1300, 1250)], active=10)
    outcome = run(db_session, snapshot_id)
    found = findings_of(db_session, outcome.analysis_id)
    assert ("W-drops", CONF, WORKER_CONNECTIONS_LINE, "error") in found
    analysis = db_session.get(ConfigAnalysis, outcome.analysis_id)
    assert analysis is not None
    assert analysis.inputs["metrics"]["accepts_delta"] == 300
    assert analysis.inputs["metrics"]["handled_delta"] == 250


def test_samples_without_drops_keep_w_drops_silent(db_session: Session) -> None:
    host, snapshot_id = host_with_config()
    add_counter_samples(host.id, [(1000, 1000), (1200, 1200), (5, 5)], active=10)
    outcome = run(db_session, snapshot_id)
    assert "W-drops" not in rules_of(db_session, outcome.analysis_id)


def test_samples_older_than_an_hour_are_not_used(db_session: Session) -> None:
    host, snapshot_id = host_with_config()
    add_counter_samples(
        host.id, [(1000, 1000), (1200, 1100)], end=utcnow() - timedelta(hours=2), active=10
    )
    outcome = run(db_session, snapshot_id)
    assert "W-drops" not in rules_of(db_session, outcome.analysis_id)
    analysis = db_session.get(ConfigAnalysis, outcome.analysis_id)
    assert analysis is not None and analysis.inputs["metrics"] is None


def test_new_inputs_with_new_findings_add_an_analysis(db_session: Session) -> None:
    host, snapshot_id = host_with_config()
    first = run(db_session, snapshot_id)
    set_facts(host.id, {"cpu_count": 4})
    second = run(db_session, snapshot_id)
    assert second.action == "created"
    assert second.analysis_id != first.analysis_id
    # Without the CPU count W-connections is a note; with 4 cores it is a warning.
    assert ("W-connections", CONF, WORKER_CONNECTIONS_LINE, "warning") in findings_of(
        db_session, second.analysis_id
    )
    assert ("W-connections", CONF, WORKER_CONNECTIONS_LINE, "info") in findings_of(
        db_session, first.analysis_id
    )


def test_new_inputs_with_the_same_findings_add_nothing(db_session: Session) -> None:
    host, snapshot_id = host_with_config()
    first = run(db_session, snapshot_id)
    # Facts no rule of this config reacts to: the outcome is the same set of findings.
    set_facts(host.id, {"os": "Debian GNU/Linux 12", "kernel": "6.1.0"})
    second = run(db_session, snapshot_id)
    assert second.action in {"unchanged", "replaced"}
    assert second.analysis_id == first.analysis_id
    assert db_session.scalar(select(func.count()).select_from(ConfigAnalysis)) == 1


def test_an_older_snapshot_gets_its_summary_but_no_analysis(db_session: Session) -> None:
    host, old_snapshot = host_with_config()
    newer = "# configuration file /etc/nginx/nginx.conf:\nevents {}\n"
    newer_hash = hashlib.sha256(newer.encode()).hexdigest()
    service.store_snapshot(
        session=db_session, host_id=host.id, config_hash=newer_hash, dump=newer, now=utcnow()
    )
    stored_host = db_session.get(Host, host.id)
    assert stored_host is not None
    stored_host.config_hash = newer_hash
    db_session.commit()
    outcome = run(db_session, old_snapshot)
    assert outcome.action == "skipped"
    assert db_session.scalar(select(func.count()).select_from(ConfigAnalysis)) == 0
    snapshot = db_session.get(ConfigSnapshot, old_snapshot)
    assert snapshot is not None and snapshot.parse_status is ParseStatus.parsed


def test_a_vanished_snapshot_is_skipped(db_session: Session) -> None:
    assert run(db_session, 424242).action == "skipped"


def test_an_engine_crash_is_stored_as_a_failed_analysis(
    db_session: Session, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _host, snapshot_id = host_with_config()

    def broken_parser(_dump: str) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    # Stands in for a parser bug: no real input makes the engine crash.
    monkeypatch.setattr(analyzer, "parse_dump", broken_parser)
    outcome = run(db_session, snapshot_id)
    analysis = db_session.get(ConfigAnalysis, outcome.analysis_id)
    assert analysis is not None
    assert analysis.status is AnalysisStatus.failed
    assert analysis.score is None
    assert analysis.error is not None and "RecursionError" in analysis.error
    assert findings_of(db_session, analysis.id) == []
    assert "analysis engine crashed on config snapshot" in caplog.text
