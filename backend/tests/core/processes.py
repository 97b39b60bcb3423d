"""Helpers for tests that start the real `nginx-fleet` command."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

NGINX_FLEET = str(Path(sys.executable).with_name("nginx-fleet"))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def embedded_env(data_dir: Path) -> dict[str, str]:
    """The environment of an embedded instance in data_dir: no PostgreSQL, no Redis."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        NGINX_FLEET_DATA_DIR=str(data_dir),
        NGINX_FLEET_UI_DIR=str(data_dir / "no-ui"),
        NGINX_FLEET_ENV="development",
    )
    env.pop("NGINX_FLEET_ADMIN_PASSWORD", None)
    return env


def run_cli(
    *args: str, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `nginx-fleet args...` to completion."""
    return subprocess.run(
        [NGINX_FLEET, *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def wait_until_healthy(base_url: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Poll /api/v1/health until it answers 200; fail early if the process died."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited early with code {process.returncode}")
        try:
            if httpx.get(f"{base_url}/api/v1/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"server at {base_url} not healthy after {timeout_s}s")


def child_pids(pid: int) -> list[int]:
    """Direct children of a process (Linux /proc)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(part) for part in children.read_text().split()] if children.exists() else []


def pid_alive(pid: int) -> bool:
    """True while a process exists and is not a zombie."""
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text()
    except FileNotFoundError:
        return False


def stop_by_pid(pids: list[int]) -> None:
    """Kill the given processes if a failed test left them running (no-op otherwise)."""
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
