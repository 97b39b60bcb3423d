"""Bringing a simulated fleet in: enrolment through the API, each host's first push (facts and
config dump, as a freshly started agent sends), and waiting for the first analyses."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

import httpx
import psycopg

from harness import control_plane as cp
from harness.pgdb import libpq_dsn
from harness.samples import SampleFactory
from harness.wrk_load import HostCredentials

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Timed:
    """How long a setup step took for how many items."""

    count: int
    seconds: float

    @property
    def per_s(self) -> float:
        """Items per second."""
        return self.count / self.seconds if self.seconds else float("inf")


def _in_parallel(
    base_url: str, items: list[T], work: Callable[[httpx.Client, T], R], threads: int
) -> list[R]:
    """`work(client, item)` for every item on `threads` threads, one kept-alive client each."""
    local = threading.local()
    clients: list[httpx.Client] = []
    lock = threading.Lock()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base_url, timeout=60)
            with lock:
                clients.append(local.client)
        return local.client  # type: ignore[no-any-return]

    try:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(lambda item: work(client(), item), items))
    finally:
        for each in clients:
            each.close()


def enroll_fleet(
    base_url: str, *, enrollment_token: str, count: int, threads: int = 8
) -> tuple[list[HostCredentials], Timed]:
    """Enrol `count` hosts through POST /agent/enroll (SHA-256 token hashing, one row lock on
    the enrolment token per enrolment)."""

    def enroll(client: httpx.Client, index: int) -> HostCredentials:
        agent_id = str(uuid.uuid4())
        hostname = f"fleet-{index:05d}"
        reply = client.post(
            f"{cp.API}/agent/enroll",
            json={
                "enrollment_token": enrollment_token,
                "agent_id": agent_id,
                "hostname": hostname,
                "labels": {"env": "bench", "rack": f"r{index % 20:02d}"},
            },
        )
        if reply.status_code != 201:
            raise RuntimeError(f"enrol {hostname}: HTTP {reply.status_code} {reply.text[:300]}")
        enrolled = reply.json()
        return HostCredentials(
            host_id=int(enrolled["host_id"]),
            agent_id=agent_id,
            hostname=hostname,
            host_token=enrolled["host_token"],
            first_seq=1,
        )

    started = time.monotonic()
    hosts = _in_parallel(base_url, list(range(count)), enroll, threads)
    return hosts, Timed(count=count, seconds=time.monotonic() - started)


def first_pushes(
    base_url: str, hosts: list[HostCredentials], *, threads: int = 8
) -> tuple[list[HostCredentials], Timed]:
    """Each host's first push (seq 1 with facts and the config dump); the next seq is 2."""

    def first(client: httpx.Client, host: HostCredentials) -> HostCredentials:
        factory = SampleFactory(rng=random.Random(host.host_id))
        sample = factory.sample(seq=1, moment=datetime.now(UTC))
        cp.push(client, host, [sample], first=True)
        return replace(host, first_seq=2)

    started = time.monotonic()
    pushed = _in_parallel(base_url, hosts, first, threads)
    return pushed, Timed(count=len(hosts), seconds=time.monotonic() - started)


def analysed_hosts(database: str) -> int:
    """Hosts with at least one config analysis stored."""
    with psycopg.connect(libpq_dsn(database)) as conn:
        row = conn.execute("SELECT count(DISTINCT host_id) FROM config_analyses").fetchone()
        assert row is not None
        return int(row[0])


def wait_for_analyses(database: str, *, hosts: int, timeout_s: float) -> tuple[int, Timed]:
    """Wait until every host's first config is analysed (or the timeout); return how many were."""
    started = time.monotonic()
    done = analysed_hosts(database)
    while done < hosts and time.monotonic() - started < timeout_s:
        time.sleep(2)
        done = analysed_hosts(database)
    return done, Timed(count=done, seconds=time.monotonic() - started)
