"""The client address behind proxies: forwarded headers count only from a trusted proxy."""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from app.audit.models import AuditEntry
from app.core.config import Settings
from app.main import create_app
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import TEST_PASSWORD, MakeUser
from tests.core.processes import free_port
from tests.events.live_server import serve

REPO_ROOT = Path(__file__).resolve().parents[3]
NGINX = "/usr/sbin/nginx"
LOGIN = "/api/v1/auth/login"


def _login_from(app: FastAPI, peer: str, username: str, headers: dict[str, str]) -> httpx.Response:
    """Sign in through the ASGI app as if the TCP peer were `peer`."""

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=(peer, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            body = {"username": username, "password": TEST_PASSWORD}
            return await client.post(LOGIN, json=body, headers=headers)

    return asyncio.run(send())


def _logged_ip(db_session: Session) -> object:
    db_session.expire_all()
    entry = db_session.scalars(select(AuditEntry).where(AuditEntry.action == "auth.login")).one()
    return entry.detail["ip"]


def test_forwarded_headers_from_an_untrusted_peer_are_ignored(
    app: FastAPI, make_user: MakeUser, db_session: Session
) -> None:
    user = make_user()
    spoofed = {"X-Forwarded-For": "192.0.2.99", "X-Forwarded-Proto": "https"}
    reply = _login_from(app, "203.0.113.5", user.username, spoofed)
    assert reply.status_code == 200
    assert _logged_ip(db_session) == "203.0.113.5"
    # Nor does the untrusted peer decide that the connection was HTTPS.
    assert all("secure" not in c.lower() for c in reply.headers.get_list("set-cookie"))


def test_behind_a_trusted_proxy_the_right_most_untrusted_hop_is_the_client(
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    make_user: MakeUser,
    db_session: Session,
) -> None:
    monkeypatch.setattr(settings, "trusted_proxies", "10.0.0.2, 10.0.1.0/24")
    app = create_app()
    user = make_user()
    # The client wrote the first hop itself; the proxies appended the rest.
    forwarded = {"X-Forwarded-For": "192.0.2.99, 198.51.100.7, 10.0.1.5"}
    reply = _login_from(app, "10.0.0.2", user.username, forwarded)
    assert reply.status_code == 200
    assert _logged_ip(db_session) == "198.51.100.7"


def test_the_failure_limit_counts_the_real_peer_whatever_it_forwards(
    app: FastAPI, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "login_max_failures_per_address", 3)
    statuses = [
        _login_from(
            app, "203.0.113.6", f"nobody-{n}", {"X-Forwarded-For": f"192.0.2.{n}"}
        ).status_code
        for n in range(5)
    ]
    assert statuses == [401, 401, 401, 429, 429]


def _web_container_config(tmp_path: Path, listen_port: int, api_port: int) -> Path:
    """deploy/nginx.conf as shipped, with its ports, paths and upstreams moved onto loopback."""
    text = (REPO_ROOT / "deploy" / "nginx.conf").read_text()
    replacements = {
        r"server api:8000;": f"server 127.0.0.1:{api_port};",
        # One API process here stands in for both pools (api and api-ingest).
        r"server api-ingest:8000;": f"server 127.0.0.1:{api_port};",
        r"listen 8080;": f"listen 127.0.0.1:{listen_port};",
        r"pid /tmp/nginx\.pid;": f"pid {tmp_path}/nginx.pid;",
        r"error_log /dev/stderr warn;": f"error_log {tmp_path}/error.log warn;",
        r"access_log /dev/stdout timed;": f"access_log {tmp_path}/access.log timed;",
        r"root /usr/share/nginx/html;": f"root {tmp_path}/html;",
        r"/tmp/(client_body|proxy|fastcgi|uwsgi|scgi);": rf"{tmp_path}/\1;",
        r"worker_processes auto;": "worker_processes 1;",
    }
    for pattern, replacement in replacements.items():
        text, count = re.subn(pattern, replacement, text)
        assert count >= 1, f"deploy/nginx.conf no longer has {pattern!r}"
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "index.html").write_text("<!doctype html><title>ui</title>")
    config = tmp_path / "nginx.conf"
    config.write_text(text)
    return config


@pytest.mark.skipif(shutil.which(NGINX) is None and not Path(NGINX).exists(), reason="needs nginx")
def test_the_web_container_nginx_does_not_pass_a_client_supplied_address(
    tmp_path: Path,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    make_user: MakeUser,
    db_session: Session,
) -> None:
    # The API trusts the proxy on loopback, as docker-compose.yml trusts the web container.
    monkeypatch.setattr(settings, "trusted_proxies", "127.0.0.1")
    user = make_user()
    with serve(create_app()) as api_url:
        api_port = int(api_url.rsplit(":", 1)[1])
        port = free_port()
        config = _web_container_config(tmp_path, port, api_port)
        checked = subprocess.run(
            [NGINX, "-t", "-p", str(tmp_path), "-c", str(config)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert checked.returncode == 0, checked.stderr
        nginx = subprocess.Popen(
            [NGINX, "-p", str(tmp_path), "-c", str(config), "-g", "daemon off;"],
            stderr=subprocess.PIPE,
        )
        try:
            reply = None
            for _ in range(100):
                try:
                    reply = httpx.post(
                        f"http://127.0.0.1:{port}{LOGIN}",
                        json={"username": user.username, "password": TEST_PASSWORD},
                        headers={"X-Forwarded-For": "192.0.2.99"},
                        timeout=10,
                    )
                    break
                except httpx.ConnectError:
                    time.sleep(0.05)
            assert reply is not None and reply.status_code == 200, reply
        finally:
            nginx.send_signal(signal.SIGQUIT)
            nginx.wait(timeout=10)
    # The address nginx saw (loopback), not the one the client wrote.
    assert _logged_ip(db_session) == "127.0.0.1"
