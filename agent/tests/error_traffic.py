"""Real traffic that makes nginx write error-log lines: 404s of missing files, dropped connections.

Everything listens on loopback and every load is bounded in count and time.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

import httpx

from tests.nginx_instance import free_port

# `/missing/...`: one [error] "open() ... failed (2: No such file or directory)" line each.
# `/slow`: proxied to an upstream that never answers, so each request holds two of nginx's
# connections (client and upstream) until proxy_read_timeout.
ERROR_SERVER = """
    upstream never_answers {
        server 127.0.0.1:{hang_port};
    }
    server {
        listen 127.0.0.1:{port};
        server_name status.test;
        access_log off;
        location = /nginx_status {
            stub_status;
        }
        location / {
            return 200 "hello\\n";
        }
        location /missing/ {
            root /nonexistent-nginx-fleet-test-root;
        }
        location /slow {
            proxy_pass http://never_answers;
            proxy_read_timeout 2s;
        }
        {extra}
    }
"""


class HangingUpstream:
    """A loopback listener that never accepts: the kernel completes the handshakes, nobody
    answers, so nginx waits on each upstream request until its read timeout."""

    def __init__(self) -> None:
        self.port = free_port()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", self.port))
        self._sock.listen(512)

    def close(self) -> None:
        """Stop listening."""
        self._sock.close()


def error_server(hang_port: int, extra: str = "") -> str:
    """The server block, with `extra` directives added to it."""
    return ERROR_SERVER.replace("{hang_port}", str(hang_port)).replace("{extra}", extra)


def request_missing(base_url: str, count: int, tag: str = "x") -> None:
    """`count` requests for files that do not exist: one [error] line each."""
    with httpx.Client(base_url=base_url, trust_env=False, timeout=5) as client:
        for i in range(count):
            assert client.get(f"/missing/{tag}{i}").status_code == 404


@contextlib.contextmanager
def held_connections(
    port: int, count: int, *, spacing_s: float = 0.02, hold_s: float = 0.3
) -> Iterator[list[socket.socket]]:
    """Open `count` connections one by one, each sending a request for /slow, and hold them.

    The spacing lets nginx read each request before the next connection arrives: a connection
    still waiting for its request is reusable, and nginx would close it to make room instead
    of dropping the newcomer. Once every connection is busy, each new one is dropped."""
    held: list[socket.socket] = []
    request = b"GET /slow HTTP/1.1\r\nHost: status.test\r\n\r\n"
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            held.append(sock)
            with contextlib.suppress(OSError):  # a dropped connection may be reset at once
                sock.sendall(request)
            time.sleep(spacing_s)
        time.sleep(hold_s)
        yield held
    finally:
        for sock in held:
            sock.close()


def wait_for_status(base_url: str, timeout_s: float = 10) -> str:
    """The stub_status page, once nginx has a free connection to answer it again."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return httpx.get(base_url + "/nginx_status", trust_env=False, timeout=1).text
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
