"""Agent latency during a sign-in storm: ping and push before and during hundreds of wrong logins.

A real API process (one uvicorn worker, PostgreSQL, Redis) and one enrolled host. The host's
pings and one-sample pushes are timed on their own, then again while a separate process sends
wrong sign-ins with distinct usernames, `--concurrency` at a time, with per-address and overall
limits lifted so that every attempt the server accepts costs an argon2 check (an attacker with
many addresses). A flood of GET /health at the same concurrency is the control: what any HTTP
flood costs the agents on this machine. Printed: p50/p99 of each phase, the ratios, the storm's
replies by status and the API's resident memory (peak).
Run: .venv/bin/python bench/login_storm.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from harness import control_plane as cp
from harness.pgdb import temporary_database
from harness.proc_stats import mib, peak_rss_bytes, rss_bytes
from harness.processes import raise_sigterm_as_exit
from harness.samples import SampleFactory, push_body
from harness.stats import Timings
from harness.wrk_load import HostCredentials

BENCH = Path(__file__).resolve().parent
# Lifted so that the storm reaches the password checks; the defaults would cut it off sooner.
NO_ADDRESS_LIMITS = {
    "NGINX_FLEET_LOGIN_MAX_FAILURES_PER_ADDRESS": "1000000",
    "NGINX_FLEET_LOGIN_MAX_FAILURES_OVERALL": "1000000",
}


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    requests: int
    concurrency: int


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick times fewer requests."""
    parser = argparse.ArgumentParser(description="nginx-fleet login storm benchmark (loopback)")
    parser.add_argument("--quick", action="store_true", help="fewer timed requests")
    parser.add_argument("--requests", type=int, help="timed agent requests per phase (200)")
    parser.add_argument("--concurrency", type=int, default=40, help="parallel wrong logins")
    args = parser.parse_args(argv)
    requests = args.requests or (40 if args.quick else 200)
    return Options(requests=requests, concurrency=args.concurrency)


async def _storm(url: str, kind: str, concurrency: int, stop: asyncio.Event) -> Counter[str]:
    """Wrong sign-ins with distinct usernames (or GET /health for the control), `concurrency`
    at a time, until stop is set."""
    statuses: Counter[str] = Counter()
    numbers = itertools.count()
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def attacker() -> None:
            while not stop.is_set():
                body = {"username": f"storm-{next(numbers)}", "password": "wrong-password"}
                try:
                    if kind == "health":
                        reply = await client.get(f"{cp.API}/health")
                    else:
                        reply = await client.post(f"{cp.API}/auth/login", json=body)
                    statuses[str(reply.status_code)] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1
                if sum(statuses.values()) == 1:
                    print("started", flush=True)

        await asyncio.gather(*(attacker() for _ in range(concurrency)))
    return statuses


async def storm_until_stdin_ends(url: str, kind: str, concurrency: int) -> None:
    """The storm process: runs until its stdin closes, then prints replies by status as JSON."""
    stop = asyncio.Event()
    storm = asyncio.create_task(_storm(url, kind, concurrency, stop))
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    stop.set()
    print(json.dumps(await storm), flush=True)


