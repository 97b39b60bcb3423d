"""`make demo`: the dashboard plus four real nginx instances with agents and loopback traffic."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
from children import ChildProcesses
from demo_agents import DemoAgent
from fleet_backend import ADMIN_USER, Backend, BackendError, admin_password, venv_script
from nginx_instances import (
    DEMO_DIR,
    INSTALL_HINT,
    INSTANCES,
    NginxInstance,
    find_nginx,
    free_port,
    render_instance,
    wait_until_serving,
)

DEFAULT_DATA_DIR = DEMO_DIR.parent / "var" / "demo"
BACKEND_START_TIMEOUT_S = 120.0
FIRST_PUSH_TIMEOUT_S = 120.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class ShutdownRequested(Exception):
    """SIGINT, SIGTERM or SIGHUP arrived: stop everything that was started."""


class _ShutdownSignal:
    """The stop signals' handler: it raises ShutdownRequested at the first one only, so that
    the next ones (Ctrl-C pressed again, `timeout` passing on a TERM) cannot interrupt the
    message and the clean-up."""

    def __init__(self) -> None:
        self.received = False

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.received:
            return
        self.received = True
        raise ShutdownRequested(signal.Signals(signum).name)


@dataclass(frozen=True)
class DemoOptions:
    """The launcher's command-line options."""

    port: int
    data_dir: Path
    traffic_seconds: float
    max_requests: int
    push_interval: int
    ready_file: Path | None
    nginx: str | None


def parse_options(argv: list[str] | None) -> DemoOptions:
    """Read and check the command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8800, help="dashboard port on 127.0.0.1")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="state and logs")
    parser.add_argument("--traffic-seconds", type=float, default=7200.0, help="traffic duration")
    parser.add_argument("--max-requests", type=int, default=500_000, help="traffic request cap")
    parser.add_argument("--push-interval", type=int, default=5, help="agent push interval, s")
    parser.add_argument("--ready-file", type=Path, help="write JSON here once all hosts pushed")
    parser.add_argument("--nginx", help="nginx binary (default /usr/sbin/nginx, then PATH)")
    args = parser.parse_args(argv)
    if not 1 <= args.port <= 65535:
        parser.error("--port must be between 1 and 65535")
    if args.push_interval < 1:
        parser.error("--push-interval must be at least 1 second")
    if args.traffic_seconds < 0 or args.max_requests < 1:
        parser.error("--traffic-seconds must be >= 0 and --max-requests >= 1")
    return DemoOptions(
        port=args.port,
        data_dir=args.data_dir.resolve(),
        traffic_seconds=args.traffic_seconds,
        max_requests=args.max_requests,
        push_interval=args.push_interval,
        ready_file=args.ready_file.resolve() if args.ready_file else None,
        nginx=args.nginx,
    )


def write_ready_file(path: Path, content: dict[str, Any]) -> None:
    """Write the ready file atomically, so that a poller never reads half of it."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(content, indent=2) + "\n")
    tmp.replace(path)


def start_instances(
    children: ChildProcesses, options: DemoOptions, backend: Backend, nginx_binary: str
) -> list[NginxInstance]:
    """Start the upstream app, the nginx instances and one enrolled agent for each."""
    upstream_port = free_port()
    children.start(
        "upstream",
        [sys.executable, str(DEMO_DIR / "upstream.py"), "--port", str(upstream_port)],
    )
    instances: list[NginxInstance] = []
    for spec in INSTANCES:
        instance = render_instance(
            spec, options.data_dir / "nginx", port=free_port(), upstream_port=upstream_port
        )
        children.start(
            spec.name,
            [nginx_binary, *instance.nginx_args(), "-g", "daemon off;"],
            stop_signal=signal.SIGQUIT,  # graceful: finish requests in flight, then exit
            signal_leader_only=True,
        )
        wait_until_serving(instance)
        instances.append(instance)
    agents = [
        DemoAgent(
            instance=instance,
            nginx_binary=nginx_binary,
            state_dir=options.data_dir / "agents" / instance.spec.name,
            config_path=options.data_dir / "agents" / f"{instance.spec.name}.toml",
        )
        for instance in instances
    ]

    def enroll(agent: DemoAgent) -> None:
        labels = {"env": "demo", "role": agent.instance.spec.role}
        agent.write_config(
            server_url=backend.url, push_interval_s=options.push_interval, labels=labels
        )
        agent.enroll(server_url=backend.url, token=backend.create_enrollment_token(labels))

    require_running(children)
    # Each CLI call starts a fresh Python that imports the whole backend: do them side by side.
    with ThreadPoolExecutor(max_workers=len(agents)) as pool:
        list(pool.map(enroll, agents))
    for agent in agents:
        children.start(f"agent-{agent.instance.spec.name}", agent.run_command())
    return instances


