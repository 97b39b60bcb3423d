"""A browser's live stream for tests: signs in, follows /events in a thread, keeps every event."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from app.users.models import User

from tests.conftest import TEST_PASSWORD

EVENTS = "/api/v1/events"


@dataclass(frozen=True)
class Received:
    """One event as the browser got it, with its arrival time (time.monotonic())."""

    at: float
    name: str
    data: Any


def sign_in(base_url: str, user: User) -> httpx.Cookies:
    """The cookies of a browser signed in as user."""
    with httpx.Client(base_url=base_url, timeout=10) as browser:
        login = browser.post(
            "/api/v1/auth/login", json={"username": user.username, "password": TEST_PASSWORD}
        )
        assert login.status_code == 200, login.text
        return browser.cookies


@dataclass
class SseReader:
    """Follows one live stream in a thread until the server ends it."""

    base_url: str
    cookies: httpx.Cookies
    params: dict[str, Any] = field(default_factory=dict)
    status: int | None = None
    events: list[Received] = field(default_factory=list)
    bytes_received: int = 0
    opened: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)

    def start(self) -> SseReader:
        """Open the stream; returns once its status is known."""
        threading.Thread(target=self._run, daemon=True).start()
        assert self.opened.wait(timeout=10), "the stream did not open within 10 s"
        return self

    def named(self, name: str) -> list[Received]:
        """The events of that name received so far."""
        return [event for event in list(self.events) if event.name == name]

    def delta_host_ids(self) -> set[int]:
        """Every host id the `fleet` deltas received so far named."""
        return {host_id for event in self.named("fleet") for host_id in event.data["host_ids"]}

    def wait_for(self, name: str, *, timeout: float) -> Received | None:
        """The first event of that name, waiting for it up to timeout seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.named(name)
            if found:
                return found[0]
            time.sleep(0.02)
        return None

    def _run(self) -> None:
        name = "message"
        try:
            with (
                httpx.Client(base_url=self.base_url, cookies=self.cookies, timeout=30) as client,
                client.stream("GET", EVENTS, params=self.params) as stream,
            ):
                self.status = stream.status_code
                self.opened.set()
                for line in stream.iter_lines():
                    self.bytes_received += len(line) + 1
                    if line.startswith("event:"):
                        name = line.partition(":")[2].strip()
                    elif line.startswith("data:"):
                        data = orjson.loads(line.partition(":")[2])
                        self.events.append(Received(time.monotonic(), name, data))
                        name = "message"
        except (httpx.RemoteProtocolError, httpx.ReadError):
            pass  # the test server stopped under an open stream
        finally:
            self.opened.set()
            self.ended.set()
