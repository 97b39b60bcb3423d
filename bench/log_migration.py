"""How long migration 0013 (access-log sketches from JSON to packed bytes) takes on a big install.

Migrates a throw-away database to 0012, fills the four access-log tables with the rows an
install keeps within the access-log retention (by default 10 s rows of the last 3 hours,
minutes of the last day, hours of the last 35 days; one busy site with one upstream per host;
sketches as JSON of realistic size: ~60 log-normal request times per 10 s, summed for rollups
as the rollup task sums them, at the protocol's bins as 0012 stored them), then times
`alembic upgrade 0013_compact_access_log`. Baseline in the same run: the same rows rewritten by
SQL alone (`CREATE TABLE ... AS SELECT *`, no conversion), the floor of any rewrite. Prints rows
per second of both, their ratio, checks that every row arrived with its sketches decoding to
the JSON they were, and projects the migration's time for 10,000 hosts per busy site.
Run: .venv/bin/python bench/log_migration.py [--quick] [--hosts N]
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from app.access_log.packed import unpack_protocol
from app.access_log.settings import LogRetentionSettings

from harness.options import parse_hosts_options
from harness.pgdb import libpq_dsn, sqlalchemy_url, temporary_database
from storage import JSON, stored_sketch, summed_sketches

REPO = Path(__file__).resolve().parents[1]
BEFORE, AFTER = "0012_compact_samples", "0013_compact_access_log"
FLEET_HOSTS = 10_000
POOL = 40
# The newest row is this old and the oldest this far inside the retention: rows neither
# expire during the run nor fall outside what 0013 keeps.
MARGIN_S = 1800


@dataclass(frozen=True)
class Kept:
    """One access-log table's rows an install keeps per host and busy site."""

    table: str
    resolution: str | None
    step_s: int
    retention_s: int
    parts: int  # 10 s intervals merged into one row's sketch

    @property
    def rows_per_host(self) -> int:
        """Rows written per host: the retention less a margin, so none expires mid-run."""
        return (self.retention_s - MARGIN_S) // self.step_s

    @property
    def kept_per_host(self) -> int:
        """Rows a whole retention holds per host and busy site."""
        return self.retention_s // self.step_s


# What the access-log retention keeps (app.access_log.settings), so what 0013 converts.
RETENTION = LogRetentionSettings()
RAW_S, MINUTE_S, HOUR_S = (
    int(age.total_seconds()) for age in (RETENTION.raw, RETENTION.minute, RETENTION.hour)
)
KEPT = (
    Kept("log_stats", None, 10, RAW_S, 1),
    Kept("log_stats_rollups", "1m", 60, MINUTE_S, 6),
    Kept("log_stats_rollups", "1h", 3600, HOUR_S, 360),
    Kept("log_upstream_stats", None, 10, RAW_S, 1),
    Kept("log_upstream_rollups", "1m", 60, MINUTE_S, 6),
    Kept("log_upstream_rollups", "1h", 3600, HOUR_S, 360),
)
SKETCHES = {
    "log_stats": ("request_time", "upstream_time"),
    "log_stats_rollups": ("request_time", "upstream_time"),
    "log_upstream_stats": ("response_time",),
    "log_upstream_rollups": ("response_time",),
}
TABLES = tuple(SKETCHES)


def alembic_config(database: str) -> Config:
    """The repository's Alembic config aimed at the database."""
    config = Config(str(REPO / "alembic.ini"))
    config.attributes["database_url"] = sqlalchemy_url(database)
    config.attributes["configure_logging"] = False
    return config


def value_of(column: str, data_type: str, kept: Kept, hosts: int, pools: dict[str, str]) -> str:
    """The SQL expression filling column for row i of kept (hosts interleaved, time going back)."""
    age = f"((i / {hosts}) * {kept.step_s} + {MARGIN_S // 2})"
    fixed = {
        "host_id": f"1 + mod(i, {hosts})",
        "ts": f"now() - make_interval(secs => {age})",
        "bucket_start": f"date_trunc('minute', now()) - make_interval(secs => {age})",
        "seq": f"i / {hosts}",
        "site": "'shop.example.net'",
        "upstream": "'10.0.0.7:8080'",
        "resolution": f"'{kept.resolution}'",
        "top_paths": "NULL",
    }
    if column in fixed:
        return fixed[column]
    if column in pools:
        return f"(%({column})s::json[])[1 + mod(i, {POOL})]"
    numeric = {"integer": "int", "bigint": "bigint", "smallint": "smallint"}
    if data_type in numeric:
        return f"(mod(i * 7919 + 13, 97) * {kept.parts})::{numeric[data_type]}"
    if data_type in ("real", "double precision"):
        return "mod(i, 1000) / 7.0"
    if data_type == "boolean":
        return "false"
    return "'x'"


