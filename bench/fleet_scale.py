"""A fleet of 10,000 hosts pushing every 10 s against the production stack on this machine.

PostgreSQL (a throw-away database on the local server), Redis (a database number of its own), the
API in production mode as docker-compose.yml deploys it (the UI's `api` pool and the agents'
`api-ingest` pool, uvicorn worker processes standing in for replicas; the fleet pushes to the ingest
pool, the browser reads from the other, as the web container routes them), and the Celery worker and
beat services of docker-compose.yml. The fleet is wrk with bench/lua/fleet_push.lua: each host on
its own 10 s cadence with jitter, retrying unacknowledged pushes as the agent does. Meanwhile a
logged-in browser reads fleet pages and GET /health at a fixed low rate and holds two live streams
(the fleet scope and one host's scope). Printed: offered and achieved push rates, pushes and samples
acknowledged against rows stored, push latency, fleet page vs /health latency, live events per
second, CPU per component, database growth. Exit code 1 when stored != acknowledged.
Run: .venv/bin/python bench/fleet_scale.py [--quick] [--hosts N] [--duration S] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import redis

from harness import control_plane as cp
from harness.api_probes import (
    EventStreamCounter,
    PacedReader,
    Probe,
    ProbeResult,
    StreamWindow,
    browser_headers,
    reading,
    stream_window,
    streaming,
)
from harness.cpu_groups import CpuGroup, database_session_pids, pids_named, tree_group
from harness.fleet_load import FleetLoadResult, run_fleet_load, write_templates
from harness.fleet_setup import enroll_fleet, first_pushes, wait_for_analyses
from harness.machine import busy_cpu_seconds, core_count
from harness.pgdb import libpq_dsn, temporary_database
from harness.processes import ManagedProcess, raise_sigterm_as_exit
from harness.production_stack import (
    REDIS_URL,
    ApiPools,
    compose_celery_services,
    own_redis_database,
    production_env,
    running_api_pools,
    running_celery,
    wrk_available,
)
from harness.stats import Timings, ms, verdict
from harness.wrk_load import write_hosts_file

TARGET_FLEET_P95_S = 0.300
DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "fleet_scale.json"
PAGE = {"limit": 50, "offset": 0}


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    quick: bool
    hosts: int
    duration_s: int
    interval_s: float
    jitter_s: float
    connections: int
    api_workers: int
    ingest_workers: int
    probe_rate: float
    beat: bool
    analysis_wait_s: float
    json_path: Path
    seed: int

    @property
    def offered_per_s(self) -> float:
        """Pushes per second the fleet offers at its cadence."""
        return self.hosts / self.interval_s


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick is 1,000 hosts for 60 s."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 hosts for 60 s")
    parser.add_argument("--hosts", type=int, help="hosts in the fleet (10000; quick 1000)")
    parser.add_argument("--duration", type=int, help="seconds of pushing (600; quick 60)")
    parser.add_argument("--interval", type=float, default=10.0, help="push interval, s (10)")
    parser.add_argument("--jitter", type=float, default=1.0, help="± jitter per push, s (1)")
    parser.add_argument(
        "--connections", type=int, default=128, help="connections, one wrk thread each (128)"
    )
    # Two cores: one ingest process per core; the UI's pool idles between a browser's reads.
    parser.add_argument(
        "--api-workers", type=int, default=1, help="uvicorn workers of the UI's api pool (1)"
    )
    parser.add_argument(
        "--ingest-workers",
        type=int,
        default=2,
        help="uvicorn workers of the api-ingest pool (2; 0: agents push to the api pool too)",
    )
    parser.add_argument(
        "--probe-rate", type=float, default=2.0, help="fleet pages/s and /health/s (2 each)"
    )
    parser.add_argument("--no-beat", action="store_true", help="run without Celery beat")
    parser.add_argument(
        "--analysis-wait", type=float, default=900.0, help="max s to wait for first analyses"
    )
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_OUT, help=f"result file ({DEFAULT_OUT})"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    hosts = args.hosts if args.hosts is not None else (1000 if args.quick else 10_000)
    duration = args.duration if args.duration is not None else (60 if args.quick else 600)
    for name, value in {
        "hosts": hosts,
        "duration": duration,
        "connections": args.connections,
        "api-workers": args.api_workers,
    }.items():
        if value < 1:
            parser.error(f"--{name} must be >= 1, got {value}")
    if args.ingest_workers < 0:
        parser.error(f"--ingest-workers must be >= 0, got {args.ingest_workers}")
    if args.interval <= 0 or args.probe_rate <= 0 or not 0 <= args.jitter < args.interval / 2:
        parser.error("--interval and --probe-rate must be > 0, --jitter within [0, interval/2)")
    if hosts < args.connections:
        parser.error(f"--hosts ({hosts}) must be >= --connections ({args.connections})")
    return Options(
        quick=args.quick,
        hosts=hosts,
        duration_s=duration,
        interval_s=args.interval,
        jitter_s=args.jitter,
        connections=args.connections,
        api_workers=args.api_workers,
        ingest_workers=args.ingest_workers,
        probe_rate=args.probe_rate,
        beat=not args.no_beat,
        analysis_wait_s=args.analysis_wait,
        json_path=args.json,
        seed=args.seed,
    )


def fleet_probes(hosts: int) -> list[Probe]:
    """Fleet page reads in turn: the first page, sorted by a few columns, and a deep page.
    An API without paging ignores the parameters and returns every host."""
    deep = {"limit": 50, "offset": max(0, hosts // 2 - 50)}
    return [
        Probe("fleet first page", f"{cp.API}/fleet", dict(PAGE)),
        Probe(
            "fleet by req/s desc", f"{cp.API}/fleet", {**PAGE, "sort": "req_per_s", "order": "desc"}
        ),
        Probe("fleet by score asc", f"{cp.API}/fleet", {**PAGE, "sort": "score", "order": "asc"}),
        Probe("fleet by hostname, mid", f"{cp.API}/fleet", {**deep, "sort": "hostname"}),
    ]


def scalar(database: str, query: str) -> int:
    """One integer from a query on the benchmark's database."""
    with psycopg.connect(libpq_dsn(database)) as conn:
        row = conn.execute(query).fetchone()
        assert row is not None
        return int(row[0] or 0)


