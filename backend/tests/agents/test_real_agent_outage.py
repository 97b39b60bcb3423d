"""A real agent watching a real nginx pushes to the real API across an API outage.

Nothing is lost while the API is down (the agent spools) and nothing is counted twice when
the spool is replayed: the stored seqs are exactly 1..N and the request rate stays plausible.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from app.metrics.models import Sample
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.core.processes import NGINX_FLEET, free_port, run_cli, stop_by_pid, wait_until_healthy

NGINX = "/usr/sbin/nginx"
AGENT = str(Path(sys.executable).with_name("nginx-fleet-agent"))

NGINX_CONF = """\
worker_processes 1;
pid logs/nginx.pid;
error_log logs/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path temp/client_body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    server {
        listen 127.0.0.1:@PORT@;
        location = /nginx_status { stub_status; allow 127.0.0.1; deny all; }
        location / { return 200 "ok\\n"; }
    }
}
"""


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll condition until it holds; fail naming what was awaited."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[int]:
    """A real nginx on a free loopback port with a stub_status location; yields the port."""
    prefix = tmp_path / "nginx"
    for sub in ("conf", "logs", "temp"):
        (prefix / sub).mkdir(parents=True)
    port = free_port()
    (prefix / "conf" / "nginx.conf").write_text(NGINX_CONF.replace("@PORT@", str(port)))
    server = subprocess.Popen(
        [NGINX, "-p", f"{prefix}/", "-c", "conf/nginx.conf", "-g", "daemon off;"],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _answers(f"http://127.0.0.1:{port}/"), 20, "nginx to answer")
        yield port
    finally:
        server.send_signal(signal.SIGQUIT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def _answers(url: str) -> bool:
    """Whether url answers at all."""
    try:
        httpx.get(url, timeout=1)
    except httpx.TransportError:
        return False
    return True


def start_api(port: int, log: Path) -> subprocess.Popen[bytes]:
    """`nginx-fleet api` on the test database (the session's DATABASE_URL and REDIS_URL)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [NGINX_FLEET, "api", "--host", "127.0.0.1", "--port", str(port)],
            # Agents follow the interval the server replies with: 1 s keeps the test short.
            env={**os.environ, "NGINX_FLEET_PUSH_INTERVAL_S": "1"},
            stdout=out,
            stderr=out,
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then wait; SIGKILL if it does not go."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stored_seqs(session: Session) -> list[int]:
    """Every stored sample's seq, in order."""
    session.expire_all()
    session.rollback()
    return list(session.scalars(select(Sample.seq).order_by(Sample.seq)))


@pytest.mark.timeout(240)
def test_agent_spools_through_an_api_outage_and_replays_exactly_once(
    database_url: str, db_session: Session, tmp_path: Path, nginx: int
) -> None:
    token = run_cli("create-enrollment-token", "--label", "env=test", env=dict(os.environ))
    assert token.returncode == 0, token.stderr
    api_port = free_port()
    base_url = f"http://127.0.0.1:{api_port}"
    log = tmp_path / "api.log"
    config = tmp_path / "agent.toml"
    config.write_text(
        f'server_url = "{base_url}"\n'
        f'state_dir = "{tmp_path / "agent-state"}"\n'
        "push_interval_s = 1\n"
        # Retry at least every 2 s, so the replay follows the API's return within seconds.
        "backoff_cap_s = 2\n"
        f'stub_status_url = "http://127.0.0.1:{nginx}/nginx_status"\n'
        f'nginx_args = ["-p", "{tmp_path / "nginx"}/", "-c", "conf/nginx.conf"]\n'
        'hostname = "outage-test"\n'
    )
    api = start_api(api_port, log)
    agent: subprocess.Popen[bytes] | None = None
    try:
        wait_until_healthy(base_url, api, timeout_s=60)
        enrolled = subprocess.run(
            [AGENT, "--config", str(config), "enroll", "--server", base_url, "--token",
             token.stdout.strip()],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert enrolled.returncode == 0, enrolled.stderr
        agent = subprocess.Popen(
            [AGENT, "--config", str(config), "run"],
            stdout=subprocess.DEVNULL,
            stderr=(tmp_path / "agent.log").open("wb"),
        )
        wait_for(lambda: len(stored_seqs(db_session)) >= 3, 60, "3 samples before the outage")

        stop(api)
        before_outage = len(stored_seqs(db_session))
        with httpx.Client() as client:
            for _ in range(30):
                client.get(f"http://127.0.0.1:{nginx}/")
        time.sleep(5)  # the agent keeps collecting at 1 s into its spool meanwhile
        assert len(stored_seqs(db_session)) == before_outage

        api = start_api(api_port, log)
        wait_until_healthy(base_url, api, timeout_s=60)
        wait_for(lambda: len(stored_seqs(db_session)) >= before_outage + 6, 60, "the spool replay")
        seqs = stored_seqs(db_session)
        assert seqs == list(range(1, len(seqs) + 1)), "a sample was lost or stored twice"

        db_session.expire_all()
        samples = db_session.scalars(select(Sample).order_by(Sample.seq)).all()
        assert all(s.stub_status_available for s in samples)
        assert samples[-1].requests is not None and samples[0].requests is not None
        assert samples[-1].requests - samples[0].requests >= 30
        rates = [s.req_per_s for s in samples[1:] if s.req_per_s is not None]
        assert rates and all(rate >= 0 for rate in rates)
    finally:
        if agent is not None:
            stop(agent)
        stop(api)
        stop_by_pid([api.pid] + ([agent.pid] if agent else []))
