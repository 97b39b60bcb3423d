"""Series returned to the UI."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class SeriesPoint(BaseModel):
    """One bucket of a host's series: averages, except the maxima of active and drops_per_s."""

    ts: datetime
    active: float | None = None
    reading: float | None = None
    writing: float | None = None
    waiting: float | None = None
    req_per_s: float | None = None
    accepts_per_s: float | None = None
    drops_per_s: float | None = None
    cpu_pct: float | None = None
    mem_used_bytes: float | None = None
    mem_total_bytes: float | None = None
    load1: float | None = None
    fds_open: float | None = None
    fds_limit: float | None = None
    workers: float | None = None


class SampleGapRead(BaseModel):
    """Samples the host's agent collected but dropped before delivering them."""

    from_seq: int
    to_seq: int
    from_ts: datetime
    to_ts: datetime
    reason: str = Field(description='why they were lost: "spool_overflow" (agent spool full)')
    samples_lost: int


class SeriesRead(BaseModel):
    """A host's series over [from, to) in buckets of step_s seconds; empty buckets omitted."""

    model_config = ConfigDict(populate_by_name=True)

    host_id: int
    from_: datetime = Field(alias="from")
    to: datetime
    step_s: int
    points: list[SeriesPoint]
    # Reported losses overlapping the range, so a hole in the chart has its reason beside it.
    gaps: list[SampleGapRead]
