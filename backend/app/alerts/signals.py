"""The host signals a rule can watch: names, units and where each one is read from."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Source(enum.StrEnum):
    """Which query computes a signal (app.alerts.readings)."""

    samples = "samples"
    host = "host"
    access_log = "access_log"
    access_log_recent = "access_log_recent"
    certificates = "certificates"
    analyses = "analyses"
    changes = "changes"


@dataclass(frozen=True)
class Signal:
    """One signal: what it measures, its unit, and how rules usually compare it."""

    name: str
    title: str
    unit: str
    source: Source
    default_op: str
    # Rate-style signals: the request volume behind the value is known, so a rule may ask for
    # a minimum before it judges (quiet hosts do not page).
    needs_requests: bool = False
    # Set when the figure always covers this span whatever the rule's window.
    fixed_window_s: int | None = None
    # "counter": summed over the window; "gauge": a level; "event": things that happened.
    kind: str = "gauge"


SIGNALS: dict[str, Signal] = {
    s.name: s
    for s in (
        Signal(
            "dropped_connections",
            "Connections dropped (stub_status accepts - handled grew)",
            "connections",
            Source.samples,
            ">",
            kind="counter",
        ),
        Signal("silent_s", "Seconds since the agent's last push", "s", Source.host, ">"),
        Signal("nginx_down", "nginx is down (1) or up (0)", "", Source.host, ">"),
        Signal(
            "cert_expiry_days",
            "Days until the first TLS certificate of the config expires",
            "days",
            Source.certificates,
            "<",
        ),
        Signal(
            "fds_used_pct",
            "Open files of the busiest worker, % of the workers' limit (peak in the window)",
            "%",
            Source.samples,
            ">",
        ),
        Signal(
            "listen_drops",
            "Connections the kernel dropped from full listen queues (ListenOverflows/Drops)",
            "connections",
            Source.samples,
            ">",
            kind="counter",
        ),
        Signal(
            "share_5xx_pct",
            "5xx responses, % of requests in the access logs",
            "%",
            Source.access_log,
            ">",
            needs_requests=True,
        ),
        Signal(
            "cache_hit_ratio_pct",
            "Cache hit ratio, % of requests that had a cache status",
            "%",
            Source.access_log,
            "<",
            needs_requests=True,
        ),
        Signal(
            "request_p95_ms",
            "95th percentile request time in the access logs (last 15 minutes)",
            "ms",
            Source.access_log_recent,
            ">",
            needs_requests=True,
            fixed_window_s=900,
        ),
        Signal(
            "error_log_severe",
            "Error-log lines at alert, crit or emerg level",
            "lines",
            Source.samples,
            ">",
            kind="counter",
        ),
        Signal(
            "score_drop",
            "Points the config score fell within the window",
            "points",
            Source.analyses,
            ">",
            kind="event",
        ),
        Signal(
            "new_error_findings",
            "Error-severity findings new within the window",
            "findings",
            Source.analyses,
            ">",
            kind="event",
        ),
        Signal(
            "failed_applies",
            "Changes whose apply failed or was rolled back within the window",
            "changes",
            Source.changes,
            ">",
            kind="event",
        ),
    )
}

OPS = (">", ">=", "<", "<=")


def compare(value: float, op: str, threshold: float) -> bool:
    """value op threshold, for the four comparison operators rules use."""
    if op == ">":
        return value > threshold
    if op == ">=":
        return value >= threshold
    if op == "<":
        return value < threshold
    if op == "<=":
        return value <= threshold
    raise ValueError(f"unknown comparison {op!r}")
