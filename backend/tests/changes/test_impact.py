"""Impact of an applied change (equal windows, normal variation) and the metric-gated rollback."""

from __future__ import annotations

import hashlib
import subprocess
import time
from datetime import datetime, timedelta
from typing import Any

from app.changes import impact
from app.changes.models import Change, ChangeEvent, ChangeStatus, Rollout, RolloutStatus
from app.changes.patches import apply_ops
from app.changes.rollouts import GATE_INTERVAL, check_gates
from app.changes.watch import measure_impacts
from app.configs import service as configs_service
from app.configs.models import AnalysisStatus, ConfigAnalysis, ConfigSnapshot
from app.core.db import SessionLocal, utcnow
from app.hosts.models import Host
from app.worker.celery_app import celery_app
from sqlalchemy import select, update

from tests.changes.factories import (
    CONF,
    DUMP,
    FILE_TEXT,
    GZIP_ON_OPS,
    host_allowed_to_apply,
    make_change,
)
from tests.hosts.factories import insert_samples, sample_values
from tests.worker.test_worker_process import worker  # noqa: F401  (the real worker fixture)

WINDOW = timedelta(seconds=300)


def _samples(host_id: int, start: datetime, count: int, first_seq: int, **figures: Any) -> None:
    """`count` samples 10 s apart from `start`; a figure may be a function of the index."""
    rows = []
    for i in range(count):
        values = {k: (v(i) if callable(v) else v) for k, v in figures.items()}
        rows.append(
            sample_values(host_id, first_seq + i, start + timedelta(seconds=10 * i), **values)
        )
    with SessionLocal() as session:
        insert_samples(session, rows)


def _verified_at(applied: datetime) -> tuple[int, int]:
    host, snapshot_id = host_allowed_to_apply()
    change_id = make_change(host.id, snapshot_id, status=ChangeStatus.verified, finished_at=applied)
    return host.id, change_id


def test_a_shift_beyond_the_noise_is_significant_and_noise_is_not() -> None:
    noisy = [100.0, 104.0, 96.0, 101.0, 99.0, 103.0, 97.0]
    same = impact.compare(noisy, [v + 1 for v in noisy])
    assert same is not None and not same["significant"]
    moved = impact.compare(noisy, [v * 1.5 for v in noisy])
    assert moved is not None and moved["significant"] and moved["change_pct"] == 50.0
    # Zero drops before and after is no change; drops appearing from zero is one.
    assert not impact.compare([0.0] * 5, [0.0] * 5)["significant"]  # type: ignore[index]
    assert impact.compare([0.0] * 5, [0.0, 2.0, 3.0, 0.0, 1.0])["significant"]  # type: ignore[index]
    assert impact.compare([1.0, 2.0], [3.0, 4.0, 5.0]) is None  # too few to know the variation


def test_the_card_waits_for_the_after_window_then_states_what_moved() -> None:
    now = utcnow()
    applied = now - WINDOW - timedelta(seconds=5)
    host_id, change_id = _verified_at(applied)
    start = applied - WINDOW
    # Requests/s steady around 50, Waiting share falling from 80% to 40% after the apply.
    _samples(host_id, start, 30, 1, req_per_s=lambda i: 50 + (i % 3), active=100, waiting=80)
    _samples(host_id, applied, 30, 100, req_per_s=lambda i: 50 + (i % 3), active=100, waiting=40)
    with SessionLocal() as session:
        change = session.get(Change, change_id)
        assert change is not None
        early = impact.measure(
            session=session, change=change, window=WINDOW, now=applied + WINDOW / 2
        )
        assert early["status"] == "waiting"
        card = impact.measure(session=session, change=change, window=WINDOW, now=now)
    assert card["status"] == "measured"
    figures = {m["name"]: m for m in card["metrics"]}
    assert not figures["req_per_s"]["significant"]
    assert figures["waiting_share"]["significant"]
    assert figures["waiting_share"]["before"] == 80 and figures["waiting_share"]["after"] == 40
    assert "Waiting share of Active fell from 80 to 40 (-50%)" in card["summary"]
    assert "requests/s" not in card["summary"]


