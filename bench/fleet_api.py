"""Fleet API latency at 10,000 hosts: pages sorted and filtered, the summary and top findings.

Writes a fleet straight into a temporary database (hosts with labels and newest figures, three
analyses per host with their findings, recent access-log figures, all by generate_series), starts
the real API (uvicorn, 2 workers) and times, interleaved, GET /api/v1/fleet pages sorted by several
columns (read off a sort index or sorted whole), filtered by label, status and hostname, a deep
page, a page of 500, GET /fleet/summary and GET /findings/top against GET /api/v1/health measured
in the same run (the API's floor).
Run: .venv/bin/python bench/fleet_api.py [--hosts N] [--requests N]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

from harness import control_plane as cp
from harness.pgdb import libpq_dsn, temporary_database
from harness.processes import raise_sigterm_as_exit
from harness.stats import Timings, ms, verdict

TARGET_P95_S = 0.300

# The fleet, written by the database: labels env (4 values), dc (10) and rack (100); a tenth of
# the hosts without req/s, a fiftieth never seen, a thirtieth with nginx down; three analyses per
# host (the last is the latest) with up to five findings each; access-log figures for every host.
FLEET_SQL = (
    """
INSERT INTO hosts (agent_id, hostname, labels, token_hash, enrolled_at, last_seen_at, nginx_up,
                   stub_status_available, req_per_s, active, reading, writing, waiting,
                   drops_per_s, cpu_pct, mem_used_pct, fds_open, fds_limit, fds_used_pct)
SELECT 'agent-' || i, 'host-' || lpad(i::text, 6, '0'),
       jsonb_build_object('env', 'env' || i % 4, 'dc', 'dc' || i % 10, 'rack', 'r' || i % 100),
       md5(i::text) || md5('t' || i), now() - interval '1 day',
       CASE WHEN i % 50 = 0 THEN NULL ELSE now() - (i % 40) * interval '1 second' END,
       i % 30 <> 0, true,
       CASE WHEN i % 10 = 0 THEN NULL ELSE (i * 7919) % 1000 END, (i * 31) % 500, 0, 1,
       (i * 31) % 499, CASE WHEN i % 97 = 0 THEN 1.0 ELSE 0.0 END, (i * 13) % 100,
       (i * 17) % 100, (i * 3) % 1024, 1024, ((i * 3) % 1024) / 10.24
FROM generate_series(1, :hosts) AS i
""",
    # The copies the fleet page sorts by, as pushes and the periodic refresh leave them.
    """
UPDATE hosts SET
    sort_last_seen_at = last_seen_at, sort_req_per_s = req_per_s, sort_active = active,
    sort_waiting = waiting, sort_drops_per_s = drops_per_s, sort_cpu_pct = cpu_pct,
    sort_mem_used_pct = mem_used_pct, sort_fds_used_pct = fds_used_pct, sorted_at = last_seen_at
""",
    """
INSERT INTO host_facts (host_id, facts, nginx_version, updated_at)
SELECT id, '{}', '1.22.1', now() FROM hosts
""",
    """
INSERT INTO config_snapshots (host_id, hash, dump, received_at, parse_status)
SELECT h.id, md5(h.id || '-' || n), 'events {}', now(), 'parsed'
FROM hosts AS h, generate_series(1, 3) AS n
""",
    """
INSERT INTO config_analyses (host_id, snapshot_id, analyzed_at, status, score, category_scores,
                             error_count, warning_count, info_count, inputs_digest, inputs)
SELECT s.host_id, s.id, now(), 'ok', 50 + s.id % 50, '{}', s.id % 3, s.id % 5, 1, '', '{}'
FROM config_snapshots AS s ORDER BY s.id
""",
    """
INSERT INTO findings (analysis_id, host_id, key, place, directive, rule, severity, category,
                      file, line, message, evidence, doc_url)
SELECT a.id, a.host_id, 'R-' || n || '@/etc/nginx/nginx.conf:http', 'http', 'x', 'R-' || n,
       (ARRAY['error', 'warning', 'info'])[1 + n % 3], 'workers', '/etc/nginx/nginx.conf', n,
       'finding ' || n, '{}', ''
FROM config_analyses AS a, generate_series(1, 5) AS n
WHERE (a.host_id + n) % 7 <> 0
""",
    """
INSERT INTO access_log_recent (host_id, computed_at, requests, cache_hit_ratio,
                               request_time_p95_s, share_5xx)
SELECT id, now(), 1000, (id % 100) / 100.0, (id % 37) / 10.0, (id % 11) / 100.0 FROM hosts
""",
)


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    hosts: int
    requests: int
    workers: int


@dataclass(frozen=True)
class Probe:
    """One timed request: a label, a path and its query parameters."""

    label: str
    path: str
    params: dict[str, Any]


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options."""
    parser = argparse.ArgumentParser(description="nginx-fleet fleet API benchmark (loopback)")
    parser.add_argument("--hosts", type=int, default=10_000, help="hosts in the fleet (10000)")
    parser.add_argument("--requests", type=int, default=100, help="timed requests per probe")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers (2)")
    parser.add_argument("--quick", action="store_true", help="1,000 hosts, 20 requests per probe")
    args = parser.parse_args(argv)
    if args.quick:
        args.hosts, args.requests = 1_000, 20
    if args.hosts < 100 or args.requests < 1 or args.workers < 1:
        parser.error("--hosts must be >= 100, --requests and --workers >= 1")
    return Options(hosts=args.hosts, requests=args.requests, workers=args.workers)


