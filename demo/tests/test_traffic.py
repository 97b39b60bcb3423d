"""The traffic generator: loopback only, and it stops at its limits."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from children import ChildProcesses
from nginx_instances import INSTANCES, free_port, render_instance, wait_until_serving
from traffic import Target, TargetError, parse_target, run


@pytest.mark.parametrize(
    "spec",
    [
        "web,static,http://10.0.0.1:8080",
        "web,static,http://example.com",
        "web,static,http://localhost:8080",
        "web,static,https://127.0.0.1:8443",
        "web,bogus,http://127.0.0.1:8080",
        "web,http://127.0.0.1:8080",
    ],
)
def test_parse_target_refuses(spec: str) -> None:
    with pytest.raises(TargetError):
        parse_target(spec)


def test_parse_target_accepts_any_127_address() -> None:
    assert parse_target("web,cache,http://127.0.0.2:8080/") == Target(
        name="web", profile="cache", base_url="http://127.0.0.2:8080"
    )


def test_run_stops_at_max_requests(
    nginx_binary: str, nginx_root: Path, children: ChildProcesses
) -> None:
    spec = INSTANCES[0]
    instance = render_instance(spec, nginx_root, port=free_port(), upstream_port=None)
    children.start(
        spec.name,
        [nginx_binary, *instance.nginx_args(), "-g", "daemon off;"],
        stop_signal=signal.SIGQUIT,
        signal_leader_only=True,
    )
    wait_until_serving(instance)
    target = parse_target(f"{spec.name},static,{instance.base_url}")

    budget = asyncio.run(run([target], duration_s=60.0, max_requests=40))

    assert budget.sent == 40
    assert sum(budget.statuses.values()) == 40
    assert budget.statuses["2xx"] > 0
    children.stop_all()  # flushes the access log
    logged = (instance.prefix / "logs" / "access.log").read_text().splitlines()
    generated = [line for line in logged if "/nginx_status" not in line]  # readiness probes
    assert len(generated) == 40
