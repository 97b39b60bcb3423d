"""Group commit of pushes: batches of many hosts, chained rates, refusals and failures per push."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from app.agents.batch_ingest import Outcome, PushRequest, store_batch
from app.agents.batcher import PushBatcher
from app.agents.schemas import PushReply
from app.core.config import get_settings
from app.core.db import SessionLocal, get_engine, reset_db_caches
from app.core.errors import ServiceError
from app.hosts.models import Host
from app.metrics.models import Sample
from app.models import Base
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from tests.agents.payloads import NGINX_DUMP, push_body, recent, sample
from tests.hosts.factories import HostWithToken, make_host


def request_of(host: HostWithToken, samples: list[dict[str, Any]], **body: Any) -> PushRequest:
    """A push of this host's agent as the route hands it to the batcher."""
    payload = push_body(samples, agent_id=host.agent_id, **body)
    return PushRequest(token=host.token, body=orjson.dumps(payload), content_encoding=None)


def one_sample(host: HostWithToken, seq: int, ts: datetime, requests: int) -> PushRequest:
    """A push of a single sample with the given request counter."""
    return request_of(host, [sample(seq, ts, accepts=requests, requests=requests)])


def reply_of(outcome: Outcome) -> PushReply:
    """The reply of an outcome that must be a success."""
    assert isinstance(outcome, PushReply), repr(outcome)
    return outcome


def rates(session: Session, host_id: int) -> dict[int, float | None]:
    """req_per_s of the host's stored samples, by seq."""
    session.expire_all()
    rows = session.execute(
        select(Sample.seq, Sample.req_per_s).where(Sample.host_id == host_id).order_by(Sample.seq)
    )
    return {seq: rate for seq, rate in rows}


def test_pushes_of_many_hosts_are_stored_in_one_batch(
    database_url: str, db_session: Session
) -> None:
    hosts = [make_host(hostname=f"web-{n}") for n in range(20)]
    start = recent(60)
    outcomes = store_batch([one_sample(host, 1, start, 100) for host in hosts])
    assert [reply_of(outcome).accepted for outcome in outcomes] == [1] * len(hosts)
    for host in hosts:
        assert rates(db_session, host.id) == {1: None}
        stored = db_session.get(Host, host.id)
        assert stored is not None
        assert stored.last_seq == 1
        assert stored.nginx_up is True


def test_pushes_of_one_host_in_a_batch_chain_their_rates(
    database_url: str, db_session: Session
) -> None:
    host = make_host()
    start = recent(60)
    store_batch([one_sample(host, 1, start, 100)])
    outcomes = store_batch([
        one_sample(host, 2, start + timedelta(seconds=10), 200),
        one_sample(host, 3, start + timedelta(seconds=20), 500),
        one_sample(host, 4, start + timedelta(seconds=30), 1100),
    ])  # fmt: skip
    assert [reply_of(outcome).accepted for outcome in outcomes] == [1, 1, 1]
    assert rates(db_session, host.id) == {
        1: None,
        2: pytest.approx(10.0),
        3: pytest.approx(30.0),
        4: pytest.approx(60.0),
    }
    stored = db_session.get(Host, host.id)
    assert stored is not None
    assert stored.last_seq == 4


def test_a_push_sent_twice_in_one_batch_is_stored_once(
    database_url: str, db_session: Session
) -> None:
    host = make_host()
    start = recent(60)
    push = request_of(host, [
        sample(1, start, requests=100),
        sample(2, start + timedelta(seconds=10), requests=300),
    ])  # fmt: skip
    first, again = store_batch([push, push])
    assert (reply_of(first).accepted, reply_of(first).duplicates) == (2, 0)
    assert (reply_of(again).accepted, reply_of(again).duplicates) == (0, 2)
    assert rates(db_session, host.id) == {1: None, 2: pytest.approx(20.0)}


def test_a_late_push_in_a_batch_fixes_the_rates_of_its_neighbours(
    database_url: str, db_session: Session
) -> None:
    host = make_host()
    start = recent(60)
    outcomes = store_batch([
        one_sample(host, 1, start, 100),
        one_sample(host, 3, start + timedelta(seconds=20), 500),
        one_sample(host, 2, start + timedelta(seconds=10), 400),
    ])  # fmt: skip
    assert [reply_of(outcome).accepted for outcome in outcomes] == [1, 1, 1]
    assert rates(db_session, host.id) == {1: None, 2: pytest.approx(30.0), 3: pytest.approx(10.0)}
    stored = db_session.get(Host, host.id)
    assert stored is not None
    assert stored.last_seq == 3


