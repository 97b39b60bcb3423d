"""Bounded loopback traffic for the demo nginx instances: steady load, bursts, 404s, cache hits,
and for the `drops` profile surges of slow downloads that overflow its worker_connections."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import random
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")

# (path, weight): mostly pages that exist, a few that do not (404s), per kind of instance.
PROFILES: dict[str, list[tuple[str, int]]] = {
    "static": [
        ("/", 30),
        ("/about.html", 10),
        ("/docs/index.html", 6),
        ("/assets/app.css", 20),
        ("/assets/app.js", 20),
        ("/assets/logo.svg", 10),
        ("/missing.html", 3),
        ("/wp-login.php", 1),
    ],
    "cache": [
        ("/", 15),
        ("/api/products", 30),
        ("/api/products/1", 8),
        ("/api/products/2", 8),
        ("/api/products/3", 8),
        ("/api/time", 12),
        ("/api/report", 6),
        ("/api/nothing-here", 3),
    ],
    # Between surges: an ordinary small site.
    "drops": [
        ("/", 30),
        ("/about.html", 10),
        ("/assets/app.css", 15),
        ("/assets/app.js", 15),
        ("/missing.html", 2),
    ],
}
# Surges of the drops profile: SURGE_CONNECTIONS slow downloads opened one after the other,
# every SURGE_EVERY_S. The spacing lets nginx read each request before the next connection
# comes (a connection still waiting for its request is one nginx may close to make room); once
# every connection is busy, nginx drops each new one. Each surge costs a few seconds.
SURGE_PATH = "/downloads/demo.bin"
SURGE_CONNECTIONS = 40
SURGE_SPACING_S = 0.02
SURGE_FIRST_S = (5.0, 10.0)
SURGE_EVERY_S = (20.0, 40.0)


class TargetError(ValueError):
    """A --target argument that cannot be used."""


@dataclass(frozen=True)
class Target:
    """One nginx instance to send requests to."""

    name: str
    profile: str
    base_url: str


@dataclass
class Budget:
    """Shared limits of the whole run: a deadline and a maximum number of requests."""

    deadline: float
    max_requests: int
    sent: int = 0
    statuses: Counter[str] = field(default_factory=Counter)

    def take(self) -> bool:
        """Reserve one request if time and count allow."""
        if self.sent >= self.max_requests or time.monotonic() >= self.deadline:
            return False
        self.sent += 1
        return True


def parse_target(spec: str) -> Target:
    """Parse NAME,PROFILE,URL and refuse anything that is not a 127.0.0.0/8 http URL."""
    parts = spec.split(",", 2)
    if len(parts) != 3:
        raise TargetError(f"--target {spec!r}: expected NAME,PROFILE,URL")
    name, profile, url = parts
    if profile not in PROFILES:
        raise TargetError(f"--target {spec!r}: profile must be one of {sorted(PROFILES)}")
    parsed = httpx.URL(url)
    if parsed.scheme != "http":
        raise TargetError(f"--target {spec!r}: only http:// URLs are supported")
    try:
        address = ipaddress.ip_address(parsed.host)
    except ValueError:
        raise TargetError(
            f"--target {spec!r}: the host must be a literal 127.x.x.x address"
        ) from None
    if address not in LOOPBACK:
        raise TargetError(f"--target {spec!r}: refusing to send traffic outside 127.0.0.0/8")
    return Target(name=name, profile=profile, base_url=str(parsed).rstrip("/"))


def current_rate(base_rate: float, started: float, burst_every_s: float) -> float:
    """Requests per second now: the base rate, times five during a 10 s burst each period."""
    in_period = (time.monotonic() - started) % burst_every_s
    return base_rate * 5 if in_period < 10 else base_rate


async def _one_request(
    client: httpx.AsyncClient, target: Target, budget: Budget, inflight: asyncio.Semaphore
) -> None:
    paths, weights = zip(*PROFILES[target.profile], strict=True)
    path = random.choices(paths, weights=weights)[0]
    try:
        response = await client.get(target.base_url + path)
        budget.statuses[f"{response.status_code // 100}xx"] += 1
    except httpx.HTTPError as error:
        budget.statuses[type(error).__name__] += 1
    finally:
        inflight.release()


async def drive_target(target: Target, budget: Budget, stop: asyncio.Event) -> None:
    """Send requests to one target until the budget or the stop event ends the run."""
    base_rate = random.uniform(2.0, 8.0)
    burst_every_s = random.uniform(45.0, 90.0)
    started = time.monotonic()
    inflight = asyncio.Semaphore(64)
    timeout = httpx.Timeout(10.0)
    # Two kinds of clients: one keeps connections open (Waiting in stub_status), one closes.
    keepalive = httpx.AsyncClient(
        timeout=timeout, limits=httpx.Limits(max_keepalive_connections=8), follow_redirects=False
    )
    closing = httpx.AsyncClient(
        timeout=timeout,
        limits=httpx.Limits(max_keepalive_connections=0),
        headers={"Connection": "close"},
        follow_redirects=False,
    )
    tasks: set[asyncio.Task[None]] = set()
    async with keepalive, closing:
        while not stop.is_set():
            await inflight.acquire()
            if not budget.take():
                inflight.release()
                break
            client = keepalive if random.random() < 0.7 else closing
            task = asyncio.create_task(_one_request(client, target, budget, inflight))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            delay = random.expovariate(current_rate(base_rate, started, burst_every_s))
            try:
                await asyncio.wait_for(stop.wait(), timeout=delay)
            except TimeoutError:
                continue
        if tasks:
            await asyncio.gather(*tasks)


async def _download(client: httpx.AsyncClient, url: str, budget: Budget) -> None:
    """One slow download read to its end; a dropped connection counts by its error's name."""
    try:
        async with client.stream("GET", url) as response:
            async for _ in response.aiter_bytes():
                pass
        budget.statuses[f"{response.status_code // 100}xx"] += 1
    except httpx.HTTPError as error:
        budget.statuses[type(error).__name__] += 1