def test_no_samples_around_the_apply_is_said_not_guessed() -> None:
    now = utcnow()
    _host_id, change_id = _verified_at(now - WINDOW * 2)
    with SessionLocal() as session:
        change = session.get(Change, change_id)
        assert change is not None
        card = impact.measure(session=session, change=change, window=WINDOW, now=now)
    assert card["status"] == "insufficient_data" and card["metrics"] == []


def _running_gated_rollout(change_id: int, checks: int) -> int:
    with SessionLocal() as session:
        rollout = Rollout(
            rule="G-off",
            labels={},
            status=RolloutStatus.running,
            canary=1,
            batch_size=5,
            auto_rollback={"drops": True, "checks": checks, "watch_s": 60},
            created_by="tester",
        )
        session.add(rollout)
        session.flush()
        session.execute(
            update(Change).where(Change.id == change_id).values(rollout_id=rollout.id, wave=0)
        )
        session.commit()
        return rollout.id


def _host_runs_the_patch(host_id: int) -> None:
    dump = f"# configuration file {CONF}:\n{apply_ops(FILE_TEXT, GZIP_ON_OPS)}\n"
    config_hash = hashlib.sha256(dump.encode()).hexdigest()
    with SessionLocal() as session:
        configs_service.store_snapshot(
            session=session, host_id=host_id, config_hash=config_hash, dump=dump, now=utcnow()
        )
        session.execute(update(Host).where(Host.id == host_id).values(config_hash=config_hash))
        session.commit()


def test_drops_in_consecutive_checks_roll_the_host_back_and_stop_the_rollout() -> None:
    applied = utcnow()
    host_id, change_id = _verified_at(applied)
    _host_runs_the_patch(host_id)
    rollout_id = _running_gated_rollout(change_id, checks=2)
    _samples(host_id, applied + timedelta(seconds=1), 12, 1, drops_per_s=3.0)

    with SessionLocal() as session:
        first = check_gates(session=session, now=applied + GATE_INTERVAL)
    assert first == []  # one bad check is not yet a regression
    with SessionLocal() as session:
        second = check_gates(session=session, now=applied + GATE_INTERVAL * 2)
        assert len(second) == 1
        rollback_id = second[0].id
    with SessionLocal() as session:
        rollback = session.get(Change, rollback_id)
        rollout = session.get(Rollout, rollout_id)
        assert rollback is not None and rollout is not None
        assert rollback.kind == "rollback" and rollback.status is ChangeStatus.approved
        assert rollback.reverts_change_id == change_id
        assert rollout.status is RolloutStatus.stopped
        assert rollout.stop_reason is not None
        assert "dropped connections appeared (3/s)" in rollout.stop_reason
        assert "2 consecutive checks" in rollout.stop_reason
        messages = session.scalars(
            select(ChangeEvent.message).where(ChangeEvent.change_id == change_id)
        ).all()
        assert any(m.startswith("regressed: dropped connections") for m in messages)


def test_a_clean_gate_keeps_the_change() -> None:
    applied = utcnow()
    host_id, change_id = _verified_at(applied)
    rollout_id = _running_gated_rollout(change_id, checks=2)
    _samples(host_id, applied + timedelta(seconds=1), 12, 1, drops_per_s=0.0)
    for n in (1, 2, 3):
        with SessionLocal() as session:
            assert check_gates(session=session, now=applied + GATE_INTERVAL * n) == []
    with SessionLocal() as session:
        rollout = session.get(Rollout, rollout_id)
        assert rollout is not None and rollout.status is RolloutStatus.completed


def test_the_beat_task_fills_impact_cards_in_a_real_worker(
    worker: subprocess.Popen[bytes],  # noqa: F811
) -> None:
    now = utcnow()
    applied = now - timedelta(seconds=600)
    host_id, change_id = _verified_at(applied)
    _samples(host_id, applied - WINDOW, 30, 1, req_per_s=10.0, active=10, waiting=5)
    _samples(host_id, applied, 30, 100, req_per_s=30.0, active=10, waiting=5)
    celery_app.send_task("changes.watch")
    deadline = time.monotonic() + 60
    card = None
    while time.monotonic() < deadline and card is None:
        with SessionLocal() as session:
            card = session.scalar(select(Change.impact).where(Change.id == change_id))
        assert worker.poll() is None
        time.sleep(0.3)
    assert card is not None and card["status"] == "measured"
    assert "requests/s rose from 10 to 30 (+200%)" in card["summary"]