def stored_samples(database: str) -> int:
    """Rows in samples (a partitioned table counts its partitions)."""
    return scalar(database, "SELECT count(*) FROM samples")


def settled_samples(database: str, timeout_s: float = 60.0) -> int:
    """The sample count once pushes cut off at the deadline have been finished by the API."""
    deadline = time.monotonic() + timeout_s
    previous = stored_samples(database)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        current = stored_samples(database)
        if current == previous:
            return current
        previous = current
    raise RuntimeError(f"sample count still changing {timeout_s:.0f} s after the run")


def database_bytes(database: str) -> int:
    """pg_database_size of the benchmark's database."""
    return scalar(database, f"SELECT pg_database_size('{database}')")


def samples_bytes(database: str) -> int:
    """Heap, indexes and TOAST of samples and of its partitions if it has any."""
    return scalar(
        database,
        "SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('samples')",
    )


def samples_inserted(database: str) -> int:
    """Rows ever inserted into samples (statistics: cheap, unlike count(*) over millions)."""
    return scalar(
        database,
        "SELECT sum(s.n_tup_ins) FROM pg_partition_tree('samples') t "
        "JOIN pg_stat_user_tables s ON s.relid = t.relid",
    )


def queue_lengths(broker: redis.Redis) -> dict[str, int]:
    """Tasks waiting in each Celery queue (a Redis list per queue, in our database number)."""
    lengths: dict[str, int] = {}
    for key in broker.scan_iter(count=100):
        name = key.decode() if isinstance(key, bytes) else str(key)
        if not name.startswith("_kombu") and broker.type(key) in (b"list", "list"):
            lengths[name] = int(broker.llen(key))
    return lengths


