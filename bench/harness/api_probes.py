"""What a person's browser does during a load run: a logged-in session reading pages at a fixed
low rate (each request timed), and live event streams counted by event name and bytes."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from harness.control_plane import ADMIN_PASSWORD, ADMIN_USER, API


def browser_headers(base_url: str) -> dict[str, str]:
    """Cookie and CSRF headers of a fresh admin session.

    In production the session cookies are `Secure`; a browser sends them over the web
    container's HTTPS, httpx would not send them over plain loopback HTTP, so they are set
    as the Cookie header here."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        reply = client.post(
            f"{API}/auth/login", json={"username": ADMIN_USER, "password": ADMIN_PASSWORD}
        )
    if reply.status_code != 200:
        raise RuntimeError(f"login: HTTP {reply.status_code} {reply.text[:300]}")
    cookies = {name: value for name, value in reply.cookies.items()}
    if "nf_session" not in cookies:
        raise RuntimeError(f"login set no session cookie: {sorted(cookies)}")
    return {
        "Cookie": "; ".join(f"{name}={value}" for name, value in cookies.items()),
        "X-CSRF-Token": cookies.get("nf_csrf", ""),
    }


@dataclass(frozen=True)
class Probe:
    """One kind of page read: a label, a path and its query parameters."""

    label: str
    path: str
    params: dict[str, str | int] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeResult:
    """One timed request."""

    label: str
    started_at: float
    duration_s: float
    status: int
    body_bytes: int
    rows: int | None
    shape: str


def describe_body(content: bytes) -> tuple[str, int | None]:
    """The fleet reply's shape ('list' of every host, or 'page' with items) and its row count."""
    head = content[:1]
    if head == b"[":
        return "list", None  # counting 10,000 rows here would cost the probe more than a page
    if head == b"{":
        document = orjson.loads(content)
        items = document.get("items") if isinstance(document, dict) else None
        if isinstance(items, list):
            return "page", len(items)
        return "object", None
    return "other", None


class PacedReader:
    """Issues its probes in turn at `rate_per_s` from a thread of its own; a slow reply delays
    the next request (never a burst to catch up), and the missed slots are counted."""

    def __init__(
        self, *, base_url: str, headers: dict[str, str], probes: Sequence[Probe], rate_per_s: float
    ) -> None:
        self._client = httpx.Client(base_url=base_url, headers=headers, timeout=60)
        self._probes = list(probes)
        self._period_s = 1.0 / rate_per_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="paced-reader", daemon=True)
        self.results: list[ProbeResult] = []
        self.missed_slots = 0
        self.errors: Counter[str] = Counter()

    def _run(self) -> None:
        due = time.monotonic()
        turn = 0
        while not self._stop.is_set():
            probe = self._probes[turn % len(self._probes)]
            turn += 1
            started = time.monotonic()
            try:
                reply = self._client.get(probe.path, params=probe.params)
            except httpx.HTTPError as exc:
                self.errors[type(exc).__name__] += 1
            else:
                elapsed = time.monotonic() - started
                shape, rows = describe_body(reply.content)
                self.results.append(
                    ProbeResult(
                        label=probe.label,
                        started_at=started,
                        duration_s=elapsed,
                        status=reply.status_code,
                        body_bytes=len(reply.content),
                        rows=rows,
                        shape=shape,
                    )
                )
            due += self._period_s
            now = time.monotonic()
            if now > due:
                self.missed_slots += int((now - due) / self._period_s)
                due = now
            self._stop.wait(due - now)

    def start(self) -> None:
        """Begin reading."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after the request in progress."""
        self._stop.set()
        self._thread.join(timeout=120)
        self._client.close()

    def window(self, start: float, end: float) -> list[ProbeResult]:
        """The requests started within [start, end)."""
        return [r for r in self.results if start <= r.started_at < end]


@dataclass(frozen=True)
class StreamCounts:
    """Events and bytes a live stream had received by some moment."""

    at: float
    events: dict[str, int]
    bytes_received: int
    keepalives: int


