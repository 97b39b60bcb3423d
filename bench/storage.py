"""Bytes per stored row of each time-series table, and the disk a 10,000-host fleet needs.

Migrates a throw-away database to head, copies the layout of one partition of each table
(columns, key, indexes, compression: `LIKE ... INCLUDING ALL`), fills it with realistic rows
written in time order across hosts as ingest writes them, and reads pg_total_relation_size
(heap, indexes, TOAST) over the row count. Then projects the disk at the default retention,
keeping up to one partition more than the retention (a partition is dropped only once wholly
expired: raw tables by 6 hours, 1-minute rollups by day, 1-hour rollups by month). Baselines in
the same run: the floor (the same samples with no index), the samples' layout before
migration 0012 (`extra` JSON, a second index) and the rollups' before partitioning (charted
floats as double precision).

Assumptions (printed): 10,000 hosts pushing every 10 s; 5 sites per host, each with traffic
in every interval (~60 requests per 10 s per site, request and upstream times logged), one
upstream address per site; top paths off (the agent's default). The access-log tables are
projected at their own retention (app.access_log.settings, printed), per busy site of a host
and for 1, 2 and 5 busy sites per host next to the samples' share. Their rows are written as
the app writes them: raw rows' sketches packed as ingest packs them (app.access_log.packed),
the rollups' summed by the rollups' accumulator from those raw sketches (a minute from 6, an
hour from 360) and stored in its form (app.access_log.aggregate: bins of 2% accuracy); the
rollups' indexes are sealed as the samples' are. Baselines in the same run: the rollups with
the protocol's 1% bins (as stored before ROLLUP_LEVEL, never sealed) and every sketch as JSON
(before migration 0013).
Run: .venv/bin/python bench/storage.py [--quick] [--rows N]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from app.access_log.aggregate import SketchCounts
from app.access_log.packed import pack, pack_protocol
from app.access_log.settings import LogRetentionSettings
from app.metrics.settings import RetentionSettings
from nginx_fleet_analyzer.latency_sketch import Sketch

from harness import control_plane as cp
from harness.pgdb import libpq_dsn, temporary_database

HOSTS = 10_000
SITES = 5
UPSTREAMS_PER_SITE = 1
INTERVAL_S = 10
REQUESTS_PER_SITE_INTERVAL = 60
BUDGET_GB = 150.0
GB = 1e9
# Default retention (app.metrics.settings, unless set in the environment), in days; one more
# partition may still be kept.
RETENTION = RetentionSettings()
RAW_DAYS, MINUTE_DAYS, HOUR_DAYS = RETENTION.raw_days, RETENTION.minute_days, RETENTION.hour_days
RAW_PARTITION_DAYS, MINUTE_PARTITION_DAYS, HOUR_PARTITION_DAYS = 0.25, 1, 31
RAW_KEPT_DAYS = RAW_DAYS + RAW_PARTITION_DAYS
MINUTE_KEPT_DAYS = MINUTE_DAYS + MINUTE_PARTITION_DAYS
HOUR_KEPT_DAYS = HOUR_DAYS + HOUR_PARTITION_DAYS
# The access-log tables' own default retention (app.access_log.settings), in partitions of an
# hour, 6 hours and a day (app.metrics.partitioning); kept: the retention plus one partition
# not yet wholly expired.
LOG_RETENTION = LogRetentionSettings()
LOG_RAW_DAYS = LOG_RETENTION.raw_hours / 24
LOG_MINUTE_DAYS, LOG_HOUR_DAYS = LOG_RETENTION.minute_days, LOG_RETENTION.hour_days
LOG_RAW_PARTITION_DAYS, LOG_MINUTE_PARTITION_DAYS, LOG_HOUR_PARTITION_DAYS = 1 / 24, 0.25, 1
LOG_RAW_KEPT_DAYS = LOG_RAW_DAYS + LOG_RAW_PARTITION_DAYS
LOG_MINUTE_KEPT_DAYS = LOG_MINUTE_DAYS + LOG_MINUTE_PARTITION_DAYS
LOG_HOUR_KEPT_DAYS = LOG_HOUR_DAYS + LOG_HOUR_PARTITION_DAYS
# Busy sites per host of the access-log projections.
BUSY_SITES = (1, 2, SITES)
# How a row's sketches are written: as the app stores them now, the rollups' with the
# protocol's 1% bins as they were stored before (deflated), or as JSON text (before 0013).
NOW, PROTOCOL_BINS, JSON = "now", "1% bins", "JSON"


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    quick: bool
    rows: int


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick measures fewer rows."""
    parser = argparse.ArgumentParser(description="nginx-fleet storage benchmark")
    parser.add_argument("--quick", action="store_true", help="5,000 rows per table")
    parser.add_argument("--rows", type=int, help="rows written per table (100,000)")
    args = parser.parse_args(argv)
    rows = args.rows if args.rows is not None else (5_000 if args.quick else 100_000)
    if rows < 100:
        parser.error(f"--rows must be >= 100, got {rows}")
    return Options(quick=args.quick, rows=rows)


