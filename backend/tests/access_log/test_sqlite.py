"""Embedded mode: access-log ingest, rollups, recent figures and queries on SQLite."""

from __future__ import annotations

from datetime import timedelta

import orjson
import pytest
from app.access_log.models import AccessLogRecent, LogStatsRollup
from app.access_log.service import host_access_log
from app.agents.batch_ingest import PushRequest, store_batch
from app.agents.schemas import PushReply
from app.core.db import utcnow
from app.metrics import rollups
from app.metrics.settings import RetentionSettings
from nginx_fleet_analyzer.latency_sketch import ALPHA
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.access_log.factories import access_log, log_file, log_sample, site
from tests.agents.payloads import push_body, recent
from tests.agents.test_push_batching import embedded
from tests.hosts.factories import make_host

__all__ = ["embedded"]  # the SQLite fixture of the batching tests


def test_access_logs_on_sqlite(embedded: Session) -> None:
    assert embedded.get_bind().dialect.name == "sqlite"
    host = make_host()
    samples = [
        log_sample(
            seq,
            recent(60 - 10 * seq),
            access_log(
                [site(times=[0.1] * 9 + [1.0], cache={"HIT": 3, "MISS": 1})],
                files=[log_file(lines=10 * seq)],
            ),
        )
        for seq in (1, 2, 3)
    ]
    requests = [
        PushRequest(
            token=host.token,
            body=orjson.dumps(push_body(samples, agent_id=host.agent_id)),
            content_encoding=None,
        )
    ]
    (reply,) = store_batch(requests)
    assert isinstance(reply, PushReply) and reply.accepted == 3, reply
    (again,) = store_batch(requests)
    assert isinstance(again, PushReply) and again.duplicates == 3, again
    now = utcnow()
    rollups.rollup_recent(session=embedded, now=now)
    rollups.rollup_recent(session=embedded, now=now)
    minutes = embedded.scalars(
        select(LogStatsRollup.requests).where(LogStatsRollup.resolution == "1m")
    ).all()
    assert sum(minutes) == 30
    recent_figures = embedded.get(AccessLogRecent, host.id)
    assert recent_figures is not None
    assert recent_figures.cache_hit_ratio == pytest.approx(0.75)
    read = host_access_log(
        session=embedded, host_id=host.id, start=now - timedelta(hours=1), end=now, site=None,
        now=now,
    )  # fmt: skip
    assert read.totals.requests == 30
    assert read.totals.request_time_p90_s == pytest.approx(0.1, rel=ALPHA)
    assert read.files[0].lines == 30
    removed = rollups.apply_retention(
        session=embedded, now=now + timedelta(days=3), retention=RetentionSettings()
    )
    assert removed["log_raw"].rows_deleted == 3