def probes(hosts: int) -> list[Probe]:
    """The requests timed: GET /health first, the floor every other one is compared with."""
    fleet = f"{cp.API}/fleet"
    page = {"limit": 50, "offset": 0}
    return [
        Probe("GET /health (floor)", f"{cp.API}/health", {}),
        Probe("fleet by hostname", fleet, page),
        Probe("fleet by req/s desc (index)", fleet, {**page, "sort": "req_per_s", "order": "desc"}),
        Probe("fleet by req/s asc (sort)", fleet, {**page, "sort": "req_per_s", "order": "asc"}),
        Probe("fleet by status", fleet, {**page, "sort": "status"}),
        Probe("fleet by score asc", fleet, {**page, "sort": "score"}),
        Probe("fleet by cache hit asc", fleet, {**page, "sort": "cache_hit_ratio"}),
        Probe(
            "fleet label env, cpu desc",
            fleet,
            {**page, "label": "env:env1", "sort": "cpu_pct", "order": "desc"},
        ),
        Probe("fleet label rack, by score", fleet, {**page, "label": "rack:r7", "sort": "score"}),
        Probe("fleet status stale+down", fleet, {**page, "status": ["stale", "down"]}),
        Probe("fleet hostname search", fleet, {**page, "q": "host-0012"}),
        Probe("fleet last page by hostname", fleet, {"limit": 50, "offset": hosts - 50}),
        Probe(
            "fleet page of 500",
            fleet,
            {"limit": 500, "offset": 0, "sort": "cpu_pct", "order": "desc"},
        ),
        Probe("fleet summary", f"{fleet}/summary", {}),
        Probe("fleet summary label env", f"{fleet}/summary", {"label": "env:env1"}),
        Probe("top findings", f"{cp.API}/findings/top", {}),
    ]


def fill_fleet(database: str, hosts: int) -> float:
    """Write the fleet and VACUUM ANALYZE it; return the seconds it took."""
    began = time.perf_counter()
    with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
        for statement in FLEET_SQL:
            # No parameters: the statements' % are SQL's modulo, not placeholders.
            conn.execute(statement.replace(":hosts", str(int(hosts))))
        conn.execute("VACUUM ANALYZE")
    return time.perf_counter() - began


def time_probes(
    client: httpx.Client, probes_: list[Probe], n: int
) -> tuple[dict[str, Timings], dict[str, Any]]:
    """Time every probe `n` times, interleaved so drift hits all; the last reply of each."""
    durations: dict[str, list[float]] = {probe.label: [] for probe in probes_}
    last: dict[str, Any] = {}

    def call(probe: Probe) -> float:
        began = time.perf_counter()
        reply = client.get(probe.path, params=probe.params)
        elapsed = time.perf_counter() - began
        reply.raise_for_status()
        last[probe.label] = reply.json()
        return elapsed

    for probe in probes_:  # warm-up: connection pools, prepared plans, caches
        for _ in range(3):
            call(probe)
    for _ in range(n):
        for probe in probes_:
            durations[probe.label].append(call(probe))
    return {label: Timings.of(values) for label, values in durations.items()}, last


def check(hosts: int, last: dict[str, Any]) -> list[str]:
    """What is wrong with the replies (empty when they are right)."""
    problems = []
    first = last["fleet by hostname"]
    if first["total"] != hosts or len(first["items"]) != 50:
        problems.append(f"first page: total {first['total']}, {len(first['items'])} items")
    busiest = [row["req_per_s"] for row in last["fleet by req/s desc (index)"]["items"]]
    if busiest != sorted(busiest, reverse=True) or None in busiest:
        problems.append("req/s desc is not in descending order")
    if last["fleet summary"]["hosts"] != hosts:
        problems.append(f"summary counts {last['fleet summary']['hosts']} hosts")
    rack = last["fleet label rack, by score"]
    if rack["total"] != hosts // 100 or any(r["labels"]["rack"] != "r7" for r in rack["items"]):
        problems.append(f"label rack:r7 matched {rack['total']} hosts")
    if not last["top findings"]:
        problems.append("no top findings")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures; exit 1 when a reply is wrong."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-fleet-") as tmp_name,
        temporary_database() as database,
    ):
        tmp = Path(tmp_name)
        env = cp.backend_env(database=database, data_dir=tmp / "data", base=os.environ)
        cp.migrate(env=env)
        fill_s = fill_fleet(database, options.hosts)
        with (
            cp.running_api(env=env, workers=options.workers, log_dir=tmp) as api,
            contextlib.closing(cp.logged_in_client(api.base_url)) as client,
        ):
            timings, last = time_probes(client, probes(options.hosts), options.requests)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"nginx-fleet fleet API benchmark, {when}")
    print(
        f"setup: {options.hosts} hosts, {3 * options.hosts} analyses with their findings, "
        f"written by SQL in {fill_s:.1f} s; uvicorn {options.workers} workers; "
        f"{options.requests} requests per probe, interleaved, one client"
    )
    floor = timings["GET /health (floor)"]
    worst_p95 = 0.0
    for label, timing in timings.items():
        ratio = "" if timing is floor else f"  p95/health {timing.p95_s / floor.p95_s:.1f}x"
        print(f"{label:<30} {timing.line()}{ratio}")
        if timing is not floor:
            worst_p95 = max(worst_p95, timing.p95_s)
    print(f"worst fleet p95: {ms(worst_p95)}; floor (health) p95: {ms(floor.p95_s)}")
    print(f"target fleet API p95 < {ms(TARGET_P95_S)}: {verdict(worst_p95 < TARGET_P95_S)}")
    problems = check(options.hosts, last)
    print(f"check: replies sorted, filtered and counted: {problems or 'OK'}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
