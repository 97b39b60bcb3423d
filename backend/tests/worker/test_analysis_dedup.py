"""A burst of configs from one host is analysed once, on its latest config, by a real worker."""

from __future__ import annotations

import secrets
import subprocess
import time
from pathlib import Path

import orjson
from app.configs.models import ConfigAnalysis, ConfigSnapshot, ParseStatus, PendingAnalysis
from app.worker.queues import Queue
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.agents.payloads import NGINX_DUMP, push_body, recent, sample
from tests.hosts.factories import HostWithToken, make_host
from tests.worker.conftest import StartWorker


def push_config(client: TestClient, host: HostWithToken, seq: int, dump: str) -> None:
    """One push carrying a config dump."""
    body = push_body([sample(seq, recent(60 - seq))], agent_id=host.agent_id, config_dump=dump)
    reply = client.post(
        "/api/v1/agent/push",
        content=orjson.dumps(body),
        headers={"Authorization": f"Bearer {host.token}"},
    )
    assert reply.status_code == 200, reply.text


def analyses_of(session: Session, host_id: int) -> list[ConfigAnalysis]:
    """The host's analyses, oldest first."""
    session.expire_all()
    return list(
        session.scalars(
            select(ConfigAnalysis)
            .where(ConfigAnalysis.host_id == host_id)
            .order_by(ConfigAnalysis.id)
        )
    )


def wait_until_idle(
    session: Session, host_id: int, worker: subprocess.Popen[bytes], log: Path
) -> list[ConfigAnalysis]:
    """The host's analyses once it has one and no analysis of it is queued (60 s at most)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        analyses = analyses_of(session, host_id)
        if analyses and session.get(PendingAnalysis, host_id) is None:
            time.sleep(1)  # a task that has just released its claim is still running
            return analyses_of(session, host_id)
        assert worker.poll() is None, log.read_text()
        time.sleep(0.2)
    raise AssertionError(f"no analysis after 60 s:\n{log.read_text()}")


def test_five_configs_pushed_before_the_worker_runs_cost_one_analysis_of_the_last(
    client: TestClient, db_session: Session, start_worker: StartWorker, tmp_path: Path
) -> None:
    # Ids restart at 1 in every test; a message left in the shared Redis queue by another test
    # must not name this host.
    host = make_host(id=1_000_000 + secrets.randbelow(1_000_000))
    dumps = [NGINX_DUMP.replace("listen 80;", f"listen {8080 + n};") for n in range(5)]
    assert len(set(dumps)) == 5
    for seq, dump in enumerate(dumps, start=1):
        push_config(client, host, seq, dump)
    snapshots = list(
        db_session.scalars(
            select(ConfigSnapshot)
            .where(ConfigSnapshot.host_id == host.id)
            .order_by(ConfigSnapshot.id)
        )
    )
    assert len(snapshots) == 5
    assert db_session.get(PendingAnalysis, host.id) is not None

    worker = start_worker(queues=[Queue.analysis.value])
    log = tmp_path / "worker.log"
    analyses = wait_until_idle(db_session, host.id, worker, log)

    assert [a.snapshot_id for a in analyses] == [snapshots[-1].id]
    # Five queued tasks would each log a run (analysing the same, latest, snapshot).
    runs = log.read_text().count(f"host {host.id}, config snapshot ")
    assert runs == 1, log.read_text()
    for earlier in snapshots[:-1]:
        db_session.refresh(earlier)
        assert earlier.parse_status is ParseStatus.pending

    # A config arriving later is analysed too: the claim was released when the task started.
    push_config(client, host, 6, NGINX_DUMP)
    deadline = time.monotonic() + 60
    while len(analyses_of(db_session, host.id)) < 2:
        assert time.monotonic() < deadline, log.read_text()
        assert worker.poll() is None, log.read_text()
        time.sleep(0.2)
    latest = analyses_of(db_session, host.id)[-1]
    current = db_session.scalar(
        select(ConfigSnapshot.id).where(
            ConfigSnapshot.host_id == host.id, ConfigSnapshot.dump == NGINX_DUMP
        )
    )
    assert latest.snapshot_id == current