@dataclass(frozen=True)
class Point:
    """The state of the run at one moment of the timeline."""

    at: float
    inserted: int
    machine_cpu_s: float
    queued: dict[str, int]


class Sampler:
    """Every `period_s`, in a thread: reads every CPU group (new PostgreSQL sessions and worker
    children are picked up as they appear) and notes a timeline point."""

    def __init__(
        self, groups: list[CpuGroup], database: str, broker: redis.Redis, period_s: float = 5.0
    ) -> None:
        self.groups = groups
        self.points: list[Point] = []
        self._database = database
        self._broker = broker
        self._period_s = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)

    def _point(self) -> None:
        self.points.append(
            Point(
                at=time.monotonic(),
                inserted=samples_inserted(self._database),
                machine_cpu_s=busy_cpu_seconds(),
                queued=queue_lengths(self._broker),
            )
        )

    def _run(self) -> None:
        while not self._stop.wait(self._period_s):
            for group in self.groups:
                group.sample()
            self._point()

    def __enter__(self) -> Sampler:
        for group in self.groups:
            group.begin()
        self._point()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        for group in self.groups:
            group.sample()
        self._point()


@dataclass(frozen=True)
class Slice:
    """One stretch of the run: rows stored per second, reads' latency, machine CPU."""

    start_s: float
    end_s: float
    stored_per_s: float
    fleet_p95_s: float | None
    health_p95_s: float | None
    machine_cores: float

    def row(self) -> str:
        """One printable line."""

        def p95(value: float | None) -> str:
            return ms(value) if value is not None else "-"

        return (
            f"  {max(0.0, self.start_s):>5.0f} - {self.end_s:>5.0f} {self.stored_per_s:>9.1f} "
            f"{p95(self.fleet_p95_s):>12} {p95(self.health_p95_s):>12} {self.machine_cores:>8.2f}"
        )


def max_queued(points: list[Point]) -> dict[str, int]:
    """The longest each Celery queue got during the run."""
    longest: dict[str, int] = {}
    for point in points:
        for name, length in point.queued.items():
            longest[name] = max(longest.get(name, 0), length)
    return longest


def timeline(
    points: list[Point], probes: list[ProbeResult], origin: float, parts: int
) -> list[Slice]:
    """The run cut into about `parts` stretches of whole timeline points."""
    if len(points) < 2:
        return []
    step = max(1, round((len(points) - 1) / parts))
    slices = []
    for i in range(0, len(points) - 1, step):
        first, last = points[i], points[min(i + step, len(points) - 1)]
        seconds = last.at - first.at
        if seconds <= 0:
            continue
        inside = [p for p in probes if first.at <= p.started_at < last.at]
        fleet = [p.duration_s for p in inside if p.label.startswith("fleet")]
        health = [p.duration_s for p in inside if p.label == "health"]
        slices.append(
            Slice(
                start_s=first.at - origin,
                end_s=last.at - origin,
                stored_per_s=(last.inserted - first.inserted) / seconds,
                fleet_p95_s=Timings.of(fleet).p95_s if fleet else None,
                health_p95_s=Timings.of(health).p95_s if health else None,
                machine_cores=(last.machine_cpu_s - first.machine_cpu_s) / seconds,
            )
        )
    return slices


@dataclass(frozen=True)
class Run:
    """Everything measured in one run."""

    options: Options
    setup: dict[str, Any]
    load: FleetLoadResult
    stored: int
    probes: list[ProbeResult]
    probe_errors: dict[str, int]
    missed_probe_slots: int
    streams: list[StreamWindow]
    cpu_s: dict[str, float]
    machine_cpu_s: float
    window_s: float
    db_growth_bytes: int
    samples_table_bytes: int
    samples_rows_total: int
    slices: list[Slice]
    queue_max: dict[str, int]
    queue_end: dict[str, int]


