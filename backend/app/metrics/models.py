"""Raw samples and their 1-minute / 1-hour rollups."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    REAL,
    BigInteger,
    ForeignKey,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, utcnow

# Charted figures are averages and rates: 4-byte floats carry ~7 significant digits, more than
# a chart shows, and halve what the rollups (billions of rows at fleet scale) weigh.
Real: REAL[float] = REAL()


class Sample(Base):
    """One push sample: every figure a chart, a rule or an impact reads, as a typed column.

    Columns run 8-byte, 4-byte, 2-byte, 1-byte, then text: PostgreSQL aligns each value to its
    size, so this order stores a row without padding (docs/storage.md, column types)."""

    __tablename__ = "samples"
    # 6-hour partitions (app.metrics.partitioning); the partition key must be in the key. One
    # index: (host_id, ts, seq) serves the time-range reads and refuses a resent (host_id, seq),
    # which carries its same ts (a seq resent with another ts: app.metrics.samples).
    __table_args__ = (
        PrimaryKeyConstraint("host_id", "ts", "seq"),
        {"postgresql_partition_by": "RANGE (ts)"},
    )

    ts: Mapped[datetime] = mapped_column()
    seq: Mapped[int] = mapped_column(BigInteger)
    accepts: Mapped[int | None] = mapped_column(BigInteger)
    handled: Mapped[int | None] = mapped_column(BigInteger)
    requests: Mapped[int | None] = mapped_column(BigInteger)
    mem_used_bytes: Mapped[int | None] = mapped_column(BigInteger)
    mem_total_bytes: Mapped[int | None] = mapped_column(BigInteger)
    swap_used_bytes: Mapped[int | None] = mapped_column(BigInteger)
    net_rx_bytes: Mapped[int | None] = mapped_column(BigInteger)
    net_tx_bytes: Mapped[int | None] = mapped_column(BigInteger)
    listen_overflows: Mapped[int | None] = mapped_column(BigInteger)
    listen_drops: Mapped[int | None] = mapped_column(BigInteger)
    # Resident memory of the nginx master and workers (the impact of a change measures it).
    nginx_rss_bytes: Mapped[int | None] = mapped_column(BigInteger)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"))
    active: Mapped[int | None]
    reading: Mapped[int | None]
    writing: Mapped[int | None]
    waiting: Mapped[int | None]
    workers: Mapped[int | None]
    # File descriptors are 32-bit (capped at INT4_MAX: the kernel's nr_open is below 2^31).
    fds_open: Mapped[int | None]
    fds_limit: Mapped[int | None]
    # Open files of the busiest worker against the workers' own limit: what runs out first.
    worker_fds_max: Mapped[int | None]
    worker_fds_limit: Mapped[int | None]
    tcp_established: Mapped[int | None]
    tcp_time_wait: Mapped[int | None]
    # Error-log lines of the interval: alert+crit+emerg, error, warn, and the messages that
    # explain drops.
    errlog_severe: Mapped[int | None]
    errlog_error: Mapped[int | None]
    errlog_warn: Mapped[int | None]
    errlog_wc_not_enough: Mapped[int | None]
    errlog_wc_reusing: Mapped[int | None]
    errlog_nofile: Mapped[int | None]
    req_per_s: Mapped[float | None] = mapped_column(Real)
    accepts_per_s: Mapped[float | None] = mapped_column(Real)
    drops_per_s: Mapped[float | None] = mapped_column(Real)
    cpu_pct: Mapped[float | None] = mapped_column(Real)
    cpu_iowait_pct: Mapped[float | None] = mapped_column(Real)
    # The busiest core: one saturated core (a busy worker) hides in the host's average.
    cpu_core_max_pct: Mapped[float | None] = mapped_column(Real)
    load1: Mapped[float | None] = mapped_column(Real)
    # nginx's CPU in % of one core: master and workers, and the workers alone.
    nginx_cpu_pct: Mapped[float | None] = mapped_column(Real)
    worker_cpu_pct: Mapped[float | None] = mapped_column(Real)
    # Cores counted in the sample (per-core figures sent): turns nginx's CPU into a host share.
    cpu_cores: Mapped[int | None] = mapped_column(SmallInteger)
    nginx_up: Mapped[bool]
    stub_status_available: Mapped[bool]
    # Why nginx or stub_status could not be read; NULL (no bytes) in a healthy sample.
    nginx_error: Mapped[str | None] = mapped_column(String(1024))
    stub_status_error: Mapped[str | None] = mapped_column(String(1024))


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
