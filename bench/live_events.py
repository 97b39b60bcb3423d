"""Live events reaching a browser: push events published at N/s over 10,000 hosts, coalesced.

Publishes `sample` events (the envelope and size ingest publishes after each push) on Redis
pub/sub at --rate per second for --duration seconds, cycling over --hosts distinct host ids,
while logged-in SSE clients follow GET /api/v1/events of a real API process: fleet-scoped ones
(the fleet page) and one host-scoped one (a host page, on an enrolled host). Prints, per
client, the events/s and bytes/s received against the publish rate (what every browser got
before coalescing, one event per push), and the delay from a publish to the delta naming its
host (p50/p95) against Redis pub/sub's own delivery delay measured by a plain subscriber in the
same run (the floor). Run: .venv/bin/python bench/live_events.py [--quick]
"""

from __future__ import annotations

import argparse
import bisect
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import redis

from harness import control_plane as cp
from harness.pgdb import temporary_database
from harness.processes import raise_sigterm_as_exit
from harness.stats import Timings, ms, verdict

# The target: at most a few fleet deltas per second per browser.
TARGET_DELTAS_PER_S = 3.0
COALESCE_S = 1.0  # the API's default NGINX_FLEET_EVENTS_COALESCE_S
# A push is carried by a delta within two intervals (plus transport); a host's next push of the
# round robin is --hosts/--rate seconds later (10 s by default), so none is confused with it.
CARRY_S = 2 * COALESCE_S + 1.0
TICK_S = 0.01


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    quick: bool
    rate: int
    duration_s: float
    hosts: int
    fleet_clients: int
    workers: int


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick publishes 200/s for 3 s to one fleet client."""
    parser = argparse.ArgumentParser(description="nginx-fleet live events benchmark (loopback)")
    parser.add_argument("--quick", action="store_true", help="200/s for 3 s, one fleet client")
    parser.add_argument("--rate", type=int, help="published push events per second (1000)")
    parser.add_argument("--duration", type=float, help="seconds of publishing (20)")
    parser.add_argument("--hosts", type=int, default=10_000, help="distinct host ids (10000)")
    parser.add_argument("--fleet-clients", type=int, help="fleet-scoped SSE clients (3)")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers (1)")
    args = parser.parse_args(argv)
    rate = args.rate if args.rate is not None else (200 if args.quick else 1000)
    duration = args.duration if args.duration is not None else (3.0 if args.quick else 20.0)
    clients = args.fleet_clients if args.fleet_clients is not None else (1 if args.quick else 3)
    if rate < 1 or duration <= 0 or args.hosts < 1 or clients < 1 or args.workers < 1:
        parser.error("--rate, --duration, --hosts, --fleet-clients and --workers must be > 0")
    return Options(
        quick=args.quick,
        rate=rate,
        duration_s=duration,
        hosts=args.hosts,
        fleet_clients=clients,
        workers=args.workers,
    )


def sample_event(host_id: int) -> bytes:
    """The Redis envelope of a push's `sample` event, shaped and sized as ingest's."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    data = {
        "host_id": host_id,
        "host": {
            "hostname": f"bench-{host_id:05d}",
            "status": "up",
            "status_reason": None,
            "last_seen_at": now,
            "nginx_version": "1.22.1",
            "stub_status_available": True,
            "stub_status_error": None,
        },
        "point": {
            "ts": now,
            "active": 12,
            "reading": 0,
            "writing": 2,
            "waiting": 10,
            "req_per_s": 153.2,
            "accepts_per_s": 20.1,
            "drops_per_s": 0.0,
            "cpu_pct": 12.5,
            "mem_used_bytes": 1_073_741_824,
            "mem_total_bytes": 4_294_967_296,
            "load1": 0.42,
            "fds_open": 120,
            "fds_limit": 1024,
            "workers": 2,
        },
    }
    encoded = orjson.dumps(data).decode("utf-8")
    return orjson.dumps({"event": "sample", "data": encoded, "host_id": host_id})


@dataclass
class Client:
    """One browser's stream, followed in a thread: every event with its arrival time."""

    base_url: str
    cookies: httpx.Cookies
    params: dict[str, Any]
    events: list[tuple[float, str, Any]] = field(default_factory=list)
    bytes_received: int = 0
    status: int | None = None
    opened: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        name = "message"
        try:
            with (
                httpx.Client(base_url=self.base_url, cookies=self.cookies, timeout=60) as client,
                client.stream("GET", f"{cp.API}/events", params=self.params) as stream,
            ):
                self.status = stream.status_code
                self.opened.set()
                for line in stream.iter_lines():
                    self.bytes_received += len(line.encode()) + 1
                    if line.startswith("event:"):
                        name = line.partition(":")[2].strip()
                    elif line.startswith("data:"):
                        data = orjson.loads(line.partition(":")[2])
                        self.events.append((time.monotonic(), name, data))
        except (httpx.RemoteProtocolError, httpx.ReadError):
            pass  # the API stopped under the open stream at the end of the run
        finally:
            self.opened.set()

    def named(self, name: str, since: float = 0.0) -> list[tuple[float, Any]]:
        """(arrival, data) of the events of that name that arrived after `since`."""
        return [(at, data) for at, event, data in list(self.events) if event == name and at > since]


