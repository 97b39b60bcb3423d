"""Building FleetHost rows from a host and its newest sample."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, Select, and_, select

from app.hosts.models import Host, HostFacts
from app.hosts.schemas import FleetHost
from app.hosts.status import host_status
from app.metrics.models import Sample

# Columns of the newest sample that the fleet view shows.
FLEET_SAMPLE_COLUMNS = (
    "active",
    "reading",
    "writing",
    "waiting",
    "req_per_s",
    "drops_per_s",
    "cpu_pct",
    "mem_used_bytes",
    "mem_total_bytes",
    "fds_open",
    "fds_limit",
)


def mem_used_pct(used: int | None, total: int | None) -> float | None:
    """Used memory as a percentage of the total, when both are known."""
    if used is None or not total:
        return None
    return 100.0 * used / total


def build_fleet_host(
    *,
    host: Mapping[str, Any],
    sample: Mapping[str, Any] | None,
    nginx_version: str | None,
    now: datetime,
    push_interval_s: int,
) -> FleetHost:
    """A FleetHost from host columns and the newest sample's columns (None before any push)."""
    status, reason = host_status(
        last_seen_at=host["last_seen_at"],
        nginx_up=host["nginx_up"],
        stub_status_available=host["stub_status_available"],
        stub_status_error=host["stub_status_error"],
        now=now,
        push_interval_s=push_interval_s,
    )
    figures = {name: (sample or {}).get(name) for name in FLEET_SAMPLE_COLUMNS}
    return FleetHost(
        id=host["id"],
        hostname=host["hostname"],
        labels=host["labels"] or {},
        status=status,
        status_reason=reason,
        last_seen_at=host["last_seen_at"],
        nginx_version=nginx_version,
        stub_status_available=host["stub_status_available"],
        stub_status_error=host["stub_status_error"],
        req_per_s=figures["req_per_s"],
        active=figures["active"],
        reading=figures["reading"],
        writing=figures["writing"],
        waiting=figures["waiting"],
        drops_per_s=figures["drops_per_s"],
        cpu_pct=figures["cpu_pct"],
        mem_used_pct=mem_used_pct(figures["mem_used_bytes"], figures["mem_total_bytes"]),
        fds_open=figures["fds_open"],
        fds_limit=figures["fds_limit"],
    )


def fleet_query() -> Select[Any]:
    """Hosts with their facts' nginx version and their newest sample, one row per host."""
    sample_columns = [Sample.__table__.c[name].label(f"s_{name}") for name in FLEET_SAMPLE_COLUMNS]
    return (
        select(Host, HostFacts.nginx_version, *sample_columns)
        .outerjoin(HostFacts, HostFacts.host_id == Host.id)
        .outerjoin(Sample, and_(Sample.host_id == Host.id, Sample.seq == Host.last_seq))
        .order_by(Host.hostname, Host.id)
    )


def host_columns(host: Host) -> dict[str, Any]:
    """The host fields build_fleet_host reads."""
    return {
        "id": host.id,
        "hostname": host.hostname,
        "labels": host.labels,
        "last_seen_at": host.last_seen_at,
        "nginx_up": host.nginx_up,
        "stub_status_available": host.stub_status_available,
        "stub_status_error": host.stub_status_error,
    }


def sample_columns(row: RowMapping) -> dict[str, Any] | None:
    """The newest sample's figures of a fleet_query() row (None when the host never pushed)."""
    figures = {name: row[f"s_{name}"] for name in FLEET_SAMPLE_COLUMNS}
    return figures if any(value is not None for value in figures.values()) else None
