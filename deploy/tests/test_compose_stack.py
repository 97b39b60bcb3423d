"""The production stack of docker-compose.yml, built and run for real (`make test-compose`).

Built on local Debian-made stand-ins of the official images (deploy/compose/local-images.yml,
scripts/compose/local-images.sh), reached at 127.0.0.1 only: sign-in through the web container,
a real agent enrolled for a real nginx on this host, its samples on the fleet page, then the api
and worker containers restarted without losing a sample. The tests run in file order on one
stack, each stage building on the one before.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from compose_stack import (
    PROJECT_PREFIX,
    ComposeError,
    ComposeProject,
    published_bindings,
    remove_superseded_images,
    stale_projects,
    write_env_file,
)
from harness.agent_process import enroll, running_agent
from harness.net import free_port
from harness.nginx_instance import NGINX_BINARY, NginxInstance, running_nginx
from web_session import WebSession

T = TypeVar("T")

HOSTNAME = "compose-test-host"
AGENT_PUSH_INTERVAL_S = 2
# Building the images from cold (npm ci, uv sync on the vfs driver) is the long part.
UP_TIMEOUT_S = float(os.environ.get("NGINX_FLEET_COMPOSE_UP_TIMEOUT_S", "1800"))
READY_TIMEOUT_S = 240


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float) -> T:
    """Call `probe` every second until it returns something other than None."""
    deadline = time.monotonic() + timeout_s
    last_error = ""
    while time.monotonic() < deadline:
        try:
            value = probe()
        except (httpx.TransportError, AssertionError) as error:
            last_error = f" (last: {error})"
        else:
            if value is not None:
                return value
        time.sleep(1)
    raise AssertionError(f"{what}: not within {timeout_s:.0f} s{last_error}")


@dataclass
class Stack:
    """The running stack and what the stages learn about it."""

    project: ComposeProject
    url: str
    http_port: int
    env: dict[str, str]
    run_dir: Path
    web: WebSession | None = None
    host_id: int | None = None
    nginx: NginxInstance | None = None


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """docker compose up --build on a free loopback port; down --volumes whatever happens."""
    run_dir = tmp_path_factory.mktemp("compose")
    http_port = free_port()
    env_file = run_dir / "compose.env"
    env = write_env_file(env_file, http_port=http_port)
    project = ComposeProject(
        name=f"{PROJECT_PREFIX}{os.getpid()}", env_file=env_file, log_path=run_dir / "compose.log"
    )
    for stale in stale_projects():
        ComposeProject(name=stale, env_file=env_file, log_path=project.log_path).down()
    try:
        project.run("up", "--detach", "--build", "--quiet-pull", timeout_s=UP_TIMEOUT_S)
        project.wait_ready(READY_TIMEOUT_S)
        url = f"http://127.0.0.1:{http_port}"
        # The web container has no healthcheck: ready is /api answering through it.
        wait_for("the api's health through the web container", lambda: health_ok(url), 60)
        yield Stack(
            project=project,
            url=url,
            http_port=http_port,
            env=env,
            run_dir=run_dir,
        )
    finally:
        project.run("logs", "--no-color", "--timestamps", timeout_s=120, check=False)
        project.down()
        remove_superseded_images()
        print(f"compose commands and logs: {project.log_path}")


@pytest.fixture(scope="module")
def host_agent(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real nginx on a free loopback port and the real agent, enrolled through the web container.

    Yields the agent's log; both stop by PID at the end of the module."""
    web = signed_in(stack)
    created = web.request(
        "POST", "/enrollment-tokens", json={"labels": {"env": "compose-test"}, "max_uses": 1}
    )
    assert created.status_code == 201, created.text
    token = created.json()
    base = tmp_path_factory.mktemp("host")
    with running_nginx(base / "nginx") as nginx:
        stack.nginx = nginx
        config = base / "agent.toml"
        config.write_text(
            f'server_url = "{stack.url}"\n'
            f'state_dir = "{base / "agent-state"}"\n'
            f"push_interval_s = {AGENT_PUSH_INTERVAL_S}\n"
            # Retry soon after the api restart, instead of backing off for minutes.
            "backoff_cap_s = 3\n"
            f'hostname = "{HOSTNAME}"\n'
            f'nginx_binary = "{NGINX_BINARY}"\n'
            f"nginx_args = {json.dumps(['-p', str(nginx.prefix), '-c', str(nginx.config_file)])}\n"
            'log_level = "INFO"\n'
        )
        enroll(config, server_url=stack.url, token=token["token"])
        log_path = base / "agent.log"
        with running_agent(config, log_path=log_path):
            yield log_path