@contextlib.contextmanager
def storm_process(url: str, kind: str, concurrency: int) -> Iterator[subprocess.Popen[str]]:
    """The storm in its own process (its CPU is not ours); stopped by PID on the way out."""
    script = str(Path(__file__).resolve())
    argv = [sys.executable, script, "--storm-child", url, kind, str(concurrency)]
    process = subprocess.Popen(
        argv, cwd=BENCH, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def time_agent(
    client: httpx.Client, host: HostCredentials, factory: SampleFactory, seqs: Iterator[int], n: int
) -> tuple[list[float], list[float]]:
    """Durations of `n` pings and `n` one-sample pushes, interleaved."""
    pings: list[float] = []
    pushes: list[float] = []
    for _ in range(n):
        began = time.perf_counter()
        client.post(f"{cp.API}/agent/ping").raise_for_status()
        pings.append(time.perf_counter() - began)
        sample = factory.sample(seq=next(seqs), moment=datetime.now(UTC))
        body = push_body(agent_id=host.agent_id, hostname=host.hostname, samples=[sample])
        began = time.perf_counter()
        client.post(f"{cp.API}/agent/push", json=body).raise_for_status()
        pushes.append(time.perf_counter() - began)
    return pings, pushes


@dataclass(frozen=True)
class Phase:
    """Timings of one phase."""

    ping: Timings
    push: Timings


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures (a failed agent request stops it with an error)."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-storm-") as tmp_name,
        temporary_database() as database,
    ):
        tmp = Path(tmp_name)
        env = cp.backend_env(database=database, data_dir=tmp / "data", base=os.environ)
        env.update(NO_ADDRESS_LIMITS)
        cp.migrate(env=env)
        token = cp.create_enrollment_token(env=env, max_uses=1)
        with cp.running_api(env=env, workers=1, log_dir=tmp) as api:
            host = cp.enroll_hosts(api.base_url, enrollment_token=token, count=1)[0]
            factory = SampleFactory(rng=random.Random(1))
            seqs = itertools.count(1)
            headers = {"Authorization": f"Bearer {host.host_token}"}
            with httpx.Client(base_url=api.base_url, headers=headers, timeout=120) as client:
                time_agent(client, host, factory, seqs, 10)  # warm-up
                rss_before = rss_bytes(api.process.pid)
                before = time_agent(client, host, factory, seqs, options.requests)
                baseline = Phase(Timings.of(before[0]), Timings.of(before[1]))
                flood, _ = timed_during(
                    api.base_url, "health", options, client, host, factory, seqs
                )
                during, statuses = timed_during(
                    api.base_url, "login", options, client, host, factory, seqs
                )
                peak_rss = peak_rss_bytes(api.process.pid)
    print_report(options, baseline, flood, during, statuses, rss_before, peak_rss)
    return 0


def timed_during(
    url: str,
    kind: str,
    options: Options,
    client: httpx.Client,
    host: HostCredentials,
    factory: SampleFactory,
    seqs: Iterator[int],
) -> tuple[Phase, dict[str, int]]:
    """The agent's timings while a storm of `kind` runs, and the storm's replies by status."""
    with storm_process(url, kind, options.concurrency) as storm:
        assert storm.stdout is not None and storm.stdin is not None
        if storm.stdout.readline().strip() != "started":
            raise RuntimeError("the storm process did not start")
        time.sleep(1)  # every queue full
        pings, pushes = time_agent(client, host, factory, seqs, options.requests)
        storm.stdin.close()
        statuses: dict[str, int] = json.loads(storm.stdout.read() or "{}")
    return Phase(Timings.of(pings), Timings.of(pushes)), statuses


def _ratio(during: float, baseline: float) -> str:
    return f"{during / baseline:.1f}x" if baseline > 0 else "n/a"


def print_report(
    options: Options,
    baseline: Phase,
    flood: Phase,
    during: Phase,
    statuses: dict[str, int],
    rss_before: int,
    peak_rss: int,
) -> None:
    """Print both phases, their ratios, the storm's replies and the API's memory."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"login storm benchmark, {when}: {options.concurrency} parallel wrong logins")
    for name in ("ping", "push"):
        before: Timings = getattr(baseline, name)
        control: Timings = getattr(flood, name)
        storm: Timings = getattr(during, name)
        print(f"agent {name} alone:                 {before.line()}")
        print(f"agent {name} during a /health flood: {control.line()}")
        print(f"agent {name} during the login storm: {storm.line()}")
        print(
            f"ratio {name} storm/baseline: p50 {_ratio(storm.median_s, before.median_s)}  "
            f"p99 {_ratio(storm.p99_s, before.p99_s)};  storm/flood: p50 "
            f"{_ratio(storm.median_s, control.median_s)}  p99 {_ratio(storm.p99_s, control.p99_s)}"
        )
    print(f"storm replies by status: {json.dumps(statuses, sort_keys=True)}")
    print(f"API resident memory: {mib(rss_before)} before, peak {mib(peak_rss)}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--storm-child":
        asyncio.run(storm_until_stdin_ends(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        sys.exit(0)
    sys.exit(main())
