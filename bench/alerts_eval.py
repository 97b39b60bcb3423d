"""One alert evaluation cycle over a large fleet, against the floor of reading its latest samples.

Fills a throw-away PostgreSQL database with N hosts (10,000 by default), each with the last
3 minutes of 10 s samples, access-log figures for half of them, TLS certificates in the facts of
a third, and 1% of hosts dropping connections; the shipped default rules notify one channel.
Then times, in the same run and process:
- the floor: reading every host's latest sample (one DISTINCT ON query, all rows fetched);
- the first evaluation (opens the incidents of the dropping hosts, queues their notification);
- steady-state evaluations (the same fleet evaluated again a few seconds later).
Target: an evaluation cycle under 5 s. Run: .venv/bin/python bench/alerts_eval.py [--hosts N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from harness import control_plane as cp
from harness.pgdb import copy_rows, libpq_dsn, temporary_database
from harness.processes import raise_sigterm_as_exit
from harness.stats import verdict

TARGET_S = 5.0
SAMPLES_PER_HOST = 18  # 3 minutes at 10 s: covers the default rules' 2-minute windows
DROPPING_SHARE = 0.01
# Every column of each host's newest sample, all rows fetched into Python.
LATEST_SAMPLES_SQL = "SELECT DISTINCT ON (host_id) * FROM samples ORDER BY host_id, ts DESC"


def parse_options(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description="nginx-fleet alert evaluation benchmark")
    parser.add_argument("--quick", action="store_true", help="1,000 hosts, 2 cycles")
    parser.add_argument("--hosts", type=int, help="hosts in the fleet (10000)")
    parser.add_argument("--cycles", type=int, help="steady-state evaluations (5)")
    args = parser.parse_args(argv)
    if args.hosts is None:
        args.hosts = 1_000 if args.quick else 10_000
    if args.cycles is None:
        args.cycles = 2 if args.quick else 5
    if args.hosts < 10 or args.cycles < 1:
        parser.error("--hosts must be >= 10 and --cycles >= 1")
    return args


def fill(dsn: str, hosts: int, now: datetime) -> int:
    """The fleet's rows; returns how many hosts drop connections."""
    dropping = max(1, int(hosts * DROPPING_SHARE))
    with psycopg.connect(dsn) as conn:
        copy_rows(
            conn,
            "hosts",
            ("id", "agent_id", "hostname", "labels", "token_hash", "enrolled_at", "last_seen_at",
             "nginx_up", "stub_status_available"),
            [
                (i, f"agent-{i}", f"web-{i:05d}", f'{{"env": "{"prod" if i % 3 else "staging"}"}}',
                 f"{i:064x}", now, now - timedelta(seconds=5), True, True)
                for i in range(1, hosts + 1)
            ],
        )  # fmt: skip
        conn.execute("SELECT setval('hosts_id_seq', %s)", (hosts,))
        samples = []
        for host in range(1, hosts + 1):
            drops = 7 if host <= dropping else 0
            for k in range(SAMPLES_PER_HOST):
                seq = k + 1
                ts = now - timedelta(seconds=10 * (SAMPLES_PER_HOST - k))
                accepts = 10_000 + 500 * seq
                samples.append(
                    (host, seq, ts, True, 2, True, 40, 1, 10, 29, accepts, accepts - drops * seq,
                     accepts * 3, 150.0, 50.0, drops / 10, 400, 20000, 120, 65536,
                     3 if drops else 0, 0, 0, 0, 0)
                )  # fmt: skip
        copy_rows(
            conn,
            "samples",
            ("host_id", "seq", "ts", "nginx_up", "workers", "stub_status_available", "active",
             "reading", "writing", "waiting", "accepts", "handled", "requests", "req_per_s",
             "accepts_per_s", "drops_per_s", "fds_open", "fds_limit", "worker_fds_max",
             "listen_overflows", "errlog_wc_not_enough", "errlog_nofile", "errlog_severe",
             "listen_drops", "net_rx_bytes"),
            samples,
        )  # fmt: skip
        log_rows = []
        for host in range(1, hosts + 1, 2):
            for k in range(SAMPLES_PER_HOST):
                ts = now - timedelta(seconds=10 * (SAMPLES_PER_HOST - k))
                log_rows.append((host, ts, k + 1, "shop", 1500, 1400, 30, 60, 10, 4, 900, 300))
        copy_rows(
            conn,
            "log_stats",
            ("host_id", "ts", "seq", "site", "requests", "status_2xx", "status_3xx", "status_4xx",
             "status_5xx", "status_499", "cache_hit", "cache_miss"),
            log_rows,
        )  # fmt: skip
        copy_rows(
            conn,
            "access_log_recent",
            ("host_id", "computed_at", "requests", "cache_hit_ratio", "request_time_p95_s",
             "share_5xx"),
            [(h, now, 90_000, 0.75, 0.120, 0.007) for h in range(1, hosts + 1, 2)],
        )  # fmt: skip
        expiry = (now + timedelta(days=60)).isoformat()
        certificate = {"path": "/etc/ssl/site.pem", "not_after": expiry}
        facts = json.dumps({"tls_certificates": [certificate]})
        copy_rows(
            conn,
            "host_facts",
            ("host_id", "facts", "updated_at"),
            [(h, facts, now) for h in range(1, hosts + 1, 3)],
        )
        conn.execute(
            "INSERT INTO alert_channels (name, kind, enabled, settings, secret_names, created_at,"
            " updated_at) VALUES ('ops', 'webhook', true, '{\"url\": \"http://127.0.0.1:9/\"}',"
            " '[]', now(), now())"
        )
        conn.execute("UPDATE alert_rules SET channel_ids = '[1]'")
        conn.execute("ANALYZE")
    return dropping