def health_ok(url: str) -> bool | None:
    """True when GET /api/v1/health through `url` answers 200 with status ok."""
    response = httpx.get(f"{url}/api/v1/health", timeout=5)
    return (response.status_code == 200 and response.json().get("status") == "ok") or None


def signed_in(stack: Stack) -> WebSession:
    """The admin's session through the web container, made once."""
    if stack.web is None:
        web = WebSession(stack.url)
        response = web.login(
            stack.env["NGINX_FLEET_ADMIN_USER"], stack.env["NGINX_FLEET_ADMIN_PASSWORD"]
        )
        assert response.status_code == 200, response.text
        stack.web = web
    return stack.web


def fleet_rows(web: WebSession) -> list[dict[str, Any]]:
    """GET /fleet: a list, or a page whose rows are under `items`."""
    body = web.get_json("/fleet")
    rows: list[dict[str, Any]] = body["items"] if isinstance(body, dict) else body
    return rows


def stored_seqs(stack: Stack) -> list[int]:
    """The seq of every sample stored for the test host, read from PostgreSQL itself."""
    rows = stack.project.psql(
        "SELECT seq FROM samples WHERE host_id = :'host' ORDER BY seq", host=stack.host_id or 0
    )
    return [int(row[0]) for row in rows]


def worker_services(stack: Stack) -> list[str]:
    """The services that run a Celery worker (worker, and any queue-specific ones)."""
    services = stack.project.config()["services"]
    return sorted(
        name
        for name, spec in services.items()
        if (spec.get("command") or [])[:4] == ["celery", "-A", "app.worker.celery_app", "worker"]
    )


def listening_addresses(port: int) -> set[str]:
    """IPv4 and IPv6 addresses with a socket listening on `port` here (/proc/net/tcp*)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_published_ports_are_bound_to_loopback_only(stack: Stack) -> None:
    """Only the web container publishes a port, on 127.0.0.1, and nothing else listens on it."""
    bindings = published_bindings(stack.project.name)
    assert [(host_ip, port) for _name, host_ip, port in bindings] == [
        ("127.0.0.1", str(stack.http_port))
    ], bindings
    assert bindings[0][0].endswith("-web-1")
    # 127.0.0.1 in /proc/net/tcp's little-endian hex; no 0.0.0.0 or IPv6 wildcard listener.
    assert listening_addresses(stack.http_port) == {"0100007F"}


def test_web_container_serves_the_ui_and_signs_in(stack: Stack) -> None:
    """The UI comes from nginx, /api reaches the api, and sign-in sets production cookies."""
    index = httpx.get(f"{stack.url}/fleet", timeout=10)
    assert index.status_code == 200
    assert '<div id="root">' in index.text
    health = httpx.get(f"{stack.url}/api/v1/health", timeout=10).json()
    assert health["status"] == "ok"
    assert health.get("mode") in (None, "production")

    wrong = WebSession(stack.url)
    assert wrong.login("admin", "not-the-password").status_code == 401
    wrong.close()
    web = signed_in(stack)
    flags = web.cookie_flags["nf_session"].lower()
    assert "secure" in flags and "httponly" in flags
    me = web.get_json("/auth/me")
    assert me["username"] == stack.env["NGINX_FLEET_ADMIN_USER"]
    # An unsafe request without the CSRF header is refused.
    forged = web.client.post(
        "/enrollment-tokens",
        json={},
        headers={"Cookie": "; ".join(f"{k}={v}" for k, v in web.cookies.items())},
    )
    assert forged.status_code == 403


def test_agent_wheel_is_served_through_the_web_container(stack: Stack) -> None:
    """The enrolment reply's install command points at a wheel the web container serves."""
    web = signed_in(stack)
    created = web.request("POST", "/enrollment-tokens", json={"labels": {}})
    assert created.status_code == 201, created.text
    wheel = created.json()["agent_wheel"]
    assert wheel is not None, "the backend image carries no agent wheel"
    assert wheel["url"].startswith(f"{stack.url}/downloads/")
    body = httpx.get(wheel["url"], timeout=30)
    assert body.status_code == 200
    assert hashlib.sha256(body.content).hexdigest() == wheel["sha256"]


