"""Series read latency: GET /hosts/{id}/series?range=24h over a day of 10 s samples.

Fills one host with 24 h of samples (8,640 rows) and other hosts with the same, all through
the real push endpoint, then times the series endpoint with a logged-in session against two
baselines measured in the same run: GET /health (the API's fixed cost) and an equivalent
aggregate SQL query alone (the database's cost). Run: .venv/bin/python bench/series.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

from harness import control_plane as cp
from harness.pgdb import libpq_dsn, temporary_database
from harness.processes import raise_sigterm_as_exit
from harness.samples import SampleFactory
from harness.stats import Timings, ms, verdict
from harness.wrk_load import HostCredentials

TARGET_MEDIAN_S = 0.050
SAMPLES_PER_DAY = 8640
PUSH_BATCH = 500  # the protocol's most samples per push
STEP_24H_S = 180  # 24 h in at most 500 buckets of a readable width

# Our own statement of what the endpoint computes, to time the database alone.
SERIES_SQL = """
SELECT floor(extract(epoch FROM ts) / %(step)s) AS bucket,
       max(active), avg(reading), avg(writing), avg(waiting), avg(req_per_s),
       avg(accepts_per_s), max(drops_per_s), avg(cpu_pct), avg(mem_used_bytes),
       avg(mem_total_bytes), avg(load1), avg(fds_open), avg(fds_limit), avg(workers)
FROM samples
WHERE host_id = %(host_id)s AND ts >= %(start)s AND ts < %(end)s
GROUP BY bucket ORDER BY bucket
"""


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    quick: bool
    other_hosts: int
    requests: int
    workers: int


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick uses fewer other hosts and requests."""
    parser = argparse.ArgumentParser(description="nginx-fleet series benchmark (loopback only)")
    parser.add_argument("--quick", action="store_true", help="3 other hosts, 50 requests")
    parser.add_argument(
        "--other-hosts", type=int, help="hosts with a day of data besides the one read (20)"
    )
    parser.add_argument("--requests", type=int, help="timed requests per endpoint (200)")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers (2)")
    args = parser.parse_args(argv)
    other_hosts = args.other_hosts if args.other_hosts is not None else (3 if args.quick else 20)
    requests = args.requests if args.requests is not None else (50 if args.quick else 200)
    if other_hosts < 0:
        parser.error(f"--other-hosts must be >= 0, got {other_hosts}")
    if requests < 1 or args.workers < 1:
        parser.error("--requests and --workers must be >= 1")
    return Options(
        quick=args.quick, other_hosts=other_hosts, requests=requests, workers=args.workers
    )


def fill_day(base_url: str, hosts: list[HostCredentials], *, end: datetime) -> float:
    """Push 24 h of 10 s samples for every host in batches of 500; return the seconds it took."""

    def fill(index_host: tuple[int, HostCredentials]) -> None:
        index, host = index_host
        factory = SampleFactory(rng=random.Random(index), peak_req_per_s=200.0 + 50 * index)
        samples = factory.day(end=end)
        with httpx.Client(base_url=base_url, timeout=60) as client:
            for start in range(0, len(samples), PUSH_BATCH):
                batch = samples[start : start + PUSH_BATCH]
                reply = cp.push(client, host, batch, first=start == 0)
                if reply["accepted"] != len(batch):
                    raise RuntimeError(f"{host.hostname}: push accepted {reply}")

    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(fill, enumerate(hosts)))
    return time.perf_counter() - began


def host_rows(database: str) -> dict[int, int]:
    """Stored samples per host id."""
    with psycopg.connect(libpq_dsn(database)) as conn:
        rows = conn.execute("SELECT host_id, count(*) FROM samples GROUP BY host_id").fetchall()
    return {int(host_id): int(count) for host_id, count in rows}