@dataclass
class FloorSubscriber:
    """A plain Redis subscriber on the same channel: pub/sub's own delivery delay."""

    url: str
    channel: str
    arrivals: dict[int, list[float]] = field(default_factory=dict)
    ready: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        client = redis.Redis.from_url(self.url)
        listener = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
        listener.subscribe(self.channel)
        self.ready.set()
        try:
            while not self.stop.is_set():
                message = listener.get_message(timeout=0.2)
                if message is not None:
                    host_id = orjson.loads(message["data"])["host_id"]
                    self.arrivals.setdefault(host_id, []).append(time.monotonic())
        finally:
            listener.close()
            client.close()


def publish(url: str, channel: str, *, rate: int, duration_s: float, hosts: int) -> list[float]:
    """Publish at `rate`/s, host ids 1..hosts in turn, in ticks of TICK_S (one pipeline each, so
    that the publisher keeps the rate on a busy machine); the publish time of each, by order."""
    client = redis.Redis.from_url(url)
    # Made ahead, so that the publisher's own CPU does not limit the rate it reaches.
    envelopes = [sample_event(host_id) for host_id in range(1, hosts + 1)]
    times: list[float] = []
    start = time.monotonic()
    total = int(rate * duration_s)
    while len(times) < total:
        due = min(total, int((time.monotonic() - start) * rate) + 1)
        pipeline = client.pipeline(transaction=False)
        for index in range(len(times), due):
            pipeline.publish(channel, envelopes[index % hosts])
        sent_at = time.monotonic()
        pipeline.execute()
        times.extend([sent_at] * (due - len(times)))
        time.sleep(max(0.0, start + len(times) / rate + TICK_S - time.monotonic()))
    client.close()
    return times


def push_delays(
    published: list[tuple[int, float]], deltas: list[tuple[float, Any]]
) -> tuple[list[float], int]:
    """Delay from each publish to the first delta naming its host within CARRY_S after it; and
    how many publishes no such delta named (cut from a truncated delta, or lost)."""
    arrivals = [arrived for arrived, _ in deltas]
    named = [set(data["host_ids"]) for _, data in deltas]
    delays: list[float] = []
    unnamed = 0
    for host_id, at in published:
        index = bisect.bisect_right(arrivals, at)
        while index < len(deltas) and arrivals[index] <= at + CARRY_S:
            if host_id in named[index]:
                delays.append(arrivals[index] - at)
                break
            index += 1
        else:
            unnamed += 1
    return delays, unnamed


def floor_delays(published: list[tuple[int, float]], floor: FloorSubscriber) -> list[float]:
    """Publish-to-receive delay of every event at the plain Redis subscriber."""
    seen: dict[int, int] = {}
    delays: list[float] = []
    for host_id, at in published:
        arrivals = floor.arrivals.get(host_id, [])
        index = seen.get(host_id, 0)
        if index < len(arrivals):
            delays.append(arrivals[index] - at)
            seen[host_id] = index + 1
    return delays


def warm_up(url: str, channel: str, clients: list[Client], host_id: int) -> None:
    """Publish the watched host until every stream got something (subscriptions are lazy)."""
    publisher = redis.Redis.from_url(url)
    deadline = time.monotonic() + 20
    try:
        while not all(client.events for client in clients):
            if time.monotonic() > deadline:
                raise RuntimeError("the live streams got no event within 20 s")
            publisher.publish(channel, sample_event(host_id))
            time.sleep(0.2)
    finally:
        publisher.close()
    time.sleep(COALESCE_S + 0.5)  # the warm-up's last delta is out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures; exit 1 when a check fails."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    channel = f"nginx-fleet:events:bench-{uuid.uuid4().hex[:12]}"
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-live-") as tmp_name,
        temporary_database() as database,
    ):
        tmp = Path(tmp_name)
        env = cp.backend_env(database=database, data_dir=tmp / "data", base=os.environ)
        env["NGINX_FLEET_EVENTS_CHANNEL"] = channel
        cp.migrate(env=env)
        token = cp.create_enrollment_token(env=env, max_uses=1)
        with cp.running_api(env=env, workers=options.workers, log_dir=tmp) as api:
            watched = cp.enroll_hosts(api.base_url, enrollment_token=token, count=1)[0]
            browser = cp.logged_in_client(api.base_url)
            cookies = browser.cookies
            browser.close()
            fleet = [Client(api.base_url, cookies, {}) for _ in range(options.fleet_clients)]
            host_page = Client(api.base_url, cookies, {"host_id": watched.host_id})
            clients = [*fleet, host_page]
            for client in clients:
                threading.Thread(target=client.run, daemon=True).start()
                client.opened.wait(timeout=30)
                if client.status != 200:
                    raise RuntimeError(f"GET /events answered {client.status}")
            warm_up(cp.REDIS_URL, channel, clients, watched.host_id)
            floor = FloorSubscriber(cp.REDIS_URL, channel)
            threading.Thread(target=floor.run, daemon=True).start()
            floor.ready.wait(timeout=10)
            before = {id(client): client.bytes_received for client in clients}
            began = time.monotonic()
            times = publish(
                cp.REDIS_URL,
                channel,
                rate=options.rate,
                duration_s=options.duration_s,
                hosts=options.hosts,
            )
            ended = time.monotonic()
            time.sleep(COALESCE_S + 1.0)  # the last delta
            floor.stop.set()
            received = {id(c): c.bytes_received - before[id(c)] for c in clients}
    published = [(index % options.hosts + 1, at) for index, at in enumerate(times)]
    return (
        0
        if report(
            options, published, began, ended, fleet, host_page, floor, received, watched.host_id
        )
        else 1
    )