class EventStreamCounter:
    """A browser's EventSource on `path`: counts events by name, keepalive comments and bytes."""

    def __init__(self, *, base_url: str, headers: dict[str, str], path: str) -> None:
        self.path = path
        self._client = httpx.Client(
            base_url=base_url,
            headers={**headers, "Accept": "text/event-stream"},
            timeout=httpx.Timeout(30, read=None),
        )
        self._lock = threading.Lock()
        self._events: Counter[str] = Counter()
        self._keepalives = 0
        self._bytes = 0
        self._stop = threading.Event()
        self._opened = threading.Event()
        self.status: int | None = None
        self.error: str = ""
        self.sample_payload: str = ""
        self._thread = threading.Thread(target=self._run, name=f"sse {path}", daemon=True)

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self.path) as reply:
                self.status = reply.status_code
                self._opened.set()
                if reply.status_code != 200:
                    self.error = reply.read().decode(errors="replace")[:300]
                    return
                self._read(reply)
        except httpx.HTTPError as exc:
            if not self._stop.is_set():
                self.error = repr(exc)
        finally:
            self._opened.set()

    def _read(self, reply: httpx.Response) -> None:
        name, has_data = "message", False
        for line in reply.iter_lines():
            if self._stop.is_set():
                return
            with self._lock:
                self._bytes = reply.num_bytes_downloaded
                if line.startswith(":"):
                    self._keepalives += 1
                elif line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    has_data = True
                    if not self.sample_payload and name != "message":
                        self.sample_payload = f"{name}: {line[5:].strip()[:300]}"
                elif line == "" and has_data:
                    self._events[name] += 1
                    name, has_data = "message", False

    def start(self, timeout_s: float = 30) -> None:
        """Open the stream; fail when it does not open with 200."""
        self._thread.start()
        self._opened.wait(timeout_s)
        if self.status != 200:
            raise RuntimeError(f"GET {self.path}: {self.status} {self.error}")

    def counts(self) -> StreamCounts:
        """What the stream received so far."""
        with self._lock:
            return StreamCounts(
                at=time.monotonic(),
                events=dict(self._events),
                bytes_received=self._bytes,
                keepalives=self._keepalives,
            )

    def stop(self) -> None:
        """Close the stream."""
        self._stop.set()
        self._client.close()
        self._thread.join(timeout=10)


@dataclass(frozen=True)
class StreamWindow:
    """Events per second by name and bytes per second a stream received over a window."""

    path: str
    seconds: float
    events: dict[str, int]
    bytes_received: int

    @property
    def events_per_s(self) -> float:
        """Every event name together, per second."""
        return sum(self.events.values()) / self.seconds

    @property
    def bytes_per_s(self) -> float:
        """Bytes per second on the wire (SSE framing included)."""
        return self.bytes_received / self.seconds

    def as_dict(self) -> dict[str, Any]:
        """For the JSON result file."""
        return {
            "path": self.path,
            "seconds": round(self.seconds, 1),
            "events": self.events,
            "events_per_s": round(self.events_per_s, 2),
            "bytes_per_s": round(self.bytes_per_s, 1),
        }


def stream_window(path: str, first: StreamCounts, last: StreamCounts) -> StreamWindow:
    """What a stream received between two counts."""
    names = set(first.events) | set(last.events)
    return StreamWindow(
        path=path,
        seconds=last.at - first.at,
        events={n: last.events.get(n, 0) - first.events.get(n, 0) for n in sorted(names)},
        bytes_received=last.bytes_received - first.bytes_received,
    )


@contextlib.contextmanager
def reading(reader: PacedReader) -> Iterator[PacedReader]:
    """A paced reader running inside the block."""
    reader.start()
    try:
        yield reader
    finally:
        reader.stop()


@contextlib.contextmanager
def streaming(counter: EventStreamCounter) -> Iterator[EventStreamCounter]:
    """A live stream open inside the block."""
    counter.start()
    try:
        yield counter
    finally:
        counter.stop()