def test_enrolled_agent_samples_reach_the_fleet_page(stack: Stack, host_agent: Path) -> None:
    """The host appears up on the fleet page with its samples, its series and its score."""
    web = signed_in(stack)

    def host_up() -> dict[str, Any] | None:
        for row in fleet_rows(web):
            if row["hostname"] == HOSTNAME and row["status"] == "up":
                return row
        return None

    row = wait_for(f"{HOSTNAME} up on the fleet page (agent log: {host_agent})", host_up, 90)
    stack.host_id = int(row["id"])
    assert row["labels"].get("env") == "compose-test"
    series = wait_for(
        "points in the host's series",
        lambda: (
            s
            if (s := web.get_json(f"/hosts/{stack.host_id}/series", params={"range": "15m"}))[
                "points"
            ]
            else None
        ),
        60,
    )
    assert any(point["active"] is not None for point in series["points"])
    # The worker analysed the config the agent sent (`nginx -T`) through Redis.
    wait_for(
        "a config score for the host (worker)",
        lambda: next(
            (
                r["score"]
                for r in fleet_rows(web)
                if r["id"] == stack.host_id and r.get("score") is not None
            ),
            None,
        ),
        120,
    )


def test_restarting_api_and_worker_loses_nothing(stack: Stack, host_agent: Path) -> None:
    """Samples stored before the restart are all still there, none is missing after it, and the
    session, the agent and the worker go on working."""
    assert stack.host_id is not None, "runs after the fleet-page stage"
    web = signed_in(stack)
    wait_for(
        "at least 5 samples stored", lambda: s if len(s := stored_seqs(stack)) >= 5 else None, 60
    )
    before = stored_seqs(stack)
    # One fixed window for both reads, so that both are bucketed alike.
    window = {
        "from": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600)),
        "to": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600)),
    }
    points_before = web.get_json(f"/hosts/{stack.host_id}/series", params=window)["points"]

    workers = worker_services(stack)
    assert "worker" in workers
    stack.project.run("restart", "api", "api-ingest", *workers, timeout_s=180)
    stack.project.wait_ready(READY_TIMEOUT_S)

    # The session lives in PostgreSQL: the same cookies still sign the admin in.
    wait_for("the api answering through the web container", lambda: web.get_json("/auth/me"), 60)
    target = before[-1] + 5
    after = wait_for(
        f"new samples after the restart (agent log: {host_agent})",
        lambda: s if (s := stored_seqs(stack)) and s[-1] >= target else None,
        90,
    )
    assert set(before) <= set(after)
    # Samples collected while the api was down were spooled and replayed: no hole in seq.
    assert after == list(range(after[0], after[-1] + 1))
    gaps = stack.project.psql(
        "SELECT count(*) FROM sample_gaps WHERE host_id = :'host'", host=stack.host_id
    )
    assert gaps == [["0"]]
    points_after = web.get_json(f"/hosts/{stack.host_id}/series", params=window)["points"]
    by_ts = {point["ts"]: point for point in points_after}
    for point in points_before[:-1]:  # the newest bucket may have gained samples since
        assert by_ts.get(point["ts"]) == point
    # Every restarted Celery worker answers on the broker.
    for service in workers:
        pong = stack.project.run(
            "exec", "-T", service,
            "celery", "-A", "app.worker.celery_app", "inspect", "ping", "--timeout", "10",
            timeout_s=60,
        )  # fmt: skip
        assert "pong" in pong, f"{service}: {pong}"
    rows = [r for r in fleet_rows(web) if r["id"] == stack.host_id]
    assert rows and rows[0]["status"] == "up"


def test_compose_error_is_raised_for_a_failing_command(stack: Stack) -> None:
    """The helper fails loudly: a compose command that fails is an error, not an empty answer."""
    with pytest.raises(ComposeError):
        stack.project.run("exec", "-T", "postgres", "false")
