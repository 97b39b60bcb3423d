"""A fleet-wide config change through the analysis queue, against the other queues' latency.

A throw-away PostgreSQL database with N hosts (10,000 by default); each pushes a new config
through the real API within a minute, and a share of them (20%) pushes a second new config while
the first is still queued. Real Celery workers in the production queue layout (docker-compose.yml)
drain the analyses while a probe task is sent to the maintenance and default queues every 2 s.
Prints, in the same run:
- the floor: the probe's latency (sent → finished) with no backlog, and the same probe while
  the analysis backlog drains (ratio against the floor);
- analyses per second, overall and per 10 s window (steadiness);
- analyses run against snapshots stored (the per-host dedup), and a check that every host's
  latest analysis is of the config it runs.
Run: .venv/bin/python bench/analysis_queue.py [--quick] [--hosts N] [--layout production|single]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg
import redis
import yaml
from celery import Celery

from harness import control_plane as cp
from harness.pgdb import libpq_dsn, temporary_database
from harness.processes import ManagedProcess, raise_sigterm_as_exit, running
from harness.samples import CONFIG_DUMP, FACTS, SampleFactory, push_body

# Redis database of this benchmark alone: it is flushed at the start.
REDIS_URL = "redis://127.0.0.1:6379/11"
QUEUES = ("analysis", "maintenance", "default")
# Cheap periodic tasks standing for the housekeeping and alert work of those queues.
PROBES = {"maintenance": "auth.purge_expired_sessions", "default": "changes.watch"}
PROBE_EVERY_S = 2.0
FLOOR_PROBES = 10
COMPOSE_FILE = Path(__file__).resolve().parent.parent / "docker-compose.yml"


def compose_queue_groups(compose_file: Path = COMPOSE_FILE) -> list[list[str]]:
    """The queues of each Celery worker service of docker-compose.yml (all when not named)."""
    services = yaml.safe_load(compose_file.read_text())["services"]
    groups = []
    for service in services.values():
        command = [str(part) for part in service.get("command") or []]
        if command[:1] == ["celery"] and "worker" in command:
            named = command[command.index("--queues") + 1] if "--queues" in command else ""
            groups.append(named.split(",") if named else list(QUEUES))
    return groups


# production: the worker services of docker-compose.yml; single: one worker on every queue.
LAYOUTS: dict[str, list[list[str]]] = {
    "production": compose_queue_groups(),
    "single": [list(QUEUES)],
}
LOG_LINE = re.compile(
    r"^\[(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): \w+/[\w-]+\] "
    r"Task (?P<task>[\w.]+)\[(?P<id>[0-9a-f-]+)\] succeeded"
)


def parse_options(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description="nginx-fleet analysis queue benchmark")
    parser.add_argument("--quick", action="store_true", help="500 hosts over 10 s")
    parser.add_argument("--hosts", type=int, help="hosts changing their config (10000)")
    parser.add_argument("--spread-s", type=float, help="seconds the first wave takes (60)")
    parser.add_argument("--second-wave", type=float, default=0.2, help="share pushing twice")
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="production")
    parser.add_argument(
        "--via",
        choices=["api", "direct"],
        default="api",
        help="configs pushed through the API, or stored as ingest does (no HTTP: when the API "
        "cannot take N configs within a minute on this machine)",
    )
    parser.add_argument("--timeout-s", type=float, default=1500, help="give up draining after")
    args = parser.parse_args(argv)
    if args.hosts is None:
        args.hosts = 500 if args.quick else 10_000
    if args.spread_s is None:
        args.spread_s = 10.0 if args.quick else 60.0
    if args.hosts < 10 or not 0 <= args.second_wave <= 1:
        parser.error("--hosts must be >= 10 and --second-wave within 0..1")
    return args


def token_of(host_id: int) -> str:
    """The bench host's agent token (its SHA-256 is what the hosts table stores)."""
    return f"nfh_bench_analysis_{host_id:06d}"


def fill_hosts(dsn: str, hosts: int) -> None:
    """Enrolled hosts, written with COPY (the benchmark times analyses, not enrolment)."""
    now = datetime.now(UTC)
    with psycopg.connect(dsn) as conn:
        columns = "id, agent_id, hostname, labels, token_hash, enrolled_at"
        with conn.cursor().copy(f"COPY hosts ({columns}) FROM STDIN") as copy:
            for i in range(1, hosts + 1):
                token_hash = hashlib.sha256(token_of(i).encode()).hexdigest()
                copy.write_row((i, f"agent-{i}", f"web-{i:05d}", "{}", token_hash, now))
        conn.execute("SELECT setval('hosts_id_seq', %s)", (hosts,))