async def surge(
    client: httpx.AsyncClient, target: Target, budget: Budget, count: int = SURGE_CONNECTIONS
) -> None:
    """Open `count` slow downloads one after the other and wait for all of them."""
    tasks = []
    for _ in range(count):
        if not budget.take():
            break
        tasks.append(asyncio.create_task(_download(client, target.base_url + SURGE_PATH, budget)))
        await asyncio.sleep(SURGE_SPACING_S)
    await asyncio.gather(*tasks)


def surge_client() -> httpx.AsyncClient:
    """A client with a fresh connection per download, as many at once as a surge opens."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(15.0),
        limits=httpx.Limits(max_connections=SURGE_CONNECTIONS, max_keepalive_connections=0),
        headers={"Connection": "close"},
        follow_redirects=False,
    )


async def drive_surges(target: Target, budget: Budget, stop: asyncio.Event) -> None:
    """Surge the target now and then until the budget or the stop event ends the run."""
    pause = random.uniform(*SURGE_FIRST_S)
    async with surge_client() as client:
        while True:
            # Never waits past the run's deadline: the run ends when its time is up.
            wait = min(pause, budget.deadline - time.monotonic())
            try:
                await asyncio.wait_for(stop.wait(), timeout=max(0.0, wait))
                return
            except TimeoutError:
                pass
            if budget.sent >= budget.max_requests or time.monotonic() >= budget.deadline:
                return
            await surge(client, target, budget)
            pause = random.uniform(*SURGE_EVERY_S)


async def run(targets: list[Target], duration_s: float, max_requests: int) -> Budget:
    """Drive every target concurrently; return the budget with per-status counts."""
    budget = Budget(deadline=time.monotonic() + duration_s, max_requests=max_requests)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    drivers = [drive_target(target, budget, stop) for target in targets]
    drivers += [drive_surges(t, budget, stop) for t in targets if t.profile == "drops"]
    await asyncio.gather(*drivers)
    return budget


def main(argv: list[str] | None = None) -> int:
    """Parse the targets and limits, run, print a one-line summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--target",
        action="append",
        required=True,
        help="NAME,PROFILE,URL with PROFILE static|cache|drops and a 127.0.0.0/8 URL (repeatable)",
    )
    parser.add_argument("--duration", type=float, default=7200.0, help="seconds (default 2 h)")
    parser.add_argument("--max-requests", type=int, default=500_000, help="stop after this many")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.max_requests <= 0:
        parser.error("--duration and --max-requests must be positive")
    try:
        targets = [parse_target(spec) for spec in args.target]
    except TargetError as error:
        parser.error(str(error))
    budget = asyncio.run(run(targets, args.duration, args.max_requests))
    summary = ", ".join(f"{key}: {count}" for key, count in sorted(budget.statuses.items()))
    print(f"traffic: {budget.sent} requests ({summary})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
