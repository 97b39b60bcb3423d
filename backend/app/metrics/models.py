"""Raw samples and their 1-minute / 1-hour rollups."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, REAL, BigInteger, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, utcnow

# Charted figures are averages and rates: 4-byte floats carry ~7 significant digits, more than
# a chart shows, and halve what the rollups (billions of rows at fleet scale) weigh.
Real: REAL[float] = REAL()


class Sample(Base):
    """One push sample: the charted figures as columns, the rest as JSON in `extra`."""

    __tablename__ = "samples"
    # Daily partitions (app.metrics.partitioning); the partition key must be in the key.
    __table_args__ = (
        Index("ix_samples_host_id_ts", "host_id", "ts"),
        {"postgresql_partition_by": "RANGE (ts)"},
    )

    # (host_id, seq) is the idempotency key of the protocol; a resent sample carries the same
    # ts, so (host_id, seq, ts) still refuses it while letting ts partition the table.
    host_id: Mapped[int] = mapped_column(
        ForeignKey("hosts.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    ts: Mapped[datetime] = mapped_column(primary_key=True)
    nginx_up: Mapped[bool]
    workers: Mapped[int | None]
    stub_status_available: Mapped[bool]
    active: Mapped[int | None]
    reading: Mapped[int | None]
    writing: Mapped[int | None]
    waiting: Mapped[int | None]
    accepts: Mapped[int | None] = mapped_column(BigInteger)
    handled: Mapped[int | None] = mapped_column(BigInteger)
    requests: Mapped[int | None] = mapped_column(BigInteger)
    req_per_s: Mapped[float | None] = mapped_column(Real)
    accepts_per_s: Mapped[float | None] = mapped_column(Real)
    drops_per_s: Mapped[float | None] = mapped_column(Real)
    cpu_pct: Mapped[float | None] = mapped_column(Real)
    mem_used_bytes: Mapped[int | None] = mapped_column(BigInteger)
    mem_total_bytes: Mapped[int | None] = mapped_column(BigInteger)
    load1: Mapped[float | None] = mapped_column(Real)
    fds_open: Mapped[int | None] = mapped_column(BigInteger)
    fds_limit: Mapped[int | None] = mapped_column(BigInteger)
    net_rx_bytes: Mapped[int | None] = mapped_column(BigInteger)
    net_tx_bytes: Mapped[int | None] = mapped_column(BigInteger)
    listen_overflows: Mapped[int | None] = mapped_column(BigInteger)
    listen_drops: Mapped[int | None] = mapped_column(BigInteger)
    # Open files of the busiest worker (fds_limit is the workers' limit): what runs out first.
    worker_fds_max: Mapped[int | None] = mapped_column(BigInteger)
    # Error-log lines of the interval: alert+crit+emerg, and the messages that explain drops.
    errlog_severe: Mapped[int | None]
    errlog_wc_not_enough: Mapped[int | None]
    errlog_nofile: Mapped[int | None]
    # json, not jsonb: only read whole, and its text weighs ~35% less per row than jsonb.
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class SampleRollup(Base):
    """Averages (and maxima where peaks matter) of the charted figures over one bucket."""

    __tablename__ = "sample_rollups"
    # One LIST partition per resolution, each split by time (app.metrics.partitioning), so
    # that each resolution's retention drops whole partitions.
    __table_args__ = {"postgresql_partition_by": "LIST (resolution)"}

    host_id: Mapped[int] = mapped_column(
        ForeignKey("hosts.id", ondelete="CASCADE"), primary_key=True
    )
    # '1m' or '1h' (app.metrics.bucketing.SeriesSource).
    resolution: Mapped[str] = mapped_column(String(2), primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(primary_key=True)
    # Weights the bucket when a coarser rollup or a series averages several buckets.
    sample_count: Mapped[int]
    active_avg: Mapped[float | None] = mapped_column(Real)
    active_max: Mapped[float | None] = mapped_column(Real)
    reading_avg: Mapped[float | None] = mapped_column(Real)
    writing_avg: Mapped[float | None] = mapped_column(Real)
    waiting_avg: Mapped[float | None] = mapped_column(Real)
    req_per_s_avg: Mapped[float | None] = mapped_column(Real)
    accepts_per_s_avg: Mapped[float | None] = mapped_column(Real)
    drops_per_s_avg: Mapped[float | None] = mapped_column(Real)
    drops_per_s_max: Mapped[float | None] = mapped_column(Real)
    cpu_pct_avg: Mapped[float | None] = mapped_column(Real)
    mem_used_bytes_avg: Mapped[float | None] = mapped_column(Real)
    mem_total_bytes_avg: Mapped[float | None] = mapped_column(Real)
    load1_avg: Mapped[float | None] = mapped_column(Real)
    fds_open_avg: Mapped[float | None] = mapped_column(Real)
    fds_limit_avg: Mapped[float | None] = mapped_column(Real)
    workers_avg: Mapped[float | None] = mapped_column(Real)


class SampleGap(Base):
    """A seq range of samples the agent collected but dropped before delivering them."""

    __tablename__ = "sample_gaps"
    # The agent resends a record until a reply confirms it, and may extend it meanwhile
    # (more samples dropped right after): (host_id, from_seq) identifies it.
    __table_args__ = (UniqueConstraint("host_id", "from_seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"))
    from_seq: Mapped[int] = mapped_column(BigInteger)
    to_seq: Mapped[int] = mapped_column(BigInteger)
    from_ts: Mapped[datetime]
    to_ts: Mapped[datetime]
    # Why the samples were lost: "spool_overflow" (the agent's bounded spool was full).
    reason: Mapped[str] = mapped_column(String(32))
    reported_at: Mapped[datetime] = mapped_column(default=utcnow)
