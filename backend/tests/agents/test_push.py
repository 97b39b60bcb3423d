"""POST /agent/push: authentication, limits, idempotency, rates, status, facts and configs."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import orjson
import pytest
import redis
from app.configs.models import ConfigSnapshot
from app.core.config import Settings
from app.hosts.models import Host, HostFacts
from app.metrics.models import Sample
from app.worker.queues import Queue
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.agents.payloads import NGINX_DUMP, push_body, recent, sample
from tests.hosts.factories import HostWithToken, make_host

PUSH = "/api/v1/agent/push"


@pytest.fixture
def host(database_url: str) -> HostWithToken:
    """An enrolled host that has not pushed yet."""
    return make_host()


def push(client: TestClient, host: HostWithToken, body: dict[str, Any], **headers: str) -> Any:
    """POST a push body as the host."""
    return client.post(
        PUSH,
        content=orjson.dumps(body),
        headers={"Authorization": f"Bearer {host.token}", **headers},
    )


def body_for(host: HostWithToken, samples: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """A push body of this host's agent."""
    return push_body(samples, agent_id=host.agent_id, **kwargs)


def stored(session: Session, host_id: int) -> list[Sample]:
    """The host's samples by seq."""
    session.expire_all()
    return list(
        session.scalars(select(Sample).where(Sample.host_id == host_id).order_by(Sample.seq))
    )


