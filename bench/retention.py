"""Retention of a day: dropping a day's samples partition against a DELETE of the same rows.

Migrates a throw-away database to head, then fills two identical days of samples for the
same hosts (rows as a real push stores them, every typed column filled): day A in its own daily
partition, day B in a plain table of the same layout (columns, key), both sealed (indexes
rebuilt, as the hourly task does once a partition's period ended), day B standing in for
the unpartitioned table. Times expiring day A as retention does (app.core.partitions: each step
its own transaction; DETACH, the only step that locks `samples` and so holds up ingest; the
foreign key's removal, which locks `hosts`; the DROP of the detached table, which locks nothing
shared) against `DELETE FROM ... WHERE ts < end of day` on day B, in the same run. A day at
10,000 hosts is 86.4 M samples; the default run writes 1,000 hosts' day (8.64 M rows per side,
scaled down tenfold for this machine's disk and time), --hosts changes it.
Run: .venv/bin/python bench/retention.py [--quick] [--hosts N]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from harness import control_plane as cp
from harness.options import parse_hosts_options
from harness.pgdb import libpq_dsn, temporary_database
from harness.stats import ms, verdict

SAMPLES_PER_DAY = 8640
TARGET_DROP_S = 1.0
DAY = datetime(2026, 1, 1, tzinfo=UTC)
PARTITION = "samples_p20260101"
# One day of 10 s samples for hosts 1..N, figures varying with time, as ingest stores them
# (app.metrics.samples.sample_row: every typed column a real push fills).
FILL = """
INSERT INTO {table} (host_id, seq, ts, nginx_up, workers, stub_status_available, active,
    reading, writing, waiting, accepts, handled, requests, req_per_s, accepts_per_s,
    drops_per_s, cpu_pct, cpu_iowait_pct, cpu_core_max_pct, cpu_cores, mem_used_bytes,
    mem_total_bytes, swap_used_bytes, load1, fds_open, fds_limit, net_rx_bytes, net_tx_bytes,
    listen_overflows, listen_drops, tcp_established, tcp_time_wait, worker_fds_max,
    worker_fds_limit, nginx_rss_bytes, nginx_cpu_pct, worker_cpu_pct, errlog_severe,
    errlog_error, errlog_warn, errlog_wc_not_enough, errlog_wc_reusing, errlog_nofile)
SELECT h, s, %(day)s::timestamptz + s * interval '10 seconds', true, 2, true, 90 + s %% 7, 1,
    4, 85, s * 375, s * 375, s * 3000, 300 + s %% 50, 37.5, 0, 40 + s %% 20, 0.1, 41.5, 2,
    3000000000 + s, 8589934592, 0, 1.5, 130, 2048, s * 1800000, s * 18000000, 0, 0, 81,
    100 + s %% 40, 60, 1024, 24000000, 22.6, 21.9, 0, 0, 0, 0, 0, 0