def test_measuring_twice_changes_nothing_once_measured() -> None:
    now = utcnow()
    applied = now - WINDOW * 2
    host_id, change_id = _verified_at(applied)
    _samples(host_id, applied - WINDOW, 30, 1, req_per_s=10.0)
    _samples(host_id, applied, 30, 100, req_per_s=10.0)
    with SessionLocal() as session:
        moved = measure_impacts(session=session, now=now)
        assert [c.id for c in moved] == [change_id]
        assert measure_impacts(session=session, now=now) == []


def test_a_figure_rising_beyond_its_limit_fails_the_gate_and_says_which() -> None:
    applied = utcnow()
    host_id, change_id = _verified_at(applied)
    _host_runs_the_patch(host_id)
    rollout_id = _running_gated_rollout(change_id, checks=1)
    with SessionLocal() as session:
        session.execute(
            update(Rollout)
            .where(Rollout.id == rollout_id)
            .values(
                auto_rollback={"drops": True, "checks": 1, "max_rise_pct": {"worker_cpu_pct": 50}}
            )
        )
        session.commit()
    _samples(host_id, applied - WINDOW, 30, 1, worker_cpu_pct=10.0)
    _samples(host_id, applied + timedelta(seconds=1), 3, 100, worker_cpu_pct=14.0)  # +40%: passes
    with SessionLocal() as session:
        assert check_gates(session=session, now=applied + GATE_INTERVAL) == []
    _samples(host_id, applied + GATE_INTERVAL + timedelta(seconds=1), 3, 200, worker_cpu_pct=25.0)
    with SessionLocal() as session:
        assert len(check_gates(session=session, now=applied + GATE_INTERVAL * 2)) == 1
        rollout = session.get(Rollout, rollout_id)
        assert rollout is not None and rollout.stop_reason is not None
        assert (
            "nginx workers' CPU rose 150% above its level before the apply" in rollout.stop_reason
        )


def _analysis(host_id: int, snapshot_id: int, at: datetime, score: int) -> None:
    with SessionLocal() as session:
        session.add(
            ConfigAnalysis(
                host_id=host_id,
                snapshot_id=snapshot_id,
                analyzed_at=at,
                status=AnalysisStatus.ok,
                score=score,
                inputs_digest="0" * 64,
            )
        )
        session.commit()


def test_the_score_after_is_that_of_the_patched_config_even_analysed_before_the_outcome() -> None:
    """The agent pushes the patched config before its verified report lands, so its analysis
    may be older than the outcome; a rollback's restored config analysed later is not it."""
    now = utcnow()
    sent = now - timedelta(seconds=30)
    host, base_id = host_allowed_to_apply()
    change_id = make_change(
        host.id,
        base_id,
        status=ChangeStatus.verified,
        sent_at=sent,
        finished_at=sent + timedelta(seconds=10),
    )
    with SessionLocal() as session:
        patched = ConfigSnapshot(
            host_id=host.id,
            hash="1" * 64,
            dump=DUMP.replace("gzip off", "gzip on"),
            received_at=sent,
        )
        session.add(patched)
        session.commit()
        patched_id = patched.id
    _analysis(
        host.id, base_id, sent + timedelta(seconds=1), 60
    )  # a periodic re-analysis of the base
    _analysis(host.id, patched_id, sent + timedelta(seconds=5), 75)
    _analysis(host.id, base_id, sent + timedelta(seconds=20), 60)  # rolled back later
    with SessionLocal() as session:
        change = session.get(Change, change_id)
        assert change is not None
        card = impact.measure(session=session, change=change, window=WINDOW, now=now)
    assert card["score_after"] == 75