def test_push_stores_samples_and_updates_host(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    reply = push(client, host, body_for(host, [sample(1, recent(20)), sample(2, recent(10))]))
    assert reply.status_code == 200, reply.text
    assert reply.json() == {
        "accepted": 2,
        "duplicates": 0,
        "rejected": [],
        "gaps": 0,
        "config_wanted": False,
        "push_interval_s": 10,
        "next_push_s": None,
        "actions": [],
    }
    rows = stored(db_session, host.id)
    assert [row.seq for row in rows] == [1, 2]
    assert rows[0].cpu_pct == 12.5
    assert rows[0].mem_used_bytes == 2_000_000_000
    assert rows[0].fds_limit == 1024
    assert rows[0].tcp_established == 10
    assert (rows[0].cpu_cores, rows[0].cpu_core_max_pct) == (2, 15.0)
    # The workers' own CPU is kept next to the master+workers total for the metrics window.
    assert rows[0].worker_cpu_pct == pytest.approx(0.4)
    assert rows[0].nginx_cpu_pct == 0.5
    row = db_session.get(Host, host.id)
    assert row is not None
    assert row.last_seq == 2
    assert row.last_seen_at is not None
    assert row.nginx_up is True
    assert row.agent_version == "0.1.0"


def test_gzip_body_is_accepted(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    raw = orjson.dumps(body_for(host, [sample(1, recent(5))]))
    reply = client.post(
        PUSH,
        content=gzip.compress(raw),
        headers={"Authorization": f"Bearer {host.token}", "Content-Encoding": "gzip"},
    )
    assert reply.status_code == 200, reply.text
    assert len(stored(db_session, host.id)) == 1


def test_missing_token_is_401(client: TestClient, host: HostWithToken) -> None:
    reply = client.post(PUSH, content=orjson.dumps(body_for(host, [sample(1, recent(5))])))
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"] == "Bearer"


def test_unknown_token_is_401(client: TestClient, host: HostWithToken) -> None:
    reply = client.post(
        PUSH,
        content=orjson.dumps(body_for(host, [sample(1, recent(5))])),
        headers={"Authorization": "Bearer nfh_unknown"},
    )
    assert reply.status_code == 401
    assert "unknown" in reply.json()["detail"]


def test_other_agents_payload_is_403_and_stores_nothing(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    other = make_host(hostname="web-2")
    reply = push(client, host, body_for(other, [sample(1, recent(5))]))
    assert reply.status_code == 403
    assert other.agent_id in reply.json()["detail"]
    assert stored(db_session, host.id) == []
    assert stored(db_session, other.id) == []


@pytest.fixture
def small_limit(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> int:
    """Lower INGEST_MAX_BYTES for the test."""
    monkeypatch.setattr(settings, "ingest_max_bytes", 4000)
    return 4000


def test_body_above_limit_is_413(
    client: TestClient, db_session: Session, host: HostWithToken, small_limit: int
) -> None:
    body = body_for(host, [sample(1, recent(5))], config_dump="#" * small_limit)
    reply = push(client, host, body)
    assert reply.status_code == 413
    assert str(small_limit) in reply.json()["detail"]
    assert stored(db_session, host.id) == []


def test_gzip_body_above_limit_after_decompression_is_413(
    client: TestClient, db_session: Session, host: HostWithToken, small_limit: int
) -> None:
    raw = orjson.dumps(body_for(host, [sample(1, recent(5))], config_dump="#" * 100_000))
    compressed = gzip.compress(raw)
    assert len(compressed) < small_limit
    reply = client.post(
        PUSH,
        content=compressed,
        headers={"Authorization": f"Bearer {host.token}", "Content-Encoding": "gzip"},
    )
    assert reply.status_code == 413
    assert "decompressed" in reply.json()["detail"]
    assert stored(db_session, host.id) == []


def test_an_invalid_sample_is_refused_alone(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    samples = [sample(1, recent(30)), sample(2, recent(20)), sample(3, recent(10))]
    samples[1]["stub_status"]["accepts"] = -5
    reply = push(client, host, body_for(samples=samples, host=host))
    assert reply.status_code == 200, reply.text
    assert reply.json()["accepted"] == 2
    assert reply.json()["rejected"] == [
        {
            "seq": 2,
            "field": "samples[1].stub_status.accepts",
            "reason": "samples[1].stub_status.accepts: must be >= 0",
        }
    ]
    assert [row.seq for row in stored(db_session, host.id)] == [1, 3]


def test_an_invalid_envelope_refuses_the_whole_push(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    body = body_for(host, [sample(1, recent(20)), sample(2, recent(10))])
    body["hostname"] = "not a hostname"
    reply = push(client, host, body)
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("hostname: must match")
    assert stored(db_session, host.id) == []


@pytest.mark.parametrize("content", [b"{not json", b"\x1f\x8b broken"])
def test_unparseable_body_is_422(client: TestClient, host: HostWithToken, content: bytes) -> None:
    reply = client.post(PUSH, content=content, headers={"Authorization": f"Bearer {host.token}"})
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("invalid JSON")


def test_replayed_sample_is_counted_once(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    first = sample(1, recent(20), accepts=10, requests=10)
    push(client, host, body_for(host, [first]))
    reply = push(
        client, host, body_for(host, [first, sample(2, recent(10), accepts=20, requests=40)])
    )
    assert reply.json()["accepted"] == 1
    assert reply.json()["duplicates"] == 1
    again = push(client, host, body_for(host, [first]))
    assert again.json() == {**again.json(), "accepted": 0, "duplicates": 1}
    rows = stored(db_session, host.id)
    assert [row.seq for row in rows] == [1, 2]
    assert rows[1].req_per_s == pytest.approx(3.0, rel=0.05)


def test_a_seq_resent_with_another_time_is_a_duplicate(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    # The partitioned samples table's key includes ts; the protocol's key is (host_id, seq).
    push(client, host, body_for(host, [sample(1, recent(30)), sample(2, recent(20))]))
    reply = push(client, host, body_for(host, [sample(1, recent(25)), sample(3, recent(10))]))
    assert reply.status_code == 200, reply.text
    assert (reply.json()["accepted"], reply.json()["duplicates"]) == (1, 1)
    assert [row.seq for row in stored(db_session, host.id)] == [1, 2, 3]


def test_rates_across_restart_and_gap(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    start = recent(120)
    push(client, host, body_for(host, [sample(1, start, accepts=1000, requests=5000)]))
    # 10 s later: normal growth.
    push(
        client,
        host,
        body_for(host, [sample(2, start + timedelta(seconds=10), accepts=1100, requests=5500)]),
    )
    # nginx restarted: counters start again from zero.
    push(
        client,
        host,
        body_for(host, [sample(3, start + timedelta(seconds=20), accepts=30, requests=60)]),
    )
    # Two samples lost: 30 s gap, averaged.
    push(
        client,
        host,
        body_for(host, [sample(6, start + timedelta(seconds=50), accepts=330, requests=960)]),
    )
    rows = stored(db_session, host.id)
    assert rows[0].req_per_s is None
    assert rows[1].req_per_s == pytest.approx(50.0)
    assert rows[2].req_per_s == pytest.approx(6.0)
    assert rows[2].accepts_per_s == pytest.approx(3.0)
    assert rows[3].req_per_s == pytest.approx(30.0)
    assert rows[3].accepts_per_s == pytest.approx(10.0)


def test_drops_rate_from_accepts_minus_handled(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    start = recent(60)
    push(client, host, body_for(host, [
        sample(1, start, accepts=1000, handled=1000),
        sample(2, start + timedelta(seconds=10), accepts=1500, handled=1100),
    ]))  # fmt: skip
    assert stored(db_session, host.id)[1].drops_per_s == pytest.approx(40.0)


def test_late_sample_gets_rates_and_fixes_its_successor(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    start = recent(60)
    push(client, host, body_for(host, [
        sample(1, start, requests=100),
        sample(3, start + timedelta(seconds=20), requests=500),
    ]))  # fmt: skip
    # Before seq 2 arrives, seq 3's rate spans the whole 20 s.
    assert stored(db_session, host.id)[1].req_per_s == pytest.approx(20.0)
    reply = push(
        client, host, body_for(host, [sample(2, start + timedelta(seconds=10), requests=400)])
    )
    assert reply.json()["accepted"] == 1
    rows = stored(db_session, host.id)
    assert [row.seq for row in rows] == [1, 2, 3]
    assert rows[1].req_per_s == pytest.approx(30.0)
    assert rows[2].req_per_s == pytest.approx(10.0)
    # The late sample does not move the host's newest sample back.
    host_row = db_session.get(Host, host.id)
    assert host_row is not None
    assert host_row.last_seq == 3


def test_nginx_down_sample_marks_host_down(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    push(client, host, body_for(host, [sample(1, recent(5), up=False)]))
    row = db_session.get(Host, host.id)
    assert row is not None
    assert row.nginx_up is False
    assert row.stub_status_available is False
    assert row.stub_status_error == "connection refused"
    assert stored(db_session, host.id)[0].fds_open is None


def test_facts_are_stored_and_replaced(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    facts = {"nginx_version": "1.22.1", "cpu_count": 2, "mem_total_bytes": 1024, "os": "Debian"}
    push(client, host, body_for(host, [sample(1, recent(20))], facts=facts))
    push(client, host, body_for(host, [sample(2, recent(10))], facts={**facts, "cpu_count": 4}))
    db_session.expire_all()
    row = db_session.get(HostFacts, host.id)
    assert row is not None
    assert row.nginx_version == "1.22.1"
    assert row.cpu_count == 4
    assert row.facts["os"] == "Debian"


@pytest.fixture
def analysis_queue(redis_url: str) -> Iterator[redis.Redis]:
    """The Redis client of the Celery broker, for looking at the analysis queue."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def test_config_stored_once_per_hash_and_analysis_queued(
    client: TestClient, db_session: Session, host: HostWithToken, analysis_queue: redis.Redis
) -> None:
    queued_before = analysis_queue.llen(Queue.analysis.value)
    first = push(client, host, body_for(host, [sample(1, recent(20))], config_dump=NGINX_DUMP))
    again = push(client, host, body_for(host, [sample(2, recent(10))], config_dump=NGINX_DUMP))
    assert first.json()["config_wanted"] is False
    assert again.json()["config_wanted"] is False
    snapshots = db_session.scalars(select(ConfigSnapshot)).all()
    assert len(snapshots) == 1
    assert snapshots[0].dump == NGINX_DUMP
    assert snapshots[0].parse_status == "pending"
    assert analysis_queue.llen(Queue.analysis.value) == queued_before + 1
    message = orjson.loads(analysis_queue.lindex(Queue.analysis.value, 0) or b"{}")
    assert message["headers"]["task"] == "configs.analyze_host"
    host_row = db_session.get(Host, host.id)
    assert host_row is not None
    assert host_row.config_hash == snapshots[0].hash


def test_a_config_the_host_returns_to_is_analysed_again(
    client: TestClient, db_session: Session, host: HostWithToken, analysis_queue: redis.Redis
) -> None:
    """A rollback restores a config already stored: it must be analysed again, or the host's
    latest analysis stays that of the config it left."""
    patched = NGINX_DUMP.replace("listen 80;", "listen 8080;")
    assert patched != NGINX_DUMP
    queued_before = analysis_queue.llen(Queue.analysis.value)
    for seq, dump in enumerate((NGINX_DUMP, patched, NGINX_DUMP), start=1):
        body = body_for(host, [sample(seq, recent(30 - 10 * seq))], config_dump=dump)
        assert push(client, host, body).status_code == 200
    assert db_session.scalar(select(func.count()).select_from(ConfigSnapshot)) == 2
    # One queued analysis per host: it analyses whichever config the host runs when it starts.
    assert analysis_queue.llen(Queue.analysis.value) == queued_before + 1
    # The same push once more is no return: nothing more is queued.
    body = body_for(host, [sample(4, recent(1))], config_dump=NGINX_DUMP)
    push(client, host, body)
    assert analysis_queue.llen(Queue.analysis.value) == queued_before + 1


def test_config_wanted_when_the_hash_is_unknown(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    body = body_for(host, [sample(1, recent(5))])
    body["config_hash"] = "a" * 64
    assert push(client, host, body).json()["config_wanted"] is True
    count = db_session.scalar(select(func.count()).select_from(ConfigSnapshot))
    assert count == 0


def test_nul_characters_are_stored_as_replacement_characters_keeping_the_hash(
    client: TestClient, db_session: Session, host: HostWithToken
) -> None:
    dump = NGINX_DUMP + "# a binary blob: \x00\x01\n"
    failing = sample(1, recent(20))
    failing["stub_status"] = {"available": False, "error": "read failed: \x00"}
    body = body_for(host, [failing], config_dump=dump)
    reply = push(client, host, body)
    assert reply.status_code == 200, reply.text
    assert reply.json()["accepted"] == 1
    snapshot = db_session.scalars(select(ConfigSnapshot)).one()
    assert "\x00" not in snapshot.dump and "blob: \ufffd\x01" in snapshot.dump
    assert snapshot.hash == body["config_hash"]
    assert stored(db_session, host.id)[0].stub_status_error == "read failed: \ufffd"
    again = body_for(host, [sample(2, recent(10))])
    again["config_hash"] = body["config_hash"]
    assert push(client, host, again).json()["config_wanted"] is False
