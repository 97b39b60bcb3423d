"""Push bodies: decoding limits and validation messages that name the field."""

from __future__ import annotations

import copy
import gzip
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import orjson
import pytest
from app.agents.payload import (
    PayloadRejected,
    decode_body,
    gunzip_limited,
    parse_push_payload,
    read_limited,
)

from tests.agents.payloads import iso, push_body, recent, sample


def valid_body() -> dict[str, Any]:
    """A body with two valid samples."""
    return push_body([sample(1, recent(20)), sample(2, recent(10))])


def rejection(body: Any) -> PayloadRejected:
    """The PayloadRejected raised for body."""
    with pytest.raises(PayloadRejected) as caught:
        parse_push_payload(orjson.dumps(body))
    return caught.value


def test_valid_body_parses() -> None:
    payload = parse_push_payload(orjson.dumps(valid_body()))
    assert [s.seq for s in payload.samples] == [1, 2]
    assert payload.samples[0].stub_status.accepts == 100


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
    ("path", "value", "message"),
    [
        (
            ["samples", 1, "stub_status", "accepts"],
            -1,
            "samples[1].stub_status.accepts: must be >= 0",
        ),
        (
            ["samples", 0, "stub_status", "requests"],
            "5",
            "samples[0].stub_status.requests: must be an integer",
        ),
        (
            ["samples", 0, "stub_status", "requests"],
            5.5,
            "samples[0].stub_status.requests: must be an integer",
        ),
        (["samples", 0, "seq"], True, "samples[0].seq: must be an integer"),
        (["samples", 0, "ts"], 1767225600, "samples[0].ts: must be an RFC 3339 string"),
        (["samples", 0, "ts"], "2026-01-01T00:00:00", "samples[0].ts: must carry a time zone"),
        (["samples", 0, "nginx", "up"], "yes", "samples[0].nginx.up: must be true or false"),
        (
            ["samples", 0, "system", "cpu", "total_pct"],
            101,
            "samples[0].system.cpu.total_pct: must be <= 100",
        ),
        (
            ["samples", 0, "stub_status", "handled"],
            ...,
            "samples[0].stub_status: available is true but handled missing",
        ),
        (["samples"], [], "samples: must have at least 1 items"),
        (["hostname"], "x" * 254, "hostname: must be at most 253 characters"),
        (["hostname"], ..., "hostname: is required"),
        (["agent_id"], "bad id!", "agent_id: must match"),
        (["labels"], {"env:x": "prod"}, "labels.env:x (key): must match"),
        (["labels"], {"env": "a\nb"}, "labels.env: must match"),
        (["config_hash"], "ABC", "config_hash: must match"),
    ],
)
def test_rejection_names_the_field(path: list[Any], value: Any, message: str) -> None:
    error = rejection(mutated(path, value))
    assert error.status_code == 422
    assert message in error.detail


def test_future_timestamp_is_refused() -> None:
    error = rejection(mutated(["samples", 1, "ts"], iso(recent(-3600))))
    assert "samples[1].ts: is more than 15 minutes in the future" in error.detail


def test_samples_must_be_oldest_first() -> None:
    body = push_body([sample(5, recent(20)), sample(5, recent(10))])
    assert "samples[1].seq must be greater than samples[0].seq" in rejection(body).detail


def test_more_than_500_samples_is_refused() -> None:
    start = recent(10 * 600)
    samples = [sample(i, start + timedelta(seconds=10 * i)) for i in range(501)]
    assert "samples: must have at most 500 items" in rejection(push_body(samples)).detail


def test_config_hash_must_match_dump() -> None:
    body = push_body([sample(1, recent(5))], config_dump="events {}\n")
    body["config"]["dump"] = "events { worker_connections 10; }\n"
    assert "config: Value error" not in rejection(body).detail
    assert "config: hash does not match the SHA-256 of dump" in rejection(body).detail


def test_many_errors_are_summarised() -> None:
    body = valid_body()
    body["samples"] = [dict(s, seq=-1) for s in body["samples"] * 8]
    detail = rejection(body).detail
    assert "and 6 more problems" in detail


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