def timed(call: Callable[[], None]) -> float:
    """Seconds one call took."""
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures; exit 1 when the series reply is wrong."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-series-") as tmp_name,
        temporary_database() as database,
    ):
        tmp = Path(tmp_name)
        env = cp.backend_env(database=database, data_dir=tmp / "data", base=os.environ)
        cp.migrate(env=env)
        host_count = 1 + options.other_hosts
        token = cp.create_enrollment_token(env=env, max_uses=host_count)
        with cp.running_api(env=env, workers=options.workers, log_dir=tmp) as api:
            hosts = cp.enroll_hosts(api.base_url, enrollment_token=token, count=host_count)
            end = datetime.now(UTC).replace(microsecond=0)
            fill_s = fill_day(api.base_url, hosts, end=end)
            rows = host_rows(database)
            host_id = hosts[0].host_id
            with contextlib.closing(cp.logged_in_client(api.base_url)) as client:
                result = time_endpoints(
                    client, database, host_id=host_id, end=end, n=options.requests
                )
    ok = print_report(options, fill_s=fill_s, rows=rows, host_id=host_id, result=result)
    return 0 if ok else 1


@dataclass(frozen=True)
class SeriesResult:
    """Timings of the series endpoint and its baselines, and the last series reply."""

    series: Timings
    health: Timings
    sql: Timings
    reply: dict[str, Any]


def time_endpoints(
    client: httpx.Client, database: str, *, host_id: int, end: datetime, n: int
) -> SeriesResult:
    """Time series, health and the bare SQL `n` times each, interleaved so drift hits all."""
    series_url = f"{cp.API}/hosts/{host_id}/series"
    params = {
        "host_id": host_id,
        "step": STEP_24H_S,
        "start": end - timedelta(hours=24),
        "end": end + timedelta(seconds=1),
    }
    replies: list[dict[str, Any]] = []

    def get_series() -> None:
        reply = client.get(series_url, params={"range": "24h"})
        reply.raise_for_status()
        replies.append(reply.json())

    def get_health() -> None:
        client.get(f"{cp.API}/health").raise_for_status()

    with psycopg.connect(libpq_dsn(database)) as conn:

        def run_sql() -> None:
            conn.execute(SERIES_SQL, params).fetchall()

        calls = {"series": get_series, "health": get_health, "sql": run_sql}
        for call in calls.values():  # warm-up: connection pools, prepared plans, caches
            for _ in range(5):
                call()
        durations: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(n):
            for name, call in calls.items():
                durations[name].append(timed(call))
    return SeriesResult(
        series=Timings.of(durations["series"]),
        health=Timings.of(durations["health"]),
        sql=Timings.of(durations["sql"]),
        reply=replies[-1],
    )


def print_report(
    options: Options, *, fill_s: float, rows: dict[int, int], host_id: int, result: SeriesResult
) -> bool:
    """Print figures, ratios, the target and the reply check; True when the reply is sane."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    total = sum(rows.values())
    print(f"nginx-fleet series benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"setup: host {host_id} with {rows.get(host_id, 0)} samples (24 h at 10 s) among "
        f"{len(rows)} hosts, {total} rows in samples; uvicorn {options.workers} workers; "
        f"filled through POST /agent/push in batches of {PUSH_BATCH} in {fill_s:.1f} s "
        f"({total / fill_s:.0f} samples/s)"
    )
    print(f"GET /hosts/{host_id}/series?range=24h  {result.series.line()}")
    print(f"GET /health (API baseline)          {result.health.line()}")
    print(f"series SQL alone (DB baseline)      {result.sql.line()}")
    series_median = result.series.median_s
    print(
        f"ratio series/health median: {series_median / result.health.median_s:.1f}x; "
        f"series/SQL median: {series_median / result.sql.median_s:.1f}x; "
        f"API time above the SQL: {ms(series_median - result.sql.median_s)}"
    )
    print(f"target median < {ms(TARGET_MEDIAN_S)}: {verdict(series_median < TARGET_MEDIAN_S)}")
    points = result.reply.get("points", [])
    step = result.reply.get("step_s")
    # 24 h at 180 s is 480 buckets, plus one when the range does not start on a bucket edge.
    sane = rows.get(host_id) == SAMPLES_PER_DAY and 470 <= len(points) <= 500
    print(
        f"check: reply has {len(points)} points at step_s={step}, host has "
        f"{rows.get(host_id)} rows: {'OK' if sane else 'FAILED'}"
    )
    return sane


if __name__ == "__main__":
    sys.exit(main())
