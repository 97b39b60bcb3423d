"""Realistic agent push bodies (protocol v1): samples, facts and a config dump."""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

AGENT_VERSION = "0.1.0"
MEM_TOTAL_BYTES = 8 * 1024**3
CPU_COUNT = 2

CONFIG_DUMP = """# configuration file /etc/nginx/nginx.conf:
user www-data;
worker_processes auto;
pid /run/nginx.pid;

events {
    worker_connections 768;
}

http {
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    include /etc/nginx/mime.types;
    access_log /var/log/nginx/access.log;
    error_log /var/log/nginx/error.log;
    gzip on;
    include /etc/nginx/sites-enabled/*;
}

# configuration file /etc/nginx/sites-enabled/default:
upstream app {
    server 127.0.0.1:9000;
    keepalive 16;
}

server {
    listen 80 default_server;
    server_name _;

    location / {
        proxy_pass http://app;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
    }

    location = /nginx_status {
        stub_status;
        allow 127.0.0.1;
        deny all;
    }
}
"""
CONFIG_HASH = hashlib.sha256(CONFIG_DUMP.encode()).hexdigest()

FACTS: dict[str, Any] = {
    "nginx_version": "1.22.1",
    "nginx_configure_args": "--with-http_ssl_module --with-http_stub_status_module",
    "nginx_modules": ["http_ssl_module", "http_stub_status_module", "http_gzip_static_module"],
    "cpu_count": CPU_COUNT,
    "mem_total_bytes": MEM_TOTAL_BYTES,
    "kernel": "6.1.0",
    "somaxconn": 4096,
    "os": "Debian GNU/Linux 12",
}


