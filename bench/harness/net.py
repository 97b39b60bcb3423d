"""Loopback ports and waiting for a server we started to answer."""

from __future__ import annotations

import socket
import time

import httpx

from harness.processes import ManagedProcess

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_ready(url: str, process: ManagedProcess, timeout_s: float = 60.0) -> None:
    """Poll `url` until it answers 200; fail early, with the log, if the process died."""
    deadline = time.monotonic() + timeout_s
    last_error = "no answer yet"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if not process.alive():
                raise RuntimeError(
                    f"{process.name} exited with {process.popen.returncode} before answering "
                    f"{url}; its log ends with:\n{process.log_tail()}"
                )
            try:
                reply = client.get(url)
            except httpx.TransportError as exc:
                last_error = repr(exc)
            else:
                if reply.status_code == 200:
                    return
                last_error = f"HTTP {reply.status_code}: {reply.text[:200]}"
            time.sleep(0.1)
    raise RuntimeError(
        f"{process.name} did not answer {url} within {timeout_s:.0f} s ({last_error}); "
        f"its log ends with:\n{process.log_tail()}"
    )
