"""A running analysis never holds up the pushes' updates of its host row: the analysis worker
runs at a low CPU priority, so a lock held while its engine runs would stall a whole batch."""

from __future__ import annotations

from typing import Any

import pytest
from app.configs import analyzer
from app.core.db import get_engine, utcnow
from app.hosts.models import Host
from sqlalchemy import text, update
from sqlalchemy.orm import Session

from tests.configs.factories import host_with_config


def test_a_push_updates_the_host_row_while_its_analysis_runs(
    db_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, snapshot_id = host_with_config()
    run_engine = analyzer._run_engine
    updated: list[int] = []

    def engine_meanwhile_a_push(*args: Any) -> Any:
        # What a push does to the row, from another connection, while the engine runs.
        with get_engine().connect() as conn:
            conn.execute(text("SET lock_timeout = '2s'"))
            result = conn.execute(
                update(Host).where(Host.id == host.id).values(last_seen_at=utcnow(), active=7)
            )
            conn.commit()
            updated.append(result.rowcount)
        return run_engine(*args)

    monkeypatch.setattr(analyzer, "_run_engine", engine_meanwhile_a_push)
    outcome = analyzer.analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=utcnow())
    assert updated == [1]
    assert outcome.action == "created"
