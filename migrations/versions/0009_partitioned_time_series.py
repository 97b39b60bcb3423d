"""time series in partitioned tables

Samples, sample rollups and the access-log tables become declaratively partitioned tables on
PostgreSQL (by 6 hours, day or month of their time column; the rollups first by resolution),
rows kept:
each table is renamed, recreated partitioned under its name, refilled and the old one dropped.
The samples' key becomes (host_id, seq, ts); charted floats become real and `extra` json.
SQLite (embedded mode) has no partitions: only the charted floats' declared types change there.

Revision ID: 0009_partitioned_time_series
Revises: 0008_alerts
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op
from app.core.partitions import Period, TimePartitioning, ensure_partitions
from app.metrics.settings import get_retention

revision: str = "0009_partitioned_time_series"
down_revision: str | None = "0008_alerts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = "_unpartitioned"
ROLLUP_FLOATS = (
    "active_avg", "active_max", "reading_avg", "writing_avg", "waiting_avg", "req_per_s_avg",
    "accepts_per_s_avg", "drops_per_s_avg", "drops_per_s_max", "cpu_pct_avg",
    "mem_used_bytes_avg", "mem_total_bytes_avg", "load1_avg", "fds_open_avg", "fds_limit_avg",
    "workers_avg",
)  # fmt: skip
SAMPLE_FLOATS = ("req_per_s", "accepts_per_s", "drops_per_s", "cpu_pct", "load1")


@dataclass(frozen=True)
class Layout:
    """One table's key, secondary indexes, retyped columns and partitioning."""

    table: str
    key: tuple[str, ...]
    old_key: tuple[str, ...]
    column: str
    listed: bool
    indexes: tuple[tuple[str, str], ...] = ()
    # column -> (new type, old type)
    types: tuple[tuple[str, str, str], ...] = ()


LAYOUTS = (
    Layout(
        "samples",
        ("host_id", "seq", "ts"),
        ("host_id", "seq"),
        "ts",
        listed=False,
        indexes=(("ix_samples_host_id_ts", "host_id, ts"),),
        types=(
            *((name, "real", "double precision") for name in SAMPLE_FLOATS),
            ("extra", "json", "jsonb"),
        ),
    ),
    Layout(
        "sample_rollups",
        ("host_id", "resolution", "bucket_start"),
        ("host_id", "resolution", "bucket_start"),
        "bucket_start",
        listed=True,
        types=tuple((name, "real", "double precision") for name in ROLLUP_FLOATS),
    ),
    Layout("log_stats", ("host_id", "ts", "seq", "site"), ("host_id", "ts", "seq", "site"), "ts",
           listed=False),
    Layout(
        "log_stats_rollups",
        ("host_id", "resolution", "bucket_start", "site"),
        ("host_id", "resolution", "bucket_start", "site"),
        "bucket_start",
        listed=True,
    ),
    Layout(
        "log_upstream_stats",
        ("host_id", "ts", "seq", "site", "upstream"),
        ("host_id", "ts", "seq", "site", "upstream"),
        "ts",
        listed=False,
    ),
    Layout(
        "log_upstream_rollups",
        ("host_id", "resolution", "bucket_start", "site", "upstream"),
        ("host_id", "resolution", "bucket_start", "site", "upstream"),
        "bucket_start",
        listed=True,
    ),
)  # fmt: skip


def _specs(layout: Layout) -> list[tuple[TimePartitioning, timedelta]]:
    """The time partitionings of a table (as app.metrics.partitioning names them) and how far
    back their data is kept."""
    retention = get_retention()
    if not layout.listed:
        return [(TimePartitioning(layout.table, layout.column, Period.quarter_day), retention.raw)]
    return [
        (
            TimePartitioning(
                layout.table, layout.column, period, parent=f"{layout.table}_{resolution}",
                only=("resolution", resolution),
            ),
            age,
        )
        for resolution, period, age in (
            ("1m", Period.day, retention.minute),
            ("1h", Period.month, retention.hour),
        )
    ]  # fmt: skip


def _rename_old(table: str) -> None:
    """Move a table and its constraint and index names out of the way."""
    op.execute(f"ALTER TABLE {table} RENAME TO {table}{OLD}")
    op.execute(f"ALTER TABLE {table}{OLD} RENAME CONSTRAINT pk_{table} TO pk_{table}{OLD}")
    op.execute(
        f"ALTER TABLE {table}{OLD} RENAME CONSTRAINT fk_{table}_host_id_hosts "
        f"TO fk_{table}{OLD}_host_id_hosts"
    )


