"""A real nginx master with its workers under a temporary prefix, on a free loopback port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

NGINX = "/usr/sbin/nginx"

STUB_STATUS_SERVER = """
    server {
        listen 127.0.0.1:{port};
        server_name status.test;
        location = /nginx_status {
            stub_status;
            allow 127.0.0.1;
            deny all;
        }
        location / {
            return 200 "hello\\n";
        }
    }
"""

PLAIN_SERVER = """
    server {
        listen 127.0.0.1:{port};
        location / {
            return 200 "hello\\n";
        }
    }
"""

_MAIN = """
worker_processes {workers};
daemon off;
master_process on;
pid {prefix}/logs/nginx.pid;
error_log {prefix}/logs/error.log notice;
events {{
    worker_connections {connections};
}}
http {{
    access_log {prefix}/logs/access.log;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    include conf.d/*.conf;
}}
"""


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class NginxInstance:
    """One nginx under `prefix`; `start`/`stop` manage a process this test owns."""

    prefix: Path
    port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def create(
        cls,
        prefix: Path,
        server_block: str = STUB_STATUS_SERVER,
        *,
        workers: int = 2,
        connections: int = 64,
    ) -> NginxInstance:
        """Write the configuration (main file plus conf.d/site.conf) under `prefix`."""
        port = free_port()
        for sub in ("conf/conf.d", "logs", "tmp"):
            (prefix / sub).mkdir(parents=True, exist_ok=True)
        main = _MAIN.format(prefix=prefix, workers=workers, connections=connections)
        (prefix / "conf" / "nginx.conf").write_text(main)
        (prefix / "conf" / "conf.d" / "site.conf").write_text(
            server_block.replace("{port}", str(port))
        )
        return cls(prefix, port)

    @property
    def args(self) -> list[str]:
        """The nginx arguments that select this instance (`nginx_args` of the agent)."""
        return ["-p", f"{self.prefix}/", "-c", "conf/nginx.conf"]

    @property
    def pid_file(self) -> Path:
        """Where the master writes its pid."""
        return self.prefix / "logs" / "nginx.pid"

    @property
    def base_url(self) -> str:
        """URL of the instance's server."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start nginx and wait until it answers."""
        self.process = subprocess.Popen([NGINX, *self.args], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"nginx exited at start: {stderr}")
            if self.pid_file.exists() and _answers(self.base_url):
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("nginx did not start within 10 s")

    def stop(self) -> None:
        """Stop the master (by its pid) and wait for it to exit."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        self.process = None


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=0.5, trust_env=False)
    except httpx.HTTPError:
        return False
    return True
