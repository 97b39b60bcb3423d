"""Hosts as the UI sees them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.agents.labels import Labels
from app.configs.schemas import FindingCounts

HostStatus = Literal["up", "down", "stale", "new"]
# The fleet table's sortable columns (app.hosts.fleet.sort_key says what each one sorts by).
FleetSort = Literal[
    "hostname",
    "status",
    "req_per_s",
    "active",
    "waiting",
    "drops_per_s",
    "cpu_pct",
    "mem_used_pct",
    "fds",
    "last_seen_at",
    "score",
    "errors",
    "warnings",
    "cache_hit_ratio",
    "request_time_p95_s",
    "share_5xx",
]
SortOrder = Literal["asc", "desc"]


class FleetHost(BaseModel):
    """One row of the fleet view: status, gauges of the newest sample, rates of the newest pair."""

    id: int
    hostname: str
    labels: dict[str, str]
    status: HostStatus
    status_reason: str | None
    last_seen_at: datetime | None
    nginx_version: str | None
    stub_status_available: bool | None
    stub_status_error: str | None
    req_per_s: float | None
    active: int | None
    reading: int | None
    writing: int | None
    waiting: int | None
    drops_per_s: float | None
    cpu_pct: float | None
    mem_used_pct: float | None
    fds_open: int | None
    fds_limit: int | None
    # From the access logs over the last 15 minutes (app.access_log); null when not measured.
    cache_hit_ratio: float | None = Field(
        description="(HIT + STALE + UPDATING + REVALIDATED) / requests with a cache status, 0..1"
    )
    request_time_p95_s: float | None
    share_5xx: float | None = Field(description="5xx / requests that had a status, 0..1")
    # From the host's latest config analysis, muted findings left out; null before one.
    score: int | None
    findings: FindingCounts | None


class FleetPage(BaseModel):
    """One page of the filtered, sorted fleet, and how many hosts the filter matches."""

    items: list[FleetHost]
    total: int = Field(description="Hosts matching the filters, on every page")
    limit: int
    offset: int


class HostCounts(BaseModel):
    """Hosts by status."""

    up: int
    down: int
    stale: int
    new: int


class FleetSummary(BaseModel):
    """The filtered fleet at a glance."""

    hosts: int
    by_status: HostCounts
    req_per_s: float = Field(description="Summed over the hosts that are not stale")
    hosts_with_drops: int = Field(description="Hosts not stale whose newest sample dropped")
    findings: FindingCounts = Field(description="Over each host's latest analysis, muted left out")


class HostDetail(FleetHost):
    """A host with its agent and the facts it last reported."""

    agent_id: str
    agent_version: str | None
    enrolled_at: datetime
    # Set while an admin's enrolment reset waits for the agent to enrol again (with an
    # enrolment token made after the reset) and has not expired.
    enrolment_reset_at: datetime | None
    enrolment_reset_expires_at: datetime | None
    facts: dict[str, Any] | None
    # The agent said it may apply approved changes (`allow_apply` in its config); when false
    # the UI shows the host read-only and offers no diffs for it.
    apply_allowed: bool


class HostLabelsUpdate(BaseModel):
    """Body of PATCH /hosts/{id}: the complete new label set."""

    labels: Labels
