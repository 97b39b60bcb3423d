"""A minimal stand-in control plane on loopback: answers enrol, push and ping, records pushes."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SINK_HOST_TOKEN = "nfh_bench_sink_token"


@dataclass
class SinkRecord:
    """What the sink received, shared between its handler threads and the benchmark."""

    push_interval_s: int
    # Answer every Nth push 503 without recording it (0: never), to exercise retries.
    fail_every: int = 0
    failed_pushes: int = 0
    pushes: list[dict[str, Any]] = field(default_factory=list)
    pings: int = 0
    rejected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def sample_count(self) -> int:
        """Samples received over all pushes."""
        with self.lock:
            return sum(len(push.get("samples", [])) for push in self.pushes)


class _Handler(BaseHTTPRequestHandler):
    record: SinkRecord

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging: the benchmark prints its own figures."""

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        parsed: dict[str, Any] = json.loads(raw) if raw else {}
        return parsed

    def do_POST(self) -> None:
        """Enrol, push and ping as in docs/agent-protocol.md; anything else is a 404."""
        record = self.record
        body = self._body()
        if self.path == "/api/v1/agent/enroll":
            self._reply(
                201,
                {
                    "host_id": 1,
                    "host_token": SINK_HOST_TOKEN,
                    "push_interval_s": record.push_interval_s,
                },
            )
            return
        if self.headers.get("Authorization") != f"Bearer {SINK_HOST_TOKEN}":
            with record.lock:
                record.rejected.append(f"{self.path}: bad token")
            self._reply(401, {"detail": "unknown host token"})
            return
        if self.path == "/api/v1/agent/push":
            with record.lock:
                arrived = len(record.pushes) + record.failed_pushes + 1
                refuse = record.fail_every > 0 and arrived % record.fail_every == 0
                if refuse:
                    record.failed_pushes += 1
                else:
                    record.pushes.append(body)
            if refuse:
                self._reply(503, {"detail": "the sink refuses this push on purpose"})
                return
            self._reply(
                200,
                {
                    "accepted": len(body.get("samples", [])),
                    "duplicates": 0,
                    "config_wanted": False,
                    "push_interval_s": record.push_interval_s,
                    "actions": [],
                },
            )
        elif self.path == "/api/v1/agent/ping":
            with record.lock:
                record.pings += 1
            self._reply(200, {"ok": True, "host_id": 1})
        else:
            self._reply(404, {"detail": f"no such endpoint {self.path}"})


@contextmanager
def running_sink(port: int, *, push_interval_s: int, fail_every: int = 0) -> Iterator[SinkRecord]:
    """Serve the sink on 127.0.0.1:`port` in a thread for the duration of the block."""
    record = SinkRecord(push_interval_s=push_interval_s, fail_every=fail_every)
    handler = type("SinkHandler", (_Handler,), {"record": record})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, name="sink", daemon=True)
    thread.start()
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