def fill(conn: psycopg.Connection, kept: Kept, hosts: int, rng: random.Random) -> int:
    """Write kept's rows for hosts as JSON, as 0012 stored them; returns their number."""
    columns = conn.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = %s ORDER BY ordinal_position",
        (kept.table,),
    ).fetchall()
    pools = {
        name: [
            stored_sketch(summed_sketches(rng, kept.parts, median), kept.parts > 1, JSON)
            for _ in range(POOL)
        ]
        for name, median in zip(SKETCHES[kept.table], (0.05, 0.04), strict=False)
    }
    names = ", ".join(name for name, _type in columns)
    values = ", ".join(value_of(name, kind, kept, hosts, pools) for name, kind in columns)  # type: ignore[arg-type]
    rows = kept.rows_per_host * hosts
    conn.execute(
        f"INSERT INTO {kept.table} ({names}) SELECT {values} "  # noqa: S608
        f"FROM generate_series(0, {rows - 1}) AS i",
        pools,
    )
    return rows


def counts(conn: psycopg.Connection) -> dict[str, int]:
    """Rows per access-log table."""
    return {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608
        for table in TABLES
    }


def sketches_survive(conn: psycopg.Connection, before: dict[str, list[str]]) -> bool:
    """Each table's first rows' sketches (by key order) decode to the JSON they were."""
    for table, was in before.items():
        column = SKETCHES[table][0]
        rows = conn.execute(
            f"SELECT {column} FROM {table} ORDER BY host_id, {order_of(table)} LIMIT 20"  # noqa: S608
        ).fetchall()
        decoded = [json.dumps(unpack_protocol(bytes(row[0])), sort_keys=True) for row in rows]
        if decoded != was:
            return False
    return True


def order_of(table: str) -> str:
    """The time-and-resolution part of a table's key, for a stable order before and after."""
    return "resolution, bucket_start" if table.endswith("rollups") else "ts"


def first_sketches(conn: psycopg.Connection) -> dict[str, list[str]]:
    """Each table's first rows' sketches (by key order) as canonical JSON."""
    found = {}
    for table in TABLES:
        column = SKETCHES[table][0]
        rows = conn.execute(
            f"SELECT {column}::text FROM {table} ORDER BY host_id, {order_of(table)} LIMIT 20"  # noqa: S608
        ).fetchall()
        found[table] = [json.dumps(json.loads(row[0]), sort_keys=True) for row in rows]
    return found


def floor_seconds(conn: psycopg.Connection) -> float:
    """Seconds to rewrite every access-log row by SQL alone (no conversion)."""
    began = time.perf_counter()
    for table in TABLES:
        conn.execute(f"CREATE TABLE floor_{table} AS SELECT * FROM {table}")  # noqa: S608
    elapsed = time.perf_counter() - began
    for table in TABLES:
        conn.execute(f"DROP TABLE floor_{table}")
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    """Fill at 0012, time the floor and the upgrade to 0013, print figures; 1 on a failed check."""
    options = parse_hosts_options(
        argv,
        description="nginx-fleet migration 0013 benchmark",
        what="hosts whose kept rows are written",
        quick=2,
        default=40,
    )
    rng = random.Random(13)
    with temporary_database() as database:
        config = alembic_config(database)
        command.upgrade(config, BEFORE)
        with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
            conn.execute(
                "INSERT INTO hosts (id, hostname, agent_id, labels, token_hash, enrolled_at) "
                "SELECT h, 'bench-' || h, 'agent-' || h, '{}'::jsonb, md5(h::text), now() "
                "FROM generate_series(1, %s) AS h",
                (options.hosts,),
            )
            written = sum(fill(conn, kept, options.hosts, rng) for kept in KEPT)
            conn.execute("VACUUM ANALYZE")
            before = counts(conn)
            sketches = first_sketches(conn)
            floor_s = floor_seconds(conn)
        began = time.perf_counter()
        command.upgrade(config, AFTER)
        migrate_s = time.perf_counter() - began
        with psycopg.connect(libpq_dsn(database), autocommit=True) as conn:
            after = counts(conn)
            same = sketches_survive(conn, sketches)
    per_host_site = sum(kept.kept_per_host for kept in KEPT)
    fleet_rows = per_host_site * FLEET_HOSTS
    rate, floor_rate = written / migrate_s, written / floor_s
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"nginx-fleet migration 0013 benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"setup: {options.hosts} hosts x 1 busy site, the rows the new retention keeps: "
        f"{written:,} rows (a whole retention is {per_host_site:,} per host and site), "
        "sketches as JSON"
    )
    print(f"SQL rewrite of the same rows (floor)   {floor_s:8.1f} s  {floor_rate:10,.0f} rows/s")
    print(f"upgrade 0012 -> 0013                   {migrate_s:8.1f} s  {rate:10,.0f} rows/s")
    print(f"ratio upgrade/floor: {migrate_s / floor_s:.1f}x")
    print(
        f"projected for {FLEET_HOSTS:,} hosts: {fleet_rows / 1e6:.0f} M rows per busy site per "
        f"host, {fleet_rows / rate / 60:.0f} min per busy site at this rate"
    )
    ok = before == after and sum(after.values()) == written and same
    print(f"check: {sum(after.values()):,} rows after of {written:,}, sketches decode to the "
          f"JSON they were: {'OK' if ok else 'FAILED'}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