def report(
    options: Options,
    published: list[tuple[int, float]],
    began: float,
    ended: float,
    fleet: list[Client],
    host_page: Client,
    floor: FloorSubscriber,
    received: dict[int, int],
    watched_id: int,
) -> bool:
    """Print the figures, ratios and checks; True when every check passed."""
    span = ended - began
    rate = len(published) / span
    uncoalesced = sum(
        len(sample_event(host_id)) + len("event: sample\ndata: \n\n")
        for host_id, _ in published[:1000]
    ) / min(len(published), 1000)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"nginx-fleet live events benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"setup: {len(published)} push events published on Redis in {span:.1f} s "
        f"({rate:.0f}/s) over {options.hosts} host ids; {options.fleet_clients} fleet-scoped + "
        f"1 host-scoped SSE client(s), uvicorn {options.workers} worker(s), coalescing "
        f"{COALESCE_S:g} s"
    )
    print(
        f"before coalescing (every push to every browser): {rate:.0f} events/s, "
        f"{rate * uncoalesced / 1024:.0f} KiB/s per browser"
    )
    floor = floor_delays(published, floor)
    floor_timings = Timings.of(floor) if floor else None
    print(
        f"Redis pub/sub alone (floor), publish → receive: "
        f"{floor_timings.line() if floor_timings else 'nothing received'}"
    )
    ok = floor_timings is not None and len(floor) == len(published)
    window = span + COALESCE_S
    for number, client in enumerate(fleet, start=1):
        deltas = client.named("fleet", since=began)
        events = [event for event in client.events if event[0] > began]
        delays, unnamed = push_delays(published, deltas)
        truncated = sum(1 for _, data in deltas if data["truncated"])
        per_s = len(deltas) / window
        timings = Timings.of(delays) if delays else None
        print(
            f"fleet client {number}: {len(events) / window:.2f} events/s ({per_s:.2f} deltas/s), "
            f"{received[id(client)] / window / 1024:.1f} KiB/s; ratio events received/published "
            f"{len(events) / len(published):.4f}; {truncated} truncated delta(s), "
            f"{unnamed} of {len(published)} pushes not named"
        )
        if timings and floor_timings:
            print(
                f"  push → delta naming its host: median {ms(timings.median_s)}  "
                f"p95 {ms(timings.p95_s)}  max {ms(timings.max_s)}; ratio to the Redis floor "
                f"median {timings.median_s / floor_timings.median_s:.0f}x"
            )
        ok = ok and timings is not None and per_s <= TARGET_DELTAS_PER_S
        ok = ok and (unnamed == 0 or truncated > 0)
        ok = ok and not client.named("sample", since=began)
    samples = host_page.named("sample", since=began)
    expected = sum(1 for host_id, _ in published if host_id == watched_id)
    foreign = [data["host_id"] for _, data in samples if data["host_id"] != watched_id]
    print(
        f"host client (host {watched_id}): {len(samples)} samples ({len(samples) / window:.2f}/s)"
        f" of the {expected} its host published, {len(foreign)} of other hosts, "
        f"{len(host_page.named('fleet', since=began))} fleet deltas, "
        f"{received[id(host_page)] / window / 1024:.2f} KiB/s"
    )
    ok = ok and len(samples) == expected and not foreign
    worst = max(len(c.named("fleet", since=began)) / window for c in fleet)
    print(
        f"target at most {TARGET_DELTAS_PER_S:g} deltas/s per fleet browser whatever the push "
        f"rate: {verdict(worst <= TARGET_DELTAS_PER_S)} ({worst:.2f}/s at {rate:.0f} pushes/s)"
    )
    print(
        f"check: every push named by a delta (or a delta says it was cut), a host page gets "
        f"only its host, Redis delivered every event: {'OK' if ok else 'FAILED'}"
    )
    return ok


if __name__ == "__main__":
    sys.exit(main())