def sketch_json(rng: random.Random, requests: int, median_s: float) -> dict[str, Any]:
    """A latency sketch of `requests` log-normal times, in the protocol's form."""
    sketch = Sketch()
    for _ in range(requests):
        sketch.add(rng.lognormvariate(math.log(median_s), 0.9))
    return sketch.to_json()


def summed_sketches(rng: random.Random, parts: int, median_s: float) -> SketchCounts:
    """The sketches of `parts` intervals as raw rows store them, summed as the rollups sum
    them."""
    counts = SketchCounts()
    for _ in range(parts):
        counts.add(pack_protocol(sketch_json(rng, REQUESTS_PER_SITE_INTERVAL, median_s)))
    return counts


def stored_sketch(counts: SketchCounts, rollup: bool, form: str) -> Any:
    """A sketch as its column holds it in `form` (NOW, PROTOCOL_BINS or JSON)."""
    if form == JSON:
        return json.dumps(counts.sketch().to_json())
    if not rollup:
        return pack_protocol(counts.sketch().to_json())
    return (
        pack(counts.zero, counts.bins, deflate=True) if form == PROTOCOL_BINS else counts.packed()
    )


def sketch_pool(
    rng: random.Random, resolution: str | None, median_s: float, form: str
) -> list[Any]:
    """20 stored sketches of a row of `resolution` (None: raw) to draw rows' sketches from."""
    parts = {None: 1, "1m": 6, "1h": 360}[resolution]
    return [
        stored_sketch(summed_sketches(rng, parts, median_s), resolution is not None, form)
        for _ in range(20)
    ]


