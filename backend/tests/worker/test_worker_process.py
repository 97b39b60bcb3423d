"""Pushes with a config, then new facts, analysed by a real Celery worker process on Redis."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from app.configs.models import ConfigAnalysis, ConfigSnapshot, ParseStatus
from app.findings.models import Finding
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.agents.payloads import NGINX_DUMP, push_body, recent, sample
from tests.hosts.factories import make_host
from tests.worker.conftest import start_worker_process, stop_worker_process


@pytest.fixture
def worker(database_url: str, redis_url: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A Celery worker process on the test database and Redis, stopped by PID afterwards."""
    with (tmp_path / "worker.log").open("wb") as log:
        process = start_worker_process(database_url=database_url, redis_url=redis_url, log=log)
        try:
            yield process
        finally:
            stop_worker_process(process)


def test_pushed_config_is_analysed_by_the_worker(
    client: TestClient, db_session: Session, worker: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    host = make_host()
    body = push_body([sample(1, recent(5))], agent_id=host.agent_id, config_dump=NGINX_DUMP)
    reply = client.post(
        "/api/v1/agent/push",
        content=orjson.dumps(body),
        headers={"Authorization": f"Bearer {host.token}"},
    )
    assert reply.status_code == 200, reply.text
    deadline = time.monotonic() + 60
    snapshot = None
    while time.monotonic() < deadline:
        db_session.expire_all()
        snapshot = db_session.scalar(
            select(ConfigSnapshot).where(ConfigSnapshot.host_id == host.id)
        )
        if snapshot is not None and snapshot.parse_status is not ParseStatus.pending:
            break
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()
        time.sleep(0.2)
    assert snapshot is not None
    assert snapshot.parse_status is ParseStatus.parsed, (tmp_path / "worker.log").read_text()
    assert snapshot.file_count == 1
    assert snapshot.line_count == NGINX_DUMP.count("\n")
    assert "configs.analyze_host" in (tmp_path / "worker.log").read_text()


def wait_for_analyses(
    session: Session, host_id: int, count: int, worker: subprocess.Popen[bytes], log: Path
) -> list[ConfigAnalysis]:
    """The host's analyses once there are `count` of them (fails after 60 s or a dead worker)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        session.expire_all()
        analyses = list(
            session.scalars(
                select(ConfigAnalysis)
                .where(ConfigAnalysis.host_id == host_id)
                .order_by(ConfigAnalysis.id)
            )
        )
        if len(analyses) >= count:
            return analyses
        assert worker.poll() is None, log.read_text()
        time.sleep(0.2)
    raise AssertionError(f"no {count} analyses after 60 s:\n{log.read_text()}")


def severities_of(session: Session, analysis_id: int) -> dict[str, str]:
    """Rule -> severity of an analysis' findings."""
    rows = session.execute(
        select(Finding.rule, Finding.severity).where(Finding.analysis_id == analysis_id)
    )
    return {rule: str(severity) for rule, severity in rows}


def test_worker_stores_findings_and_reanalyses_on_new_facts(
    client: TestClient, db_session: Session, worker: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    host = make_host()
    headers = {"Authorization": f"Bearer {host.token}"}
    log = tmp_path / "worker.log"
    body = push_body([sample(1, recent(5))], agent_id=host.agent_id, config_dump=NGINX_DUMP)
    assert client.post("/api/v1/agent/push", content=orjson.dumps(body), headers=headers).is_success
    [first] = wait_for_analyses(db_session, host.id, 1, worker, log)
    assert first.score is not None, first.error
    severities = severities_of(db_session, first.id)
    assert "G-off" in severities
    # The sample's workers run with 1024 fds, enough for the default 512 connections.
    assert "W-nofile" not in severities
    # Without the CPU count, W-connections is only a note.
    assert severities.get("W-connections") == "info"

    # New facts (4 CPUs) and no config: the current snapshot is analysed again.
    body = push_body([sample(2, recent(1))], agent_id=host.agent_id, facts={"cpu_count": 4})
    assert client.post("/api/v1/agent/push", content=orjson.dumps(body), headers=headers).is_success
    _first, second = wait_for_analyses(db_session, host.id, 2, worker, log)
    assert second.snapshot_id == first.snapshot_id
    rules = severities_of(db_session, second.id)
    assert rules.get("W-connections") == "warning"
    assert second.score is not None and second.score < first.score
