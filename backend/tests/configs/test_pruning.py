"""Pruning analyses, findings and snapshots to what the UI shows, on PostgreSQL and SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from app.alerts.models import AlertRule, Incident, IncidentState
from app.alerts.rules_file import default_rules
from app.changes.models import Change
from app.configs import pruning
from app.configs.models import AnalysisStatus, ConfigAnalysis, ConfigSnapshot
from app.core.db import build_engine, utcnow
from app.findings.models import Finding
from app.hosts.models import Host
from app.models import Base
from sqlalchemy import func, select
from sqlalchemy.orm import Session

# Mid-day, so that "2 hours earlier" stays within the same UTC day whenever the tests run.
NOW = utcnow().replace(hour=12, minute=30, second=0, microsecond=0)


@pytest.fixture(params=["postgresql", "sqlite"])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Session]:
    """A session on the test PostgreSQL database, or on a fresh SQLite file (embedded mode)."""
    if request.param == "postgresql":
        yield request.getfixturevalue("db_session")
        return
    engine = build_engine(f"sqlite:///{tmp_path / 'embedded.db'}")
    Base.metadata.create_all(engine)
    with Session(engine) as sqlite_session:
        yield sqlite_session
    engine.dispose()


def add_host(session: Session, name: str = "web-1") -> Host:
    """A host running a config whose snapshot is stored (received 40 days ago)."""
    host = Host(agent_id=f"agent-{name}", hostname=name, labels={}, token_hash="0" * 64)
    session.add(host)
    session.flush()
    current = add_snapshot(session, host, "current", NOW - timedelta(days=40))
    host.config_hash = current.hash
    session.commit()
    return host


def add_snapshot(session: Session, host: Host, name: str, received_at: datetime) -> ConfigSnapshot:
    """A stored snapshot of the host, hash derived from its name."""
    snapshot = ConfigSnapshot(
        host_id=host.id, hash=name.ljust(64, "0"), dump=f"# {name}\n", received_at=received_at
    )
    session.add(snapshot)
    session.flush()
    return snapshot


def current_snapshot(session: Session, host: Host) -> ConfigSnapshot:
    """The snapshot the host runs."""
    snapshot = session.scalar(
        select(ConfigSnapshot).where(
            ConfigSnapshot.host_id == host.id, ConfigSnapshot.hash == host.config_hash
        )
    )
    assert snapshot is not None
    return snapshot


def add_analysis(
    session: Session,
    host: Host,
    analyzed_at: datetime,
    *,
    snapshot: ConfigSnapshot | None = None,
    status: AnalysisStatus = AnalysisStatus.ok,
    findings: int = 2,
) -> int:
    """An analysis of the host's current (or the given) snapshot with `findings` findings."""
    snapshot = snapshot or current_snapshot(session, host)
    analysis = ConfigAnalysis(
        host_id=host.id,
        snapshot_id=snapshot.id,
        analyzed_at=analyzed_at,
        status=status,
        score=80 if status is AnalysisStatus.ok else None,
        inputs_digest="0" * 64,
    )
    session.add(analysis)
    session.flush()
    for index in range(findings):
        session.add(
            Finding(
                analysis_id=analysis.id,
                host_id=host.id,
                key=f"G-off@/etc/nginx/nginx.conf:http/gzip#{index}",
                rule="G-off",
                severity="warning",
                category="performance",
                file="/etc/nginx/nginx.conf",
                line=3,
                message="gzip is off",
            )
        )
    session.commit()
    return analysis.id


def analysis_ids(session: Session) -> set[int]:
    """Ids of every stored analysis."""
    session.expire_all()
    return set(session.scalars(select(ConfigAnalysis.id)))


def finding_count(session: Session, analysis_id: int) -> int:
    """How many findings the analysis has."""
    return (
        session.scalar(
            select(func.count()).select_from(Finding).where(Finding.analysis_id == analysis_id)
        )
        or 0
    )


def prune(session: Session, **budget: int) -> pruning.Pruned:
    """One pruning run at NOW."""
    return pruning.prune(session=session, now=NOW, **budget)


def test_keeps_the_day_the_hourly_and_daily_history_and_the_latest(session: Session) -> None:
    host = add_host(session)
    ancient = add_analysis(session, host, NOW - timedelta(days=45))
    daily_early = add_analysis(session, host, NOW - timedelta(days=20, hours=2))
    daily_last = add_analysis(session, host, NOW - timedelta(days=20))
    hourly_early = add_analysis(session, host, NOW - timedelta(days=3, minutes=20))
    hourly_last = add_analysis(session, host, NOW - timedelta(days=3, minutes=5))
    hourly_failed = add_analysis(
        session, host, NOW - timedelta(days=3, minutes=1), status=AnalysisStatus.failed
    )
    other_hour = add_analysis(session, host, NOW - timedelta(days=2))
    day = [add_analysis(session, host, NOW - timedelta(minutes=m)) for m in (600, 300, 30)]

    pruned = prune(session)

    kept = {daily_last, hourly_last, other_hour, *day}
    assert analysis_ids(session) == kept
    assert pruned.analyses == 4
    assert {ancient, daily_early, hourly_early, hourly_failed}.isdisjoint(analysis_ids(session))
    # The score chart reads counts from the analysis rows; only the config tab needs findings.
    assert finding_count(session, day[-1]) == 2
    assert finding_count(session, other_hour) == 0
    assert finding_count(session, day[0]) == 2


