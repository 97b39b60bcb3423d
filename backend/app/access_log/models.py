"""Access-log figures per sample and site, per upstream, their rollups, and per-host reports.

Counters are NULL where the host's log format lacks the variable they need: absent, not zero.
Sketches are packed into bytea (app.access_log.packed: a third to a fifth of their JSON text);
the ORM reads and writes them in the protocol form ({"zero": z, "bins": {"i": c}}).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.access_log.packed import PackedSketch
from app.core.db import Base

# None is stored as SQL NULL (a list that was not sent), never as JSON null.
SketchJSON = JSON(none_as_null=True)


def _host_key() -> Mapped[int]:
    return mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), primary_key=True)


class _IntervalCounters:
    """One interval's counters: 32-bit, as the protocol bounds them (bytes excepted)."""

    requests: Mapped[int]
    status_1xx: Mapped[int | None]
    status_2xx: Mapped[int | None]
    status_3xx: Mapped[int | None]
    status_4xx: Mapped[int | None]
    status_5xx: Mapped[int | None]
    status_499: Mapped[int | None]
    status_500: Mapped[int | None]
    status_502: Mapped[int | None]
    status_503: Mapped[int | None]
    status_504: Mapped[int | None]
    bytes_sent: Mapped[int | None] = mapped_column(BigInteger)
    get_2xx: Mapped[int | None]
    cache_hit: Mapped[int | None]
    cache_miss: Mapped[int | None]
    cache_expired: Mapped[int | None]
    cache_stale: Mapped[int | None]
    cache_updating: Mapped[int | None]
    cache_revalidated: Mapped[int | None]
    cache_bypass: Mapped[int | None]
    upstream_errors: Mapped[int | None]
    request_time: Mapped[dict[str, Any] | None] = mapped_column(PackedSketch)
    upstream_time: Mapped[dict[str, Any] | None] = mapped_column(PackedSketch)
    # [[path, requests, time_sum, time_max], ...] when the agent sends top paths.
    top_paths: Mapped[list[Any] | None] = mapped_column(SketchJSON)


class _SummedCounters:
    """The same counters summed over a bucket: 64-bit."""

    requests: Mapped[int] = mapped_column(BigInteger)
    status_1xx: Mapped[int | None] = mapped_column(BigInteger)
    status_2xx: Mapped[int | None] = mapped_column(BigInteger)
    status_3xx: Mapped[int | None] = mapped_column(BigInteger)
    status_4xx: Mapped[int | None] = mapped_column(BigInteger)
    status_5xx: Mapped[int | None] = mapped_column(BigInteger)
    status_499: Mapped[int | None] = mapped_column(BigInteger)
    status_500: Mapped[int | None] = mapped_column(BigInteger)
    status_502: Mapped[int | None] = mapped_column(BigInteger)
    status_503: Mapped[int | None] = mapped_column(BigInteger)
    status_504: Mapped[int | None] = mapped_column(BigInteger)
    bytes_sent: Mapped[int | None] = mapped_column(BigInteger)
    get_2xx: Mapped[int | None] = mapped_column(BigInteger)
    cache_hit: Mapped[int | None] = mapped_column(BigInteger)
    cache_miss: Mapped[int | None] = mapped_column(BigInteger)
    cache_expired: Mapped[int | None] = mapped_column(BigInteger)
    cache_stale: Mapped[int | None] = mapped_column(BigInteger)
    cache_updating: Mapped[int | None] = mapped_column(BigInteger)
    cache_revalidated: Mapped[int | None] = mapped_column(BigInteger)
    cache_bypass: Mapped[int | None] = mapped_column(BigInteger)
    upstream_errors: Mapped[int | None] = mapped_column(BigInteger)
    request_time: Mapped[dict[str, Any] | None] = mapped_column(PackedSketch)
    upstream_time: Mapped[dict[str, Any] | None] = mapped_column(PackedSketch)
    # The bucket's most frequent and slowest paths per site, merged and trimmed.
    top_paths: Mapped[list[Any] | None] = mapped_column(SketchJSON)


class LogStats(_IntervalCounters, Base):
    """One site's access-log figures of one sample's interval."""

    __tablename__ = "log_stats"
    # Daily partitions, as the samples (app.metrics.partitioning).
    __table_args__ = {"postgresql_partition_by": "RANGE (ts)"}

    # One key serves both range reads (host, ts) and uniqueness; seq tells two samples of one
    # host apart should a clock step give them the same ts.
    host_id: Mapped[int] = _host_key()
    ts: Mapped[datetime] = mapped_column(primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    site: Mapped[str] = mapped_column(String(255), primary_key=True)


class LogStatsRollup(_SummedCounters, Base):
    """One site's figures over a 1-minute or 1-hour bucket: counters summed, sketches merged."""

    __tablename__ = "log_stats_rollups"
    # One LIST partition per resolution, each split by time, as the sample rollups.
    __table_args__ = {"postgresql_partition_by": "LIST (resolution)"}

    host_id: Mapped[int] = _host_key()
    # '1m' or '1h' (app.metrics.bucketing.SeriesSource).
    resolution: Mapped[str] = mapped_column(String(2), primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(primary_key=True)
    site: Mapped[str] = mapped_column(String(255), primary_key=True)


class LogUpstreamStats(Base):
    """One upstream address of one site over one sample's interval."""

    __tablename__ = "log_upstream_stats"
    __table_args__ = {"postgresql_partition_by": "RANGE (ts)"}

    host_id: Mapped[int] = _host_key()
    ts: Mapped[datetime] = mapped_column(primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    site: Mapped[str] = mapped_column(String(255), primary_key=True)
    upstream: Mapped[str] = mapped_column(String(255), primary_key=True)
    attempts: Mapped[int]
    errors: Mapped[int]
    response_time: Mapped[dict[str, Any] | None] = mapped_column(PackedSketch)


class LogUpstreamRollup(Base):
    """One upstream address of one site over a 1-minute or 1-hour bucket."""

    __tablename__ = "log_upstream_rollups"
    # One LIST partition per resolution, each split by time, as the sample rollups.
    __table_args__ = {"postgresql_partition_by": "LIST (resolution)"}

    host_id: Mapped[int] = _host_key()
    resolution: Mapped[str] = mapped_column(String(2), primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(primary_key=True)
    site: Mapped[str] = mapped_column(String(255), primary_key=True)
    upstream: Mapped[str] = mapped_column(String(255), primary_key=True)
    attempts: Mapped[int] = mapped_column(BigInteger)
    errors: Mapped[int] = mapped_column(BigInteger)
    response_time: Mapped[dict[str, Any] | None] = mapped_column(PackedSketch)


class AccessLogFiles(Base):
    """The newest `files` report of a host's agent: why a figure may be missing."""

    __tablename__ = "access_log_files"

    host_id: Mapped[int] = _host_key()
    # Time and seq of the sample that carried it; an older replayed sample never replaces it.
    ts: Mapped[datetime]
    seq: Mapped[int] = mapped_column(BigInteger)
    files: Mapped[list[Any]] = mapped_column(SketchJSON)


class AccessLogRecent(Base):
    """A host's figures over the last 15 minutes, refreshed with the rollups for the fleet view."""

    __tablename__ = "access_log_recent"

    host_id: Mapped[int] = _host_key()
    computed_at: Mapped[datetime]
    requests: Mapped[int] = mapped_column(BigInteger)
    cache_hit_ratio: Mapped[float | None]
    request_time_p95_s: Mapped[float | None]
    share_5xx: Mapped[float | None]