def test_a_push_with_config_and_the_next_one_of_its_host_keep_their_order(
    database_url: str, db_session: Session
) -> None:
    host = make_host()
    start = recent(60)
    with_config = request_of(host, [sample(1, start, requests=100)], config_dump=NGINX_DUMP)
    outcomes = store_batch([with_config, one_sample(host, 2, start + timedelta(seconds=10), 200)])
    assert [reply_of(outcome).accepted for outcome in outcomes] == [1, 1]
    assert rates(db_session, host.id) == {1: None, 2: pytest.approx(10.0)}
    stored = db_session.get(Host, host.id)
    assert stored is not None
    assert stored.config_hash is not None
    assert stored.last_seq == 2


def test_an_unknown_token_is_refused_alone(database_url: str, db_session: Session) -> None:
    good, other = make_host(), make_host(hostname="web-2")
    stranger = HostWithToken(id=0, token="nfh_not-a-token", agent_id=good.agent_id)
    start = recent(60)
    outcomes = store_batch([
        one_sample(good, 1, start, 100),
        one_sample(stranger, 1, start, 100),
        one_sample(other, 1, start, 100),
    ])  # fmt: skip
    refused = outcomes[1]
    assert isinstance(refused, ServiceError)
    assert refused.status_code == 401
    assert reply_of(outcomes[0]).accepted == reply_of(outcomes[2]).accepted == 1
    assert rates(db_session, good.id) == rates(db_session, other.id) == {1: None}


def test_another_agents_push_and_a_bad_body_are_refused_alone(
    database_url: str, db_session: Session
) -> None:
    host, other = make_host(), make_host(hostname="web-2")
    start = recent(60)
    mismatched = request_of(host, [sample(1, start)])
    mismatched = PushRequest(token=other.token, body=mismatched.body, content_encoding=None)
    broken = PushRequest(token=host.token, body=b"{not json", content_encoding=None)
    outcomes = store_batch([mismatched, broken, one_sample(host, 1, start, 100)])
    statuses = [
        outcome.status_code for outcome in outcomes[:2] if isinstance(outcome, ServiceError)
    ]
    assert statuses == [403, 422]
    assert reply_of(outcomes[2]).accepted == 1
    assert rates(db_session, other.id) == {}


@pytest.fixture
def samples_refusing_poison(db_session: Session) -> Iterator[str]:
    """A real PostgreSQL trigger that refuses samples whose stub_status error is the poison."""
    poison = "refuse this sample"
    db_session.execute(
        text(
            "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.stub_status_error = '{poison}' THEN "
            "RAISE EXCEPTION 'poisoned sample'; END IF; RETURN NEW; END $$"
        )
    )
    db_session.execute(
        text(
            "CREATE TRIGGER refuse_poison BEFORE INSERT ON samples "
            "FOR EACH ROW EXECUTE FUNCTION refuse_poison()"
        )
    )
    db_session.commit()
    try:
        yield poison
    finally:
        db_session.rollback()
        db_session.execute(text("DROP TRIGGER refuse_poison ON samples"))
        db_session.execute(text("DROP FUNCTION refuse_poison()"))
        db_session.commit()


def test_a_push_the_database_refuses_fails_alone(
    database_url: str, db_session: Session, samples_refusing_poison: str
) -> None:
    good, bad = make_host(), make_host(hostname="web-2")
    start = recent(60)
    poisoned = sample(1, start)
    poisoned["stub_status"] = {"available": False, "error": samples_refusing_poison}
    outcomes = store_batch([one_sample(good, 1, start, 100), request_of(bad, [poisoned])])
    assert reply_of(outcomes[0]).accepted == 1
    assert isinstance(outcomes[1], DBAPIError)
    assert rates(db_session, good.id) == {1: None}
    assert rates(db_session, bad.id) == {}


