"""Push bodies: decoding limits and validation messages that name the field."""

from __future__ import annotations

import copy
import gzip
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import orjson
import pytest
from app.agents.errors import PayloadRejected
from app.agents.payload import (
    decode_body,
    gunzip_limited,
    parse_push_payload,
    read_limited,
)
from app.agents.schemas import Rejection
from app.core.config import get_settings

from tests.agents.payloads import iso, push_body, recent, sample


def valid_body() -> dict[str, Any]:
    """A body with two valid samples."""
    return push_body([sample(1, recent(20)), sample(2, recent(10))])


def rejection(body: Any) -> PayloadRejected:
    """The PayloadRejected raised for body."""
    with pytest.raises(PayloadRejected) as caught:
        parse_push_payload(orjson.dumps(body))
    return caught.value


def refused_samples(body: Any) -> list[Rejection]:
    """The samples and gaps refused alone in body (the envelope itself must be valid)."""
    return parse_push_payload(orjson.dumps(body)).rejected


def test_valid_body_parses() -> None:
    payload = parse_push_payload(orjson.dumps(valid_body()))
    assert [s.seq for s in payload.samples] == [1, 2]
    assert payload.samples[0].stub_status.accepts == 100
    assert payload.rejected == []


def test_unknown_fields_are_ignored_for_newer_agents() -> None:
    body = valid_body()
    body["future_field"] = {"x": 1}
    body["samples"][0]["future_metric"] = 3
    assert parse_push_payload(orjson.dumps(body)).agent_id == body["agent_id"]


def mutated(path: list[Any], value: Any) -> dict[str, Any]:
    """valid_body() with the value at path replaced (or removed when value is ...)."""
    body = copy.deepcopy(valid_body())
    target = body
    for part in path[:-1]:
        target = target[part]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("path", "value", "field", "message"),
    [
        (
            ["samples", 1, "stub_status", "accepts"],
            -1,
            "samples[1].stub_status.accepts",
            "samples[1].stub_status.accepts: must be >= 0",
        ),
        (
            ["samples", 0, "stub_status", "requests"],
            "5",
            "samples[0].stub_status.requests",
            "samples[0].stub_status.requests: must be an integer",
        ),
        (
            ["samples", 0, "stub_status", "requests"],
            5.5,
            "samples[0].stub_status.requests",
            "samples[0].stub_status.requests: must be an integer",
        ),
        (["samples", 0, "seq"], True, "samples[0].seq", "samples[0].seq: must be an integer"),
        (
            ["samples", 0, "ts"],
            1767225600,
            "samples[0].ts",
            "samples[0].ts: must be an RFC 3339 string",
        ),
        (
            ["samples", 0, "ts"],
            "2026-01-01T00:00:00",
            "samples[0].ts",
            "samples[0].ts: must carry a time zone",
        ),
        (
            ["samples", 0, "nginx", "up"],
            "yes",
            "samples[0].nginx.up",
            "samples[0].nginx.up: must be true or false",
        ),
        (
            ["samples", 0, "system", "cpu", "total_pct"],
            101,
            "samples[0].system.cpu.total_pct",
            "samples[0].system.cpu.total_pct: must be <= 100",
        ),
        (
            ["samples", 0, "stub_status", "handled"],
            ...,
            "samples[0].stub_status",
            "samples[0].stub_status: available is true but handled missing",
        ),
        (["samples", 1], "not a sample", "samples[1]", "samples[1]: must be an object"),
    ],
)
def test_a_bad_sample_is_refused_alone_naming_the_field(
    path: list[Any], value: Any, field: str, message: str
) -> None:
    body = mutated(path, value)
    payload = parse_push_payload(orjson.dumps(body))
    (refused,) = payload.rejected
    index = path[1]
    assert refused.seq == (None if path[2:] == ["seq"] or len(path) == 2 else index + 1)
    assert refused.field == field
    assert message in refused.reason
    assert [s.seq for s in payload.samples] == [seq for seq in (1, 2) if seq != index + 1]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["samples"], [], "samples: must have at least 1 items"),
        (["samples"], {"seq": 1}, "samples: must be an array"),
        (["gaps"], "none", "gaps: must be an array"),
        (["hostname"], "x" * 254, "hostname: must be at most 253 characters"),
        (["hostname"], ..., "hostname: is required"),
        (["agent_id"], "bad id!", "agent_id: must match"),
        (["labels"], {"env:x": "prod"}, "labels.env:x (key): must match"),
        (["labels"], {"env": "a\nb"}, "labels.env: must match"),
        (["config_hash"], "ABC", "config_hash: must match"),
    ],
)
def test_a_bad_envelope_refuses_the_push_naming_the_field(
    path: list[Any], value: Any, message: str
) -> None:
    error = rejection(mutated(path, value))
    assert error.status_code == 422
    assert message in error.detail


@pytest.mark.parametrize(
    ("ts", "reason"),
    [
        (iso(recent(-3600)), "s in the future; check the host's clock"),
        ("9999-12-31T23:59:59-01:00", "s in the future; check the host's clock"),
        ("1970-01-01T00:00:00Z", "is older than the raw retention"),
        ("0001-01-01T00:00:00+01:00", "is older than the raw retention"),
        (iso(recent(3 * 86400)), "is older than the raw retention"),
    ],
)
def test_a_timestamp_outside_the_window_refuses_that_sample_only(ts: str, reason: str) -> None:
    body = mutated(["samples", 1, "ts"], ts)
    payload = parse_push_payload(orjson.dumps(body))
    assert [s.seq for s in payload.samples] == [1]
    (refused,) = payload.rejected
    assert (refused.seq, refused.field) == (2, "samples[1].ts")
    assert f"samples[1].ts: {reason}" in refused.reason or reason in refused.reason


