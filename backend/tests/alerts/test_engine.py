"""The evaluation engine on PostgreSQL: incidents, causes, notifications, silences, idempotence."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from app.access_log.models import LogStats
from app.alerts import engine
from app.alerts.models import AlertRule, AlertState, Incident, IncidentState, Silence
from app.alerts.rules_file import default_rules
from app.core.db import utcnow
from app.notify.kinds import ChannelKind
from app.notify.models import AlertChannel, AlertDelivery
from sqlalchemy import delete, func, insert, select, text
from sqlalchemy.orm import Session

from tests.hosts.factories import insert_samples, make_host, sample_values

STEP = timedelta(seconds=10)


@pytest.fixture(autouse=True)
def _no_seeded_rules(db_session: Session) -> None:
    """The migration seeds the default rules into a new database: each test adds its own."""
    db_session.execute(delete(AlertRule))
    db_session.commit()


def add_rule(session: Session, key: str, **overrides: Any) -> AlertRule:
    """A shipped default rule (by key) with overrides, notifying one webhook channel."""
    channel = session.scalar(select(AlertChannel).where(AlertChannel.name == "ops"))
    if channel is None:
        channel = AlertChannel(
            name="ops", kind=ChannelKind.webhook, settings={"url": "http://127.0.0.1:9/hook"}
        )
        session.add(channel)
        session.flush()
    body = next(r for r in default_rules() if r.key == key).model_dump()
    body.update(channel_ids=[channel.id], **overrides)
    rule = AlertRule(**body)
    session.add(rule)
    session.commit()
    return rule


def counters(
    session: Session,
    host_id: int,
    *,
    start: datetime,
    count: int,
    drops_per_step: int = 0,
    first_seq: int = 1,
    **figures: Any,
) -> datetime:
    """Samples every 10 s from start whose accepts - handled grows by drops_per_step each."""
    rows = []
    for i in range(count):
        accepts = 1000 + 100 * (first_seq + i)
        handled = accepts - drops_per_step * (first_seq + i)
        rows.append(
            sample_values(
                host_id,
                first_seq + i,
                start + i * STEP,
                accepts=accepts,
                handled=handled,
                **{"requests": accepts * 2, "active": 5, "workers": 1, **figures},
            )
        )
    insert_samples(session, rows)
    return start + (count - 1) * STEP


def deliveries(session: Session) -> list[AlertDelivery]:
    session.expire_all()
    return list(session.scalars(select(AlertDelivery).order_by(AlertDelivery.id)))


def test_drops_fire_once_with_cause_then_resolve_once(db_session: Session) -> None:
    host = make_host(hostname="edge-1", labels={"env": "prod", "dc": "fra"})
    add_rule(db_session, "dropped-connections", keep_firing_s=30)
    now = utcnow().replace(microsecond=0)
    last = counters(
        db_session,
        host.id,
        start=now - 6 * STEP,
        count=6,
        drops_per_step=40,
        errlog_wc_not_enough=3,
        errlog_severe=3,
        active=15,
    )
    outcome = engine.evaluate(session=db_session, now=last)
    assert outcome.fired == 1 and len(outcome.delivery_ids) == 1
    incident = db_session.scalars(select(Incident)).one()
    assert incident.state is IncidentState.firing
    # Five deltas of 40 inside the 2-minute window (the first sample has no predecessor).
    assert incident.value == 200
    assert incident.cause is not None and incident.cause["code"] == "worker_connections"
    assert "worker_connections are not enough' 18 time(s)" in incident.cause["detail"]
    payload = deliveries(db_session)[0].payload
    alert = payload["alerts"][0]
    assert alert["hostname"] == "edge-1" and alert["labels"] == {"env": "prod", "dc": "fra"}
    assert alert["cause_code"] == "worker_connections"
    assert alert["url"].endswith(f"/alerts/incidents/{incident.id}")

    # Still dropping: no second notification.
    last = counters(db_session, host.id, start=last + STEP, count=3, drops_per_step=40, first_seq=7)
    assert engine.evaluate(session=db_session, now=last).delivery_ids == []

    # The drops stop: recovering first, resolved once keep_firing (30 s) has passed.
    quiet_from = last + STEP
    # Counters stay put from here on: accepts - handled no longer grows.
    quiet = [
        sample_values(host.id, 10 + i, quiet_from + i * STEP, accepts=5000, handled=4000)
        for i in range(20)
    ]
    insert_samples(db_session, quiet)
    states = []
    sent = []
    for i in range(2, 20):
        outcome = engine.evaluate(session=db_session, now=quiet_from + i * STEP)
        db_session.expire_all()
        states.append(db_session.get(Incident, incident.id).state)  # type: ignore[union-attr]
        sent += outcome.delivery_ids
    assert IncidentState.recovering in states and states[-1] is IncidentState.resolved
    assert len(sent) == 1
    resolved = db_session.get(AlertDelivery, sent[0])
    assert resolved is not None and resolved.event == "resolved"
    assert resolved.payload["alerts"][0]["status"] == "resolved"
    assert db_session.scalar(select(func.count()).select_from(AlertState)) == 0


def test_evaluating_twice_at_the_same_moment_changes_nothing(db_session: Session) -> None:
    host = make_host()
    add_rule(db_session, "dropped-connections")
    now = utcnow().replace(microsecond=0)
    last = counters(db_session, host.id, start=now - 5 * STEP, count=5, drops_per_step=2)
    first = engine.evaluate(session=db_session, now=last)
    again = engine.evaluate(session=db_session, now=last)
    assert (first.fired, len(first.delivery_ids)) == (1, 1)
    assert (again.fired, again.delivery_ids) == (0, [])
    assert db_session.scalar(select(func.count()).select_from(Incident)) == 1


def test_flapping_fd_use_notifies_once_thanks_to_hysteresis(db_session: Session) -> None:
    """fds at 85, 79, 84, 78 ... % : above the clear threshold (70) it never resolves."""
    host = make_host()
    add_rule(db_session, "open-files-high", for_s=0, window_s=10, keep_firing_s=0)
    now = utcnow().replace(microsecond=0)
    start = now - 30 * STEP
    sent = 0
    for i in range(24):
        used = 85 if i % 2 == 0 else 78
        insert_samples(
            db_session,
            [sample_values(host.id, i + 1, start + i * STEP, worker_fds_max=used, fds_limit=100)],
        )
        sent += len(engine.evaluate(session=db_session, now=start + i * STEP).delivery_ids)
    assert sent == 1
    assert db_session.scalars(select(Incident)).one().state is IncidentState.firing


def test_rate_rule_ignores_quiet_hosts(db_session: Session) -> None:
    """50% 5xx on 20 requests is not a page when the rule asks for 100 requests."""
    busy, quiet = make_host(hostname="busy"), make_host(hostname="quiet")
    add_rule(db_session, "high-5xx-share", for_s=0)
    now = utcnow().replace(microsecond=0)
    rows = []
    for host_id, requests in ((busy.id, 400), (quiet.id, 20)):
        for i in range(3):
            rows.append(
                {
                    "host_id": host_id,
                    "ts": now - i * STEP,
                    "seq": i + 1,
                    "site": "shop",
                    "requests": requests,
                    "status_2xx": requests // 2,
                    "status_5xx": requests // 2,
                }
            )
    db_session.execute(insert(LogStats), rows)
    db_session.commit()
    engine.evaluate(session=db_session, now=now)
    incident = db_session.scalars(select(Incident)).one()
    assert incident.host_id == busy.id and incident.value == pytest.approx(50.0)


def test_a_silence_holds_notifications_until_it_ends(db_session: Session) -> None:
    host = make_host(hostname="edge-9", labels={"env": "staging"})
    rule = add_rule(db_session, "dropped-connections", keep_firing_s=600)
    now = utcnow().replace(microsecond=0)
    db_session.add(
        Silence(
            rule_id=rule.id,
            matchers=[{"label": "env", "op": "=", "value": "staging"}],
            starts_at=now - timedelta(hours=1),
            ends_at=now + 5 * STEP,
            reason="load test",
            created_by="admin",
        )
    )
    db_session.commit()
    last = counters(db_session, host.id, start=now - 5 * STEP, count=12, drops_per_step=1)
    assert engine.evaluate(session=db_session, now=now).delivery_ids == []
    incident = db_session.scalars(select(Incident)).one()
    assert incident.silenced_by is not None and incident.state is IncidentState.firing
    # The silence ended and the incident still fires: now it is announced, once.
    assert len(engine.evaluate(session=db_session, now=last).delivery_ids) == 1
    assert engine.evaluate(session=db_session, now=last).delivery_ids == []


def test_silence_by_other_label_does_not_mute(db_session: Session) -> None:
    host = make_host(labels={"env": "prod"})
    add_rule(db_session, "dropped-connections")
    now = utcnow().replace(microsecond=0)
    db_session.add(
        Silence(
            matchers=[{"label": "env", "op": "!=", "value": "prod"}],
            starts_at=now - STEP,
            ends_at=now + timedelta(hours=1),
            reason="not prod",
            created_by="admin",
        )
    )
    db_session.commit()
    last = counters(db_session, host.id, start=now - 5 * STEP, count=5, drops_per_step=1)
    assert len(engine.evaluate(session=db_session, now=last).delivery_ids) == 1


def test_scope_and_disabling_resolve_what_left(db_session: Session) -> None:
    prod = make_host(labels={"env": "prod"})
    lab = make_host(labels={"env": "lab"})
    rule = add_rule(db_session, "dropped-connections", scope={"env": "prod"}, keep_firing_s=600)
    now = utcnow().replace(microsecond=0)
    for host in (prod, lab):
        counters(db_session, host.id, start=now - 5 * STEP, count=5, drops_per_step=3)
    engine.evaluate(session=db_session, now=now)
    incident = db_session.scalars(select(Incident)).one()
    assert incident.host_id == prod.id
    rule.enabled = False
    db_session.commit()
    outcome = engine.evaluate(session=db_session, now=now + STEP)
    assert outcome.resolved == 1 and len(outcome.delivery_ids) == 1
    assert db_session.scalar(select(func.count()).select_from(AlertState)) == 0


def test_silent_host_and_never_seen_host(db_session: Session) -> None:
    now = utcnow().replace(microsecond=0)
    make_host(hostname="gone", last_seen_at=now - timedelta(minutes=5))
    make_host(hostname="never")
    make_host(hostname="fresh", last_seen_at=now - STEP)
    add_rule(db_session, "host-silent")
    engine.evaluate(session=db_session, now=now)
    incident = db_session.scalars(select(Incident)).one()
    assert incident.summary.startswith("Host or agent silent: 300 s")


def test_nodata_choice_opens_a_nodata_incident(db_session: Session) -> None:
    host = make_host()
    add_rule(db_session, "dropped-connections", no_data="nodata")
    now = utcnow().replace(microsecond=0)
    outcome = engine.evaluate(session=db_session, now=now)
    incident = db_session.scalars(select(Incident)).one()
    assert incident.host_id == host.id and incident.state is IncidentState.nodata
    assert len(outcome.delivery_ids) == 1
    counters(db_session, host.id, start=now, count=3)
    engine.evaluate(session=db_session, now=now + 2 * STEP)
    db_session.expire_all()
    assert db_session.scalars(select(Incident)).one().state is IncidentState.resolved


def test_certificate_expiry_from_facts(db_session: Session) -> None:
    from app.hosts.models import HostFacts

    host = make_host()
    now = utcnow().replace(microsecond=0)
    db_session.add(
        HostFacts(
            host_id=host.id,
            facts={
                "tls_certificates": [
                    {"path": "/etc/ssl/a.pem", "not_after": (now + timedelta(days=90)).isoformat()},
                    {
                        "path": "/etc/ssl/b.pem",
                        "subject": "CN=b",
                        "not_after": (now + timedelta(days=3)).isoformat(),
                    },
                    {"path": "/etc/ssl/$host.pem", "error": "path has variables"},
                ]
            },
        )
    )
    db_session.commit()
    add_rule(db_session, "tls-certificate-expiring")
    engine.evaluate(session=db_session, now=now)
    incident = db_session.scalars(select(Incident)).one()
    assert incident.value == pytest.approx(3.0)


def test_a_rule_whose_signal_fails_leaves_the_others_working(
    db_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.alerts import readings

    host = make_host()
    add_rule(db_session, "dropped-connections")
    broken = add_rule(db_session, "new-error-finding")

    def failing_query(session: Session, *_args: object) -> readings.Readings:
        session.execute(text("SELECT no_such_column FROM hosts"))
        return {}

    monkeypatch.setattr(readings, "_from_analyses", failing_query)
    now = utcnow().replace(microsecond=0)
    last = counters(db_session, host.id, start=now - 5 * STEP, count=5, drops_per_step=2)
    outcome = engine.evaluate(session=db_session, now=last)
    assert outcome.fired == 1
    db_session.refresh(broken)
    assert broken.last_error is not None and "no_such_column" in broken.last_error


def _analysis(session: Session, host_id: int, at: datetime, score: int, errors: list[str]) -> None:
    """An ok analysis at `at` with error findings of these rules."""
    from app.configs.models import AnalysisStatus, ConfigAnalysis, ConfigSnapshot
    from app.findings.models import Finding

    digest = f"{score:02d}{at.timestamp():.0f}".ljust(64, "0")
    snapshot = ConfigSnapshot(host_id=host_id, hash=digest, dump="events {}\n", received_at=at)
    session.add(snapshot)
    session.flush()
    analysis = ConfigAnalysis(
        host_id=host_id, snapshot_id=snapshot.id, analyzed_at=at, status=AnalysisStatus.ok,
        score=score, inputs_digest="0" * 64,
    )  # fmt: skip
    session.add(analysis)
    session.flush()
    for rule in errors:
        session.add(
            Finding(
                analysis_id=analysis.id, host_id=host_id, key=f"{rule}|http", rule=rule,
                severity="error", category="tls", file="nginx.conf", line=1, message=rule,
            )
        )  # fmt: skip
    session.commit()


def test_config_regressions_alert_but_a_new_host_errors_are_not_news(db_session: Session) -> None:
    now = utcnow().replace(microsecond=0)
    old = make_host(hostname="old")
    new = make_host(hostname="new")
    # `old` had S-ciphers for days and gains S-protocols now, its score falling by 12.
    _analysis(db_session, old.id, now - timedelta(days=2), 80, ["S-ciphers"])
    _analysis(db_session, old.id, now - timedelta(minutes=5), 68, ["S-ciphers", "S-protocols"])
    # `new` enrolled ten minutes ago with both errors: its first analysis is the baseline.
    _analysis(db_session, new.id, now - timedelta(minutes=10), 60, ["S-ciphers", "S-protocols"])
    _analysis(db_session, new.id, now - timedelta(minutes=2), 60, ["S-ciphers", "S-protocols"])
    add_rule(db_session, "new-error-finding")
    add_rule(db_session, "config-score-drop")
    engine.evaluate(session=db_session, now=now)
    fired = {(i.rule_key, i.host_id, i.value) for i in db_session.scalars(select(Incident))}
    assert fired == {("new-error-finding", old.id, 1.0), ("config-score-drop", old.id, 12.0)}
