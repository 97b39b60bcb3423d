"""Worker CPU of a periodic re-analysis round of steady hosts: marked current vs the full path.

A throw-away PostgreSQL database with N hosts (300 by default), each with the fleet benchmarks'
config dump, facts, the last 3 minutes of 10 s samples and access-log figures, analysed once.
Then, in the same process, rounds alternate between:
- the round as it runs now: same snapshot, inputs and engine, so each host's latest analysis
  is marked current (the engine does not run, the findings rows stay);
- the full path (the baseline, what every round did before): the analyzer's ENGINE_VERSION is
  raised first, as a deploy of a new engine does, so each host's analysis is re-run and its
  findings rewritten in place.
Each host goes through the body of the configs.analyze_host task (release the claim, find the
current snapshot, analyse it). Prints the CPU of this process (the worker) and of its
PostgreSQL session per host, the ratio full/current, and the cores a 10,000-host round every
300 s would take at these figures. Checks every outcome and that both paths store the same
scores. Run: .venv/bin/python bench/reanalysis_round.py [--quick] [--hosts N] [--rounds N]
[--config bench/analysis/fleet300.conf]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from harness import control_plane as cp
from harness.cpu_groups import CpuGroup, database_session_pids
from harness.pgdb import copy_rows, libpq_dsn, temporary_database
from harness.processes import raise_sigterm_as_exit
from harness.samples import CONFIG_DUMP, FACTS

SAMPLES_PER_HOST = 18  # 3 minutes at 10 s: well inside the analysis's one-hour window
FLEET_HOSTS = 10_000
ROUND_S = 300  # REANALYZE_INTERVAL_S


def parse_options(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description="nginx-fleet re-analysis round benchmark")
    parser.add_argument("--quick", action="store_true", help="30 hosts, 1 round of each")
    parser.add_argument("--hosts", type=int, help="steady hosts in the round (300)")
    parser.add_argument("--rounds", type=int, help="rounds of each path, alternating (3)")
    parser.add_argument(
        "--config",
        type=Path,
        help="an nginx.conf every host runs, as a one-file dump (default: the fleet benchmarks' "
        "42-line dump; bench/analysis/fleet300.conf is a 332-line production-style one)",
    )
    args = parser.parse_args(argv)
    if args.hosts is None:
        args.hosts = 30 if args.quick else 300
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.hosts < 1 or args.rounds < 1:
        parser.error("--hosts and --rounds must be >= 1")
    return args


def config_dump(path: Path | None) -> str:
    """The dump every host runs: the fleet benchmarks' one, or the file at `path` as nginx.conf."""
    if path is None:
        return CONFIG_DUMP
    return f"# configuration file /etc/nginx/nginx.conf:\n{path.read_text()}"


def fill(dsn: str, hosts: int, dump: str, now: datetime) -> None:
    """Steady hosts: a current config snapshot, facts, recent samples and access-log figures."""
    ids = range(1, hosts + 1)
    dump_hash = hashlib.sha256(dump.encode()).hexdigest()
    with psycopg.connect(dsn) as conn:
        copy_rows(
            conn,
            "hosts",
            ("id", "agent_id", "hostname", "labels", "token_hash", "enrolled_at", "last_seen_at",
             "last_seq", "config_hash", "nginx_up", "stub_status_available"),
            [(i, f"agent-{i}", f"web-{i:05d}", "{}", f"{i:064x}", now, now, SAMPLES_PER_HOST,
              dump_hash, True, True) for i in ids],
        )  # fmt: skip
        conn.execute("SELECT setval('hosts_id_seq', %s)", (hosts,))
        copy_rows(
            conn,
            "config_snapshots",
            ("host_id", "hash", "dump", "received_at", "parse_status"),
            [(i, dump_hash, dump, now, "pending") for i in ids],
        )
        copy_rows(
            conn,
            "host_facts",
            ("host_id", "facts", "nginx_version", "cpu_count", "updated_at"),
            [(i, json.dumps(FACTS), FACTS["nginx_version"], FACTS["cpu_count"], now) for i in ids],
        )
        samples, log_rows = [], []
        for host in ids:
            for k in range(SAMPLES_PER_HOST):
                seq = k + 1
                ts = now - timedelta(seconds=10 * (SAMPLES_PER_HOST - k))
                accepts = 10_000 + 500 * seq
                samples.append(
                    (host, seq, ts, True, 2, True, 40, 1, 10, 29, accepts, accepts,
                     accepts * 3, 150.0, 50.0, 0.0, 400, 20000, 120, 65536)
                )  # fmt: skip
                log_rows.append((host, ts, seq, "shop", 1500, 1400, 30, 60, 10, 4, 900, 300))
        copy_rows(
            conn,
            "samples",
            ("host_id", "seq", "ts", "nginx_up", "workers", "stub_status_available", "active",
             "reading", "writing", "waiting", "accepts", "handled", "requests", "req_per_s",
             "accepts_per_s", "drops_per_s", "fds_open", "fds_limit", "worker_fds_max",
             "worker_fds_limit"),
            samples,
        )  # fmt: skip
        copy_rows(
            conn,
            "log_stats",
            ("host_id", "ts", "seq", "site", "requests", "status_2xx", "status_3xx", "status_4xx",
             "status_5xx", "status_499", "cache_hit", "cache_miss"),
            log_rows,
        )  # fmt: skip
        conn.execute("ANALYZE")


@dataclass(frozen=True)
class Round:
    """One round over every host: its outcomes and the CPU it took."""

    outcomes: Counter[str]
    worker_s: float
    postgres_s: float
    wall_s: float