def main(argv: Sequence[str] | None = None) -> int:
    """Fill, then time the floor and the evaluations; print figures and the verdict."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with temporary_database() as name, tempfile.TemporaryDirectory() as data_dir:
        env = cp.backend_env(database=name, data_dir=Path(data_dir), base=os.environ)
        cp.migrate(env=env)
        now = datetime.now(UTC).replace(microsecond=0)
        started = time.perf_counter()
        dropping = fill(libpq_dsn(name), options.hosts, now)
        print(f"fleet: {options.hosts} hosts x {SAMPLES_PER_HOST} samples, "
              f"{dropping} dropping; loaded in {time.perf_counter() - started:.1f} s")  # fmt: skip
        os.environ.update(env)
        return measure(options, now, dropping)


def measure(options: argparse.Namespace, now: datetime, dropping: int) -> int:
    """The timings, in this process, on the database the environment names."""
    from app.alerts import engine
    from app.alerts.models import Incident
    from app.core.db import SessionLocal
    from sqlalchemy import func, select, text

    LATEST_SAMPLES = text(LATEST_SAMPLES_SQL)

    def floor() -> float:
        with SessionLocal() as session:
            t0 = time.perf_counter()
            rows = session.execute(LATEST_SAMPLES).all()
            elapsed = time.perf_counter() - t0
        assert len(rows) == options.hosts, len(rows)
        return elapsed

    floors = [floor() for _ in range(3)]
    with SessionLocal() as session:
        first = engine.evaluate(session=session, now=now)
        opened = session.scalar(select(func.count()).select_from(Incident))
    steady = []
    for cycle in range(options.cycles):
        with SessionLocal() as session:
            outcome = engine.evaluate(session=session, now=now + timedelta(seconds=cycle + 1))
        steady.append(outcome.seconds)
    floors += [floor() for _ in range(2)]
    floor_s = statistics.median(floors)
    steady_s = statistics.median(steady)
    print(f"floor: read every host's latest sample: median {floor_s * 1000:.0f} ms")
    queued = len(first.delivery_ids)
    print(f"first evaluation: {first.seconds:.2f} s ({first.rules} rules, {first.pairs} pairs, "
          f"{first.fired} incidents opened, {queued} deliveries queued)")  # fmt: skip
    print(f"steady evaluation: median {steady_s:.2f} s over {options.cycles} cycles "
          f"(max {max(steady):.2f} s)")  # fmt: skip
    print(f"ratio evaluation/floor: first {first.seconds / floor_s:.1f}x, "
          f"steady {steady_s / floor_s:.1f}x")  # fmt: skip
    correct = opened == dropping and len(first.delivery_ids) == 1
    print(f"check: {opened} incidents for {dropping} dropping hosts, one grouped delivery: "
          f"{'OK' if correct else 'WRONG'}")  # fmt: skip
    worst = max(first.seconds, max(steady))
    print(f"target: a cycle under {TARGET_S:.0f} s: {verdict(worst < TARGET_S)} "
          f"(slowest {worst:.2f} s)")  # fmt: skip
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
