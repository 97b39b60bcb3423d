"""The drop alert end to end with real parts: nginx with too few worker_connections under a
bounded loopback load, the real agent reading its stub_status and error log, the API process,
PostgreSQL, a Celery worker on Redis delivering to a local webhook receiver and an SMTP server.

The alert fires with the cause "worker_connections" from nginx's own error log, both channels
receive it (host name, labels, cause, link), and both hear once more when it resolves."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from app.alerts import tasks as alert_tasks
from app.alerts.models import AlertRule, Incident, IncidentState
from app.core.config import get_settings
from nginx_fleet_agent.agent import Agent
from nginx_fleet_agent.config import AgentConfig
from nginx_fleet_agent.state import AgentState
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from tests.agents.test_real_agent_outage import start_api, stop
from tests.conftest import SignedInClient
from tests.core.processes import free_port, stop_by_pid, wait_until_healthy
from tests.hosts.factories import make_host
from tests.worker.test_worker_process import worker

__all__ = ["worker"]  # the fixture: a real Celery worker process on Redis

NGINX = "/usr/sbin/nginx"
PUBLIC_URL = "https://fleet.example.test"
# One worker with 16 connections; /slow holds two of them (client and upstream) for 3 s.
NGINX_CONF = """\
worker_processes 1;
daemon off;
pid @PREFIX@/logs/nginx.pid;
error_log @PREFIX@/logs/error.log notice;
events { worker_connections 16; }
http {
    access_log off;
    upstream never_answers { server 127.0.0.1:@HANG@; }
    server {
        listen 127.0.0.1:@PORT@;
        location = /nginx_status { stub_status; }
        location /slow { proxy_pass http://never_answers; proxy_read_timeout 3s; }
        location / { return 200 "ok\\n"; }
    }
}
"""


class Receiver(BaseHTTPRequestHandler):
    """A webhook receiver that keeps every JSON body it is sent."""

    bodies: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        Receiver.bodies.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


class Mailbox:
    """An aiosmtpd handler that keeps every message it receives."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(self, _server: object, _session: object, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@contextlib.contextmanager
def running_nginx(prefix: Path, port: int, hang_port: int) -> Iterator[None]:
    (prefix / "logs").mkdir(parents=True)
    (prefix / "conf").mkdir()
    conf = NGINX_CONF.replace("@PREFIX@", str(prefix)).replace("@PORT@", str(port))
    (prefix / "conf" / "nginx.conf").write_text(conf.replace("@HANG@", str(hang_port)))
    process = subprocess.Popen([NGINX, "-p", f"{prefix}/", "-c", "conf/nginx.conf"])
    try:
        wait_for(lambda: _answers(port), 10, "nginx to answer")
        yield
    finally:
        stop_by_pid([process.pid])
        process.wait(timeout=10)


def _answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def overload(port: int, count: int) -> None:
    """Open `count` connections asking for /slow, a little apart, and hold them for 2 s.

    Each needs two of nginx's 16 connections: past about seven, nginx has none left and
    drops the next ones (the alert "worker_connections are not enough")."""
    held = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            with contextlib.suppress(OSError):
                sock.sendall(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
            held.append(sock)
            time.sleep(0.02)
        time.sleep(2)
    finally:
        for sock in held:
            sock.close()


@pytest.mark.timeout(240)
def test_drop_alert_fires_with_its_cause_and_resolves(
    database_url: str,
    db_session: Session,
    admin_client: SignedInClient,
    worker: subprocess.Popen[bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NGINX_FLEET_PUBLIC_URL", PUBLIC_URL)
    get_settings.cache_clear()
    db_session.execute(delete(AlertRule))
    db_session.commit()
    Receiver.bodies = []
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    mailbox = Mailbox()
    smtp = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(512)
    nginx_port, api_port = free_port(), free_port()
    api = start_api(api_port, tmp_path / "api.log")
    agent = None
    try:
        wait_until_healthy(f"http://127.0.0.1:{api_port}", api, timeout_s=60)
        hook = admin_client.post("/api/v1/alerts/channels", json={
            "name": "ops-webhook", "kind": "webhook",
            "settings": {"url": f"http://127.0.0.1:{receiver.server_port}/hook"},
        })  # fmt: skip
        mail = admin_client.post("/api/v1/alerts/channels", json={
            "name": "ops-mail", "kind": "email",
            "settings": {"host": "127.0.0.1", "port": smtp.port, "security": "none",
                         "from_addr": "fleet@example.test", "to_addrs": ["ops@example.test"]},
        })  # fmt: skip
        assert hook.status_code == 201 and mail.status_code == 201, hook.text + mail.text
        rule = admin_client.post("/api/v1/alerts/rules", json={
            "key": "dropped-connections", "name": "Dropped connections",
            "signal": "dropped_connections", "op": ">", "threshold": 0, "window_s": 15,
            "keep_firing_s": 5, "severity": "critical",
            "channel_ids": [hook.json()["id"], mail.json()["id"]],
        })  # fmt: skip
        assert rule.status_code == 201, rule.text

        host = make_host(hostname="edge-drops", labels={"env": "prod", "dc": "lab"})
        with running_nginx(tmp_path / "nginx", nginx_port, hang.getsockname()[1]):
            config = AgentConfig(
                server_url=f"http://127.0.0.1:{api_port}",
                state_dir=tmp_path / "agent-state",
                hostname="edge-drops",
                stub_status_url=f"http://127.0.0.1:{nginx_port}/nginx_status",
                nginx_args=["-p", f"{tmp_path / 'nginx'}/", "-c", "conf/nginx.conf"],
                request_timeout_s=5,
            )
            state = AgentState(
                agent_id=host.agent_id, host_id=host.id, host_token=host.token, server=""
            )
            agent = Agent(config, state)

            def sample_and_push() -> None:
                agent.collect_once()
                agent._next_push_at = 0.0
                agent.push_pending()
                assert agent.spooled == 0

            sample_and_push()  # the baseline counters (and the config, for the cause)
            overload(nginx_port, 40)
            sample_and_push()
            alert_tasks.evaluate()
            wait_for(lambda: Receiver.bodies and mailbox.messages, 60, "both channels")

            db_session.expire_all()
            incident = db_session.scalars(select(Incident)).one()
            assert incident.state is IncidentState.firing and incident.value
            assert incident.cause is not None and incident.cause["code"] == "worker_connections"
            # The real nginx said so, and the capacity is read from its config.
            assert incident.cause["evidence"]["worker_connections_not_enough"] > 0
            assert incident.cause["evidence"]["capacity"] == 16

            body = Receiver.bodies[0]
            assert body["version"] == "4" and body["status"] == "firing"
            alert = body["alerts"][0]
            assert alert["labels"]["host"] == "edge-drops"
            assert alert["labels"]["env"] == "prod" and alert["labels"]["dc"] == "lab"
            assert "worker_connections" in alert["annotations"]["cause"]
            assert alert["generatorURL"] == f"{PUBLIC_URL}/alerts/incidents/{incident.id}"
            message = mailbox.messages[0]
            text = message.get_payload(decode=True)
            text = text.decode() if isinstance(text, bytes) else str(message)
            assert "FIRING" in message["Subject"] and "edge-drops" in text
            assert "worker_connections" in text and f"/alerts/incidents/{incident.id}" in text

            # The load is over: the window empties of drops, keep-firing passes, it resolves.
            deadline = time.monotonic() + 90
            while len(Receiver.bodies) < 2 and time.monotonic() < deadline:
                time.sleep(2)
                sample_and_push()
                alert_tasks.evaluate()
            wait_for(lambda: len(Receiver.bodies) >= 2 and len(mailbox.messages) >= 2, 30,
                     "the resolve notifications")  # fmt: skip
            assert Receiver.bodies[1]["status"] == "resolved"
            assert Receiver.bodies[1]["alerts"][0]["endsAt"] != "0001-01-01T00:00:00Z"
            assert "RESOLVED" in mailbox.messages[1]["Subject"]
            assert len(Receiver.bodies) == 2 and len(mailbox.messages) == 2
    finally:
        if agent is not None:
            agent.close()
        stop(api)
        receiver.shutdown()
        smtp.stop()
        hang.close()
        get_settings.cache_clear()