def timings_by_label(results: list[ProbeResult]) -> dict[str, Timings]:
    """Latency summary per probe label, with every fleet page together as 'fleet (all)'."""
    grouped: dict[str, list[float]] = {}
    for result in results:
        grouped.setdefault(result.label, []).append(result.duration_s)
        if result.label.startswith("fleet"):
            grouped.setdefault("fleet (all)", []).append(result.duration_s)
    return {label: Timings.of(values) for label, values in grouped.items() if values}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fleet, print the figures, write the JSON file; exit 1 when the check fails."""
    options = parse_options(argv)
    if not wrk_available():
        print("wrk is not installed (Debian: apt-get install -y wrk)", file=sys.stderr)
        return 2
    raise_sigterm_as_exit()
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-fleet-") as tmp_name,
        temporary_database() as database,
        own_redis_database(),
    ):
        tmp = Path(tmp_name)
        data_dir = tmp / "data"
        env = production_env(database=database, data_dir=data_dir, base=os.environ)
        cp.migrate(env=env)
        token = cp.create_enrollment_token(env=env, max_uses=options.hosts)
        with (
            running_api_pools(
                env=env,
                ui_workers=options.api_workers,
                ingest_workers=options.ingest_workers,
                log_dir=tmp,
            ) as api,
            running_celery(
                env=env, data_dir=data_dir, log_dir=tmp, with_beat=options.beat
            ) as celery,
        ):
            try:
                run = drive(
                    options, database=database, token=token, tmp=tmp, api=api, celery=celery
                )
            except Exception:
                # The logs live in the temporary directory, gone once this block ends.
                ingest = [api.ingest.process] if api.separate else []
                for process in (api.ui.process, *ingest, *celery.values()):
                    print(f"--- {process.name} log:\n{process.log_tail()}", file=sys.stderr)
                raise
    print_report(run)
    write_json(run)
    return 0 if stored_matches(run) else 1


def drive(
    options: Options,
    *,
    database: str,
    token: str,
    tmp: Path,
    api: ApiPools,
    celery: dict[str, ManagedProcess],
) -> Run:
    """Bring the fleet in, then push for the duration while the browser reads; measure."""
    # The agents' requests go where the web container sends /api/v1/agent/, the rest to the UI's.
    base_url, agents_url = api.ui.base_url, api.ingest.base_url
    print(f"setup: enrolling {options.hosts} hosts through the API ...", flush=True)
    hosts, enrolled = enroll_fleet(agents_url, enrollment_token=token, count=options.hosts)
    print(f"setup: enrolled in {enrolled.seconds:.1f} s; first pushes ...", flush=True)
    hosts, first = first_pushes(agents_url, hosts)
    print(f"setup: first pushes in {first.seconds:.1f} s; waiting for analyses ...", flush=True)
    analysed, analyses = wait_for_analyses(
        database, hosts=options.hosts, timeout_s=options.analysis_wait_s
    )
    setup: dict[str, Any] = {
        "enrol_s": round(enrolled.seconds, 1),
        "enrol_per_s": round(enrolled.per_s, 1),
        "first_push_s": round(first.seconds, 1),
        "first_push_per_s": round(first.per_s, 1),
        "analysed_hosts": analysed,
        "analysis_wait_s": round(analyses.seconds, 1),
    }
    print(f"setup: {analysed} hosts analysed after {analyses.seconds:.1f} s more", flush=True)
    write_hosts_file(tmp / "hosts.tsv", hosts)
    write_templates(tmp / "body.json", tmp / "sample.json")
    headers = browser_headers(base_url)
    groups = [
        tree_group("API", [api.ui.process.pid]),
        *([tree_group("API ingest", [api.ingest.process.pid])] if api.separate else []),
        *(tree_group(f"celery {name}", [process.pid]) for name, process in celery.items()),
        CpuGroup("PostgreSQL sessions", lambda: database_session_pids(database)),
        CpuGroup("PostgreSQL all", lambda: pids_named("postgres")),
        CpuGroup("Redis", lambda: pids_named("redis-server")),
    ]
    broker = redis.Redis.from_url(REDIS_URL)
    fleet_reader = PacedReader(
        base_url=base_url,
        headers=headers,
        probes=fleet_probes(options.hosts),
        rate_per_s=options.probe_rate,
    )
    health_reader = PacedReader(
        base_url=base_url,
        headers=headers,
        probes=[Probe("health", f"{cp.API}/health")],
        rate_per_s=options.probe_rate,
    )
    fleet_stream = EventStreamCounter(base_url=base_url, headers=headers, path=f"{cp.API}/events")
    host_stream = EventStreamCounter(
        base_url=base_url, headers=headers, path=f"{cp.API}/events?host_id={hosts[0].host_id}"
    )
    before = settled_samples(database)
    setup["loadavg"] = " ".join(f"{value:.1f}" for value in os.getloadavg())
    db_before = database_bytes(database)
    print(
        f"load: {options.hosts} hosts every {options.interval_s:g} s for {options.duration_s} s",
        flush=True,
    )
    with (
        streaming(fleet_stream),
        streaming(host_stream),
        reading(fleet_reader),
        reading(health_reader),
        Sampler(groups, database, broker) as sampler,
    ):
        probe_self = os.times()
        machine_before = busy_cpu_seconds()
        streams_first = [fleet_stream.counts(), host_stream.counts()]
        window_start = time.monotonic()
        load = run_fleet_load(
            base_url=agents_url,
            hosts_file=tmp / "hosts.tsv",
            body_template=tmp / "body.json",
            sample_template=tmp / "sample.json",
            results_file=tmp / "wrk.json",
            duration_s=options.duration_s,
            connections=options.connections,
            interval_s=options.interval_s,
            jitter_s=options.jitter_s,
            seed=options.seed,
        )
        window_end = time.monotonic()
        streams_last = [fleet_stream.counts(), host_stream.counts()]
        machine_after = busy_cpu_seconds()
        probe_after = os.times()
    broker.close()
    db_after = database_bytes(database)
    stored = settled_samples(database) - before
    cpu = {group.name: group.used_s() for group in sampler.groups}
    cpu["wrk (fleet)"] = load.generator_cpu_s
    # The probes and streams run in this process: what a browser costs the client side.
    cpu["bench probes"] = (probe_after.user + probe_after.system) - (
        probe_self.user + probe_self.system
    )
    return Run(
        options=options,
        setup=setup,
        load=load,
        stored=stored,
        probes=fleet_reader.window(window_start, window_end)
        + health_reader.window(window_start, window_end),
        probe_errors=dict(fleet_reader.errors + health_reader.errors),
        missed_probe_slots=fleet_reader.missed_slots + health_reader.missed_slots,
        streams=[
            stream_window(fleet_stream.path, streams_first[0], streams_last[0]),
            stream_window(host_stream.path, streams_first[1], streams_last[1]),
        ],
        cpu_s=cpu,
        machine_cpu_s=machine_after - machine_before,
        window_s=window_end - window_start,
        db_growth_bytes=db_after - db_before,
        samples_table_bytes=samples_bytes(database),
        samples_rows_total=stored_samples(database),
        queue_max=max_queued(sampler.points),
        queue_end=sampler.points[-1].queued,
        slices=timeline(
            sampler.points, fleet_reader.results + health_reader.results, window_start, 10
        ),
    )


def stored_matches(run: Run) -> bool:
    """Every acknowledged sample stored once; stored but unacknowledged only for pushes whose
    reply never came (cut off at the deadline or lost); nothing refused."""
    load = run.load
    # A duplicate is a sample stored by a push whose reply was lost, acknowledged on retry.
    acked = load.accepted + load.duplicates
    return load.rejected == 0 and acked <= run.stored <= acked + load.samples_pending


def others_cpu_s(run: Run) -> float:
    """CPU the machine spent on work that is not this run's stack, generator or probes."""
    # "PostgreSQL all" (every server process: WAL writer, checkpointer, and other databases'
    # sessions too) is shown, not counted as ours: the server is shared with other work.
    ours = sum(v for k, v in run.cpu_s.items() if k != "PostgreSQL all")
    return max(0.0, run.machine_cpu_s - ours)


