"""Migration 0013 packs the stored sketches and repartitions by the access-log retention, and
its downgrade gives back the JSON, on PostgreSQL and on SQLite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from app.access_log.packed import unpack_protocol
from sqlalchemy import Engine, create_engine, text

from tests.access_log.factories import latencies, sketch_json
from tests.conftest import alembic_config
from tests.metrics.test_partition_migration import scratch_url

__all__ = ["scratch_url"]

BEFORE = "0012_compact_samples"
PACKED = "0013_compact_access_log"
REQUEST = sketch_json(latencies(60, seed=1))
UPSTREAM = sketch_json(latencies(30, seed=2))
MERGED = sketch_json(latencies(2000, seed=3))


def fill(engine: Engine, now: datetime) -> None:
    """A host with raw rows (new, and older than the new 3-hour retention), minute and hour
    rollups and upstream rows, sketches as JSON."""
    minute = now.replace(second=0)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO hosts (id, agent_id, hostname, labels, token_hash, enrolled_at) "
                "VALUES (1, 'a', 'web-1', '{}', 'h', :now)"
            ),
            {"now": now},
        )
        for seq, ts in ((1, now), (2, now - timedelta(hours=10))):
            connection.execute(
                text(
                    "INSERT INTO log_stats (host_id, ts, seq, site, requests, request_time, "
                    "upstream_time, top_paths) VALUES (1, :ts, :seq, 'shop', 60, :rt, NULL, "
                    """'[["/a", 1, 0.5, 0.5]]')"""
                ),
                {"ts": ts, "seq": seq, "rt": json.dumps(REQUEST)},
            )
            connection.execute(
                text(
                    "INSERT INTO log_upstream_stats (host_id, ts, seq, site, upstream, attempts, "
                    "errors, response_time) VALUES (1, :ts, :seq, 'shop', 'u', 30, 0, :rt)"
                ),
                {"ts": ts, "seq": seq, "rt": json.dumps(UPSTREAM)},
            )
        for resolution in ("1m", "1h"):
            connection.execute(
                text(
                    "INSERT INTO log_stats_rollups (host_id, resolution, bucket_start, site, "
                    "requests, request_time) VALUES (1, :resolution, :at, 'shop', 2000, :rt)"
                ),
                {"resolution": resolution, "at": minute, "rt": json.dumps(MERGED)},
            )


def sketches(engine: Engine, table: str, column: str, order: str = "host_id") -> list[object]:
    with engine.connect() as connection:
        return list(
            connection.scalars(text(f"SELECT {column} FROM {table} ORDER BY {order}"))  # noqa: S608
        )


def as_protocol(value: object) -> dict[str, object]:
    """A stored sketch, packed or JSON (text on SQLite), in the protocol form."""
    if isinstance(value, (bytes, memoryview)):
        return unpack_protocol(bytes(value))
    data = json.loads(value) if isinstance(value, str) else value
    assert isinstance(data, dict)
    return data


def same(data: dict[str, object], expected: dict[str, object]) -> bool:
    bins = data["bins"]
    assert isinstance(bins, dict)
    return data["zero"] == expected["zero"] and bins == expected["bins"]


def check_round_trip(url: str, *, postgresql: bool) -> None:
    config = alembic_config(url)
    command.upgrade(config, BEFORE)
    engine = create_engine(url)
    now = datetime.now(UTC).replace(microsecond=0)
    try:
        fill(engine, now)
        command.upgrade(config, PACKED)
        raw = sketches(engine, "log_stats", "request_time")
        # On PostgreSQL the row older than the new raw retention is not carried over.
        assert len(raw) == (1 if postgresql else 2)
        assert all(isinstance(v, bytes) and same(as_protocol(v), REQUEST) for v in raw)
        [rollup_1m, rollup_1h] = sketches(
            engine, "log_stats_rollups", "request_time", "resolution DESC"
        )
        assert isinstance(rollup_1m, bytes) and same(as_protocol(rollup_1m), MERGED)
        assert same(as_protocol(rollup_1h), MERGED)
        # Rollups are stored deflated (bit 6 of the first byte), and far smaller than JSON.
        assert rollup_1m[0] & 0x40 and len(rollup_1m) * 4 < len(json.dumps(MERGED))
        upstream = sketches(engine, "log_upstream_stats", "response_time")
        assert all(same(as_protocol(v), UPSTREAM) for v in upstream)
        assert sketches(engine, "log_stats", "top_paths", "seq")[0] in (
            [["/a", 1, 0.5, 0.5]],
            '[["/a", 1, 0.5, 0.5]]',
        )
        if postgresql:
            partitions = sketches(
                engine,
                "(SELECT relid::text AS r FROM pg_partition_tree('log_stats_rollups')) AS t",
                "r",
                "r",
            )
            assert f"log_stats_rollups_1h_p{now:%Y%m%d}" in partitions
            [(table,)] = rows(engine, "SELECT tableoid::regclass::text FROM log_stats")
            assert table == f"log_stats_p{now:%Y%m%d%H}"
        command.downgrade(config, BEFORE)
        back = sketches(engine, "log_stats_rollups", "request_time")
        assert all(not isinstance(v, bytes) and same(as_protocol(v), MERGED) for v in back)
        assert all(
            same(as_protocol(v), REQUEST) for v in sketches(engine, "log_stats", "request_time")
        )
        if postgresql:
            [(table,)] = rows(engine, "SELECT tableoid::regclass::text FROM log_stats")
            assert table == f"log_stats_p{now:%Y%m%d}{now.hour - now.hour % 6:02d}"
        command.upgrade(config, "head")
        command.check(config)
    finally:
        engine.dispose()


def rows(engine: Engine, query: str) -> list[tuple[object, ...]]:
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(query))]


def test_postgresql_sketches_are_packed_and_back(scratch_url: str) -> None:
    check_round_trip(scratch_url, postgresql=True)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'embedded.db'}"


def test_sqlite_sketches_are_packed_and_back(sqlite_url: str) -> None:
    check_round_trip(sqlite_url, postgresql=False)
