"""The likely cause of dropped connections, from the evidence the agent sent, and its finding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from nginx_fleet_analyzer.loader import parse_dump
from nginx_fleet_analyzer.rules.workers import worker_connections
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.configs.models import ConfigAnalysis, ConfigSnapshot
from app.configs.rescoring import latest_analysis_ids
from app.findings.models import Finding
from app.hosts.models import Host

# Active this close to worker_processes x worker_connections means the workers ran out.
NEAR_CAPACITY = 0.9
# The busiest worker this close to its open-files limit has run out of descriptors.
FDS_AT_LIMIT_PCT = 95.0
# Findings that carry the fix for each cause, best first (shared/tuning-rules.md ids).
FINDING_RULES = {
    "worker_connections": ("W-connections", "W-drops", "W-nofile"),
    "fd_limit": ("W-nofile", "W-drops"),
    "listen_queue": ("W-backlog",),
    "unknown": ("W-drops", "W-connections", "W-nofile"),
}
CAUSE_SIGNALS = ("dropped_connections", "listen_drops")


def configured_worker_connections(session: Session, host_id: int) -> int | None:
    """worker_connections of the host's current config (nginx's 512 when unset); None unknown."""
    dump = session.scalar(
        select(ConfigSnapshot.dump)
        .join(Host, (Host.id == ConfigSnapshot.host_id) & (Host.config_hash == ConfigSnapshot.hash))
        .where(Host.id == host_id)
        .order_by(ConfigSnapshot.id.desc())
        .limit(1)
    )
    if dump is None:
        return None
    try:
        return worker_connections(parse_dump(dump))[1]
    except Exception:  # a dump the engine cannot read leaves the capacity unknown, nothing more
        return None


def _int(evidence: Mapping[str, Any], name: str) -> int:
    """A count from the evidence, 0 when absent."""
    value = evidence.get(name)
    return int(value) if value is not None else 0


def diagnose(evidence: Mapping[str, Any], connections: int | None) -> dict[str, Any]:
    """{code, title, detail, evidence}: which limit dropped the connections.

    nginx logs "worker_connections are not enough" (alert) when it finds no free connection,
    and "(24: Too many open files)" when accept() hits the fd limit; connections the kernel
    drops from a full listen queue never reach accept(), so stub_status cannot see them."""
    wc_lines = _int(evidence, "wc_not_enough")
    nofile_lines = _int(evidence, "too_many_open_files")
    kernel_drops = _int(evidence, "kernel_drops")
    accepted = _int(evidence, "accepted")
    active_max = evidence.get("active_max")
    workers = evidence.get("workers")
    fds_pct = evidence.get("fds_pct")
    capacity = connections * int(workers) if connections and workers else None
    facts: dict[str, Any] = {
        "worker_connections_not_enough": wc_lines,
        "too_many_open_files": nofile_lines,
        "active_max": active_max,
        "workers": workers,
        "worker_connections": connections,
        "capacity": capacity,
        "fds_used_pct": None if fds_pct is None else round(float(fds_pct), 1),
        "listen_drops": kernel_drops,
        "accepted": accepted,
    }
    near_capacity = (
        capacity is not None and active_max is not None and active_max >= NEAR_CAPACITY * capacity
    )
    at_fd_limit = fds_pct is not None and float(fds_pct) >= FDS_AT_LIMIT_PCT
    active_text = (
        f"Active peaked at {active_max} of {capacity} ({workers} worker(s) x {connections})"
        if capacity is not None and active_max is not None
        else None
    )
    if nofile_lines > wc_lines or (at_fd_limit and not wc_lines):
        parts = []
        if nofile_lines:
            parts.append(f"the error log reported 'Too many open files' {nofile_lines} time(s)")
        if fds_pct is not None:
            parts.append(
                f"the busiest worker used {facts['fds_used_pct']}% of its open-files limit"
            )
        return {
            "code": "fd_limit",
            "title": "open-files limit reached",
            "detail": "; ".join(parts),
            "evidence": facts,
        }
    if wc_lines or near_capacity:
        parts = []
        if wc_lines:
            parts.append(
                f"the error log reported 'worker_connections are not enough' {wc_lines} time(s)"
            )
        if active_text:
            parts.append(active_text)
        return {
            "code": "worker_connections",
            "title": "worker_connections exhausted",
            "detail": "; ".join(parts),
            "evidence": facts,
        }
    if kernel_drops:
        grew = "while accepts did not grow" if accepted == 0 else f"(accepts grew by {accepted})"
        return {
            "code": "listen_queue",
            "title": "listen queue overflowing",
            "detail": f"the kernel dropped {kernel_drops} connection(s) from full listen queues "
            f"{grew}",
            "evidence": facts,
        }
    detail = "no error-log line or limit explains it"
    if active_text:
        detail += f"; {active_text}"
    return {"code": "unknown", "title": "cause not identified", "detail": detail, "evidence": facts}


def matching_finding(session: Session, host_id: int, code: str) -> dict[str, Any] | None:
    """The host's current finding that carries the fix for this cause: {rule, finding_id, url}."""
    rules = FINDING_RULES.get(code, ())
    latest = latest_analysis_ids().where(ConfigAnalysis.host_id == host_id).subquery()
    rows = session.execute(
        select(Finding.id, Finding.rule, Finding.key).where(
            Finding.analysis_id == select(latest.c.analysis_id).scalar_subquery(),
            Finding.rule.in_(rules),
        )
    ).all()
    by_rule = {row.rule: row for row in rows}
    for rule in rules:
        if rule in by_rule:
            row = by_rule[rule]
            # The config tab opens the finding a link names by its key.
            return {
                "rule": rule,
                "finding_id": row.id,
                "url": f"/hosts/{host_id}/config?{urlencode({'finding': row.key})}",
            }
    return None