def times(count: int, hosts: int, step_s: int) -> Iterator[tuple[int, datetime, int]]:
    """(host index, time, seq) in time order across hosts, as ingest writes them."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(count):
        tick, host = divmod(i, hosts)
        yield host + 1, start + timedelta(seconds=tick * step_s), tick + 1


def sample_figures(count: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """What a real push's samples carry (two cores, stub_status and error log read), by host
    and time: the figures of both layouts below."""
    for host, ts, seq in times(count, 100, INTERVAL_S):
        load = rng.uniform(0.2, 1.0)
        requests = seq * 3000
        cores = [round(40 * load, 1), round(45 * load, 1)]
        yield {
            "host_id": host, "seq": seq, "ts": ts, "nginx_up": True, "workers": 2,
            "stub_status_available": True, "active": 90, "reading": 1, "writing": 4,
            "waiting": 85, "accepts": requests // 8, "handled": requests // 8,
            "requests": requests, "req_per_s": 300 * load, "accepts_per_s": 37 * load,
            "drops_per_s": 0.0, "cpu_pct": 45 * load, "mem_used_bytes": int(3e9 * load),
            "mem_total_bytes": 8 * 1024**3, "load1": 2 * load, "fds_open": 130,
            "fds_limit": 2048, "net_rx_bytes": requests * 600, "net_tx_bytes": requests * 6000,
            "listen_overflows": 3, "listen_drops": 0, "worker_fds_max": 60, "errlog_severe": 0,
            "errlog_wc_not_enough": 0, "errlog_nofile": 0,
            # Formerly in `extra`.
            "master_pid": 4242 + host, "stub_status_url": "http://127.0.0.1:8080/nginx_status",
            "per_core_pct": cores, "cpu_iowait_pct": 0.1,
            "mem_available_bytes": 5_661_504_368 - seq,
            "swap_used_bytes": 0, "load5": round(1.8 * load, 2), "load15": round(1.6 * load, 2),
            "tcp_states": {"ESTABLISHED": 81, "TIME_WAIT": int(120 * load), "LISTEN": 5},
            "nginx_rss_bytes": 24_000_000, "nginx_cpu_pct": round(25 * load, 1),
            "worker_cpu_pct": round(24 * load, 1), "worker_fds_limit": 1024,
            "errlog_error": 0, "errlog_warn": 0, "errlog_wc_reusing": 0,
        }  # fmt: skip


SAMPLE_COLUMNS = (
    "host_id, seq, ts, nginx_up, workers, stub_status_available, active, reading, writing, "
    "waiting, accepts, handled, requests, req_per_s, accepts_per_s, drops_per_s, cpu_pct, "
    "cpu_iowait_pct, cpu_core_max_pct, cpu_cores, mem_used_bytes, mem_total_bytes, "
    "swap_used_bytes, load1, net_rx_bytes, net_tx_bytes, listen_overflows, listen_drops, "
    "tcp_established, tcp_time_wait, fds_open, fds_limit, worker_fds_max, worker_fds_limit, "
    "nginx_rss_bytes, nginx_cpu_pct, worker_cpu_pct, errlog_severe, errlog_error, errlog_warn, "
    "errlog_wc_not_enough, errlog_wc_reusing, errlog_nofile, nginx_error, stub_status_error"
)


def sample_rows(count: int, rng: random.Random) -> Iterator[tuple[Any, ...]]:
    """samples rows as ingest stores them (app.metrics.samples.sample_row)."""
    for f in sample_figures(count, rng):
        derived = {
            "cpu_core_max_pct": max(f["per_core_pct"]),
            "cpu_cores": len(f["per_core_pct"]),
            "tcp_established": f["tcp_states"]["ESTABLISHED"],
            "tcp_time_wait": f["tcp_states"]["TIME_WAIT"],
            "nginx_error": None,
            "stub_status_error": None,
        }
        yield tuple({**f, **derived}[name] for name in SAMPLE_COLUMNS.split(", "))


# The samples' layout before migration 0012: `extra` json, key (host_id, seq, ts) and an index
# on (host_id, ts); the baseline of the compact layout, measured in the same run.
PREVIOUS_SAMPLES = """
CREATE TABLE probe_previous (host_id integer NOT NULL, seq bigint NOT NULL,
    ts timestamp with time zone NOT NULL, nginx_up boolean NOT NULL, workers integer,
    stub_status_available boolean NOT NULL, active integer, reading integer, writing integer,
    waiting integer, accepts bigint, handled bigint, requests bigint, req_per_s real,
    accepts_per_s real, drops_per_s real, cpu_pct real, mem_used_bytes bigint,
    mem_total_bytes bigint, load1 real, fds_open bigint, fds_limit bigint, net_rx_bytes bigint,
    net_tx_bytes bigint, listen_overflows bigint, listen_drops bigint, worker_fds_max bigint,
    errlog_severe integer, errlog_wc_not_enough integer, errlog_nofile integer,
    extra json NOT NULL, PRIMARY KEY (host_id, seq, ts));
