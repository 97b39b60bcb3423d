"""Migration 0009 turns the time-series tables into partitioned ones with their rows, and back."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from tests.conftest import TEST_DATABASE_URL, alembic_config

BEFORE = "0008_alerts"
PARTITIONED = "0009_partitioned_time_series"


@pytest.fixture
def scratch_url(database_url: str) -> Iterator[str]:
    """A new empty database of its own (the session's one is already at head)."""
    server_url = make_url(TEST_DATABASE_URL)
    name = f"nf_migration_{secrets.token_hex(4)}"
    server = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with server.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        server.dispose()


def rows(engine: Engine, query: str) -> list[tuple[object, ...]]:
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(query))]


def test_rows_are_kept_through_upgrade_and_downgrade(scratch_url: str) -> None:
    config = alembic_config(scratch_url)
    command.upgrade(config, BEFORE)
    engine = create_engine(scratch_url)
    now = datetime.now(UTC).replace(microsecond=0)
    old = now - timedelta(days=20)
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO hosts (id, agent_id, hostname, labels, token_hash, enrolled_at) "
                    "VALUES (1, 'a', 'web-1', '{}', 'h', now())"
                )
            )
            for seq, ts in ((1, now), (2, old)):
                connection.execute(
                    text(
                        "INSERT INTO samples (host_id, seq, ts, nginx_up, stub_status_available, "
                        "req_per_s, extra) VALUES (1, :seq, :ts, true, true, 2.5, "
                        '\'{"cpu": {"per_core_pct": [1.5]}}\')'
                    ),
                    {"seq": seq, "ts": ts},
                )
            connection.execute(
                text(
                    "INSERT INTO sample_rollups (host_id, resolution, bucket_start, sample_count, "
                    "cpu_pct_avg) VALUES (1, '1m', :at, 6, 12.25), (1, '1h', :at, 360, 12.25)"
                ),
                {"at": now.replace(second=0)},
            )
            connection.execute(
                text(
                    "INSERT INTO log_stats (host_id, ts, seq, site, requests) "
                    "VALUES (1, :ts, 1, 'a.example', 9)"
                ),
                {"ts": now},
            )
        command.upgrade(config, PARTITIONED)
        held = rows(
            engine,
            "SELECT seq, tableoid::regclass::text, req_per_s, extra->'cpu'->'per_core_pct'->>0 "
            "FROM samples ORDER BY seq",
        )
        assert [(seq, rate, core) for seq, _table, rate, core in held] == [
            (1, 2.5, "1.5"),
            (2, 2.5, "1.5"),
        ]
        # Today's rows went to their partition; one older than the retention waits in DEFAULT.
        assert held[0][1].startswith("samples_p") and held[1][1] == "samples_default"
        assert rows(engine, "SELECT tableoid::regclass::text FROM sample_rollups ORDER BY 1") == [
            (f"sample_rollups_1h_p{now:%Y%m}",),
            (f"sample_rollups_1m_p{now:%Y%m%d}",),
        ]
        assert rows(engine, "SELECT requests FROM log_stats") == [(9,)]
        command.downgrade(config, BEFORE)
        assert rows(engine, "SELECT seq, req_per_s FROM samples ORDER BY seq") == [
            (1, 2.5),
            (2, 2.5),
        ]
        assert rows(engine, "SELECT count(*) FROM sample_rollups") == [(2,)]
        assert rows(engine, "SELECT count(*) FROM pg_class WHERE relispartition") == [(0,)]
    finally:
        engine.dispose()
