"""Factories of valid push bodies for the agent tests."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

NGINX_DUMP = (
    "# configuration file /etc/nginx/nginx.conf:\nevents {}\nhttp {\n    server { listen 80; }\n}\n"
)


def iso(ts: datetime) -> str:
    """RFC 3339 UTC with a trailing Z, as the agent sends it."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def recent(seconds_ago: float) -> datetime:
    """A moment seconds_ago before now."""
    return datetime.now(UTC) - timedelta(seconds=seconds_ago)


def sample(
    seq: int,
    ts: datetime,
    *,
    accepts: int = 100,
    handled: int | None = None,
    requests: int = 500,
    active: int = 3,
    up: bool = True,
) -> dict[str, Any]:
    """One sample with every group filled in, counters as given."""
    stub_status: dict[str, Any] = {
        "available": True,
        "url": "http://127.0.0.1:8080/nginx_status",
        "error": None,
        "active": active,
        "reading": 0,
        "writing": 1,
        "waiting": active - 1,
        "accepts": accepts,
        "handled": accepts if handled is None else handled,
        "requests": requests,
    }
    if not up:
        stub_status = {"available": False, "error": "connection refused"}
    return {
        "seq": seq,
        "ts": iso(ts),
        "nginx": {"up": up, "error": None, "master_pid": 4242 if up else None, "workers": 2},
        "stub_status": stub_status,
        "system": {
            "cpu": {"total_pct": 12.5, "per_core_pct": [10.0, 15.0], "iowait_pct": 0.1},
            "memory": {
                "total_bytes": 8_000_000_000,
                "available_bytes": 6_000_000_000,
                "used_bytes": 2_000_000_000,
                "swap_used_bytes": 0,
            },
            "load": {"load1": 0.3, "load5": 0.2, "load15": 0.1},
            "network": {"rx_bytes": 123456, "tx_bytes": 654321},
            "tcp_states": {"ESTABLISHED": 10, "TIME_WAIT": 3, "LISTEN": 5},
            "netstat": {"listen_overflows": 0, "listen_drops": 0},
        },
        "nginx_processes": (
            {
                "fds_open": 40,
                "fds_limit": 1024,
                "rss_bytes": 12_345_678,
                "cpu_pct": 0.5,
                "worker_cpu_pct": 0.4,
                "worker_fds_max": 20,
                "worker_fds_limit": 1024,
            }
            if up
            else None
        ),
    }


def push_body(
    samples: list[dict[str, Any]],
    *,
    agent_id: str = "6f1c2b7e-0000-4000-8000-000000000001",
    config_dump: str | None = None,
    facts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A push body carrying samples, and a config when config_dump is given."""
    body: dict[str, Any] = {
        "agent_id": agent_id,
        "agent_version": "0.1.0",
        "hostname": "web-1",
        "labels": {"env": "prod"},
        "samples": samples,
    }
    if facts is not None:
        body["facts"] = facts
    if config_dump is not None:
        digest = hashlib.sha256(config_dump.encode()).hexdigest()
        body["config"] = {"hash": digest, "dump": config_dump}
        body["config_hash"] = digest
    return body