CREATE INDEX ON probe_previous (host_id, ts)
"""
PREVIOUS_COLUMNS = (
    "host_id, seq, ts, nginx_up, workers, stub_status_available, active, reading, writing, "
    "waiting, accepts, handled, requests, req_per_s, accepts_per_s, drops_per_s, cpu_pct, "
    "mem_used_bytes, mem_total_bytes, load1, fds_open, fds_limit, net_rx_bytes, net_tx_bytes, "
    "listen_overflows, listen_drops, worker_fds_max, errlog_severe, errlog_wc_not_enough, "
    "errlog_nofile"
)


def previous_sample_rows(count: int, rng: random.Random) -> Iterator[tuple[Any, ...]]:
    """The same samples as the layout before 0012 stored them, `extra` JSON included."""
    for f in sample_figures(count, rng):
        extra = {
            "nginx": {"master_pid": f["master_pid"]},
            "stub_status": {"url": f["stub_status_url"]},
            "cpu": {"per_core_pct": f["per_core_pct"], "iowait_pct": f["cpu_iowait_pct"]},
            "memory": {
                "available_bytes": f["mem_available_bytes"],
                "swap_used_bytes": f["swap_used_bytes"],
            },
            "load": {"load5": f["load5"], "load15": f["load15"]},
            "tcp_states": f["tcp_states"],
            "nginx_processes": {
                "rss_bytes": f["nginx_rss_bytes"],
                "cpu_pct": f["nginx_cpu_pct"],
                "worker_cpu_pct": f["worker_cpu_pct"],
                "worker_fds_max": f["worker_fds_max"],
                "worker_fds_limit": f["worker_fds_limit"],
            },
        }
        yield (*(f[name] for name in PREVIOUS_COLUMNS.split(", ")), json.dumps(extra))


def rollup_rows(count: int, rng: random.Random, resolution: str) -> Iterator[tuple[Any, ...]]:
    """sample_rollups rows with every average and maximum set."""
    step = 60 if resolution == "1m" else 3600
    for host, bucket, _seq in times(count, 100, step):
        values = [rng.uniform(0, 1000) for _ in range(16)]
        yield (host, resolution, bucket, 6 if step == 60 else 360, *values)


ROLLUP_COLUMNS = (
    "host_id, resolution, bucket_start, sample_count, active_avg, active_max, reading_avg, "
    "writing_avg, waiting_avg, req_per_s_avg, accepts_per_s_avg, drops_per_s_avg, "
    "drops_per_s_max, cpu_pct_avg, mem_used_bytes_avg, mem_total_bytes_avg, load1_avg, "
    "fds_open_avg, fds_limit_avg, workers_avg"
)
COUNTERS = (
    "requests, status_1xx, status_2xx, status_3xx, status_4xx, status_5xx, status_499, "
    "status_500, status_502, status_503, status_504, bytes_sent, get_2xx, cache_hit, cache_miss, "
    "cache_expired, cache_stale, cache_updating, cache_revalidated, cache_bypass, "
    "upstream_errors, request_time, upstream_time"
)


def _counters(rng: random.Random, parts: int, request_time: Any, upstream_time: Any) -> tuple:
    requests = REQUESTS_PER_SITE_INTERVAL * parts
    return (
        requests, 0, requests - 5, 2, 3, rng.randint(0, 1), 0, 0, 0, 0, 0, requests * 6000,
        requests - 6, requests // 2, requests // 3, 1, 0, 0, 0, 0, 0, request_time,
        upstream_time,
    )  # fmt: skip


def log_rows(
    count: int, rng: random.Random, resolution: str | None, form: str = NOW
) -> Iterator[tuple[Any, ...]]:
    """log_stats rows (resolution None) or log_stats_rollups rows; sketches from a pool."""
    parts = {None: 1, "1m": 6, "1h": 360}[resolution]
    pool = list(
        zip(
            sketch_pool(rng, resolution, 0.05, form),
            sketch_pool(rng, resolution, 0.04, form),
            strict=True,
        )
    )
    step = {None: INTERVAL_S, "1m": 60, "1h": 3600}[resolution]
    for i, (host, ts, seq) in enumerate(times(count, 100 * SITES, step)):
        site = f"site{host % SITES}.example.com"
        key = (host // SITES + 1, ts, seq, site) if resolution is None else (
            host // SITES + 1, resolution, ts, site
        )  # fmt: skip
        yield (*key, *_counters(rng, parts, *pool[i % len(pool)]))


def upstream_rows(
    count: int, rng: random.Random, resolution: str | None, form: str = NOW
) -> Iterator[tuple[Any, ...]]:
    """log_upstream_stats rows (resolution None) or their rollups."""
    parts = {None: 1, "1m": 6, "1h": 360}[resolution]
    pool = sketch_pool(rng, resolution, 0.04, form)
    step = {None: INTERVAL_S, "1m": 60, "1h": 3600}[resolution]
    for i, (host, ts, seq) in enumerate(times(count, 100 * SITES, step)):
        site = f"site{host % SITES}.example.com"
        key = (host // SITES + 1, ts, seq, site) if resolution is None else (
            host // SITES + 1, resolution, ts, site
        )  # fmt: skip
        yield (*key, "10.0.0.7:8080", REQUESTS_PER_SITE_INTERVAL * parts, 0,
               pool[i % len(pool)])  # fmt: skip


@dataclass(frozen=True)
class Table:
    """One measured table: where its layout comes from, its columns, its rows."""

    label: str
    source: str
    columns: str
    rows: Callable[[int, random.Random], Iterator[tuple[Any, ...]]]
    projected_rows: float
    kept_days: float
    # Days of it not yet sealed (its indexes rebuilt once its partition ended, hourly, 3 h
    # after the end: app.metrics.partitioning.SEALED): the partition being written and the
    # one ended last; None for tables never sealed (the access-log raw rows expire as soon).
    unsealed_days: float | None = None

    def gigabytes(self, written: float, sealed: float) -> float:
        """Projected GB at the retention: unsealed days at `written` bytes/row, the rest at
        `sealed`."""
        per_day = self.projected_rows / self.kept_days
        unsealed = self.kept_days if self.unsealed_days is None else self.unsealed_days
        return (written * unsealed + sealed * (self.kept_days - unsealed)) * per_day / GB


PER_DAY_RAW = 86_400 // INTERVAL_S
SITE_ROWS = HOSTS * SITES
TABLES = (
    Table("samples (raw, 10 s)", "samples", SAMPLE_COLUMNS, sample_rows,
          HOSTS * PER_DAY_RAW * RAW_KEPT_DAYS, RAW_KEPT_DAYS, 2 * RAW_PARTITION_DAYS),
    Table("sample_rollups 1m", "sample_rollups_1m", ROLLUP_COLUMNS,
          lambda n, r: rollup_rows(n, r, "1m"),
          HOSTS * 1440 * MINUTE_KEPT_DAYS, MINUTE_KEPT_DAYS, 2 * MINUTE_PARTITION_DAYS),
    Table("sample_rollups 1h", "sample_rollups_1h", ROLLUP_COLUMNS,
          lambda n, r: rollup_rows(n, r, "1h"),
          HOSTS * 24 * HOUR_KEPT_DAYS, HOUR_KEPT_DAYS, 2 * HOUR_PARTITION_DAYS),
    Table("log_stats (raw, per site)", "log_stats", f"host_id, ts, seq, site, {COUNTERS}",
          lambda n, r: log_rows(n, r, None),
          SITE_ROWS * PER_DAY_RAW * LOG_RAW_KEPT_DAYS, LOG_RAW_KEPT_DAYS),
    Table("log_stats_rollups 1m", "log_stats_rollups_1m",
          f"host_id, resolution, bucket_start, site, {COUNTERS}",
          lambda n, r: log_rows(n, r, "1m"),
          SITE_ROWS * 1440 * LOG_MINUTE_KEPT_DAYS, LOG_MINUTE_KEPT_DAYS,
          2 * LOG_MINUTE_PARTITION_DAYS),
    Table("log_stats_rollups 1h", "log_stats_rollups_1h",
          f"host_id, resolution, bucket_start, site, {COUNTERS}",
          lambda n, r: log_rows(n, r, "1h"),
          SITE_ROWS * 24 * LOG_HOUR_KEPT_DAYS, LOG_HOUR_KEPT_DAYS, 2 * LOG_HOUR_PARTITION_DAYS),
    Table("log_upstream_stats (raw)", "log_upstream_stats",
          "host_id, ts, seq, site, upstream, attempts, errors, response_time",
          lambda n, r: upstream_rows(n, r, None),
          SITE_ROWS * UPSTREAMS_PER_SITE * PER_DAY_RAW * LOG_RAW_KEPT_DAYS, LOG_RAW_KEPT_DAYS),
    Table("log_upstream_rollups 1m", "log_upstream_rollups_1m",
          "host_id, resolution, bucket_start, site, upstream, attempts, errors, response_time",
          lambda n, r: upstream_rows(n, r, "1m"),
          SITE_ROWS * UPSTREAMS_PER_SITE * 1440 * LOG_MINUTE_KEPT_DAYS, LOG_MINUTE_KEPT_DAYS,
          2 * LOG_MINUTE_PARTITION_DAYS),
    Table("log_upstream_rollups 1h", "log_upstream_rollups_1h",
          "host_id, resolution, bucket_start, site, upstream, attempts, errors, response_time",
          lambda n, r: upstream_rows(n, r, "1h"),
          SITE_ROWS * UPSTREAMS_PER_SITE * 24 * LOG_HOUR_KEPT_DAYS, LOG_HOUR_KEPT_DAYS,
          2 * LOG_HOUR_PARTITION_DAYS),
)  # fmt: skip


# The types of the layout before partitioning (migration 0009), for the baseline.
BEFORE_TYPES = {
    "sample_rollups_1m": dict.fromkeys(
        [c.strip() for c in ROLLUP_COLUMNS.split(",")[4:]], "double precision"
    ),
}  # fmt: skip


def measure(
    conn: psycopg.Connection, table: Table, rows: int, *, before: bool = False
) -> tuple[float, float]:
    """Bytes per row of `rows` rows in a copy of the layout of one of table's partitions
    (with the types it had before partitioning when `before`), as written and once sealed
    (indexes rebuilt)."""
    probe = f"probe_{table.source}"
    conn.execute(f"CREATE TABLE {probe} (LIKE {table.source}_default INCLUDING ALL)")
    for column, type_ in (BEFORE_TYPES.get(table.source, {}) if before else {}).items():
        conn.execute(f"ALTER TABLE {probe} ALTER COLUMN {column} TYPE {type_}")
    with conn.cursor().copy(f"COPY {probe} ({table.columns}) FROM STDIN") as copy:
        for row in table.rows(rows, random.Random(7)):
            copy.write_row(row)
    conn.execute(f"VACUUM ANALYZE {probe}")
    size = conn.execute(f"SELECT pg_total_relation_size('{probe}')").fetchone()[0]
    conn.execute(f"REINDEX TABLE {probe}")
    sealed = conn.execute(f"SELECT pg_total_relation_size('{probe}')").fetchone()[0]
    conn.execute(f"DROP TABLE {probe}")
    return int(size) / rows, int(sealed) / rows


def measure_log_form(conn: psycopg.Connection, rows: int, form: str) -> dict[str, float]:
    """Bytes per row as written of each access-log table whose sketches `form` changes
    (PROTOCOL_BINS: the rollups; JSON: every one, in json columns as before migration 0013)."""
    measured = {}
    for table in TABLES:
        rollup = "resolution" in table.columns
        if not table.source.startswith("log") or (form == PROTOCOL_BINS and not rollup):
            continue
        probe = f"probe_form_{table.source}"
        conn.execute(f"CREATE TABLE {probe} (LIKE {table.source}_default INCLUDING ALL)")
        for column in ("request_time", "upstream_time", "response_time"):
            if form == JSON and f" {column}" in table.columns:
                conn.execute(
                    f"ALTER TABLE {probe} ALTER COLUMN {column} TYPE json USING NULL::json"
                )
        resolution = table.source[-2:] if rollup else None
        make = upstream_rows if table.source.startswith("log_upstream") else log_rows
        with conn.cursor().copy(f"COPY {probe} ({table.columns}) FROM STDIN") as copy:
            for row in make(rows, random.Random(7), resolution, form):
                copy.write_row(row)
        conn.execute(f"VACUUM ANALYZE {probe}")
        size = conn.execute(f"SELECT pg_total_relation_size('{probe}')").fetchone()[0]
        conn.execute(f"DROP TABLE {probe}")
        measured[table.source] = int(size) / rows
    return measured


def print_log_projection(
    measured: Sequence[tuple[Table, tuple[float, float]]],
    before: dict[str, float],
    as_json: dict[str, float],
    samples_gb: float,
) -> None:
    """The access-log tables against their baselines (the rollups' 1% bins never sealed, JSON
    sketches), and their disk per busy site of a host and for BUSY_SITES per host, next to
    the samples' share and the budget."""
    print(
        f"access-log retention: raw {LOG_RETENTION.raw_hours:g} h (kept up to "
        f"{LOG_RAW_KEPT_DAYS * 24:g} h: hourly partitions), 1m {LOG_MINUTE_DAYS:g} d (up to "
        f"{LOG_MINUTE_KEPT_DAYS:g}), 1h {LOG_HOUR_DAYS:g} d (up to {LOG_HOUR_KEPT_DAYS:g})"
    )
    per_site = before_per_site = json_per_site = 0.0
    for table, (written, sealed) in measured:
        if not table.source.startswith("log"):
            continue
        old = before.get(table.source, written)
        shown = f"{sealed:7.1f}" if table.unsealed_days is not None else f"{'-':>7}"
        print(
            f"{table.label:30} now {written:7.1f} bytes/row ({shown} sealed), 1% bins "
            f"{old:7.1f}: now / 1% {written / old:.2f}x; JSON sketches "
            f"{as_json[table.source]:7.1f}: packed / JSON {written / as_json[table.source]:.2f}x"
        )
        per_site += table.gigabytes(written, sealed) * GB / SITE_ROWS
        before_per_site += old * table.projected_rows / SITE_ROWS
        json_per_site += as_json[table.source] * table.projected_rows / SITE_ROWS
    print(
        f"access-log figures per busy site of a host: {per_site / 1e6:.1f} MB (1% rollup bins, "
        f"never sealed: {before_per_site / 1e6:.1f} MB; JSON sketches at the same retention: "
        f"{json_per_site / 1e6:.1f} MB)"
    )
    for sites in BUSY_SITES:
        logs = per_site * HOSTS * sites / GB
        total = samples_gb + logs
        print(
            f"access-log figures, {HOSTS} hosts with {sites} busy site(s) each: {logs:.1f} GB "
            f"(1% bins: {before_per_site * HOSTS * sites / GB:.1f}); with the samples and their "
            f"rollups ({samples_gb:.1f} GB): {total:.1f} GB, target < {BUDGET_GB:.0f} GB: "
            f"{'MET' if total < BUDGET_GB else 'NOT MET'}"
        )


