"""Which time-series tables are partitioned how, and the service that keeps partitions ahead.

Granularity by rows per partition at 10,000 hosts pushing every 10 s (docs/storage.md): raw
samples and access-log rows by 6 hours (21.6 M samples each; a partition is dropped only once
wholly expired, so the raw data kept is the retention plus up to one partition: 2.25 days
instead of 3 with daily ones, the largest table being the one that gains); 1-minute rollups by
day (14.4 M rows a day, 15 partitions at 14 days' retention); 1-hour rollups by month (7.2 M
rows a month, 13 partitions for a year; daily ones would make 365 small tables to plan over).
The access-log tables keep less (app.access_log.settings), so their partitions are smaller to
match (kept at most: the retention plus one partition): raw rows by hour (3 hours kept, 4 at
most), 1-minute rollups by 6 hours (1 day, 1.25), 1-hour rollups by day (35 days, 36).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from app.access_log.settings import LogRetentionSettings, get_log_retention
from app.core.partitions import (
    Expired,
    Period,
    TimePartitioning,
    drop_detached,
    ended_unsealed,
    ensure_partitions,
    expire,
    seal,
)
from app.metrics.bucketing import SeriesSource
from app.metrics.settings import RetentionSettings


def _rollup_levels(
    table: str, minute: Period = Period.day, hour: Period = Period.month
) -> tuple[TimePartitioning, TimePartitioning]:
    """The 1-minute and 1-hour partitionings of a rollup table listed by resolution."""
    return (
        TimePartitioning(
            table,
            "bucket_start",
            minute,
            parent=f"{table}_{SeriesSource.minute.value}",
            only=("resolution", SeriesSource.minute.value),
        ),
        TimePartitioning(
            table,
            "bucket_start",
            hour,
            parent=f"{table}_{SeriesSource.hour.value}",
            only=("resolution", SeriesSource.hour.value),
        ),
    )


SAMPLES = TimePartitioning("samples", "ts", Period.quarter_day)
SAMPLE_ROLLUPS_1M, SAMPLE_ROLLUPS_1H = _rollup_levels("sample_rollups")
LOG_STATS = TimePartitioning("log_stats", "ts", Period.hour)
LOG_STATS_ROLLUPS_1M, LOG_STATS_ROLLUPS_1H = _rollup_levels(
    "log_stats_rollups", Period.quarter_day, Period.day
)
LOG_UPSTREAM_STATS = TimePartitioning("log_upstream_stats", "ts", Period.hour)
LOG_UPSTREAM_ROLLUPS_1M, LOG_UPSTREAM_ROLLUPS_1H = _rollup_levels(
    "log_upstream_rollups", Period.quarter_day, Period.day
)

# The tables partitioned by LIST (resolution) above their time partitionings.
LISTED_BY_RESOLUTION = ("sample_rollups", "log_stats_rollups", "log_upstream_rollups")

# Retention name (as reported by the retention task) -> partitioning, by resolution.
RAW = {"raw": SAMPLES, "log_raw": LOG_STATS, "log_upstream_raw": LOG_UPSTREAM_STATS}
MINUTE = {
    "1m": SAMPLE_ROLLUPS_1M,
    "log_1m": LOG_STATS_ROLLUPS_1M,
    "log_upstream_1m": LOG_UPSTREAM_ROLLUPS_1M,
}
HOUR = {
    "1h": SAMPLE_ROLLUPS_1H,
    "log_1h": LOG_STATS_ROLLUPS_1H,
    "log_upstream_1h": LOG_UPSTREAM_ROLLUPS_1H,
}
ALL = (*RAW.values(), *MINUTE.values(), *HOUR.values())


def create_ahead(*, session: Session, now: datetime) -> list[str]:
    """Create the partitions from today to a few days ahead that are missing; commits."""
    created = ensure_partitions(session=session, specs=ALL, now=now)
    session.commit()
    return created


def expire_all(
    *,
    session: Session,
    now: datetime,
    retention: RetentionSettings,
    log_retention: LogRetentionSettings | None = None,
) -> dict[str, Expired]:
    """Detach the partitions (on SQLite delete the rows) each resolution keeps no longer, the
    access-log tables by their own retention; does not commit: drop_expired removes the
    detached partitions afterwards."""
    logs = log_retention or get_log_retention()
    ages = {
        **{name: retention.raw for name in RAW},
        **{name: retention.minute for name in MINUTE},
        **{name: retention.hour for name in HOUR},
        **{name: logs.raw for name in ("log_raw", "log_upstream_raw")},
        **{name: logs.minute for name in ("log_1m", "log_upstream_1m")},
        **{name: logs.hour for name in ("log_1h", "log_upstream_1h")},
    }
    specs = {**RAW, **MINUTE, **HOUR}
    return {
        name: expire(session=session, spec=spec, before=now - ages[name])
        for name, spec in specs.items()
    }


def drop_expired(*, session: Session) -> list[str]:
    """Drop the partitions expire_all detached (once its transaction is committed); commits."""
    return drop_detached(session=session, specs=ALL)


# Samples and the rollups get their indexes rebuilt once a partition's period has ended
# (app.core.partitions.seal). Late rows still arrive (a replayed spool, the rollups'
# lookback of up to two hours, access-log minutes rebuilt while their raw rows are kept), so a
# partition is sealed this long after its end. The access-log rollups' indexes shrink by ~24
# bytes a row (~1.6 GB per busy site of 10,000 hosts: bench/storage.py); their raw rows are
# left out: kept 3 hours, their partitions expire as soon as they could be sealed.
SEALED = (
    SAMPLES,
    SAMPLE_ROLLUPS_1M,
    SAMPLE_ROLLUPS_1H,
    LOG_STATS_ROLLUPS_1M,
    LOG_STATS_ROLLUPS_1H,
    LOG_UPSTREAM_ROLLUPS_1M,
    LOG_UPSTREAM_ROLLUPS_1H,
)
SEAL_AFTER = timedelta(hours=3)
# The task shares the maintenance queue with the per-minute rollups: one partition per hourly
# run (~30 s for a 10,000-host samples partition) keeps them on time, and still seals more
# than the ~15 partitions a day ends (6 end at midnight UTC: the last of them is sealed ~8 h
# after its end). After an upgrade the older ones follow one an hour.
SEALS_PER_RUN = 1


def seal_all(*, engine: Engine, now: datetime) -> list[str]:
    """Rebuild the indexes of the SEALED tables' partitions ended SEAL_AFTER ago, the most
    recently ended first, at most SEALS_PER_RUN of them; returns their names."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        ended = [
            found
            for spec in SEALED
            for found in ended_unsealed(connection=connection, spec=spec, before=now - SEAL_AFTER)
        ]
        chosen = [name for name, _end in sorted(ended, key=lambda item: item[1], reverse=True)]
        for name in chosen[:SEALS_PER_RUN]:
            seal(connection=connection, name=name)
    return chosen[:SEALS_PER_RUN]
