"""Building FleetHost rows from a host and its newest sample."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import RowMapping, Select, and_, select
from sqlalchemy.orm import Session

from app.access_log.models import AccessLogRecent
from app.configs.models import AnalysisStatus, ConfigAnalysis
from app.configs.rescoring import latest_analysis_ids
from app.configs.schemas import FindingCounts
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
# Columns of the latest config analysis that the fleet view shows.
FLEET_ANALYSIS_COLUMNS = ("status", "score", "error_count", "warning_count", "info_count")
# The access-log figures of the last 15 minutes, refreshed with the rollups every minute.
FLEET_LOG_FIGURES = ("cache_hit_ratio", "request_time_p95_s", "share_5xx")
FLEET_LOG_COLUMNS = ("computed_at", *FLEET_LOG_FIGURES)
# Older figures mean the rollups stopped: they no longer describe the last 15 minutes.
LOG_FIGURES_MAX_AGE = timedelta(minutes=5)


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
    analysis: Mapping[str, Any] | None = None,
    access_log: Mapping[str, Any] | None = None,
) -> FleetHost:
    """A FleetHost from host columns, the newest sample's columns (None before any push), the
    latest config analysis's columns (None before one) and the recent access-log figures."""
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
        **log_figures(access_log, now),
        **analysis_figures(analysis),
    )


def log_figures(access_log: Mapping[str, Any] | None, now: datetime) -> dict[str, Any]:
    """The recent access-log figures, all None when there are none or they are out of date."""
    if access_log is None or access_log["computed_at"] is None:
        return dict.fromkeys(FLEET_LOG_FIGURES)
    if access_log["computed_at"] < now - LOG_FIGURES_MAX_AGE:
        return dict.fromkeys(FLEET_LOG_FIGURES)
    return {name: access_log[name] for name in FLEET_LOG_FIGURES}


def recent_log_columns(session: Session, host_ids: set[int]) -> dict[int, dict[str, Any]]:
    """The FLEET_LOG_COLUMNS of these hosts (one query), for the live events of a push."""
    if not host_ids:
        return {}
    columns = [AccessLogRecent.__table__.c[name] for name in FLEET_LOG_COLUMNS]
    rows = session.execute(
        select(AccessLogRecent.host_id, *columns).where(AccessLogRecent.host_id.in_(host_ids))
    )
    return {row.host_id: {name: row._mapping[name] for name in FLEET_LOG_COLUMNS} for row in rows}


def analysis_figures(analysis: Mapping[str, Any] | None) -> dict[str, Any]:
    """score and findings counts of a latest analysis; both None before one or when it failed."""
    if analysis is None or analysis["status"] != AnalysisStatus.ok:
        return {"score": None, "findings": None}
    return {
        "score": analysis["score"],
        "findings": FindingCounts(
            error=analysis["error_count"],
            warning=analysis["warning_count"],
            info=analysis["info_count"],
        ),
    }


def latest_analysis_columns(session: Session, host_id: int) -> dict[str, Any] | None:
    """The fleet view's columns of one host's latest config analysis (None before one)."""
    columns = [ConfigAnalysis.__table__.c[name] for name in FLEET_ANALYSIS_COLUMNS]
    row = session.execute(
        select(*columns)
        .where(ConfigAnalysis.host_id == host_id)
        .order_by(ConfigAnalysis.id.desc())
        .limit(1)
    ).one_or_none()
    return dict(row._mapping) if row is not None else None


def fleet_query() -> Select[Any]:
    """Hosts with their facts' nginx version, newest sample and latest analysis, one per host."""
    sample_columns = [Sample.__table__.c[name].label(f"s_{name}") for name in FLEET_SAMPLE_COLUMNS]
    analysis_columns = [
        ConfigAnalysis.__table__.c[name].label(f"a_{name}") for name in FLEET_ANALYSIS_COLUMNS
    ]
    log_columns = [
        AccessLogRecent.__table__.c[name].label(f"l_{name}") for name in FLEET_LOG_COLUMNS
    ]
    latest = latest_analysis_ids().subquery()
    return (
        select(Host, HostFacts.nginx_version, *sample_columns, *analysis_columns, *log_columns)
        .outerjoin(HostFacts, HostFacts.host_id == Host.id)
        .outerjoin(Sample, and_(Sample.host_id == Host.id, Sample.seq == Host.last_seq))
        .outerjoin(latest, latest.c.host_id == Host.id)
        .outerjoin(ConfigAnalysis, ConfigAnalysis.id == latest.c.analysis_id)
        .outerjoin(AccessLogRecent, AccessLogRecent.host_id == Host.id)
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


def log_columns(row: RowMapping) -> dict[str, Any]:
    """The recent access-log columns of a fleet_query() row (computed_at None when none)."""
    return {name: row[f"l_{name}"] for name in FLEET_LOG_COLUMNS}


def analysis_columns(row: RowMapping) -> dict[str, Any] | None:
    """The latest analysis's columns of a fleet_query() row (None before any analysis)."""
    if row["a_status"] is None:
        return None
    return {name: row[f"a_{name}"] for name in FLEET_ANALYSIS_COLUMNS}