def pools(options: Options) -> str:
    """The API processes of the run, in words."""
    if options.ingest_workers == 0:
        return f"uvicorn {options.api_workers} workers serving agents and browser"
    return (
        f"uvicorn {options.api_workers} workers for the browser (api), "
        f"{options.ingest_workers} for the agents (api-ingest)"
    )


def print_report(run: Run) -> None:
    """The summary table."""
    options, load = run.options, run.load
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    celery = ", ".join(s.name for s in compose_celery_services() if options.beat or not s.is_beat)
    print(f"nginx-fleet fleet-scale benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"stack: NGINX_FLEET_ENV=production; {pools(options)}; Celery "
        f"services of docker-compose.yml ({celery}); PostgreSQL 127.0.0.1:5432 (throw-away "
        f"database); Redis {REDIS_URL}; {core_count()} cores, load average before "
        f"{run.setup.get('loadavg', '?')}"
    )
    setup = run.setup
    print(
        f"setup: {options.hosts} hosts enrolled through POST /agent/enroll in {setup['enrol_s']} s "
        f"({setup['enrol_per_s']}/s); first pushes (facts + config) {setup['first_push_per_s']}/s; "
        f"{setup['analysed_hosts']} hosts analysed {setup['analysis_wait_s']} s later"
    )
    print(
        f"fleet: {options.hosts} hosts x 1 sample every {options.interval_s:g} s "
        f"(±{options.jitter_s:g} s), {options.connections} connections (wrk, 1 per thread), "
        f"{run.window_s:.0f} s"
    )
    late_1s = load.late_share(1000)
    print(
        f"pushes: offered {options.offered_per_s:.1f}/s, sent {load.sent_per_s:.1f}/s, "
        f"2xx {load.ok_per_s:.1f}/s; left > 1 s late {late_1s:.2%}, max lag {load.max_lag_s:.2f} s"
    )
    print(
        f"push latency: p50 {ms(load.latency_p50_s)}  p95 {ms(load.latency_p95_s)}  "
        f"p99 {ms(load.latency_p99_s)}  max {ms(load.latency_max_s)}"
    )
    print(
        f"samples: created {load.samples_created}, acknowledged {load.accepted} accepted + "
        f"{load.duplicates} duplicates, stored {run.stored}, refused {load.rejected}, "
        f"unacknowledged at the end {load.samples_pending} ({load.in_flight} pushes in flight)"
    )
    print(
        f"errors: non-2xx pushes {load.responses - load.ok} {load.statuses}, pushes without "
        f"a reply {load.no_reply}, socket errors {load.socket_errors}, retried pushes "
        f"{load.retries}"
    )
    if load.first_failure:
        print(f"first failed push: {load.first_failure}")
    timings = timings_by_label(run.probes)
    shapes = sorted({f"{r.shape}" for r in run.probes if r.label.startswith("fleet")})
    statuses = sorted({r.status for r in run.probes})
    print(
        f"browser reads at {options.probe_rate:g}/s each (fleet reply shape: {', '.join(shapes)}; "
        f"statuses {statuses}; missed slots {run.missed_probe_slots}; errors {run.probe_errors})"
    )
    for label, timing in timings.items():
        print(f"  GET {label:<24} {timing.line()}")
    fleet, health = timings.get("fleet (all)"), timings.get("health")
    if fleet and health:
        print(
            f"ratio fleet/health: p50 {fleet.median_s / health.median_s:.1f}x  "
            f"p95 {fleet.p95_s / health.p95_s:.1f}x"
        )
        print(
            f"target fleet p95 < {TARGET_FLEET_P95_S * 1000:.0f} ms: "
            f"{verdict(fleet.p95_s < TARGET_FLEET_P95_S)}"
        )
    for stream in run.streams:
        print(
            f"live stream GET {stream.path}: {stream.events_per_s:.2f} events/s, "
            f"{stream.bytes_per_s / 1024:.1f} KiB/s, by name {stream.events}"
        )
    seconds = run.window_s
    parts = "  ".join(f"{name} {used / seconds:.2f}" for name, used in run.cpu_s.items())
    print(
        f"CPU (cores): {parts}  machine {run.machine_cpu_s / seconds:.2f}  "
        f"others {others_cpu_s(run) / seconds:.2f}"
    )
    if load.ok:
        thousands = load.ok_per_s / 1000
        # The API's share of the pushes: the ingest pool's, or the one pool's.
        api = run.cpu_s.get("API ingest", run.cpu_s.get("API", 0.0)) / seconds / thousands
        db = run.cpu_s.get("PostgreSQL sessions", 0.0) / seconds / thousands
        print(f"per 1,000 pushes/s: API {api:.2f} cores, PostgreSQL sessions {db:.2f} cores")
    # Redis deletes an empty list, so a queue never seen waiting is absent.
    print(
        f"Celery tasks waiting: longest {run.queue_max or 'none seen'}, "
        f"at the end {run.queue_end or 'none'} (looked every 5 s)"
    )
    per_min = run.db_growth_bytes / (seconds / 60)
    per_row = run.samples_table_bytes / max(1, run.samples_rows_total)
    print(
        f"database: +{per_min / 1048576:.1f} MiB/min; samples {run.samples_rows_total} rows, "
        f"{run.samples_table_bytes / 1048576:.1f} MiB with indexes ({per_row:.0f} B/row)"
    )
    if run.slices:
        print(
            f"  {'seconds':<13} {'stored/s':>9} {'fleet p95':>12} {'health p95':>12} {'machine':>8}"
        )
        for piece in run.slices:
            print(piece.row())
    if stored_matches(run):
        print("check stored = acknowledged: OK")
    else:
        print("check stored = acknowledged: FAILED", file=sys.stderr)
        print("check stored = acknowledged: FAILED")