def floor_bytes(conn: psycopg.Connection, rows: int) -> float:
    """Bytes per sample with no index at all: the heap of the typed columns alone."""
    conn.execute("CREATE TABLE probe_floor (LIKE samples_default)")
    with conn.cursor().copy(f"COPY probe_floor ({SAMPLE_COLUMNS}) FROM STDIN") as copy:
        for row in sample_rows(rows, random.Random(7)):
            copy.write_row(row)
    conn.execute("VACUUM ANALYZE probe_floor")
    size = conn.execute("SELECT pg_total_relation_size('probe_floor')").fetchone()[0]
    conn.execute("DROP TABLE probe_floor")
    return int(size) / rows


def previous_bytes(conn: psycopg.Connection, rows: int) -> float:
    """Bytes per sample in the layout before migration 0012 (JSON `extra`, two indexes)."""
    conn.execute(PREVIOUS_SAMPLES)
    columns = f"{PREVIOUS_COLUMNS}, extra"
    with conn.cursor().copy(f"COPY probe_previous ({columns}) FROM STDIN") as copy:
        for row in previous_sample_rows(rows, random.Random(7)):
            copy.write_row(row)
    conn.execute("VACUUM ANALYZE probe_previous")
    size = conn.execute("SELECT pg_total_relation_size('probe_previous')").fetchone()[0]
    conn.execute("DROP TABLE probe_previous")
    return int(size) / rows


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, project and print; exit 1 when the projection exceeds the budget."""
    options = parse_options(argv)
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-storage-") as tmp_name,
        temporary_database() as database,
    ):
        env = cp.backend_env(database=database, data_dir=Path(tmp_name), base=os.environ)
        cp.migrate(env=env)
        with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
            measured = [(table, measure(conn, table, options.rows)) for table in TABLES]
            floor = floor_bytes(conn, options.rows)
            previous = previous_bytes(conn, options.rows)
            before, _ = measure(conn, TABLES[1], options.rows, before=True)
            log_before = measure_log_form(conn, options.rows, PROTOCOL_BINS)
            log_json = measure_log_form(conn, options.rows, JSON)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"nginx-fleet storage benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"assumptions: {HOSTS} hosts at {INTERVAL_S} s; {SITES} sites per host with traffic in "
        f"every interval ({REQUESTS_PER_SITE_INTERVAL} requests per 10 s each), "
        f"{UPSTREAMS_PER_SITE} upstream address per site, top paths off; retention raw "
        f"{RAW_DAYS:g} d, 1m {MINUTE_DAYS:g} d, 1h {HOUR_DAYS:g} d, each plus one partition (6 h, "
        f"day, month) not yet wholly expired; {options.rows} rows measured per table"
    )
    print(
        f"{'table':30} {'bytes/row':>10} {'sealed':>8} {'rows kept':>16} {'GB':>9} "
        f"{'GB per day kept':>16}"
    )
    total = 0.0
    metrics_total = 0.0
    for table, (written, sealed) in measured:
        gb = table.gigabytes(written, sealed)
        total += gb
        if not table.source.startswith("log"):
            metrics_total += gb
        shown = f"{sealed:8.1f}" if table.unsealed_days is not None else f"{'-':>8}"
        print(
            f"{table.label:30} {written:10.1f} {shown} {table.projected_rows:16,.0f} {gb:9.1f} "
            f"{gb / table.kept_days:16.2f}"
        )
    written, sealed = measured[0][1]
    print(
        f"floor: a sample's columns alone (no index) {floor:.1f} bytes/row; "
        f"stored sample / floor: {written / floor:.2f}x as written, {sealed / floor:.2f}x sealed"
    )
    print(
        f"before 0012 (extra json, key + (host_id, ts) index, never sealed): samples "
        f"{previous:.1f} bytes/row; now / before: {written / previous:.2f}x as written, "
        f"{sealed / previous:.2f}x sealed; samples at the retention before: "
        f"{previous * TABLES[0].projected_rows / GB:.1f} GB"
    )
    print(
        f"before partitioning (double precision): sample_rollups {before:.1f} bytes/row; "
        f"now / before: {measured[1][1][0] / before:.2f}x as written"
    )
    print_log_projection(measured, log_before, log_json, metrics_total)
    print(f"projected: samples and their rollups {metrics_total:.1f} GB; "
          f"access-log figures {total - metrics_total:.1f} GB; total {total:.1f} GB")  # fmt: skip
    print(
        f"target samples and rollups < {BUDGET_GB:.0f} GB: "
        f"{'MET' if metrics_total < BUDGET_GB else 'NOT MET'}"
    )
    within = total < BUDGET_GB
    print(f"target total < {BUDGET_GB:.0f} GB: {'MET' if within else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
