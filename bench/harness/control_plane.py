"""The real nginx-fleet backend for a benchmark: migrate, start uvicorn, enrol hosts, log in."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from harness.net import free_port, wait_until_ready
from harness.pgdb import sqlalchemy_url
from harness.processes import ManagedProcess, running
from harness.samples import push_body
from harness.wrk_load import HostCredentials

VENV_BIN = Path(sys.executable).parent
REDIS_URL = "redis://127.0.0.1:6379/14"
ADMIN_USER = "bench-admin"
ADMIN_PASSWORD = "bench-admin-password-0"  # a throw-away database's bootstrap admin
API = "/api/v1"


@dataclass(frozen=True)
class ControlPlane:
    """A running API: where it listens and the process that serves it."""

    base_url: str
    process: ManagedProcess


def backend_env(*, database: str, data_dir: Path, base: Mapping[str, str]) -> dict[str, str]:
    """Environment of the backend commands: PostgreSQL + Redis (production mode) on loopback."""
    env = dict(base)
    env.update(
        DATABASE_URL=sqlalchemy_url(database),
        REDIS_URL=REDIS_URL,
        NGINX_FLEET_ENV="development",
        NGINX_FLEET_DATA_DIR=str(data_dir),
        # The benchmarks time the API; serving the UI's files is out of scope.
        NGINX_FLEET_UI_DIR=str(data_dir / "no-ui"),
        NGINX_FLEET_ADMIN_USER=ADMIN_USER,
        NGINX_FLEET_ADMIN_PASSWORD=ADMIN_PASSWORD,
    )
    return env


def run_cli(args: list[str], *, env: Mapping[str, str]) -> str:
    """Run `nginx-fleet ARGS`, return its stdout, fail with its output when it fails."""
    done = subprocess.run(
        [str(VENV_BIN / "nginx-fleet"), *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"nginx-fleet {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def migrate(*, env: Mapping[str, str]) -> None:
    """Create the schema with `nginx-fleet migrate`."""
    run_cli(["migrate"], env=env)


def create_enrollment_token(*, env: Mapping[str, str], max_uses: int) -> str:
    """An enrolment token good for `max_uses` hosts, from `nginx-fleet create-enrollment-token`."""
    out = run_cli(["create-enrollment-token", "--max-uses", str(max_uses)], env=env)
    match = re.search(r"\bnfe_[A-Za-z0-9_\-]+", out)
    if match is None:
        raise RuntimeError(f"no nfe_ token in the output of create-enrollment-token:\n{out}")
    return match.group(0)


@contextlib.contextmanager
def running_api(
    *, env: Mapping[str, str], workers: int, log_dir: Path, port: int | None = None
) -> Iterator[ControlPlane]:
    """uvicorn with `workers` processes on `port` (default: a free loopback port), stopped by
    PID afterwards. A given port lets an API restart with other settings where agents push."""
    port = port or free_port()
    argv = [
        str(VENV_BIN / "uvicorn"),
        "app.main:create_app",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        f"--workers={workers}",
        # An access log line per request would cost the API more than some endpoints do.
        "--no-access-log",
        "--log-level=warning",
    ]
    with running("api", argv, log_path=log_dir / "api.log", env=env) as process:
        base_url = f"http://127.0.0.1:{port}"
        wait_until_ready(f"{base_url}{API}/health", process)
        yield ControlPlane(base_url=base_url, process=process)


@contextlib.contextmanager
def running_worker(*, env: Mapping[str, str], log_dir: Path) -> Iterator[ManagedProcess]:
    """A Celery worker (solo pool, every queue) on the API's database and broker: it analyses
    the config snapshots pushes bring. Stopped by PID (SIGTERM, a warm shutdown) afterwards."""
    argv = [
        str(VENV_BIN / "celery"),
        "-A",
        "app.worker.celery_app",
        "worker",
        "--pool=solo",
        "--loglevel=WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with running("worker", argv, log_path=log_dir / "worker.log", env=env) as process:
        yield process


def enroll_hosts(
    base_url: str, *, enrollment_token: str, count: int, prefix: str = "bench"
) -> list[HostCredentials]:
    """Enrol `count` hosts through POST /agent/enroll (first seq left at 1)."""

    def enroll(index: int) -> HostCredentials:
        agent_id = str(uuid.uuid4())
        hostname = f"{prefix}-{index:05d}"
        with httpx.Client(base_url=base_url, timeout=30) as client:
            reply = client.post(
                f"{API}/agent/enroll",
                json={
                    "enrollment_token": enrollment_token,
                    "agent_id": agent_id,
                    "hostname": hostname,
                    "labels": {"env": "bench"},
                },
            )
        if reply.status_code != 201:
            raise RuntimeError(f"enrol {hostname}: HTTP {reply.status_code} {reply.text[:300]}")
        enrolled = reply.json()
        return HostCredentials(
            host_id=int(enrolled["host_id"]),
            agent_id=agent_id,
            hostname=hostname,
            host_token=enrolled["host_token"],
            first_seq=1,
        )

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(enroll, range(count)))


def push(
    client: httpx.Client, host: HostCredentials, samples: list[dict[str, Any]], *, first: bool
) -> dict[str, Any]:
    """POST one push for `host`; the first one of a host carries its facts and config dump."""
    body = push_body(
        agent_id=host.agent_id, hostname=host.hostname, samples=samples, with_config=first
    )
    reply = client.post(
        f"{API}/agent/push", json=body, headers={"Authorization": f"Bearer {host.host_token}"}
    )
    if reply.status_code != 200:
        raise RuntimeError(f"push for {host.hostname}: HTTP {reply.status_code} {reply.text[:300]}")
    result: dict[str, Any] = reply.json()
    return result


def logged_in_client(base_url: str) -> httpx.Client:
    """An open client holding the bootstrap admin's session cookie and sending its CSRF token
    (writes need both); close it when done."""
    client = httpx.Client(base_url=base_url, timeout=30).__enter__()
    reply = client.post(
        f"{API}/auth/login", json={"username": ADMIN_USER, "password": ADMIN_PASSWORD}
    )
    if reply.status_code != 200:
        client.close()
        raise RuntimeError(f"login: HTTP {reply.status_code} {reply.text[:300]}")
    client.headers["X-CSRF-Token"] = client.cookies.get("nf_csrf") or ""
    return client


def worker_pids(master_pid: int) -> list[int]:
    """PIDs of the uvicorn worker processes (children of the master we started)."""
    children: list[int] = []
    for task in Path(f"/proc/{master_pid}/task").iterdir():
        children.extend(int(pid) for pid in (task / "children").read_text().split())
    return children
