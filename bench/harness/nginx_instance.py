"""A real nginx (Debian's binary) on a free loopback port, under its own prefix."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.net import free_port, wait_until_ready
from harness.processes import ManagedProcess, running

NGINX_BINARY = "/usr/sbin/nginx"

CONFIG_TEMPLATE = """\
worker_processes 2;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;

events {{
    worker_connections 256;
}}

http {{
    access_log {prefix}/logs/access.log;
    client_body_temp_path {prefix}/tmp/client_body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;

    server {{
        listen 127.0.0.1:{port};

        location / {{
            return 200 "ok\\n";
        }}

        location = /nginx_status {{
            stub_status;
            allow 127.0.0.1;
            deny all;
        }}
    }}
}}
"""


@dataclass(frozen=True)
class NginxInstance:
    """A running nginx: its master process, config file and stub_status URL."""

    process: ManagedProcess
    prefix: Path
    config_file: Path
    port: int

    @property
    def stub_status_url(self) -> str:
        """Where stub_status answers."""
        return f"http://127.0.0.1:{self.port}/nginx_status"

    @property
    def pid_file(self) -> Path:
        """The master's pid file."""
        return self.prefix / "nginx.pid"


@contextlib.contextmanager
def running_nginx(prefix: Path) -> Iterator[NginxInstance]:
    """Start nginx in the foreground (master is our child) and stop it with SIGQUIT by PID."""
    port = free_port()
    for sub in ("conf", "logs", "tmp"):
        (prefix / sub).mkdir(parents=True, exist_ok=True)
    config_file = prefix / "conf" / "nginx.conf"
    config_file.write_text(CONFIG_TEMPLATE.format(prefix=prefix, port=port))
    argv = [NGINX_BINARY, "-p", str(prefix), "-c", str(config_file), "-g", "daemon off;"]
    # SIGQUIT is nginx's graceful shutdown: the master stops its own workers.
    with running(
        "nginx", argv, log_path=prefix / "logs" / "stdout.log", stop_signal=signal.SIGQUIT
    ) as process:
        instance = NginxInstance(process=process, prefix=prefix, config_file=config_file, port=port)
        wait_until_ready(instance.stub_status_url, process, timeout_s=15)
        yield instance
