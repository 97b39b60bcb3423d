"""Embedded mode: every shipped rule's signal is computed on SQLite, and drops fire there too."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from app.alerts import engine
from app.alerts.models import AlertRule, Incident
from app.alerts.rules_file import default_rules
from app.core.db import build_engine, utcnow
from app.hosts.models import Host, HostFacts
from app.metrics.models import Sample
from app.models import Base
from app.notify.kinds import ChannelKind
from app.notify.models import AlertChannel, AlertDelivery
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from tests.hosts.factories import sample_values


@pytest.fixture
def sqlite_session(tmp_path: Path) -> Iterator[Session]:
    """A session on a fresh SQLite file."""
    engine_ = build_engine(f"sqlite:///{tmp_path / 'embedded.db'}")
    Base.metadata.create_all(engine_)
    with Session(engine_) as session:
        yield session
    engine_.dispose()


def test_default_rules_evaluate_on_sqlite(sqlite_session: Session) -> None:
    now = utcnow().replace(microsecond=0)
    session = sqlite_session
    session.add(
        AlertChannel(
            id=1, name="ops", kind=ChannelKind.webhook, settings={"url": "http://127.0.0.1:9/"}
        )
    )
    for rule in default_rules():
        session.add(AlertRule(**{**rule.model_dump(), "channel_ids": [1]}))
    session.add(
        Host(
            id=1,
            agent_id="a",
            hostname="h1",
            labels={},
            token_hash="0" * 64,
            last_seen_at=now,
            nginx_up=True,
        )
    )
    session.add(
        HostFacts(
            host_id=1,
            facts={
                "tls_certificates": [
                    {"path": "/etc/ssl/a.pem", "not_after": (now + timedelta(days=2)).isoformat()}
                ]
            },
        )
    )
    session.execute(
        insert(Sample),
        [
            sample_values(
                1,
                seq,
                now - timedelta(seconds=10 * (6 - seq)),
                accepts=100 * seq,
                handled=90 * seq,
                errlog_wc_not_enough=2,
                errlog_severe=2,
                workers=1,
                active=9,
            )
            for seq in range(1, 7)
        ],
    )
    session.commit()
    outcome = engine.evaluate(session=session, now=now)
    fired = {i.rule_key for i in session.scalars(select(Incident))}
    assert fired == {"dropped-connections", "tls-certificate-expiring", "error-log-critical"}
    assert not any(rule.last_error for rule in session.scalars(select(AlertRule)))
    assert len(outcome.delivery_ids) == 3
    assert session.scalar(select(func.count()).select_from(AlertDelivery)) == 3