FROM generate_series(0::bigint, {per_day} - 1) AS s, generate_series(1, %(hosts)s) AS h
ORDER BY s, h
"""


def fill(conn: psycopg.Connection, table: str, hosts: int) -> tuple[float, int, float]:
    """Write a day of samples for `hosts` hosts into table and seal it; return the seconds the
    writing took, the bytes written (heap and indexes) and the seconds the sealing took."""
    began = time.perf_counter()
    conn.execute(
        FILL.format(table=table, per_day=SAMPLES_PER_DAY),  # type: ignore[arg-type]
        {"day": DAY, "hosts": hosts},
    )
    conn.execute(f"VACUUM ANALYZE {table}")
    written = conn.execute(f"SELECT pg_total_relation_size('{table}')").fetchone()[0]
    filled = time.perf_counter()
    # As retention finds a partition: sealed days before it expires (indexes rebuilt once
    # its period ended, app.metrics.partitioning.seal_all; CONCURRENTLY as the task does).
    conn.execute(f"REINDEX TABLE CONCURRENTLY {table}")
    return filled - began, int(written), time.perf_counter() - filled


def timed(conn: psycopg.Connection, statements: Sequence[str]) -> float:
    """Seconds to run statements in one transaction and commit."""
    began = time.perf_counter()
    with conn.transaction():
        for statement in statements:
            conn.execute(statement)  # type: ignore[arg-type]
    return time.perf_counter() - began


def main(argv: Sequence[str] | None = None) -> int:
    """Fill, time the DROP and the DELETE, print figures; exit 1 when a check fails."""
    options = parse_hosts_options(
        argv,
        description="nginx-fleet retention benchmark",
        what="hosts whose day is written",
        quick=20,
        default=1000,
    )
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-retention-") as tmp_name,
        temporary_database() as database,
    ):
        env = cp.backend_env(database=database, data_dir=Path(tmp_name), base=os.environ)
        cp.migrate(env=env)
        with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
            # Hosts the rows refer to (the partitions check the foreign key).
            conn.execute(
                "INSERT INTO hosts (id, hostname, agent_id, labels, token_hash, enrolled_at) "
                "SELECT h, 'bench-' || h, 'agent-' || h, '{}'::jsonb, md5(h::text), now() "
                "FROM generate_series(1, %s) AS h",
                (options.hosts,),
            )
            conn.execute(
                f"CREATE TABLE {PARTITION} PARTITION OF samples "
                "FOR VALUES FROM ('2026-01-01 00:00:00+00') TO ('2026-01-02 00:00:00+00')"
            )
            conn.execute("CREATE TABLE samples_plain (LIKE samples INCLUDING ALL)")
            fill_s, written, seal_s = fill(conn, PARTITION, options.hosts)
            fill_s += fill(conn, "samples_plain", options.hosts)[0]
            rows = conn.execute(f"SELECT count(*) FROM {PARTITION}").fetchone()[0]  # noqa: S608
            plain_rows = conn.execute("SELECT count(*) FROM samples_plain").fetchone()[0]
            size = conn.execute(f"SELECT pg_total_relation_size('{PARTITION}')").fetchone()[0]
            detach_s = timed(
                conn,
                [
                    "SET LOCAL lock_timeout = '2s'",
                    f"ALTER TABLE samples DETACH PARTITION {PARTITION}",
                ],
            )
            key = conn.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
                (PARTITION,),
            ).fetchone()
            assert key is not None, "the partition has no foreign key to hosts"
            key_s = timed(conn, [f'ALTER TABLE {PARTITION} DROP CONSTRAINT "{key[0]}"'])
            drop_s = timed(conn, [f"DROP TABLE {PARTITION}"])
            delete_s = timed(
                conn, ["DELETE FROM samples_plain WHERE ts < '2026-01-02 00:00:00+00'"]
            )
            left = conn.execute("SELECT count(*) FROM samples_plain").fetchone()[0]
            gone = conn.execute(f"SELECT to_regclass('{PARTITION}') IS NULL").fetchone()[0]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"nginx-fleet retention benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"setup: a day of 10 s samples of {options.hosts} hosts = {rows} rows "
        f"({size / 1e6:.0f} MB with indexes, sealed) in partition {PARTITION}, and the same "
        f"{plain_rows} rows in a plain table; filled in {fill_s:.1f} s "
        f"(a day at 10,000 hosts is {10_000 * SAMPLES_PER_DAY:,} rows)"
    )
    print(
        f"sealing the partition (REINDEX TABLE CONCURRENTLY): {seal_s:.1f} s, "
        f"{written / 1e6:.0f} MB as written -> {size / 1e6:.0f} MB"
    )
    total_s = detach_s + key_s + drop_s
    print(f"DETACH of the day's partition (samples locked)     {ms(detach_s)}")
    print(f"its foreign key dropped (hosts locked)             {ms(key_s)}")
    print(f"DROP TABLE of the detached table (no shared lock)  {ms(drop_s)}")
    print(f"retention of the day, all three steps              {ms(total_s)}")
    print(f"DELETE of the same rows (baseline)                 {ms(delete_s)}")
    print(
        f"ratio DELETE/all three steps: {delete_s / total_s:.0f}x; "
        f"DELETE/DETACH: {delete_s / detach_s:.0f}x"
    )
    print(f"target all three steps < {ms(TARGET_DROP_S)}: {verdict(total_s < TARGET_DROP_S)}")
    ok = rows == plain_rows == options.hosts * SAMPLES_PER_DAY and left == 0 and gone
    print(f"check: both sides held {rows} rows, both emptied: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