def require_running(children: ChildProcesses) -> None:
    """Raise, naming the log to read, when a started process has already ended."""
    for child in children.exited():
        raise BackendError(
            f"{child.name} exited with status {child.process.returncode}; see {child.log_path}"
        )


def start_traffic(
    children: ChildProcesses, options: DemoOptions, instances: list[NginxInstance]
) -> None:
    """Start the bounded traffic generator against every instance."""
    if options.traffic_seconds == 0:
        return
    argv = [
        sys.executable,
        str(DEMO_DIR / "traffic.py"),
        "--duration",
        str(options.traffic_seconds),
        "--max-requests",
        str(options.max_requests),
    ]
    for instance in instances:
        argv += [
            "--target",
            f"{instance.spec.name},{instance.spec.traffic_profile},{instance.base_url}",
        ]
    children.start("traffic", argv)


def run(options: DemoOptions, children: ChildProcesses) -> int:
    """Start everything, report readiness, then wait until asked to stop."""
    backend = Backend(
        data_dir=options.data_dir / "backend",
        port=options.port,
        password=admin_password(options.data_dir),
        push_interval_s=options.push_interval,
    )
    backend.data_dir.mkdir(parents=True, exist_ok=True)
    # The server stops its own Celery worker gracefully; signalling the worker too would not.
    server = children.start(
        "nginx-fleet", backend.run_command(), env=backend.env(), signal_leader_only=True
    )
    backend.wait_healthy(BACKEND_START_TIMEOUT_S, is_running=lambda: server.process.poll() is None)
    print(
        f"\nnginx-fleet dashboard: {backend.url}/\n"
        f"login: {ADMIN_USER} / {backend.password}\n"
        f"logs:  {options.data_dir / 'logs'}\n",
        flush=True,
    )

    nginx_binary = find_nginx(options.nginx)
    hostnames: list[str] = []
    if nginx_binary is None:
        print(INSTALL_HINT, flush=True)
    else:
        instances = start_instances(children, options, backend, nginx_binary)
        start_traffic(children, options, instances)
        hostnames = [instance.spec.name for instance in instances]
        backend.wait_hosts_up(
            hostnames, FIRST_PUSH_TIMEOUT_S, is_running=lambda: not children.exited()
        )
        print(f"demo hosts up and pushing every {options.push_interval} s: {', '.join(hostnames)}")
    if options.ready_file is not None:
        write_ready_file(
            options.ready_file,
            {
                "url": backend.url,
                "username": ADMIN_USER,
                "password": backend.password,
                "hosts": hostnames,
            },
        )
    print("Press Ctrl-C to stop the demo.", flush=True)
    return watch(children, server_name="nginx-fleet")


def watch(children: ChildProcesses, *, server_name: str) -> int:
    """Sleep until a signal arrives; report children that end on their own."""
    reported: set[str] = set()
    while True:
        for child in children.exited():
            if child.name in reported:
                continue
            reported.add(child.name)
            code = child.process.returncode
            print(f"{child.name} exited with status {code} (log: {child.log_path})", flush=True)
            if child.name == server_name:
                return 1
        time.sleep(1.0)


def main(argv: list[str] | None = None) -> int:
    """Run the demo; whatever happens, stop every process it started."""
    options = parse_options(argv)
    venv_script("nginx-fleet")  # fail early and clearly when `make install` has not run
    log_dir = options.data_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    # nginx workers (nobody when started as root) must be able to traverse to the site files.
    options.data_dir.chmod(0o755)
    if options.ready_file is not None:
        options.ready_file.unlink(missing_ok=True)
    children = ChildProcesses(log_dir)
    # SIGHUP too: a closed terminal must not end the launcher without its clean-up.
    on_stop_signal = _ShutdownSignal()
    for signum in STOP_SIGNALS:
        signal.signal(signum, on_stop_signal)
    try:
        return run(options, children)
    except ShutdownRequested as request:
        print(f"\n{request}: stopping the demo", flush=True)
        return 0
    except (BackendError, RuntimeError, ValueError, httpx.HTTPError) as error:
        print(f"demo failed: {error}\n(logs in {log_dir})", file=sys.stderr, flush=True)
        return 1
    finally:
        # From here on stop signals are ignored; the first one, landing while the handlers are
        # being switched off after a normal end or a failure, only starts the switching over.
        while True:
            try:
                for signum in STOP_SIGNALS:
                    signal.signal(signum, signal.SIG_IGN)
                break
            except ShutdownRequested:
                continue
        children.stop_all()
        print("demo stopped; nothing it started is left running", flush=True)


if __name__ == "__main__":
    sys.exit(main())
