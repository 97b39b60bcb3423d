"""A sign-in storm against a real API process must not slow down the agents' requests."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from app.enrollment.service import issue_token
from sqlalchemy.orm import Session

from tests.core.processes import NGINX_FLEET, free_port, wait_until_healthy

BACKEND_DIR = Path(__file__).resolve().parents[2]
STORM_CONCURRENCY = 40
PINGS = 40
# Generous: the storm's own replies share the two cores with everything else. Before the fix,
# agents waited behind the password checks in the request pool: thousands of times slower.
MAX_SLOWDOWN = 10


def _timed_pings(client: httpx.Client, count: int) -> list[float]:
    """Durations of sequential pings (each must succeed)."""
    durations = []
    for _ in range(count):
        started = time.perf_counter()
        reply = client.post("/api/v1/agent/ping")
        durations.append(time.perf_counter() - started)
        assert reply.status_code == 200, reply.text
    return durations


@pytest.mark.timeout(180)
def test_agent_latency_stays_flat_during_a_login_storm(
    database_url: str, db_session: Session
) -> None:
    env = dict(os.environ)
    # The worst case: an attacker with many addresses, so that every attempt checks a password.
    env.update(
        NGINX_FLEET_LOGIN_MAX_FAILURES_PER_ADDRESS="1000000",
        NGINX_FLEET_LOGIN_MAX_FAILURES_OVERALL="1000000",
    )
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    api = subprocess.Popen(
        [NGINX_FLEET, "api", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    storm: subprocess.Popen[str] | None = None
    try:
        wait_until_healthy(base_url, api, timeout_s=30)
        enrolment = issue_token(
            session=db_session, actor=None, labels={}, expires_in_hours=1, max_uses=1
        ).token
        enrolled = httpx.post(
            f"{base_url}/api/v1/agent/enroll",
            json={"enrollment_token": enrolment, "agent_id": "storm-probe", "hostname": "probe"},
            timeout=30,
        )
        assert enrolled.status_code == 201, enrolled.text
        headers = {"Authorization": f"Bearer {enrolled.json()['host_token']}"}
        with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
            _timed_pings(client, 10)  # warm up connections and caches
            baseline = _timed_pings(client, PINGS)
            storm = subprocess.Popen(
                [sys.executable, "-m", "tests.auth.storm", base_url, str(STORM_CONCURRENCY)],
                cwd=BACKEND_DIR,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            assert storm.stdout is not None and storm.stdin is not None
            assert storm.stdout.readline().strip() == "started"
            time.sleep(1)  # let the storm fill every queue
            during = _timed_pings(client, PINGS)
            storm.stdin.close()
            statuses = json.loads(storm.stdout.read() or "{}")
            storm.wait(timeout=60)
    finally:
        for process in (storm, api):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
    # The storm really made the server check passwords, and was refused beyond its capacity.
    assert statuses.get("401", 0) >= 10, statuses
    slowdown = statistics.median(during) / statistics.median(baseline)
    assert slowdown < MAX_SLOWDOWN, (
        f"agent ping median {statistics.median(baseline) * 1000:.1f} ms before the storm, "
        f"{statistics.median(during) * 1000:.1f} ms during it ({slowdown:.1f}x); {statuses}"
    )