def rfc3339(moment: datetime) -> str:
    """UTC time as the protocol writes it (`2026-11-21T10:00:00Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def diurnal_factor(moment: datetime) -> float:
    """Traffic shape over a day: low around 03:00 UTC, peak around 15:00 UTC (0.2 .. 1.0)."""
    hours = moment.hour + moment.minute / 60
    return 0.6 + 0.4 * math.sin(2 * math.pi * (hours - 9) / 24)


@dataclass
class SampleFactory:
    """Produces one host's consecutive samples with counters that only grow."""

    rng: random.Random
    peak_req_per_s: float = 400.0
    accepts: int = 0
    requests: int = 0
    rx_bytes: int = 10_000_000
    tx_bytes: int = 50_000_000
    listen_overflows: int = 0

    def sample(self, *, seq: int, moment: datetime, interval_s: int = 10) -> dict[str, Any]:
        """The sample with number `seq` taken at `moment`, `interval_s` after the previous one."""
        load = diurnal_factor(moment) * self.rng.uniform(0.9, 1.1)
        req_per_s = self.peak_req_per_s * load
        new_requests = int(req_per_s * interval_s)
        # About 8 requests per connection with keepalive.
        new_accepts = max(1, new_requests // 8)
        self.requests += new_requests
        self.accepts += new_accepts
        self.rx_bytes += new_requests * self.rng.randint(400, 700)
        self.tx_bytes += new_requests * self.rng.randint(3_000, 9_000)
        if self.rng.random() < 0.01:
            self.listen_overflows += self.rng.randint(1, 5)
        writing = max(1, int(req_per_s * 0.02))
        reading = int(req_per_s * 0.002)
        waiting = int(req_per_s * 0.3)
        cpu_total = min(100.0, 5.0 + 40.0 * load)
        mem_used = int(MEM_TOTAL_BYTES * (0.30 + 0.05 * load))
        return {
            "seq": seq,
            "ts": rfc3339(moment),
            "nginx": {"up": True, "error": None, "master_pid": 4242, "workers": CPU_COUNT},
            "stub_status": {
                "available": True,
                "url": "http://127.0.0.1:8080/nginx_status",
                "error": None,
                "active": reading + writing + waiting,
                "reading": reading,
                "writing": writing,
                "waiting": waiting,
                "accepts": self.accepts,
                "handled": self.accepts,
                "requests": self.requests,
            },
            "system": {
                "cpu": {
                    "total_pct": round(cpu_total, 1),
                    "per_core_pct": [round(cpu_total * 0.9, 1), round(cpu_total * 1.1, 1)],
                    "iowait_pct": 0.1,
                },
                "memory": {
                    "total_bytes": MEM_TOTAL_BYTES,
                    "available_bytes": MEM_TOTAL_BYTES - mem_used,
                    "used_bytes": mem_used,
                    "swap_used_bytes": 0,
                },
                "load": {
                    "load1": round(2 * load, 2),
                    "load5": round(1.8 * load, 2),
                    "load15": round(1.6 * load, 2),
                },
                "network": {"rx_bytes": self.rx_bytes, "tx_bytes": self.tx_bytes},
                "tcp_states": {
                    "ESTABLISHED": reading + writing + waiting + 4,
                    "TIME_WAIT": int(req_per_s * 0.5),
                    "LISTEN": 5,
                },
                "netstat": {"listen_overflows": self.listen_overflows, "listen_drops": 0},
            },
            "nginx_processes": {
                "fds_open": 40 + waiting,
                "fds_limit": 2048,
                "rss_bytes": 24_000_000,
                "cpu_pct": round(cpu_total * 0.6, 1),
                "worker_fds_max": 20 + waiting // 2,
                "worker_fds_limit": 1024,
            },
        }

    def day(
        self, *, end: datetime, interval_s: int = 10, first_seq: int = 1
    ) -> list[dict[str, Any]]:
        """24 h of samples every `interval_s` ending at `end`, oldest first."""
        count = 86_400 // interval_s
        start = end - timedelta(seconds=interval_s * (count - 1))
        return [
            self.sample(
                seq=first_seq + i,
                moment=start + timedelta(seconds=i * interval_s),
                interval_s=interval_s,
            )
            for i in range(count)
        ]


def push_body(
    *,
    agent_id: str,
    hostname: str,
    samples: list[dict[str, Any]],
    with_config: bool = False,
) -> dict[str, Any]:
    """A push body; with `with_config` it also carries facts and the config dump (first push)."""
    body: dict[str, Any] = {
        "agent_id": agent_id,
        "agent_version": AGENT_VERSION,
        "hostname": hostname,
        "labels": {"env": "bench"},
        "config_hash": CONFIG_HASH,
        "samples": samples,
    }
    if with_config:
        body["facts"] = FACTS
        body["config"] = {"hash": CONFIG_HASH, "dump": CONFIG_DUMP}
    return body


# Values the wrk Lua script fills in per request; numbers lose their quotes in the template.
TEMPLATE_STRINGS = ("AGENT_ID", "HOSTNAME", "TS")
TEMPLATE_NUMBERS = ("SEQ", "ACCEPTS", "REQUESTS", "RX_BYTES", "TX_BYTES")


def _templated_sample() -> dict[str, Any]:
    """The sample bench/ingest.py sends, its changing figures as @NAME@ placeholders."""
    sample = SampleFactory(rng=random.Random(7)).sample(
        seq=1, moment=datetime(2026, 1, 1, 15, tzinfo=UTC)
    )
    sample["seq"] = "@SEQ@"
    sample["ts"] = "@TS@"
    status_page = sample["stub_status"]
    status_page["accepts"] = status_page["handled"] = "@ACCEPTS@"
    status_page["requests"] = "@REQUESTS@"
    sample["system"]["network"] = {"rx_bytes": "@RX_BYTES@", "tx_bytes": "@TX_BYTES@"}
    return sample


def _unquote_numbers(text: str) -> str:
    """Numeric placeholders stand bare in the JSON, as the numbers that replace them will."""
    for name in TEMPLATE_NUMBERS:
        text = text.replace(f'"@{name}@"', f"@{name}@")
    return text


def templated_sample_text() -> str:
    """One sample as JSON with @NAME@ placeholders (the fleet script fills them per push)."""
    return _unquote_numbers(json.dumps(_templated_sample(), separators=(",", ":")))


def lua_push_template() -> str:
    """A one-sample push body with @NAME@ placeholders for the wrk script to fill per request."""
    body = push_body(agent_id="@AGENT_ID@", hostname="@HOSTNAME@", samples=[_templated_sample()])
    return _unquote_numbers(json.dumps(body, separators=(",", ":")))