def config_variant(host_id: int, wave: int) -> str:
    """A realistic dump, different per host and per wave (as a fleet-wide edit would make it)."""
    return CONFIG_DUMP.replace(
        "worker_connections 768;", f"worker_connections {768 + wave};"
    ).replace("keepalive_timeout 65;", f"keepalive_timeout {30 + host_id % 60};")


def push_config(client: httpx.Client, host_id: int, seq: int, wave: int) -> None:
    """One push of a host carrying a sample and a new config dump."""
    factory = SampleFactory(rng=random.Random(host_id))
    sample = factory.sample(seq=seq, moment=datetime.now(UTC) - timedelta(seconds=1))
    body = push_body(agent_id=f"agent-{host_id}", hostname=f"web-{host_id:05d}", samples=[sample])
    dump = config_variant(host_id, wave)
    digest = hashlib.sha256(dump.encode()).hexdigest()
    body.update(config_hash=digest, facts=FACTS, config={"hash": digest, "dump": dump})
    reply = client.post(
        f"{cp.API}/agent/push",
        json=body,
        headers={"Authorization": f"Bearer {token_of(host_id)}"},
    )
    if reply.status_code != 200:
        raise RuntimeError(f"push of host {host_id}: HTTP {reply.status_code} {reply.text[:300]}")


def store_directly(env: Mapping[str, str]) -> Callable[[int, int, int], None]:
    """What ingest does with a push's new config, without the HTTP round trip: store the
    snapshot, make it the host's current config, commit, then enqueue_analysis (the dedup)."""
    os.environ.update(DATABASE_URL=env["DATABASE_URL"], REDIS_URL=env["REDIS_URL"])
    # Imported here: the app reads DATABASE_URL and REDIS_URL when first imported.
    from app.configs.service import store_snapshot
    from app.configs.tasks import enqueue_analysis
    from app.core.db import SessionLocal, utcnow
    from app.hosts.models import Host
    from sqlalchemy import update

    def store(host_id: int, _seq: int, wave: int) -> None:
        dump = config_variant(host_id, wave)
        digest = hashlib.sha256(dump.encode()).hexdigest()
        now = utcnow()
        with SessionLocal() as session:
            store_snapshot(session=session, host_id=host_id, config_hash=digest, dump=dump, now=now)
            session.execute(
                update(Host).where(Host.id == host_id).values(config_hash=digest, last_seen_at=now)
            )
            session.commit()
        enqueue_analysis(host_id=host_id)

    return store


def push_waves(
    send: Callable[[int, int, int], None], hosts: int, spread_s: float, second_share: float
) -> int:
    """Every host pushes a new config, paced over spread_s; a share pushes another one while the
    first is queued (a third of the way in, over the rest). Returns the pushes made."""
    second = list(range(1, hosts + 1, max(1, round(1 / second_share)))) if second_share else []
    jobs = [(i * spread_s / hosts, host, 1, 1) for i, host in enumerate(range(1, hosts + 1))]
    jobs += [
        (spread_s / 3 + i * (2 * spread_s / 3) / len(second), host, 2, 2)
        for i, host in enumerate(second)
    ]
    jobs.sort()
    start = time.monotonic()

    def run(job: tuple[float, int, int, int]) -> None:
        at, host, seq, wave = job
        delay = start + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        send(host, seq, wave)

    # Enough pushes in flight that the API, not the round trip, sets the pace.
    with ThreadPoolExecutor(max_workers=32) as pool:
        list(pool.map(run, jobs))
    return len(jobs)


@contextlib.contextmanager
def running_workers(
    layout: list[list[str]], *, env: Mapping[str, str], log_dir: Path
) -> Iterator[list[ManagedProcess]]:
    """One Celery worker per queue group, as docker-compose.yml starts them (prefork, one
    process per core, prefetch 1); INFO logs (as in the containers), whose 'succeeded' lines
    this benchmark reads."""
    with contextlib.ExitStack() as stack:
        processes = []
        for index, queues in enumerate(layout):
            argv = [
                str(cp.VENV_BIN / "celery"), "-A", "app.worker.celery_app", "worker",
                "--loglevel=INFO", f"--queues={','.join(queues)}", f"--hostname=w{index}@%h",
                "--without-gossip", "--without-mingle",
            ]  # fmt: skip
            log_path = log_dir / f"worker-{index}.log"
            processes.append(
                stack.enter_context(running(f"worker-{index}", argv, log_path=log_path, env=env))
            )
            wait_for_line(log_path, " ready.", processes[-1])
        yield processes


