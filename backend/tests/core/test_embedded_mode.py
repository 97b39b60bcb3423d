"""Embedded mode end to end: `nginx-fleet run` on a SQLite file, without PostgreSQL or Redis."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.core.processes import (
    NGINX_FLEET,
    child_pids,
    embedded_env,
    free_port,
    pid_alive,
    run_cli,
    stop_by_pid,
    wait_until_healthy,
)

ADMIN_PASSWORD = "embedded admin password"


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("stop_signal", "exit_code"), [(signal.SIGINT, 0), (signal.SIGTERM, 128 + signal.SIGTERM)]
)
def test_run_migrates_serves_and_stops_with_its_worker(
    tmp_path: Path, stop_signal: signal.Signals, exit_code: int
) -> None:
    env = embedded_env(tmp_path)
    assert run_cli("migrate", env=env).returncode == 0
    created = run_cli(
        "create-user", "admin", "--role", "admin", "--password-stdin", env=env, stdin=ADMIN_PASSWORD
    )
    assert created.returncode == 0, created.stderr
    assert (tmp_path / "nginx-fleet.db").is_file()

    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [NGINX_FLEET, "run", "--host", "127.0.0.1", "--port", str(port)], env=env
    )
    workers: list[int] = []
    try:
        wait_until_healthy(base_url, server, timeout_s=60)
        workers = child_pids(server.pid)
        assert workers, "the Celery worker child is not running"
        with httpx.Client(base_url=base_url) as client:
            health = client.get("/api/v1/health").json()
            assert health == {"status": "ok", "database": "ok", "mode": "embedded"}
            login = client.post(
                "/api/v1/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD}
            )
            assert login.status_code == 200
            client.headers["X-CSRF-Token"] = client.cookies["nf_csrf"]
            token = client.post("/api/v1/enrollment-tokens", json={"labels": {"env": "dev"}})
            assert token.status_code == 201
            assert token.json()["enroll_command"].startswith(
                f"nginx-fleet-agent enroll --server {base_url} --token nfe_"
            )
        server.send_signal(stop_signal)
        assert server.wait(timeout=60) == exit_code
        deadline = time.monotonic() + 30
        while any(pid_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = [pid for pid in workers if pid_alive(pid)]
        assert not left, f"{stop_signal.name} left the worker running"
    finally:
        stop_by_pid([server.pid, *workers])
