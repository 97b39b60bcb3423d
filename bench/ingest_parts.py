"""What a push costs in three parts changed on 2026-11-26, each against its former way in the same
run: routing the request, publishing its live event, and PostgreSQL's host-row update.

- routing: POST /api/v1/agent/push without a token (401) through the whole app in process, with
  the agents' routes first (now) and last (as before);
- live events: a batch's events sent with one Redis PUBLISH each (before) against one pipeline
  (now), on a channel of its own;
- host update: the batched UPDATE of hosts (200 rows a statement) on a throw-away database of
  `--hosts` hosts, with the fleet's sorted copies rewritten by every push (the index work every
  push did before migration 0014) against refreshed at most once a minute (HOT in between);
  PostgreSQL backend CPU per update from /proc and the HOT share from pg_stat_user_tables.

Printed: per push, CPU and wall time before and now, and their ratio. No target: the ingest and
fleet-scale benchmarks say what the machine carries; this says where the difference comes from.
Run: .venv/bin/python bench/ingest_parts.py [--quick] [--hosts N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from harness import control_plane as cp
from harness.pgdb import libpq_dsn, temporary_database

BATCH = 200
# A Redis database number no other benchmark uses (pub/sub ignores it; the channel is ours).
REDIS_URL = "redis://127.0.0.1:6379/11"


def cpu_s() -> float:
    """CPU seconds this process used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def per_item(run: Callable[[], None], items: int, rounds: int) -> tuple[float, float]:
    """(CPU, wall) seconds per item of `rounds` runs after one warm-up."""
    run()
    cpu_before, wall_before = cpu_s(), time.perf_counter()
    for _ in range(rounds):
        run()
    count = items * rounds
    return (cpu_s() - cpu_before) / count, (time.perf_counter() - wall_before) / count


def line(part: str, label: str, cpu: float, wall: float) -> str:
    """One result line, in microseconds."""
    return f"{part:<13}{label:<46}CPU {cpu * 1e6:8.1f} us   wall {wall * 1e6:8.1f} us"


def routing(rounds: int) -> list[str]:
    """In-process requests to the push route, agents' routes first and last."""
    from app.agents.router import router as agents_router
    from app.main import create_app

    app = create_app()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/agent/push",
        "raw_path": b"/api/v1/agent/push",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def requests(count: int) -> None:
        for _ in range(count):
            await app(dict(scope), receive, send)

    loop = asyncio.new_event_loop()
    try:
        now = per_item(lambda: loop.run_until_complete(requests(BATCH)), BATCH, rounds)
        routes = app.router.routes
        agents = next(
            i for i, r in enumerate(routes) if getattr(r, "original_router", None) is agents_router
        )
        routes.append(routes.pop(agents))
        before = per_item(lambda: loop.run_until_complete(requests(BATCH)), BATCH, rounds)
    finally:
        loop.close()
    if set(statuses) != {401}:
        raise RuntimeError(f"the push route answered {sorted(set(statuses))}, expected 401")
    return [
        line("routing", "agents' routes last (before)", *before),
        line("routing", "agents' routes first (now)", *now),
        f"{'':<13}ratio now/before: CPU {now[0] / before[0]:.2f}",
    ]


def live_events(rounds: int) -> list[str]:
    """A batch's events published one by one, then in one pipeline."""
    from app.core import pubsub

    events = [
        {"host_id": host_id, "host": {"status": "up"}, "point": {"active": 5.0, "req_per_s": 9.5}}
        for host_id in range(BATCH)
    ]
    sent: list[int] = []

    def one_by_one() -> None:
        sent.append(sum(pubsub.publish("sample", event) for event in events))

    def pipelined() -> None:
        sent.append(pubsub.publish_many("sample", events))

    before = per_item(one_by_one, BATCH, rounds)
    now = per_item(pipelined, BATCH, rounds)
    if set(sent) != {BATCH}:
        raise RuntimeError(f"Redis took {sorted(set(sent))} of {BATCH} events per batch")
    return [
        line("live events", "one PUBLISH per push (before)", *before),
        line("live events", "one pipeline per batch (now)", *now),
        f"{'':<13}ratio now/before: CPU {now[0] / before[0]:.2f}",
    ]