def _add_keys(layout: Layout, key: tuple[str, ...]) -> None:
    table = layout.table
    op.execute(f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY ({', '.join(key)})")
    op.execute(
        f"ALTER TABLE {table} ADD CONSTRAINT fk_{table}_host_id_hosts FOREIGN KEY (host_id) "
        "REFERENCES hosts (id) ON DELETE CASCADE"
    )


def _oldest(table: str, column: str) -> datetime | None:
    """The oldest time in a table, or None when it is empty."""
    oldest = op.get_bind().scalar(sa.text(f"SELECT min({column}) FROM {table}"))  # noqa: S608
    return oldest if isinstance(oldest, datetime) else None


def _partition(layout: Layout, now: datetime) -> None:
    table = layout.table
    for name, _index_columns in layout.indexes:
        op.execute(f"ALTER INDEX {name} RENAME TO {name}{OLD}")
    _rename_old(table)
    strategy = "LIST (resolution)" if layout.listed else f"RANGE ({layout.column})"
    op.execute(
        f"CREATE TABLE {table} (LIKE {table}{OLD} INCLUDING DEFAULTS) PARTITION BY {strategy}"
    )
    for column, new_type, _old_type in layout.types:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {new_type}")
    _add_keys(layout, layout.key)
    for name, columns in layout.indexes:
        op.execute(f"CREATE INDEX {name} ON {table} ({columns})")
    oldest = _oldest(f"{table}{OLD}", layout.column)
    for spec, age in _specs(layout):
        if spec.only is not None:
            op.execute(
                f"CREATE TABLE {spec.range_parent} PARTITION OF {table} "
                f"FOR VALUES IN ('{spec.only[1]}') PARTITION BY RANGE ({layout.column})"
            )
        op.execute(
            f"CREATE TABLE {spec.default_partition} PARTITION OF {spec.range_parent} DEFAULT"
        )
        # Partitions for the rows still within retention (older ones wait in DEFAULT for the
        # next retention run), and for the days ahead.
        since = max(oldest, now - age) if oldest is not None else now
        ensure_partitions(session=op.get_bind(), specs=[spec], now=now, since=min(since, now))
    op.execute(f"INSERT INTO {table} SELECT * FROM {table}{OLD}")  # noqa: S608
    op.execute(f"DROP TABLE {table}{OLD}")


def _unpartition(layout: Layout) -> None:
    table = layout.table
    for name, _index_columns in layout.indexes:
        op.execute(f"ALTER INDEX {name} RENAME TO {name}{OLD}")
    _rename_old(table)
    op.execute(f"CREATE TABLE {table} (LIKE {table}{OLD} INCLUDING DEFAULTS)")
    for column, _new_type, old_type in layout.types:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {old_type}")
    _add_keys(layout, layout.old_key)
    for name, columns in layout.indexes:
        op.execute(f"CREATE INDEX {name} ON {table} ({columns})")
    # Two samples may share (host_id, seq) with different ts only in the partitioned key.
    conflict = " ON CONFLICT DO NOTHING" if layout.key != layout.old_key else ""
    op.execute(f"INSERT INTO {table} SELECT * FROM {table}{OLD}{conflict}")  # noqa: S608
    op.execute(f"DROP TABLE {table}{OLD} CASCADE")


def _retype_sqlite_floats(new: sa.types.TypeEngine[float], old: sa.types.TypeEngine[float]) -> None:
    """SQLite stores any float alike, but its declared types follow the models (alembic check)."""
    for table, columns in (("samples", SAMPLE_FLOATS), ("sample_rollups", ROLLUP_FLOATS)):
        with op.batch_alter_table(table) as batch:
            for column in columns:
                batch.alter_column(column, type_=new, existing_type=old)


def upgrade() -> None:
    """Apply this revision."""
    if op.get_bind().dialect.name != "postgresql":
        _retype_sqlite_floats(sa.REAL(), sa.Double())
        return
    now = datetime.now(UTC)
    for layout in LAYOUTS:
        _partition(layout, now)


def downgrade() -> None:
    """Revert this revision."""
    if op.get_bind().dialect.name != "postgresql":
        _retype_sqlite_floats(sa.Double(), sa.REAL())
        return
    for layout in LAYOUTS:
        _unpartition(layout)
