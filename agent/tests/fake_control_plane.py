"""A small real HTTP server on loopback that plays the control plane's agent endpoints."""

from __future__ import annotations

import gzip
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.nginx_instance import free_port

HOST_TOKEN = "nfh_test_token"
ENROLLMENT_TOKEN = "nfe_test_token"


@dataclass
class Recorded:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    raw_body: bytes
    body: dict[str, Any]
    # When it arrived (monotonic clock).
    at: float = field(default_factory=time.monotonic)


@dataclass
class FakeControlPlane:
    """Answers push/ping/enroll; `push_statuses` queues non-200 replies for the next pushes.

    Samples whose seq is in `refused_seqs` are refused alone, as the real server refuses an
    invalid sample: listed in the 200 reply's `rejected`, the rest of the push stored."""

    port: int = field(default_factory=free_port)
    push_statuses: list[int] = field(default_factory=list)
    push_interval_s: float = 10
    # `next_push_s` of every 200 reply (the cadence hint while a change is in flight).
    next_push_s: Any = None
    config_wanted: bool = False
    requests: list[Recorded] = field(default_factory=list)
    seen: set[tuple[str, int]] = field(default_factory=set)
    refused_seqs: set[int] = field(default_factory=set)
    gaps: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Pending actions, repeated in every 200 reply as the real server repeats them.
    actions: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL of the server."""
        return f"http://127.0.0.1:{self.port}"

    def pushes(self) -> list[Recorded]:
        """The push requests received so far."""
        return [r for r in self.requests if r.path.endswith("/push")]

    def start(self) -> None:
        """Listen on the port (the same one after a restart)."""
        plane = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                plane._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        raw = request.rfile.read(int(request.headers.get("Content-Length", "0")))
        data = gzip.decompress(raw) if request.headers.get("Content-Encoding") == "gzip" else raw
        body = json.loads(data) if data else {}
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(Recorded(request.path, headers, raw, body))
        status, reply = self._reply(request.path, headers, body)
        encoded = json.dumps(reply).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(encoded)))
        request.end_headers()
        request.wfile.write(encoded)

    def _reply(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        if path == "/api/v1/agent/enroll":
            if body.get("enrollment_token") != ENROLLMENT_TOKEN:
                return 401, {"detail": "unknown or expired enrolment token"}
            return 201, {"host_id": 7, "host_token": HOST_TOKEN, "push_interval_s": 10}
        if headers.get("authorization") != f"Bearer {HOST_TOKEN}":
            return 401, {"detail": "unknown host token"}
        if path == "/api/v1/agent/ping":
            return 200, {"ok": True, "host_id": 7}
        if self.push_statuses:
            status = self.push_statuses.pop(0)
            return status, {"detail": f"test server answers {status}"}
        rejected = [
            {"seq": s["seq"], "field": f"samples[{i}].ts", "reason": f"samples[{i}].ts: refused"}
            for i, s in enumerate(body["samples"])
            if s["seq"] in self.refused_seqs
        ]
        keys = [
            (body["agent_id"], sample["seq"])
            for sample in body["samples"]
            if sample["seq"] not in self.refused_seqs
        ]
        duplicates = sum(key in self.seen for key in keys)
        self.seen.update(keys)
        for gap in body.get("gaps", []):
            self.gaps[gap["from_seq"]] = gap
        return 200, {
            "accepted": len(keys) - duplicates,
            "duplicates": duplicates,
            "rejected": rejected,
            "gaps": len(body.get("gaps", [])),
            "config_wanted": self.config_wanted,
            "push_interval_s": self.push_interval_s,
            "next_push_s": self.next_push_s,
            "actions": self.actions,
        }