def wait_for_line(path: Path, text: str, process: ManagedProcess, timeout_s: float = 60) -> None:
    """Wait until the process's log holds `text` (fails when it exits or after timeout_s)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if process.popen.poll() is not None:
            raise RuntimeError(f"{process.name} exited:\n{path.read_text(errors='replace')}")
        time.sleep(0.2)
    raise RuntimeError(f"no {text!r} in {path} after {timeout_s} s")


def finished_tasks(log_dir: Path) -> list[tuple[str, str, float]]:
    """(task name, task id, finished at, Unix seconds) of every task the workers logged."""
    done = []
    for path in sorted(log_dir.glob("worker-*.log")):
        for line in path.read_text(errors="replace").splitlines():
            match = LOG_LINE.match(line)
            if match:
                at = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
                done.append((match["task"], match["id"], at))
    return done


@dataclass
class Probes:
    """Probe tasks sent: id → (queue, sent at, Unix seconds)."""

    client: Celery
    sent: dict[str, tuple[str, float]]

    def send(self, queue: str) -> str:
        """Send the queue's probe task now; returns its id."""
        sent_at = time.time()
        result = self.client.send_task(PROBES[queue], queue=queue)
        self.sent[result.id] = (queue, sent_at)
        return str(result.id)

    def latencies(self, log_dir: Path, ids: set[str]) -> dict[str, list[float]]:
        """Sent → finished seconds of the given probes, by queue (unfinished ones left out)."""
        finished = {task_id: at for _name, task_id, at in finished_tasks(log_dir)}
        by_queue: dict[str, list[float]] = {queue: [] for queue in PROBES}
        for task_id in ids:
            if task_id in finished:
                queue, sent_at = self.sent[task_id]
                by_queue[queue].append(finished[task_id] - sent_at)
        return by_queue


def wait_finished(log_dir: Path, ids: set[str], timeout_s: float = 60) -> None:
    """Wait until every task id has a 'succeeded' line."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ids <= {task_id for _n, task_id, _a in finished_tasks(log_dir)}:
            return
        time.sleep(0.2)
    raise RuntimeError(f"{len(ids)} probes not all finished after {timeout_s} s")


def backlog(queue_client: redis.Redis, dsn: str) -> tuple[int, int]:
    """(messages in the analysis queue, hosts with an analysis queued)."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM pending_analyses").fetchone()
    return int(queue_client.llen("analysis")), int(row[0] if row else 0)


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def describe(values: Sequence[float]) -> str:
    """p50 / p95 / max in milliseconds."""
    if not values:
        return "no sample"
    return (
        f"p50 {1000 * statistics.median(values):7.1f} ms  p95 "
        f"{1000 * percentile(values, 0.95):7.1f} ms  max {1000 * max(values):7.1f} ms"
        f"  (n={len(values)})"
    )


def fleet_figures(dsn: str) -> dict[str, int]:
    """Snapshots, analysis rows, and hosts whose latest analysis is not of the config they run."""
    with psycopg.connect(dsn) as conn:
        snapshots = conn.execute("SELECT count(*) FROM config_snapshots").fetchone()
        analyses = conn.execute("SELECT count(*) FROM config_analyses").fetchone()
        stale = conn.execute(
            """
            SELECT count(*) FROM hosts h
            JOIN config_snapshots s ON s.host_id = h.id AND s.hash = h.config_hash
            LEFT JOIN LATERAL (
                SELECT snapshot_id FROM config_analyses a WHERE a.host_id = h.id
                ORDER BY a.id DESC LIMIT 1
            ) latest ON true
            WHERE latest.snapshot_id IS DISTINCT FROM s.id
            """
        ).fetchone()
    assert snapshots and analyses and stale
    return {"snapshots": snapshots[0], "analyses": analyses[0], "stale": stale[0]}