def timed_round(host_ids: Sequence[int], analyse: Callable[[int], str], database: str) -> Round:
    """Run `analyse` on every host; CPU of this process and of the database's sessions."""
    postgres = CpuGroup("postgres", lambda: database_session_pids(database))
    postgres.begin()
    cpu, wall = time.process_time(), time.perf_counter()
    outcomes = Counter(analyse(host_id) for host_id in host_ids)
    worker_s, wall_s = time.process_time() - cpu, time.perf_counter() - wall
    postgres.sample()
    return Round(outcomes, worker_s, postgres.used_s(), wall_s)


def main(argv: Sequence[str] | None = None) -> int:
    """Fill, analyse once, then time the alternating rounds; print figures and checks."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with temporary_database() as name, tempfile.TemporaryDirectory() as data_dir:
        env = cp.backend_env(database=name, data_dir=Path(data_dir), base=os.environ)
        cp.migrate(env=env)
        dump = config_dump(options.config)
        fill(libpq_dsn(name), options.hosts, dump, datetime.now(UTC).replace(microsecond=0))
        os.environ.update(env)
        return measure(options, name, dump.count("\n"))


def measure(options: argparse.Namespace, database: str, lines: int) -> int:
    """The rounds, in this process, on the database the environment names."""
    # Imported here: the app reads DATABASE_URL when first imported.
    from app.configs import analyzer, queueing
    from app.configs.models import ConfigAnalysis
    from app.core.db import SessionLocal, utcnow
    from app.findings.models import Finding
    from sqlalchemy import func, select

    def analyse(host_id: int) -> str:
        """The body of the configs.analyze_host task; the outcome's action."""
        with SessionLocal() as session:
            queueing.release(session=session, host_ids=[host_id])
            session.commit()
            snapshot_id = analyzer.current_snapshot_id(session=session, host_id=host_id)
            assert snapshot_id is not None
            return analyzer.analyze_snapshot(
                session=session, snapshot_id=snapshot_id, now=utcnow()
            ).action

    def scores() -> list[tuple[int, int | None]]:
        with SessionLocal() as session:
            query = select(ConfigAnalysis.host_id, ConfigAnalysis.score).order_by("host_id")
            return [(row.host_id, row.score) for row in session.execute(query)]

    def stored_rows() -> tuple[int, int]:
        with SessionLocal() as session:
            count = select(func.count())
            return (
                session.scalar(count.select_from(ConfigAnalysis)) or 0,
                session.scalar(count.select_from(Finding)) or 0,
            )

    host_ids = list(range(1, options.hosts + 1))
    first = timed_round(host_ids, analyse, database)
    rows_after_first = stored_rows()
    print(f"fleet: {options.hosts} steady hosts, {lines}-line config dump, "
          f"{SAMPLES_PER_HOST} samples each; first analysis {dict(first.outcomes)}, "
          f"{rows_after_first[1]} findings stored")  # fmt: skip
    current: list[Round] = []
    full: list[Round] = []
    same_scores = True
    for _ in range(options.rounds):
        current.append(timed_round(host_ids, analyse, database))
        marked = scores()
        # As a deploy of a new engine does: every host's analysis is re-run in place.
        analyzer.ENGINE_VERSION += 1  # type: ignore[attr-defined]
        full.append(timed_round(host_ids, analyse, database))
        same_scores = same_scores and scores() == marked
    return report(options, current, full, rows_after_first == stored_rows(), same_scores)


def report(
    options: argparse.Namespace,
    current: list[Round],
    full: list[Round],
    same_rows: bool,
    same_scores: bool,
) -> int:
    """Print the figures of both paths, their ratio and the checks; the exit code."""
    hosts: int = options.hosts

    def per_host_ms(rounds: list[Round], part: Callable[[Round], float]) -> float:
        return statistics.median(part(r) for r in rounds) / hosts * 1000

    figures = {}
    print(f"median of {options.rounds} round(s) each, per host:   worker CPU   PostgreSQL CPU"
          "   wall")  # fmt: skip
    for label, rounds in (("full path (baseline)", full), ("marked current", current)):
        worker = per_host_ms(rounds, lambda r: r.worker_s)
        postgres = per_host_ms(rounds, lambda r: r.postgres_s)
        wall = per_host_ms(rounds, lambda r: r.wall_s)
        figures[label] = (worker, postgres)
        print(f"  {label:<22} {worker:12.2f} ms {postgres:13.2f} ms {wall:8.2f} ms")
    (full_worker, full_pg), (cur_worker, cur_pg) = figures.values()
    both = (full_worker + full_pg) / (cur_worker + cur_pg)
    print(f"ratio full/current: worker CPU {full_worker / cur_worker:.1f}x, "
          f"worker + PostgreSQL {both:.1f}x")  # fmt: skip
    # ms of CPU per host -> cores the fleet's round takes.
    cores = FLEET_HOSTS / ROUND_S / 1000
    print(f"{FLEET_HOSTS:,} steady hosts every {ROUND_S} s at these figures: worker "
          f"{full_worker * cores:.2f} cores (full) vs {cur_worker * cores:.2f} cores (current), "
          f"PostgreSQL {full_pg * cores:.2f} vs {cur_pg * cores:.2f}")  # fmt: skip
    checks = {
        "every round of the current path marked every host current": all(
            r.outcomes == Counter(current=hosts) for r in current
        ),
        "every full round replaced every host's analysis in place": all(
            r.outcomes == Counter(replaced=hosts) for r in full
        ),
        "one analysis per host and as many findings as after the first round": same_rows,
        "both paths store the same scores": same_scores,
    }
    for check, ok in checks.items():
        print(f"check: {check}: {'OK' if ok else 'WRONG'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
