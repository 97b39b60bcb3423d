"""One bad sample is refused alone, on both ingest paths; gap records reach the host's series."""

from __future__ import annotations

import socket
from datetime import timedelta
from typing import Any

import orjson
import pytest
from app.agents.batch_ingest import PushRequest, store_batch
from app.agents.schemas import PushReply
from app.core import pubsub
from app.core.config import get_settings
from app.metrics.models import Sample, SampleGap
from app.metrics.series import get_series
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.agents.payloads import iso, push_body, recent, sample
from tests.agents.test_push_batching import embedded
from tests.hosts.factories import HostWithToken, make_host

PUSH = "/api/v1/agent/push"
__all__ = ["embedded"]  # the SQLite fixture, shared with the batching tests


def stored_seqs(session: Session, host_id: int) -> list[int]:
    """The seqs of the host's stored samples, in order."""
    session.expire_all()
    return list(
        session.scalars(select(Sample.seq).where(Sample.host_id == host_id).order_by(Sample.seq))
    )


def spool_batch(count: int) -> list[dict[str, Any]]:
    """count samples 2 s apart ending now, as an agent replays them after an outage."""
    start = recent(2 * count)
    return [
        sample(seq, start + timedelta(seconds=2 * seq), accepts=seq, requests=seq)
        for seq in range(1, count + 1)
    ]


def push(client: TestClient, host: HostWithToken, body: dict[str, Any]) -> Any:
    """POST a push body as the host."""
    return client.post(
        PUSH, content=orjson.dumps(body), headers={"Authorization": f"Bearer {host.token}"}
    )


BAD_TIMESTAMPS = {
    # A host clock stepped back to the epoch (no RTC, before NTP), or garbage far ahead.
    "epoch": "1970-01-01T00:00:00Z",
    "year 9999": "9999-12-31T23:59:59-01:00",
    "clock step ahead": iso(recent(-2 * 3600)),
}


def test_a_connection_count_beyond_32_bits_is_refused_alone(
    client: TestClient, db_session: Session
) -> None:
    # Found by the API fuzzer: the column is 32-bit, so the database refused the whole insert.
    host = make_host()
    samples = spool_batch(3)
    samples[1]["stub_status"]["waiting"] = 2**63 - 2
    reply = push(client, host, push_body(samples, agent_id=host.agent_id))
    assert reply.status_code == 200, reply.text
    assert [(r["seq"], r["field"]) for r in reply.json()["rejected"]] == [
        (2, "samples[1].stub_status.waiting")
    ]
    assert stored_seqs(db_session, host.id) == [1, 3]


@pytest.mark.parametrize("bad_ts", BAD_TIMESTAMPS.values(), ids=BAD_TIMESTAMPS.keys())
def test_one_bad_timestamp_in_a_batch_of_500_refuses_only_that_sample(
    client: TestClient, db_session: Session, bad_ts: str
) -> None:
    host = make_host()
    samples = spool_batch(500)
    samples[316]["ts"] = bad_ts
    reply = push(client, host, push_body(samples, agent_id=host.agent_id))
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["accepted"] == 499
    assert [(r["seq"], r["field"]) for r in body["rejected"]] == [(317, "samples[316].ts")]
    assert "check the host's clock" in body["rejected"][0]["reason"]
    assert stored_seqs(db_session, host.id) == [seq for seq in range(1, 501) if seq != 317]


def test_a_bad_sample_in_the_group_commit_path_is_refused_alone(
    database_url: str, db_session: Session
) -> None:
    host, other = make_host(), make_host(hostname="web-2")
    samples = spool_batch(50)
    samples[10]["stub_status"]["requests"] = "many"
    samples[20]["ts"] = BAD_TIMESTAMPS["epoch"]
    outcomes = store_batch([
        PushRequest(
            token=host.token,
            body=orjson.dumps(push_body(samples, agent_id=host.agent_id)),
            content_encoding=None,
        ),
        PushRequest(
            token=other.token,
            body=orjson.dumps(push_body(spool_batch(3), agent_id=other.agent_id)),
            content_encoding=None,
        ),
    ])  # fmt: skip
    reply, other_reply = outcomes
    assert isinstance(reply, PushReply) and isinstance(other_reply, PushReply)
    assert reply.accepted == 48
    assert [(r.seq, r.field) for r in reply.rejected] == [
        (11, "samples[10].stub_status.requests"),
        (21, "samples[20].ts"),
    ]
    assert other_reply.accepted == 3 and other_reply.rejected == []
    assert stored_seqs(db_session, host.id) == [s for s in range(1, 51) if s not in (11, 21)]
    # Rates skip the refused sample: seq 12's rate is taken against seq 10.
    rate = db_session.scalar(
        select(Sample.req_per_s).where(Sample.host_id == host.id, Sample.seq == 12)
    )
    assert rate == pytest.approx(0.5)


def test_a_push_whose_samples_are_all_refused_still_answers_200(
    client: TestClient, db_session: Session
) -> None:
    host = make_host()
    samples = spool_batch(2)
    for item in samples:
        item["ts"] = BAD_TIMESTAMPS["epoch"]
    reply = push(client, host, push_body(samples, agent_id=host.agent_id))
    assert reply.status_code == 200, reply.text
    assert reply.json()["accepted"] == 0
    assert [r["seq"] for r in reply.json()["rejected"]] == [1, 2]
    assert stored_seqs(db_session, host.id) == []