def test_concurrent_submissions_share_one_batch(database_url: str, db_session: Session) -> None:
    hosts = [make_host(hostname=f"web-{n}") for n in range(10)]
    start = recent(60)
    batch_sizes: list[int] = []

    def store(requests: Sequence[PushRequest]) -> list[Outcome]:
        batch_sizes.append(len(requests))
        return store_batch(requests)

    async def submit_all() -> list[PushReply]:
        batcher = PushBatcher(store=store)
        return await asyncio.gather(
            *(batcher.submit(one_sample(host, 1, start, 100)) for host in hosts)
        )

    replies = asyncio.run(submit_all())
    assert [reply.accepted for reply in replies] == [1] * len(hosts)
    assert batch_sizes == [len(hosts)]


def test_batches_are_capped_and_each_waiter_gets_its_own_error(database_url: str) -> None:
    host = make_host()
    start = recent(60)
    batch_sizes: list[int] = []

    def store(requests: Sequence[PushRequest]) -> list[Outcome]:
        batch_sizes.append(len(requests))
        if len(batch_sizes) == 2:
            raise RuntimeError("database unreachable")
        return store_batch(requests)

    async def submit_all() -> list[PushReply | BaseException]:
        batcher = PushBatcher(store=store, max_batch=2)
        pushes = [one_sample(host, seq, start + timedelta(seconds=seq), seq) for seq in (1, 2, 3)]
        return await asyncio.gather(
            *(batcher.submit(push) for push in pushes), return_exceptions=True
        )

    first, second, third = asyncio.run(submit_all())
    assert batch_sizes == [2, 1]
    assert isinstance(first, PushReply)
    assert isinstance(second, PushReply)
    assert isinstance(third, RuntimeError)


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    """The app switched to a fresh SQLite file (embedded mode) for this test."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'embedded.db'}")
    get_settings.cache_clear()
    reset_db_caches()
    Base.metadata.create_all(get_engine())
    try:
        with SessionLocal() as session:
            yield session
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
        reset_db_caches()


def test_batches_on_sqlite_store_chain_and_count_duplicates(embedded: Session) -> None:
    assert embedded.get_bind().dialect.name == "sqlite"
    host, other = make_host(), make_host(hostname="web-2")
    start = recent(60)
    replayed = one_sample(host, 2, start + timedelta(seconds=10), 300)
    outcomes = store_batch([
        one_sample(host, 1, start, 100),
        one_sample(other, 1, start, 100),
        replayed,
        replayed,
        request_of(
            host,
            [sample(3, start + timedelta(seconds=20), accepts=500, requests=500)],
            config_dump=NGINX_DUMP,
        ),
    ])  # fmt: skip
    assert [reply_of(outcome).accepted for outcome in outcomes] == [1, 1, 1, 0, 1]
    assert reply_of(outcomes[3]).duplicates == 1
    assert rates(embedded, host.id) == {1: None, 2: pytest.approx(20.0), 3: pytest.approx(20.0)}
    assert rates(embedded, other.id) == {1: None}


def test_live_events_of_a_batch_are_small_and_name_their_host(redis_url: str) -> None:
    # Only a host page receives a `sample` (docs/live-events.md): its status and one point,
    # with the host id beside the data so the API routes it without decoding it.
    first, second = make_host(), make_host(hostname="web-2")
    client = redis.Redis.from_url(redis_url)
    listener = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
    listener.subscribe(get_settings().events_channel)
    try:
        start = recent(60)
        store_batch([one_sample(first, 1, start, 100), one_sample(second, 1, start, 100)])
        events: dict[int, dict[str, Any]] = {}
        for _ in range(50):
            message = listener.get_message(timeout=0.2)
            if message is None:
                continue
            envelope = orjson.loads(message["data"])
            if envelope["event"] == "sample" and envelope["host_id"] in (first.id, second.id):
                events[envelope["host_id"]] = orjson.loads(envelope["data"])
            if len(events) == 2:
                break
    finally:
        listener.close()
        client.close()
    assert set(events) == {first.id, second.id}
    for host_id, data in events.items():
        assert data["host_id"] == host_id
        assert set(data) == {"host_id", "host", "point"}
        assert data["host"]["status"] == "up"
        assert data["point"]["req_per_s"] is None  # the first sample of a host has no rate
        assert "score" not in data["host"]
