"""Migration 0012 moves the samples' `extra` JSON into typed columns under the new key, and back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import IntegrityError

from tests.conftest import alembic_config
from tests.metrics.test_partition_migration import rows, scratch_url  # noqa: F401

BEFORE = "0011_pruning"
COMPACT = "0012_compact_samples"
EXTRA = {
    "nginx": {"master_pid": 4242, "error": "nginx -T failed"},
    "stub_status": {"url": "http://127.0.0.1/status", "error": "timed out"},
    "cpu": {"per_core_pct": [12.5, 80.0, 3.0], "iowait_pct": 1.5},
    "memory": {"available_bytes": 5_000_000_000, "swap_used_bytes": 4096},
    "load": {"load5": 1.5, "load15": 1.25},
    "tcp_states": {"ESTABLISHED": 81, "TIME_WAIT": 3_000_000_000, "LISTEN": 5},
    "nginx_processes": {
        "rss_bytes": 24_000_000,
        "cpu_pct": 22.5,
        "worker_cpu_pct": 20.5,
        "worker_fds_max": 56,
        "worker_fds_limit": 4096,
    },
    "error_log": {"levels": {"warn": 9}, "messages": {"worker_connections_reusing": 2}},
}
# What the typed columns hold after the upgrade (TIME_WAIT capped to 32 bits).
CONVERTED = (
    22.5, 20.5, 24_000_000, 4096, 3, 80.0, 1.5, 4096, 81, 2**31 - 1, 0, 9, 2,
    "nginx -T failed", "timed out",
)  # fmt: skip
CONVERTED_COLUMNS = (
    "nginx_cpu_pct, worker_cpu_pct, nginx_rss_bytes, worker_fds_limit, cpu_cores, "
    "cpu_core_max_pct, cpu_iowait_pct, swap_used_bytes, tcp_established, tcp_time_wait, "
    "errlog_error, errlog_warn, errlog_wc_reusing, nginx_error, stub_status_error"
)


def _insert(engine: Engine, samples: list[tuple[int, datetime]]) -> None:
    """A host and its samples in the layout before 0012, each with EXTRA."""
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO hosts (id, agent_id, hostname, labels, token_hash, enrolled_at) "
                "VALUES (1, 'a', 'web-1', '{}', 'h', CURRENT_TIMESTAMP)"
            )
        )
        for seq, ts in samples:
            connection.execute(
                text(
                    "INSERT INTO samples (host_id, seq, ts, nginx_up, stub_status_available, "
                    "req_per_s, fds_limit, errlog_severe, extra) "
                    "VALUES (1, :seq, :ts, true, false, 2.5, :fds_limit, 0, :extra)"
                ),
                {"seq": seq, "ts": ts, "extra": json.dumps(EXTRA), "fds_limit": 2**40},
            )


def _converted(engine: Engine) -> list[tuple[object, ...]]:
    query = f"SELECT seq, fds_limit, {CONVERTED_COLUMNS} FROM samples ORDER BY seq"  # noqa: S608
    return rows(engine, query)


def test_postgresql_rows_move_into_columns_and_back(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, BEFORE)
    engine = create_engine(scratch_url)
    now = datetime.now(UTC).replace(microsecond=0)
    try:
        _insert(engine, [(1, now), (2, now - timedelta(days=20))])
        command.upgrade(config, COMPACT)
        assert _converted(engine) == [(seq, 2**31 - 1, *CONVERTED) for seq in (1, 2)]
        # Today's row in its partition; the one older than the retention waits in DEFAULT.
        placed = rows(engine, "SELECT tableoid::regclass::text FROM samples ORDER BY seq")
        assert placed[0][0].startswith("samples_p") and placed[1][0] == "samples_default"
        leftovers = "SELECT count(*) FROM pg_class WHERE relname LIKE '%before_0012%'"
        assert rows(engine, leftovers) == [(0,)]
        # The new partitions' indexes are named after them (no numeral suffix).
        names = "SELECT indexname FROM pg_indexes WHERE tablename = 'samples_default'"
        assert rows(engine, names) == [("samples_default_pkey",)]
        key = rows(engine, "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                           "WHERE conname = 'pk_samples'")  # fmt: skip
        assert key == [("PRIMARY KEY (host_id, ts, seq)",)]
        # The same (host_id, ts, seq) is refused by the new key.
        with pytest.raises(IntegrityError, match="pkey"), engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO samples (host_id, seq, ts, nginx_up, stub_status_available) "
                    "VALUES (1, 1, :ts, true, true)"
                ),
                {"ts": now},
            )
        command.downgrade(config, BEFORE)
        back = rows(
            engine,
            "SELECT seq, req_per_s, extra->'nginx_processes'->>'worker_fds_limit', "
            "extra->'stub_status'->>'error', extra->'error_log'->'levels'->>'warn' "
            "FROM samples ORDER BY seq",
        )
        assert back == [(1, 2.5, "4096", "timed out", "9"), (2, 2.5, "4096", "timed out", "9")]
        assert rows(engine, "SELECT count(*) FROM pg_indexes WHERE indexname = "
                            "'ix_samples_host_id_ts'") == [(1,)]  # fmt: skip
    finally:
        engine.dispose()


def test_sqlite_rows_move_into_columns_and_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/compact.db"
    config = alembic_config(url)
    command.upgrade(config, BEFORE)
    engine = create_engine(url)
    now = datetime.now(UTC).replace(microsecond=0)
    try:
        _insert(engine, [(1, now), (2, now + timedelta(seconds=10))])
        command.upgrade(config, COMPACT)
        assert _converted(engine) == [(seq, 2**31 - 1, *CONVERTED) for seq in (1, 2)]
        command.downgrade(config, BEFORE)
        extras = [json.loads(extra) for (extra,) in rows(engine, "SELECT extra FROM samples")]
        assert [extra["nginx_processes"]["rss_bytes"] for extra in extras] == [24_000_000] * 2
        assert [extra["cpu"]["iowait_pct"] for extra in extras] == [1.5] * 2
    finally:
        engine.dispose()
