"""A re-analysis with the same snapshot, inputs and engine as the latest analysis skips the engine
and leaves that analysis as a full run would: same findings rows, times and score of now."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from app.configs import analyzer
from app.configs.models import AnalysisStatus, ConfigAnalysis, ConfigSnapshot
from app.core.db import utcnow
from app.findings import service as findings_service
from app.findings.models import Ack, Finding
from app.hosts.models import Host
from fastapi.testclient import TestClient
from nginx_fleet_analyzer import ParsedConfig, parse_dump
from nginx_fleet_analyzer.engine import ENGINE_VERSION, Report, analyze
from nginx_fleet_analyzer.findings import Category, Severity
from nginx_fleet_analyzer.findings import Finding as EngineFinding
from nginx_fleet_analyzer.rules import Rule, RuleContext, all_rules
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from tests.configs.factories import (
    NEAR_DEFAULT_DUMP,
    add_counter_samples,
    host_with_config,
    run_config,
    set_facts,
)
from tests.hosts.factories import insert_samples, sample_values

W_CONNECTIONS_KEY = "W-connections@/etc/nginx/nginx.conf:events/worker_connections"


@pytest.fixture
def engine_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the engine's entry points analyze_snapshot called (parse_dump, analyze)."""
    calls: list[str] = []

    def counted_parse(dump: str) -> ParsedConfig:
        calls.append("parse_dump")
        return parse_dump(dump)

    def counted_analyze(*args: Any, **kwargs: Any) -> Report:
        calls.append("analyze")
        return analyze(*args, **kwargs)

    monkeypatch.setattr(analyzer, "parse_dump", counted_parse)
    monkeypatch.setattr(analyzer, "analyze", counted_analyze)
    return calls


def run(session: Session, snapshot_id: int, now: datetime) -> analyzer.Outcome:
    """Analyse a snapshot at `now`."""
    return analyzer.analyze_snapshot(session=session, snapshot_id=snapshot_id, now=now)