def host_updates(database: str, hosts: int, batches: int) -> list[str]:
    """The batched host UPDATE with copies due on every push, then at most once a minute."""
    from app.agents.batch_ingest import _HOST_STATUS_UPDATE
    from app.core.db import utcnow
    from app.hosts.latest import LATEST_FIGURES
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    import fleet_api
    from harness.pgdb import sqlalchemy_url

    with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
        conn.execute(fleet_api.FLEET_SQL[0].replace(":hosts", str(hosts)))
        conn.execute(fleet_api.FLEET_SQL[1])  # the sorted copies
        conn.execute("VACUUM ANALYZE hosts")

    def run(refresh_after: timedelta) -> tuple[float, float, float]:
        # A connection of its own: its backend reports its statistics when it ends.
        engine = create_engine(sqlalchemy_url(database), poolclass=NullPool)
        with engine.connect() as session:
            pid = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
            session.commit()
            stat_path = Path(f"/proc/{pid}/stat")

            def backend_cpu() -> float:
                fields = stat_path.read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

            with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
                before = conn.execute(
                    "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
                    "WHERE relname = 'hosts'"
                ).fetchone()
            cpu_before, wall_before = backend_cpu(), time.perf_counter()
            for batch in range(batches):
                now = utcnow()
                first = (batch * BATCH) % hosts
                session.execute(
                    _HOST_STATUS_UPDATE,
                    [
                        {
                            "b_id": host_id,
                            "b_hostname": f"host-{host_id:06d}",
                            "b_last_seen_at": now,
                            "b_agent_version": "bench",
                            "b_last_seq": batch,
                            "b_nginx_up": True,
                            "b_stub_status_available": True,
                            "b_stub_status_error": None,
                            "b_refresh_before": now - refresh_after,
                            **{f"b_{name}": (host_id * 7 + batch) % 997 for name in LATEST_FIGURES},
                        }
                        for host_id in range(first + 1, min(first + BATCH, hosts) + 1)
                    ],
                )
                session.commit()
            cpu, wall = backend_cpu() - cpu_before, time.perf_counter() - wall_before
        engine.dispose()
        count = batches * min(BATCH, hosts)
        assert before is not None
        # An ended backend's counts reach the statistics a moment later, later still on a
        # loaded machine: wait until all its updates are counted.
        deadline = time.monotonic() + 30.0
        while True:
            with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
                after = conn.execute(
                    "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
                    "WHERE relname = 'hosts'"
                ).fetchone()
            assert after is not None
            if after[0] - before[0] >= count or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        updates = after[0] - before[0]
        hot_share = (after[1] - before[1]) / updates if updates else 0.0
        return cpu / count, wall / count, hot_share

    # The same hosts both times: the first run leaves their copies fresh for the second.
    every = run(-timedelta(days=1))
    at_most = run(timedelta(seconds=60))
    return [
        line("host update", "copies rewritten by every push (before 0014)", *every[:2])
        + f"   HOT {every[2]:.0%}",
        line("host update", "copies refreshed once a minute (now)", *at_most[:2])
        + f"   HOT {at_most[2]:.0%}",
        f"{'':<13}ratio now/before: PostgreSQL backend CPU {at_most[0] / every[0]:.2f}, "
        f"wall {at_most[1] / every[1]:.2f}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the three parts; print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--hosts", type=int, default=10_000, help="hosts in the table (10000)")
    args = parser.parse_args(argv)
    if args.hosts < 1:
        parser.error(f"--hosts must be >= 1, got {args.hosts}")
    rounds = 5 if args.quick else 25
    # Each host once per run.
    batches = max(1, min(20 if args.quick else 50, args.hosts // BATCH))
    with tempfile.TemporaryDirectory(prefix="nf-bench-parts-") as tmp, temporary_database() as db:
        env = cp.backend_env(database=db, data_dir=Path(tmp), base=os.environ)
        env.update(
            REDIS_URL=REDIS_URL,
            NGINX_FLEET_EVENTS_CHANNEL=f"nginx-fleet:bench-{secrets.token_hex(4)}",
        )
        cp.migrate(env=env)
        # The app reads its settings from the environment: this process is the API here.
        os.environ.update(env)
        lines = [*routing(rounds), *live_events(rounds), *host_updates(db, args.hosts, batches)]
    quick = "--quick, " if args.quick else ""
    print(f"nginx-fleet ingest parts, per push ({quick}{BATCH} a batch)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
