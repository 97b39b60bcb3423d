"""Ingest throughput: POST /agent/push against the authenticated no-op POST /agent/ping.

Starts the real API (uvicorn, PostgreSQL, Redis) on a fresh database, enrols hosts through the
real enrol endpoint, drives both endpoints with wrk on loopback (hosts in turn, a new seq per
push) and checks that the stored samples match the 2xx replies.
Run: .venv/bin/python bench/ingest.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg

from harness import control_plane as cp
from harness.machine import busy_cpu_seconds, core_count
from harness.pgdb import libpq_dsn, temporary_database
from harness.proc_stats import cpu_times
from harness.processes import raise_sigterm_as_exit
from harness.samples import SampleFactory, lua_push_template
from harness.stats import ms, verdict
from harness.wrk_load import (
    HostCredentials,
    LoadResult,
    epoch_hours_ago,
    run_agent_load,
    write_hosts_file,
)

TARGET_PUSHES_PER_S = 1000.0
TARGET_SHARE_OF_PING = 0.40


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    quick: bool
    hosts: int
    duration_s: int
    warmup_s: int
    connections: int
    workers: int


@dataclass(frozen=True)
class Measured:
    """One load run with the CPU the API workers and the whole machine used meanwhile."""

    load: LoadResult
    api_cpu_s: float
    db_cpu_s: float
    db_sessions_opened: int
    machine_cpu_s: float

    @property
    def others_cpu_s(self) -> float:
        """CPU used on the machine by neither the API, its database sessions nor wrk."""
        ours = self.api_cpu_s + self.db_cpu_s + self.load.generator_cpu_s
        return max(0.0, self.machine_cpu_s - ours)

    def row(self, label: str) -> str:
        """One line of the results table."""
        load = self.load
        non_2xx = load.responses - load.ok
        seconds = load.duration_s
        return (
            f"{label:<18}{load.ok_per_s:>9.1f}{ms(load.latency_p50_s):>11}"
            f"{ms(load.latency_p90_s):>11}{ms(load.latency_p99_s):>11}{ms(load.latency_max_s):>12}"
            f"{non_2xx:>8}{self.api_cpu_s / seconds:>6.2f}{self.db_cpu_s / seconds:>6.2f}"
            f"{load.generator_cpu_s / seconds:>6.2f}{self.others_cpu_s / seconds:>8.2f}"
        )


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick shortens the runs."""
    parser = argparse.ArgumentParser(description="nginx-fleet ingest benchmark (loopback only)")
    parser.add_argument("--quick", action="store_true", help="5 s runs instead of 15 s")
    parser.add_argument("--hosts", type=int, default=500, help="hosts to enrol (500)")
    parser.add_argument("--duration", type=int, help="seconds per measured run (15, quick 5)")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections (32)")
    # One worker per core: request handling is CPU-bound Python; PostgreSQL shares the cores.
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers (2)")
    args = parser.parse_args(argv)
    duration = args.duration if args.duration is not None else (5 if args.quick else 15)
    checked = {"hosts": args.hosts, "connections": args.connections, "workers": args.workers}
    for name, value in {**checked, "duration": duration}.items():
        if value < 1:
            parser.error(f"--{name} must be >= 1, got {value}")
    return Options(
        quick=args.quick,
        hosts=args.hosts,
        duration_s=duration,
        warmup_s=1 if args.quick else 3,
        connections=args.connections,
        workers=args.workers,
    )


def first_pushes(base_url: str, hosts: list[HostCredentials]) -> list[HostCredentials]:
    """Each host's first push (seq 1 with facts and config), as a freshly started agent sends."""
    factory = SampleFactory(rng=random.Random(1))
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for host in hosts:
            cp.push(client, host, [factory.sample(seq=1, moment=datetime.now(UTC))], first=True)
    return [dataclasses.replace(host, first_seq=2) for host in hosts]


def stored_samples(database: str) -> int:
    """Rows in the samples table."""
    with psycopg.connect(libpq_dsn(database)) as conn:
        row = conn.execute("SELECT count(*) FROM samples").fetchone()
        assert row is not None
        return int(row[0])


def settled_sample_count(database: str, timeout_s: float = 20.0) -> int:
    """The sample count once requests cut off by wrk's deadline have been finished by the API."""
    deadline = time.monotonic() + timeout_s
    previous = stored_samples(database)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        current = stored_samples(database)
        if current == previous:
            return current
        previous = current
    raise RuntimeError(f"sample count still changing {timeout_s:.0f} s after the run")


def api_cpu_seconds(api: cp.ControlPlane) -> float:
    """CPU seconds used so far by the API master and its workers."""
    pids = [api.process.pid, *cp.worker_pids(api.process.pid)]
    return sum(cpu_times(pid).total_s for pid in pids)


