"""demo-drops really drops connections under its surges, and serves a certificate that expires
in about ten days: the demo's real "Dropped connections" and certificate expiry alerts."""

from __future__ import annotations

import asyncio
import signal
import socket
import ssl
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import traffic
from children import ChildProcesses
from cryptography import x509
from nginx_instances import (
    CERTIFICATE_DAYS,
    INSTANCES,
    NginxInstance,
    free_port,
    render_instance,
    wait_until_serving,
)
from pytest import MonkeyPatch
from traffic import Budget, parse_target, surge, surge_client

DROPS = next(spec for spec in INSTANCES if spec.name == "demo-drops")


def start_drops(children: ChildProcesses, nginx_binary: str, root: Path) -> NginxInstance:
    instance = render_instance(DROPS, root, port=free_port(), upstream_port=None)
    children.start(
        DROPS.name,
        [nginx_binary, *instance.nginx_args(), "-g", "daemon off;"],
        stop_signal=signal.SIGQUIT,
        signal_leader_only=True,
    )
    wait_until_serving(instance)
    return instance


def counters(instance: NginxInstance) -> tuple[int, int]:
    """stub_status accepts and handled, once a connection is free to ask."""
    deadline = time.monotonic() + 15
    while True:
        try:
            lines = httpx.get(instance.status_url, timeout=1).text.splitlines()
            accepts, handled, _ = (int(n) for n in lines[2].split())
            return accepts, handled
        except httpx.HTTPError:
            assert time.monotonic() < deadline, "stub_status did not answer after the surge"
            time.sleep(0.2)


async def one_surge(instance: NginxInstance) -> Budget:
    target = parse_target(f"{DROPS.name},drops,{instance.base_url}")
    budget = Budget(deadline=time.monotonic() + 60, max_requests=100)
    async with surge_client() as client:
        await surge(client, target, budget)
    return budget


def test_a_surge_makes_nginx_drop_connections_and_log_why(
    nginx_binary: str, nginx_root: Path, children: ChildProcesses
) -> None:
    instance = start_drops(children, nginx_binary, nginx_root)
    accepts, handled = counters(instance)
    assert accepts == handled

    budget = asyncio.run(one_surge(instance))

    accepts, handled = counters(instance)
    assert accepts > handled, "nginx should have dropped some of the surge's connections"
    assert budget.sent == 40
    assert budget.statuses["2xx"] >= 5, budget.statuses  # the ones nginx had room for
    assert budget.statuses["2xx"] < 40, budget.statuses
    log = (instance.prefix / "logs" / "error.log").read_text()
    assert "16 worker_connections are not enough" in log
    assert log.count("worker_connections are not enough\n") == accepts - handled


def test_its_tls_server_serves_the_certificate_made_at_start(
    nginx_binary: str, nginx_root: Path, children: ChildProcesses
) -> None:
    instance = start_drops(children, nginx_binary, nginx_root)
    assert instance.tls_port is not None
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # self-signed on purpose
    with (
        socket.create_connection(("127.0.0.1", instance.tls_port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="demo-drops.test") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    certificate = x509.load_der_x509_certificate(der)
    expected = datetime.now(UTC) + timedelta(days=CERTIFICATE_DAYS)
    assert abs(certificate.not_valid_after_utc - expected) < timedelta(hours=2)
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert "demo-drops.test" in names.value.get_values_for_type(x509.DNSName)
    key = instance.prefix / "conf" / "tls" / "demo-drops.key"
    assert key.stat().st_mode & 0o077 == 0, "the key must be readable by its owner only"


def test_the_traffic_run_surges_drops_targets_within_its_budget(
    nginx_binary: str, nginx_root: Path, children: ChildProcesses, monkeypatch: MonkeyPatch
) -> None:
    instance = start_drops(children, nginx_binary, nginx_root)
    monkeypatch.setattr(traffic, "SURGE_FIRST_S", (0.1, 0.2))
    target = parse_target(f"{DROPS.name},drops,{instance.base_url}")

    budget = asyncio.run(traffic.run([target], duration_s=4.0, max_requests=60))

    assert budget.sent <= 60
    assert sum(budget.statuses.values()) == budget.sent
    accepts, handled = counters(instance)
    assert accepts > handled