def write_json(run: Run) -> None:
    """The figures as JSON, for docs to cite."""
    timings = timings_by_label(run.probes)
    document = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "options": {
            k: str(v) if isinstance(v, Path) else v for k, v in asdict(run.options).items()
        },
        "setup": run.setup,
        "load": asdict(run.load),
        "stored": run.stored,
        "check_ok": stored_matches(run),
        "reads": {label: asdict(t) for label, t in timings.items()},
        "probe_errors": run.probe_errors,
        "missed_probe_slots": run.missed_probe_slots,
        "streams": [s.as_dict() for s in run.streams],
        "cpu_cores": {k: round(v / run.window_s, 3) for k, v in run.cpu_s.items()},
        "machine_cores": round(run.machine_cpu_s / run.window_s, 3),
        "others_cores": round(others_cpu_s(run) / run.window_s, 3),
        "window_s": round(run.window_s, 1),
        "db_growth_bytes_per_min": round(run.db_growth_bytes / (run.window_s / 60)),
        "samples_table_bytes": run.samples_table_bytes,
        "samples_rows_total": run.samples_rows_total,
        "timeline": [asdict(piece) for piece in run.slices],
        "queue_max": run.queue_max,
        "queue_end": run.queue_end,
    }
    run.options.json_path.parent.mkdir(parents=True, exist_ok=True)
    run.options.json_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"written: {run.options.json_path}")


if __name__ == "__main__":
    sys.exit(main())