def run_in_full(
    session: Session, snapshot_id: int, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> analyzer.Outcome:
    """Analyse a snapshot at `now` the way it was done before the skip: always with the engine."""
    with monkeypatch.context() as patch:
        patch.setattr(analyzer, "_still_current", lambda *_args: False)
        return run(session, snapshot_id, now)


def finding_ids(session: Session, analysis_id: int | None) -> list[int]:
    """Ids of an analysis's findings rows."""
    query = select(Finding.id).where(Finding.analysis_id == analysis_id).order_by(Finding.id)
    return list(session.scalars(query))


def stored(session: Session, analysis_id: int | None) -> dict[str, Any]:
    """What the UI and the alerts read of an analysis: times, status, score and counts."""
    session.expire_all()
    analysis = session.get(ConfigAnalysis, analysis_id)
    assert analysis is not None
    snapshot = session.get(ConfigSnapshot, analysis.snapshot_id)
    assert snapshot is not None
    return {
        "analyzed_at": analysis.analyzed_at,
        "snapshot_analyzed_at": snapshot.analyzed_at,
        "status": analysis.status,
        "score": analysis.score,
        "categories": analysis.category_scores,
        "counts": (analysis.error_count, analysis.warning_count, analysis.info_count),
        "error": analysis.error,
        "inputs_digest": analysis.inputs_digest,
    }


def analyses(session: Session) -> int:
    """How many analyses are stored."""
    return session.scalar(select(func.count()).select_from(ConfigAnalysis)) or 0


def steady_host() -> tuple[int, int]:
    """A host with facts and three samples of the last minute; (host id, snapshot id)."""
    host, snapshot_id = host_with_config()
    set_facts(host.id, {"cpu_count": 4})
    add_counter_samples(host.id, [(1000, 1000), (1200, 1200), (1300, 1300)], active=10)
    return host.id, snapshot_id


def test_a_steady_host_is_marked_current_without_the_engine(
    viewer_client: TestClient, db_session: Session, engine_runs: list[str]
) -> None:
    host_id, snapshot_id = steady_host()
    first_at = utcnow()
    first = run(db_session, snapshot_id, first_at)
    assert first.action == "created" and engine_runs == ["parse_dump", "analyze"]
    ids = finding_ids(db_session, first.analysis_id)
    before = stored(db_session, first.analysis_id)

    later = first_at + timedelta(minutes=5)
    second = run(db_session, snapshot_id, later)
    assert second == analyzer.Outcome("current", first.analysis_id)
    assert engine_runs == ["parse_dump", "analyze"]
    assert finding_ids(db_session, first.analysis_id) == ids
    after = stored(db_session, first.analysis_id)
    assert after == {**before, "analyzed_at": later, "snapshot_analyzed_at": later}
    assert analyses(db_session) == 1
    config = viewer_client.get(f"/api/v1/hosts/{host_id}/config").json()["analysis"]
    assert datetime.fromisoformat(config["analyzed_at"]) == later


@pytest.mark.parametrize(
    ("accepts", "handled", "action"),
    [
        # 301 accepted connections in the hour round to the 300 of the first run: same digest.
        (1301, 1301, "current"),
        # 500 accepted and 400 handled: 100 dropped, beyond any rounding.
        (1500, 1400, "created"),
    ],
)
def test_metrics_run_the_engine_only_when_they_change_beyond_rounding(
    db_session: Session, engine_runs: list[str], accepts: int, handled: int, action: str
) -> None:
    host_id, snapshot_id = steady_host()
    first = run(db_session, snapshot_id, utcnow())
    later = utcnow() + timedelta(seconds=10)
    row = sample_values(host_id, 4, later, accepts=accepts, handled=handled, active=10)
    insert_samples(db_session, [row])
    db_session.execute(update(Host).where(Host.id == host_id).values(last_seq=4))
    db_session.commit()

    second = run(db_session, snapshot_id, later)
    assert second.action == action
    assert engine_runs.count("analyze") == (1 if action == "current" else 2)
    if action == "created":
        assert second.analysis_id != first.analysis_id
        rules = db_session.scalars(
            select(Finding.rule).where(Finding.analysis_id == second.analysis_id)
        )
        assert "W-drops" in set(rules)


def test_figures_that_drift_without_new_findings_refresh_the_analysis_then_skip(
    db_session: Session, engine_runs: list[str]
) -> None:
    host_id, snapshot_id = steady_host()
    first = run(db_session, snapshot_id, utcnow())
    before = stored(db_session, first.analysis_id)
    # 700 accepted and handled in the hour instead of 300: another digest, the same findings.
    later = utcnow() + timedelta(seconds=10)
    insert_samples(db_session, [sample_values(host_id, 4, later, accepts=1700, handled=1700,
                                              active=10)])  # fmt: skip
    db_session.execute(update(Host).where(Host.id == host_id).values(last_seq=4))
    db_session.commit()

    second = run(db_session, snapshot_id, later)
    # Rewritten in place with the new figures: no second analysis, no new score point.
    assert second == analyzer.Outcome("unchanged", first.analysis_id)
    assert analyses(db_session) == 1
    after = stored(db_session, first.analysis_id)
    assert after["inputs_digest"] != before["inputs_digest"]
    assert after["score"] == before["score"] and after["counts"] == before["counts"]
    # The next round of the now-steady host needs no engine.
    third = run(db_session, snapshot_id, later + timedelta(minutes=5))
    assert third == analyzer.Outcome("current", first.analysis_id)
    assert engine_runs.count("analyze") == 2


def test_a_new_snapshot_runs_the_engine(db_session: Session, engine_runs: list[str]) -> None:
    host_id, snapshot_id = steady_host()
    run(db_session, snapshot_id, utcnow())
    dump = NEAR_DEFAULT_DUMP.replace("worker_connections 512;", "worker_connections 4096;")
    new_id = run_config(db_session, host_id, dump)

    outcome = run(db_session, new_id, utcnow())
    assert outcome.action == "created"
    assert engine_runs.count("analyze") == 2


def test_an_older_snapshot_is_not_marked_current(
    db_session: Session, engine_runs: list[str]
) -> None:
    host_id, snapshot_id = steady_host()
    first_at = utcnow()
    first = run(db_session, snapshot_id, first_at)
    # The host runs another config, whose analysis is still queued.
    db_session.execute(update(Host).where(Host.id == host_id).values(config_hash="0" * 64))
    db_session.commit()

    outcome = run(db_session, snapshot_id, first_at + timedelta(minutes=5))
    assert outcome == analyzer.Outcome("skipped", None)
    assert stored(db_session, first.analysis_id)["analyzed_at"] == first_at


def test_a_new_engine_version_reruns_a_steady_host_once_in_place(
    db_session: Session, engine_runs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _host_id, snapshot_id = steady_host()
    first = run(db_session, snapshot_id, utcnow())
    assert stored(db_session, first.analysis_id)["inputs_digest"]
    monkeypatch.setattr(analyzer, "ENGINE_VERSION", ENGINE_VERSION + 1)

    second = run(db_session, snapshot_id, utcnow())
    assert second == analyzer.Outcome("replaced", first.analysis_id)
    assert engine_runs.count("analyze") == 2
    analysis = db_session.get(ConfigAnalysis, first.analysis_id)
    assert analysis is not None
    assert analysis.inputs[analyzer.ENGINE_KEY] == ENGINE_VERSION + 1
    # The rows were rewritten: as many as before, all of this analysis.
    stored_rows = db_session.scalar(select(func.count()).select_from(Finding))
    assert stored_rows == len(finding_ids(db_session, first.analysis_id)) > 0

    third = run(db_session, snapshot_id, utcnow())
    assert third == analyzer.Outcome("current", first.analysis_id)
    assert engine_runs.count("analyze") == 2
    assert analyses(db_session) == 1


def test_a_failed_analysis_is_run_again_and_recovers(
    db_session: Session, engine_runs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _host_id, snapshot_id = steady_host()

    def out_of_memory(_dump: str) -> None:
        # A crash that need not repeat: the engine is not proven to fail the same way again.
        raise MemoryError

    with monkeypatch.context() as patch:
        patch.setattr(analyzer, "parse_dump", out_of_memory)
        first = run(db_session, snapshot_id, utcnow())
        assert stored(db_session, first.analysis_id)["status"] is AnalysisStatus.failed
        again = run(db_session, snapshot_id, utcnow())
        assert again == analyzer.Outcome("replaced", first.analysis_id)
        assert stored(db_session, first.analysis_id)["status"] is AnalysisStatus.failed

    recovered = run(db_session, snapshot_id, utcnow())
    assert recovered == analyzer.Outcome("replaced", first.analysis_id)
    after = stored(db_session, first.analysis_id)
    assert after["status"] is AnalysisStatus.ok and after["score"] is not None
    assert engine_runs == ["parse_dump", "analyze"]


def test_an_analysis_with_a_failed_rule_is_run_again(
    db_session: Session, engine_runs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _host_id, snapshot_id = steady_host()

    def broken(_context: RuleContext) -> list[EngineFinding]:
        raise ZeroDivisionError("a rule's bug")

    crash = Rule("T-broken", Category.TRANSFER, Severity.INFO, broken)
    monkeypatch.setattr(
        analyzer, "analyze", lambda *args: analyze(*args, rules=[*all_rules(), crash])
    )
    first = run(db_session, snapshot_id, utcnow())
    assert "rule T-broken failed" in (stored(db_session, first.analysis_id)["error"] or "")

    second = run(db_session, snapshot_id, utcnow())
    assert second == analyzer.Outcome("replaced", first.analysis_id)
    assert engine_runs.count("parse_dump") == 2


def add_ack(host_id: int | None, expires_at: datetime | None, session: Session) -> None:
    """A W-connections ack written straight to the table: no re-scoring follows it."""
    session.add(
        Ack(
            rule="W-connections",
            host_id=host_id,
            finding_key=W_CONNECTIONS_KEY if host_id is not None else None,
            reason="capacity is planned",
            created_by="tests",
            expires_at=expires_at,
        )
    )
    session.commit()


@pytest.mark.parametrize("ack_lasts", [timedelta(hours=1), timedelta(minutes=3), None])
def test_the_score_of_a_current_analysis_is_the_one_a_full_run_stores(
    db_session: Session,
    engine_runs: list[str],
    monkeypatch: pytest.MonkeyPatch,
    ack_lasts: timedelta | None,
) -> None:
    host_id, snapshot_id = steady_host()
    first_at = utcnow()
    expires_at = first_at + ack_lasts if ack_lasts is not None else None
    add_ack(host_id, expires_at, db_session)
    first = run(db_session, snapshot_id, first_at)
    muted_score = stored(db_session, first.analysis_id)["score"]

    # 5 minutes on: the 3-minute ack has expired, and apply_expired_acks has not run yet.
    later = first_at + timedelta(minutes=5)
    current = run(db_session, snapshot_id, later)
    assert current == analyzer.Outcome("current", first.analysis_id)
    skipped = stored(db_session, first.analysis_id)
    full = run_in_full(db_session, snapshot_id, later, monkeypatch)
    assert full == analyzer.Outcome("replaced", first.analysis_id)
    assert stored(db_session, first.analysis_id) == skipped
    expired = ack_lasts == timedelta(minutes=3)
    assert (skipped["score"] == muted_score) is not expired
    assert findings_service.apply_expired_acks(session=db_session, now=later) == int(expired)
    assert stored(db_session, first.analysis_id) == skipped


def test_a_score_made_before_a_fleet_wide_ack_is_corrected_when_current(
    db_session: Session, engine_runs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _host_id, snapshot_id = steady_host()
    first_at = utcnow()
    first = run(db_session, snapshot_id, first_at)
    # As an ack made while that analysis ran leaves it: its score did not see the ack.
    add_ack(None, None, db_session)
    unscored = stored(db_session, first.analysis_id)["score"]

    later = first_at + timedelta(minutes=5)
    assert run(db_session, snapshot_id, later).action == "current"
    skipped = stored(db_session, first.analysis_id)
    assert skipped["score"] is not None and unscored is not None
    assert skipped["score"] > unscored
    run_in_full(db_session, snapshot_id, later, monkeypatch)
    assert stored(db_session, first.analysis_id) == skipped
    assert engine_runs.count("analyze") == 2