def database_backend_cpu(database: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving `database`, ours excluded."""
    with psycopg.connect(libpq_dsn(database)) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchall()
    usage: dict[int, float] = {}
    for (pid,) in rows:
        with contextlib.suppress(FileNotFoundError):  # a session that just ended
            usage[int(pid)] = cpu_times(int(pid)).own_s
    return usage


def sessions_opened(database: str) -> int:
    """Sessions ever established to `database` (connection churn shows up here)."""
    with psycopg.connect(libpq_dsn(database)) as conn:
        row = conn.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = %s", (database,)
        ).fetchone()
        assert row is not None
        return int(row[0])


def measure(api: cp.ControlPlane, database: str, run: Callable[[], LoadResult]) -> Measured:
    """Run one load and note the CPU the API, its database sessions and the machine used."""
    api_before, machine_before = api_cpu_seconds(api), busy_cpu_seconds()
    db_before, sessions_before = database_backend_cpu(database), sessions_opened(database)
    load = run()
    machine_after, api_after = busy_cpu_seconds(), api_cpu_seconds(api)
    db_after = database_backend_cpu(database)
    # Our own two probe connections in between are not the API's.
    db_sessions = sessions_opened(database) - sessions_before - 2
    # Sessions opened during the run count from zero; pools keep most of them for the whole run.
    db_cpu = sum(cpu - db_before.get(pid, 0.0) for pid, cpu in db_after.items())
    return Measured(
        load=load,
        api_cpu_s=api_after - api_before,
        db_cpu_s=db_cpu,
        db_sessions_opened=db_sessions,
        machine_cpu_s=machine_after - machine_before,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print its figures; exit 1 when the stored-sample check fails."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-ingest-") as tmp_name,
        temporary_database() as database,
    ):
        tmp = Path(tmp_name)
        env = cp.backend_env(database=database, data_dir=tmp / "data", base=os.environ)
        cp.migrate(env=env)
        token = cp.create_enrollment_token(env=env, max_uses=options.hosts)
        with cp.running_api(env=env, workers=options.workers, log_dir=tmp) as api:
            hosts = cp.enroll_hosts(api.base_url, enrollment_token=token, count=options.hosts)
            hosts = first_pushes(api.base_url, hosts)
            write_hosts_file(tmp / "hosts.tsv", hosts)
            (tmp / "push-body.json").write_text(lua_push_template())
            load = functools.partial(
                run_agent_load,
                base_url=api.base_url,
                hosts_file=tmp / "hosts.tsv",
                template_file=tmp / "push-body.json",
                results_file=tmp / "wrk.json",
                # Sample clocks start 40 s back at 10 s a sample, so pushes carry current
                # samples as live agents do: a sample over a minute old is a late replay that
                # queues a rollup of its own (LATE_SAMPLE_AGE), which live agents never cause.
                # 500 hosts keep even 2,000 pushes/s within the 15 min future bound.
                base_epoch=epoch_hours_ago(40 / 3600),
                connections=options.connections,
            )
            load(mode="ping", duration_s=options.warmup_s)
            ping = measure(api, database, lambda: load(mode="ping", duration_s=options.duration_s))
            before = settled_sample_count(database)
            push = measure(api, database, lambda: load(mode="push", duration_s=options.duration_s))
            stored = settled_sample_count(database) - before
    print_report(options, ping=ping, push=push, stored=stored)
    return 0 if stored_matches(push.load, stored) else 1


def stored_matches(push: LoadResult, stored: int) -> bool:
    """No sample lost, none counted twice, every push answered 2xx with one sample accepted."""
    cut_off = push.in_flight_at_end
    return (
        push.responses == push.ok
        and push.accepted == push.ok
        and push.duplicates == 0
        and push.ok <= stored <= push.ok + cut_off
    )


def print_report(options: Options, *, ping: Measured, push: Measured, stored: int) -> None:
    """Print the figures, the ratio, the targets and the stored-sample check."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"nginx-fleet ingest benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"setup: {options.hosts} hosts enrolled through POST /api/v1/agent/enroll; uvicorn "
        f"{options.workers} workers; PostgreSQL + Redis on 127.0.0.1; wrk 1 thread, "
        f"{options.connections} connections, {options.duration_s} s per run; {core_count()} cores"
    )
    print(
        f"{'endpoint':<18}{'2xx/s':>9}{'p50':>11}{'p90':>11}{'p99':>11}{'max':>12}"
        f"{'non-2xx':>8}{'API':>6}{'DB':>6}{'wrk':>6}{'others':>8}  (CPU, cores)"
    )
    print(ping.row("ping (no-op)"))
    print(push.row("push (1 sample)"))
    rate, share = push.load.ok_per_s, push.load.ok_per_s / ping.load.ok_per_s
    print(f"ratio push/ping: {share:.1%}")
    print(f"target >= {TARGET_PUSHES_PER_S:.0f} pushes/s: {verdict(rate >= TARGET_PUSHES_PER_S)}")
    print(f"target >= {TARGET_SHARE_OF_PING:.0%} of ping: {verdict(share >= TARGET_SHARE_OF_PING)}")
    for measured in (ping, push):
        print(
            f"{measured.load.mode}: {measured.db_sessions_opened} new PostgreSQL sessions opened "
            f"by the API during the run (DB CPU counts pooled sessions only)"
        )
        if measured.load.first_failure:
            print(f"first non-2xx reply ({measured.load.mode}): {measured.load.first_failure}")
    load = push.load
    cut_off = stored - load.ok
    print(
        f"check stored samples vs 2xx push replies: stored {stored}, 2xx {load.ok}, "
        f"accepted {load.accepted}, duplicates {load.duplicates}, statuses {load.statuses}"
    )
    if stored_matches(load, stored):
        extra = (
            f" (+{cut_off} of the {load.in_flight_at_end} requests cut off in flight at the "
            "deadline, stored by the API after wrk stopped reading)"
            if cut_off
            else ""
        )
        print(f"check: OK, every 2xx reply stored exactly once{extra}")
    else:
        print("check: FAILED, stored samples do not match the 2xx replies", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