def gap(from_seq: int, to_seq: int, age_s: float, span_s: float) -> dict[str, Any]:
    """A spool_overflow gap record ending age_s ago."""
    return {
        "from_seq": from_seq,
        "to_seq": to_seq,
        "from_ts": iso(recent(age_s + span_s)),
        "to_ts": iso(recent(age_s)),
        "reason": "spool_overflow",
    }


def test_gap_records_are_stored_idempotently_and_shown_with_the_series(
    client: TestClient, viewer_client: TestClient, db_session: Session
) -> None:
    host = make_host()
    first = push_body([sample(400, recent(10))], agent_id=host.agent_id)
    first["gaps"] = [gap(1, 99, 1200, 990)]
    assert push(client, host, first).json()["gaps"] == 1
    # The reply was lost: the agent resends the record, extended by more samples it dropped.
    again = push_body([sample(401, recent(5))], agent_id=host.agent_id)
    again["gaps"] = [gap(1, 150, 700, 1490)]
    assert push(client, host, again).json()["gaps"] == 1
    rows = db_session.scalars(select(SampleGap).where(SampleGap.host_id == host.id)).all()
    assert [(row.from_seq, row.to_seq, row.reason) for row in rows] == [(1, 150, "spool_overflow")]
    series = viewer_client.get(f"/api/v1/hosts/{host.id}/series", params={"range": "1h"}).json()
    (shown,) = series["gaps"]
    assert (shown["from_seq"], shown["to_seq"], shown["samples_lost"]) == (1, 150, 150)
    assert shown["reason"] == "spool_overflow"
    # A range that ends before the gap began does not mention it.
    earlier = viewer_client.get(
        f"/api/v1/hosts/{host.id}/series",
        params={"from": iso(recent(6 * 3600)), "to": iso(recent(3 * 3600))},
    ).json()
    assert earlier["gaps"] == []


def test_gaps_and_refusals_on_sqlite(embedded: Session) -> None:
    assert embedded.get_bind().dialect.name == "sqlite"
    host = make_host()
    body = push_body(
        [sample(40, recent(60)), sample(41, recent(50)), sample(42, recent(30))],
        agent_id=host.agent_id,
    )
    body["samples"][1]["ts"] = BAD_TIMESTAMPS["epoch"]
    body["gaps"] = [gap(1, 39, 300, 390), gap(50, 60, 200, 10)]
    body["gaps"][1]["reason"] = "Not a reason!"
    (reply,) = store_batch(
        [PushRequest(token=host.token, body=orjson.dumps(body), content_encoding=None)]
    )
    assert isinstance(reply, PushReply), repr(reply)
    assert (reply.accepted, reply.gaps) == (2, 1)
    assert [(r.seq, r.field) for r in reply.rejected] == [
        (41, "samples[1].ts"),
        (None, "gaps[1].reason"),
    ]
    series = get_series(
        session=embedded, host_id=host.id, start=recent(3600), end=recent(0), now=recent(0)
    )
    assert [(g.from_seq, g.to_seq, g.samples_lost) for g in series.gaps] == [(1, 39, 39)]
    assert len(series.points) == 2


def test_a_redis_outage_after_the_commit_does_not_fail_the_push(
    client: TestClient,
    db_session: Session,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    host = make_host()
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    get_settings.cache_clear()
    try:
        reply = push(client, host, push_body(spool_batch(3), agent_id=host.agent_id))
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
        dropped = pubsub.redis_publisher.dropped
        pubsub.redis_publisher.reset()
    assert reply.status_code == 200, reply.text
    assert reply.json()["accepted"] == 3
    assert stored_seqs(db_session, host.id) == [1, 2, 3]
    assert dropped == 1
    assert "live event sample not published, Redis failed" in caplog.text


def test_error_log_counts_are_stored_and_an_absurd_one_costs_only_its_sample(
    client: TestClient, db_session: Session
) -> None:
    host = make_host()
    counts = {
        "levels": {"alert": 3, "crit": 1, "warn": 9},
        "messages": {"worker_connections_not_enough": 3, "too_many_open_files": 1},
    }
    good = {**sample(1, recent(20)), "error_log": counts}
    absurd = {**sample(2, recent(10)), "error_log": {"messages": {"too_many_open_files": 2**40}}}
    reply = push(client, host, push_body([good, absurd], agent_id=host.agent_id))
    assert reply.status_code == 200, reply.text
    (refused,) = reply.json()["rejected"]
    assert refused["seq"] == 2 and "too_many_open_files" in refused["field"]
    stored = db_session.scalars(select(Sample).where(Sample.host_id == host.id)).one()
    assert (stored.errlog_severe, stored.errlog_wc_not_enough, stored.errlog_nofile) == (4, 3, 1)
    assert (stored.errlog_error, stored.errlog_warn, stored.errlog_wc_reusing) == (0, 9, 0)