def test_the_future_limit_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGINX_FLEET_SAMPLE_MAX_FUTURE_S", "3600")
    get_settings.cache_clear()
    try:
        body = mutated(["samples", 1, "ts"], iso(recent(-1800)))
        assert refused_samples(body) == []
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


def test_a_sample_out_of_order_is_refused_alone() -> None:
    body = push_body([sample(5, recent(30)), sample(5, recent(20)), sample(6, recent(10))])
    payload = parse_push_payload(orjson.dumps(body))
    assert [s.seq for s in payload.samples] == [5, 6]
    (refused,) = payload.rejected
    assert refused.field == "samples[1].seq"
    assert "must be greater than 5" in refused.reason


def test_more_than_500_samples_is_refused() -> None:
    start = recent(10 * 600)
    samples = [sample(i, start + timedelta(seconds=10 * i)) for i in range(501)]
    assert "samples: must have at most 500 items" in rejection(push_body(samples)).detail


def test_config_hash_must_match_dump() -> None:
    body = push_body([sample(1, recent(5))], config_dump="events {}\n")
    body["config"]["dump"] = "events { worker_connections 10; }\n"
    assert "config: Value error" not in rejection(body).detail
    assert "config: hash does not match the SHA-256 of dump" in rejection(body).detail


def test_many_errors_of_one_sample_are_summarised() -> None:
    body = valid_body()
    broken = body["samples"][0]
    for name in ("active", "reading", "writing", "waiting", "accepts", "handled", "requests"):
        broken["stub_status"][name] = -1
    broken["system"]["cpu"] = {"total_pct": -1, "iowait_pct": -1, "per_core_pct": [-1, -1]}
    (refused,) = refused_samples(body)
    assert refused.reason.endswith("and 1 more problems")


def test_gap_records_are_parsed_and_a_bad_one_refused_alone() -> None:
    body = valid_body()
    body["gaps"] = [
        {
            "from_seq": 10,
            "to_seq": 19,
            "from_ts": iso(recent(900)),
            "to_ts": iso(recent(800)),
            "reason": "spool_overflow",
        },
        {
            "from_seq": 30,
            "to_seq": 20,
            "from_ts": iso(recent(700)),
            "to_ts": iso(recent(600)),
            "reason": "spool_overflow",
        },
    ]
    payload = parse_push_payload(orjson.dumps(body))
    assert [(g.from_seq, g.to_seq) for g in payload.gaps] == [(10, 19)]
    assert len(payload.samples) == 2
    (refused,) = payload.rejected
    assert refused.seq is None
    assert refused.field == "gaps[1]"
    assert "to_seq must not be less than from_seq" in refused.reason


@pytest.mark.parametrize("ts", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"])
def test_a_gap_at_the_extremes_of_time_is_refused_alone(ts: str) -> None:
    body = valid_body()
    body["gaps"] = [
        {"from_seq": 1, "to_seq": 2, "from_ts": ts, "to_ts": ts, "reason": "spool_overflow"}
    ]
    payload = parse_push_payload(orjson.dumps(body))
    assert payload.gaps == []
    (refused,) = payload.rejected
    assert refused.field == "gaps[0].from_ts"
    assert "check the host's clock" in refused.reason


def test_invalid_json_is_422() -> None:
    with pytest.raises(PayloadRejected) as caught:
        parse_push_payload(b'{"agent_id": ')
    assert caught.value.status_code == 422
    assert caught.value.detail.startswith("invalid JSON")


def test_non_object_json_is_422() -> None:
    with pytest.raises(PayloadRejected, match="must be a JSON object"):
        parse_push_payload(b"[1, 2]")


async def chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    """data in pieces of size bytes, like a streamed request body."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.anyio
async def test_read_limited_stops_past_the_limit() -> None:
    with pytest.raises(PayloadRejected) as caught:
        await read_limited(chunks(b"x" * 10_000, 1000), max_bytes=4000)
    assert caught.value.status_code == 413


@pytest.mark.anyio
async def test_read_limited_accepts_exactly_the_limit() -> None:
    assert await read_limited(chunks(b"x" * 4000, 1000), max_bytes=4000) == b"x" * 4000


def test_gzip_bomb_is_stopped_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)
    assert len(bomb) < 100_000
    with pytest.raises(PayloadRejected) as caught:
        gunzip_limited(bomb, max_bytes=1_000_000)
    assert caught.value.status_code == 413
    assert "decompressed body" in caught.value.detail


def test_gzip_round_trip_and_identity() -> None:
    raw = orjson.dumps(valid_body())
    assert decode_body(gzip.compress(raw), content_encoding="gzip", max_bytes=len(raw)) == raw
    assert decode_body(raw, content_encoding=None, max_bytes=len(raw)) == raw


@pytest.mark.parametrize("broken", [b"not gzip at all", gzip.compress(b"{}" * 100)[:-12]])
def test_broken_gzip_is_422(broken: bytes) -> None:
    with pytest.raises(PayloadRejected) as caught:
        gunzip_limited(broken, max_bytes=1000)
    assert caught.value.status_code == 422


def test_unknown_content_encoding_is_422() -> None:
    with pytest.raises(PayloadRejected, match="unsupported Content-Encoding 'br'"):
        decode_body(b"", content_encoding="br", max_bytes=10)