def test_the_latest_analysis_is_kept_however_old_and_failed(session: Session) -> None:
    host = add_host(session)
    older = add_analysis(session, host, NOW - timedelta(days=90))
    latest = add_analysis(session, host, NOW - timedelta(days=60), status=AnalysisStatus.failed)
    prune(session)
    assert analysis_ids(session) == {latest}
    assert older not in analysis_ids(session)
    assert finding_count(session, latest) == 2


def test_the_latest_analysis_of_the_config_the_host_returned_to_is_kept(session: Session) -> None:
    host = add_host(session)
    elsewhere = add_snapshot(session, host, "elsewhere", NOW - timedelta(days=50))
    returned_to = add_analysis(session, host, NOW - timedelta(days=40))
    left = add_analysis(session, host, NOW - timedelta(days=35), snapshot=elsewhere)
    prune(session)
    assert analysis_ids(session) == {returned_to, left}
    assert finding_count(session, returned_to) == 2


def test_an_analysis_an_incident_links_to_is_kept_with_its_findings(session: Session) -> None:
    host = add_host(session)
    linked = add_analysis(session, host, NOW - timedelta(days=60))
    unlinked = add_analysis(session, host, NOW - timedelta(days=59))
    add_analysis(session, host, NOW - timedelta(minutes=5))
    rule = AlertRule(**default_rules()[0].model_dump())
    session.add(rule)
    session.flush()
    finding_id = session.scalar(select(func.min(Finding.id)).where(Finding.analysis_id == linked))
    session.add(
        Incident(
            rule_id=rule.id,
            host_id=host.id,
            rule_key=rule.key,
            rule_name=rule.name,
            severity=rule.severity,
            state=IncidentState.resolved,
            started_at=NOW - timedelta(days=60),
            fired_at=NOW - timedelta(days=60),
            finding={"rule": "G-off", "finding_id": finding_id, "url": "/hosts/1/config"},
        )
    )
    session.commit()
    prune(session)
    assert linked in analysis_ids(session)
    assert unlinked not in analysis_ids(session)
    assert finding_count(session, linked) == 2


def test_the_analysis_a_change_measures_its_score_after_on_is_kept(session: Session) -> None:
    host = add_host(session)
    base = add_snapshot(session, host, "base", NOW - timedelta(days=50))
    add_analysis(session, host, NOW - timedelta(days=49), snapshot=base)
    session.add(
        Change(
            host_id=host.id,
            title="gzip on",
            base_snapshot_id=base.id,
            base_config_hash=base.hash,
            diff="",
            created_by="operator",
            created_at=NOW - timedelta(days=48),
            sent_at=NOW - timedelta(days=47),
        )
    )
    session.commit()
    score_after = add_analysis(session, host, NOW - timedelta(days=46))
    later_same_day = add_analysis(session, host, NOW - timedelta(days=45))
    latest = add_analysis(session, host, NOW - timedelta(minutes=1))
    prune(session)
    assert analysis_ids(session) == {score_after, latest}
    assert later_same_day not in analysis_ids(session)
    # The change's base snapshot stays, though no analysis refers to it any more.
    assert session.get(ConfigSnapshot, base.id) is not None


def test_snapshots_nothing_refers_to_are_deleted(session: Session) -> None:
    host = add_host(session)
    current = current_snapshot(session, host)
    abandoned = add_snapshot(session, host, "abandoned", NOW - timedelta(days=36))
    add_analysis(session, host, NOW - timedelta(days=35), snapshot=abandoned)
    just_received = add_snapshot(session, host, "just-received", NOW - timedelta(minutes=5))
    history = add_snapshot(session, host, "history", NOW - timedelta(days=3))
    kept_for_chart = add_analysis(session, host, NOW - timedelta(days=3), snapshot=history)
    add_analysis(session, host, NOW - timedelta(minutes=1))
    abandoned_id = abandoned.id
    session.commit()
    pruned = prune(session)
    assert pruned.snapshots == 1
    session.expire_all()
    assert session.get(ConfigSnapshot, abandoned_id) is None
    for snapshot in (current, just_received, history):
        assert session.get(ConfigSnapshot, snapshot.id) is not None
    assert kept_for_chart in analysis_ids(session)


def test_a_second_run_deletes_nothing(session: Session) -> None:
    host = add_host(session)
    for days in (45, 40, 20, 3, 0):
        add_analysis(session, host, NOW - timedelta(days=days, minutes=3))
        add_analysis(session, host, NOW - timedelta(days=days, minutes=1))
    add_snapshot(session, host, "abandoned", NOW - timedelta(days=10))
    session.commit()
    first = prune(session)
    assert first.analyses and first.findings and first.snapshots
    kept = analysis_ids(session)
    assert prune(session) == pruning.Pruned(analyses=0, findings=0, snapshots=0)
    assert analysis_ids(session) == kept


def test_batches_bound_the_work_of_a_run(session: Session) -> None:
    host = add_host(session)
    for minutes in range(1, 8):
        add_analysis(session, host, NOW - timedelta(days=40, minutes=minutes), findings=0)
    add_analysis(session, host, NOW)
    assert prune(session, batch_rows=2, max_batches=2).analyses == 4
    assert len(analysis_ids(session)) == 4
    assert prune(session, batch_rows=2, max_batches=2).analyses == 3
    assert len(analysis_ids(session)) == 1