def rate_windows(times: Sequence[float], width_s: float = 10.0) -> list[float]:
    """Analyses per second in each full width_s window from the first to the last finish."""
    if len(times) < 2:
        return []
    start = min(times)
    counts: dict[int, int] = {}
    for at in times:
        counts[int((at - start) // width_s)] = counts.get(int((at - start) // width_s), 0) + 1
    last_full = int((max(times) - start) // width_s)
    return [counts.get(i, 0) / width_s for i in range(last_full)]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the exit status (1 when a check fails)."""
    args = parse_options(argv)
    raise_sigterm_as_exit()
    queue_client = redis.Redis.from_url(REDIS_URL)
    queue_client.flushdb()
    layout = LAYOUTS[args.layout]
    print(
        f"analysis queue: {args.hosts} hosts push a new config over {args.spread_s:g} s, "
        f"{args.second_wave:.0%} push another one meanwhile (via {args.via}); "
        f"layout {args.layout}: "
        + " + ".join("[" + ",".join(group) + "]" for group in layout)
        + f"; {os.cpu_count()} CPUs"
    )
    with temporary_database() as database, tempfile.TemporaryDirectory() as tmp:
        log_dir = Path(tmp)
        env = cp.backend_env(database=database, data_dir=log_dir / "data", base=os.environ)
        env["REDIS_URL"] = REDIS_URL
        cp.migrate(env=env)
        dsn = libpq_dsn(database)
        fill_hosts(dsn, args.hosts)
        probes = Probes(client=Celery(broker=REDIS_URL), sent={})
        with (
            cp.running_api(env=env, workers=2, log_dir=log_dir) as api,
            running_workers(layout, env=env, log_dir=log_dir),
        ):
            # Each worker process's first task pays for imports and connections: not the floor.
            warm_up = {probes.send(queue) for queue in PROBES for _ in range(4)}
            wait_finished(log_dir, warm_up)
            floor_ids = set()
            for index in range(FLOOR_PROBES):
                floor_ids.add(probes.send(list(PROBES)[index % len(PROBES)]))
                time.sleep(PROBE_EVERY_S / 4)
            wait_finished(log_dir, floor_ids)

            started = time.time()
            pushed: list[int] = []
            pushes_done: list[float] = []

            if args.via == "api":
                local = threading.local()

                def send(host: int, seq: int, wave: int) -> None:
                    if not hasattr(local, "client"):
                        local.client = httpx.Client(base_url=api.base_url, timeout=60)
                    push_config(local.client, host, seq, wave)
            else:
                send = store_directly(env)

            def push_all() -> None:
                pushed.append(push_waves(send, args.hosts, args.spread_s, args.second_wave))
                pushes_done.append(time.time())

            pushing = threading.Thread(target=push_all, daemon=True)
            pushing.start()
            busy_ids: set[str] = set()
            probe_index = 0
            peak = 0
            deadline = time.monotonic() + args.timeout_s
            while True:
                queue = list(PROBES)[probe_index % len(PROBES)]
                probe_index += 1
                busy_ids.add(probes.send(queue))
                time.sleep(PROBE_EVERY_S)
                queued, claimed = backlog(queue_client, dsn)
                peak = max(peak, queued)
                if not pushing.is_alive() and queued == 0 and claimed == 0:
                    break
                if time.monotonic() > deadline:
                    print(f"FAIL: backlog not drained after {args.timeout_s:g} s ({queued} queued)")
                    return 1
            pushing.join()
            wait_finished(log_dir, busy_ids)
            time.sleep(3)  # the last analyses released their claims and are finishing
        drained = time.time()
        figures = fleet_figures(dsn)
        runs = [at for name, _id, at in finished_tasks(log_dir) if name == "configs.analyze_host"]
        floor = probes.latencies(log_dir, floor_ids)
        busy = probes.latencies(log_dir, busy_ids)

    print(
        f"pushes with a new config: {pushed[0]} in {pushes_done[0] - started:.1f} s, "
        f"snapshots stored: {figures['snapshots']}; analysis queue peak: {peak} messages"
    )
    print(
        f"analyses run: {len(runs)} (ratio runs/snapshots {len(runs) / figures['snapshots']:.2f},"
        f" runs/hosts {len(runs) / args.hosts:.2f}); analysis rows: {figures['analyses']}"
    )
    if runs:
        span = max(runs) - started
        windows = rate_windows(runs)
        print(
            f"drain: {span:.1f} s from the first push to the last analysis; "
            f"{len(runs) / (max(runs) - min(runs) or 1):.1f} analyses/s"
        )
        if windows:
            print(
                f"analyses/s per 10 s window: min {min(windows):.1f}  median "
                f"{statistics.median(windows):.1f}  max {max(windows):.1f}"
                f"  ({len(windows)} windows)"
            )
    print(f"run took {drained - started:.1f} s after the floor probes")
    ok = True
    for queue in PROBES:
        ratio = (
            statistics.median(busy[queue]) / statistics.median(floor[queue])
            if busy[queue] and floor[queue]
            else float("nan")
        )
        print(f"probe {PROBES[queue]} on {queue}:")
        print(f"  floor (no backlog):  {describe(floor[queue])}")
        print(f"  during the backlog:  {describe(busy[queue])}")
        print(f"  ratio backlog/floor, median: {ratio:.2f}")
        ok = ok and bool(busy[queue])
    had_backlog = peak * 10 >= args.hosts  # a tenth of the fleet queued at once
    checks = [
        ("every host's latest analysis is of the config it runs", figures["stale"] == 0),
        # A second config shares a queued analysis only behind a backlog: a worker that keeps
        # up (a tiny run on a quiet machine) analyses each config as it comes.
        (
            "fewer analyses than snapshots (deduplicated per host)"
            if had_backlog
            else "no more analyses than snapshots (no backlog to deduplicate)",
            len(runs) < figures["snapshots"] if had_backlog else len(runs) <= figures["snapshots"],
        ),
        ("every probe during the backlog finished", ok),
    ]
    for name, passed in checks:
        print(f"check: {name}: {'OK' if passed else 'FAIL'}")
    return 0 if all(passed for _name, passed in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
