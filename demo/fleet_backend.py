"""Driving the nginx-fleet control plane for the demo: its CLI, its health and its fleet API."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ADMIN_USER = "admin"
# Settings that would switch the backend out of embedded mode or point it elsewhere.
FOREIGN_SETTINGS = ("DATABASE_URL", "REDIS_URL", "NGINX_FLEET_ENV", "NGINX_FLEET_ADMIN_USER")


class BackendError(RuntimeError):
    """The control plane did not do what the demo needs."""


def venv_script(name: str) -> str:
    """A console script of this Python environment, else one found on PATH."""
    candidate = Path(sys.executable).parent / name
    if candidate.is_file():
        return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise BackendError(f"{name} is not installed: run `make install` first")
    return found


def admin_password(data_dir: Path) -> str:
    """The demo admin's password: kept in the data dir so that a second run can still log in."""
    path = data_dir / "admin-password"
    if path.exists():
        return path.read_text().strip()
    password = secrets.token_urlsafe(12)
    path.write_text(password + "\n")
    path.chmod(0o600)
    return password


@dataclass(frozen=True)
class Backend:
    """How to reach and configure one embedded control plane."""

    data_dir: Path
    port: int
    password: str
    push_interval_s: int

    @property
    def url(self) -> str:
        """Base URL of the dashboard."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment for every `nginx-fleet` command: embedded mode, this data dir."""
        env = {key: value for key, value in os.environ.items() if key not in FOREIGN_SETTINGS}
        env.update(
            NGINX_FLEET_DATA_DIR=str(self.data_dir),
            NGINX_FLEET_PUBLIC_URL=self.url,
            NGINX_FLEET_ADMIN_USER=ADMIN_USER,
            NGINX_FLEET_ADMIN_PASSWORD=self.password,
            NGINX_FLEET_PUSH_INTERVAL_S=str(self.push_interval_s),
        )
        return env

    def run_command(self) -> list[str]:
        """The all-in-one server (migrations, API, worker and beat) on loopback."""
        return [venv_script("nginx-fleet"), "run", "--host", "127.0.0.1", "--port", str(self.port)]

    def cli(self, *args: str) -> str:
        """Run one `nginx-fleet` subcommand and return its stdout; raise with stderr on failure."""
        result = subprocess.run(
            [venv_script("nginx-fleet"), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if result.returncode != 0:
            raise BackendError(f"nginx-fleet {' '.join(args)} failed:\n{result.stderr.strip()}")
        return result.stdout

    def create_enrollment_token(self, labels: dict[str, str]) -> str:
        """A fresh one-use enrolment token carrying the given labels."""
        args = ["create-enrollment-token"]
        for key, value in labels.items():
            args += ["--label", f"{key}={value}"]
        token = self.cli(*args).strip()
        if not token or len(token.split()) != 1:
            raise BackendError(f"create-enrollment-token printed {token!r}, expected one token")
        return token

    def wait_healthy(self, timeout_s: float, is_running: Callable[[], bool]) -> None:
        """Wait for /api/v1/health to answer ok while the server process is still running."""
        deadline = time.monotonic() + timeout_s
        last = "no answer yet"
        while time.monotonic() < deadline:
            if not is_running():
                raise BackendError("the nginx-fleet server exited during start-up")
            try:
                response = httpx.get(f"{self.url}/api/v1/health", timeout=2.0)
                if response.status_code == 200 and response.json().get("status") == "ok":
                    return
                last = f"HTTP {response.status_code}: {response.text[:200]}"
            except httpx.HTTPError as error:
                last = str(error)
            time.sleep(0.5)
        raise BackendError(
            f"{self.url}/api/v1/health did not answer ok in {timeout_s:.0f} s ({last})"
        )

    @contextlib.contextmanager
    def session(self) -> Iterator[httpx.Client]:
        """An httpx client logged in as the demo admin, closed on exit."""
        with httpx.Client(base_url=f"{self.url}/api/v1", timeout=10.0) as client:
            credentials = {"username": ADMIN_USER, "password": self.password}
            response = client.post("/auth/login", json=credentials)
            if response.status_code != 200:
                raise BackendError(
                    f"cannot log in as {ADMIN_USER} (HTTP {response.status_code}); if the data "
                    "dir was made by an earlier run with another password, remove it"
                )
            yield client

    def wait_hosts_up(
        self, hostnames: list[str], timeout_s: float, is_running: Callable[[], bool]
    ) -> None:
        """Wait until every named host has pushed and is reported up."""
        deadline = time.monotonic() + timeout_s
        waiting_for = set(hostnames)
        with self.session() as client:
            while time.monotonic() < deadline:
                if not is_running():
                    raise BackendError("a demo process exited while waiting for the first pushes")
                response = client.get("/fleet")
                response.raise_for_status()
                fleet: list[dict[str, Any]] = response.json()["items"]
                up = {host["hostname"] for host in fleet if host.get("status") == "up"}
                waiting_for = set(hostnames) - up
                if not waiting_for:
                    return
                time.sleep(1.0)
        raise BackendError(f"no push reported up in {timeout_s:.0f} s from: {sorted(waiting_for)}")
