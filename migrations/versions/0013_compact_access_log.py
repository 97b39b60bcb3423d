"""compact access-log storage: binary sketches, access-log retention of its own

The latency sketches of the four access-log tables become bytea in the packed form of
app.access_log.packed instead of json. On PostgreSQL each table is renamed with its
partitions, recreated under its name with partitions matching the access-log retention of its
own (app.access_log.settings: raw tables by hour, 1-minute rollups by 6 hours, 1-hour rollups
by day), refilled with the rows that retention keeps, sketches converted, and the old one
dropped; the downgrade does the reverse (the samples' partitions and retention, every row
kept). On SQLite (embedded mode) the columns are retyped and converted in place.

Revision ID: 0013_compact_access_log
Revises: 0012_compact_samples
Create Date: 2026-11-26 21:05:00
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op
from app.access_log.packed import pack_protocol, unpack_protocol
from app.access_log.settings import get_log_retention
from app.core.partitions import Period, TimePartitioning, ensure_partitions
from app.metrics.settings import get_retention

revision: str = "0013_compact_access_log"
down_revision: str | None = "0012_compact_samples"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = "_before0013"
BATCH = 5_000


@dataclass(frozen=True)
class Layout:
    """One access-log table: its key, time column, sketches and whether it is a rollup."""

    table: str
    key: tuple[str, ...]
    column: str
    sketches: tuple[str, ...]
    listed: bool


LAYOUTS = (
    Layout("log_stats", ("host_id", "ts", "seq", "site"), "ts",
           ("request_time", "upstream_time"), listed=False),
    Layout("log_stats_rollups", ("host_id", "resolution", "bucket_start", "site"),
           "bucket_start", ("request_time", "upstream_time"), listed=True),
    Layout("log_upstream_stats", ("host_id", "ts", "seq", "site", "upstream"), "ts",
           ("response_time",), listed=False),
    Layout("log_upstream_rollups", ("host_id", "resolution", "bucket_start", "site", "upstream"),
           "bucket_start", ("response_time",), listed=True),
)  # fmt: skip


def _specs(layout: Layout, *, packed: bool) -> list[tuple[TimePartitioning, timedelta]]:
    """The partitionings of a table and how far back their rows are kept: the access-log
    retention and hourly raw partitions when packed, else the samples' and 6 hours."""
    if packed:
        logs = get_log_retention()
        periods = (Period.hour, Period.quarter_day, Period.day)
        ages = (logs.raw, logs.minute, logs.hour)
    else:
        samples = get_retention()
        periods = (Period.quarter_day, Period.day, Period.month)
        ages = (samples.raw, samples.minute, samples.hour)
    if not layout.listed:
        return [(TimePartitioning(layout.table, layout.column, periods[0]), ages[0])]
    return [
        (
            TimePartitioning(layout.table, layout.column, period,
                             parent=f"{layout.table}_{resolution}",
                             only=("resolution", resolution)),
            age,
        )
        for resolution, period, age in (("1m", periods[1], ages[1]), ("1h", periods[2], ages[2]))
    ]  # fmt: skip


def _rename_old(table: str) -> None:
    """Move a table, its partitions and its constraint names out of the way."""
    bind = op.get_bind()
    # pg_inherits rather than pg_partition_tree (PostgreSQL 12+): the tables need 11+.
    tree = bind.scalars(
        sa.text(
            "WITH RECURSIVE tree(oid, level) AS (SELECT to_regclass(:table)::oid, 0 UNION ALL "
            "SELECT i.inhrelid, t.level + 1 FROM pg_inherits i JOIN tree t ON i.inhparent = t.oid) "
            "SELECT oid::regclass::text FROM tree ORDER BY level DESC"
        ),
        {"table": table},
    ).all()
    for name in tree:
        op.execute(f'ALTER TABLE "{name}" RENAME TO "{name}{OLD}"')
    op.execute(f"ALTER TABLE {table}{OLD} RENAME CONSTRAINT pk_{table} TO pk_{table}{OLD}")
    op.execute(
        f"ALTER TABLE {table}{OLD} RENAME CONSTRAINT fk_{table}_host_id_hosts "
        f"TO fk_{table}{OLD}_host_id_hosts"
    )


def _create(layout: Layout, *, packed: bool, now: datetime) -> str:
    """The partitioned table under its name, sketches as bytea (packed) or json, with
    partitions from the oldest row kept to days ahead; returns the condition of rows kept."""
    table = layout.table
    strategy = "LIST (resolution)" if layout.listed else f"RANGE ({layout.column})"
    op.execute(
        f"CREATE TABLE {table} (LIKE {table}{OLD} INCLUDING DEFAULTS) PARTITION BY {strategy}"
    )
    new_type = "bytea" if packed else "json"
    for column in layout.sketches:
        op.execute(
            f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {new_type} USING NULL::{new_type}"
        )
    op.execute(
        f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY ({', '.join(layout.key)})"
    )
    op.execute(
        f"ALTER TABLE {table} ADD CONSTRAINT fk_{table}_host_id_hosts FOREIGN KEY (host_id) "
        "REFERENCES hosts (id) ON DELETE CASCADE"
    )
    bind = op.get_bind()
    oldest = bind.scalar(sa.text(f"SELECT min({layout.column}) FROM {table}{OLD}"))  # noqa: S608
    kept = []
    for spec, age in _specs(layout, packed=packed):
        if spec.only is not None:
            op.execute(
                f"CREATE TABLE {spec.range_parent} PARTITION OF {table} "
                f"FOR VALUES IN ('{spec.only[1]}') PARTITION BY RANGE ({layout.column})"
            )
        op.execute(
            f"CREATE TABLE {spec.default_partition} PARTITION OF {spec.range_parent} DEFAULT"
        )
        # Packing keeps only what the new retention keeps: the rest would be dropped within the
        # hour, and converting it first could make the migration last hours on a big fleet.
        # The downgrade keeps every row (older ones wait in DEFAULT for the retention run).
        since = now - age
        if packed:
            only = f" AND resolution = '{spec.only[1]}'" if spec.only is not None else ""
            kept.append(f"({layout.column} >= '{since.isoformat()}'{only})")
        elif oldest is not None:
            since = max(oldest, since)
        ensure_partitions(session=bind, specs=[spec], now=now, since=min(since, now))
    return " OR ".join(kept) if kept else "true"


def _copy(layout: Layout, convert: Callable[[Any], Any], *, kept: str, packed: bool) -> None:
    """Copy the old table's rows that match `kept` into the new one, sketches converted."""
    bind = op.get_bind()
    table = layout.table
    names = [column["name"] for column in sa.inspect(bind).get_columns(f"{table}{OLD}")]
    # JSON is read as text (and written back with a cast): the sketches' old form, top_paths.
    read_as_text = {"top_paths", *(layout.sketches if packed else ())}
    json_columns = {"top_paths", *(() if packed else layout.sketches)}
    selected = ", ".join(
        f"{name}::text AS {name}" if name in read_as_text else name for name in names
    )
    values = ", ".join(
        f"CAST(:{name} AS json)" if name in json_columns else f":{name}" for name in names
    )
    insert = sa.text(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({values})")  # noqa: S608
    query = sa.text(f"SELECT {selected} FROM {table}{OLD} WHERE {kept}")  # noqa: S608
    result = bind.execute(query.execution_options(stream_results=True, yield_per=BATCH))
    for chunk in result.partitions(BATCH):
        rows = []
        for row in chunk:
            values_of = dict(row._mapping)
            for name in layout.sketches:
                if values_of[name] is not None:
                    values_of[name] = convert(values_of[name])
            rows.append(values_of)
        bind.execute(insert, rows)


def _to_packed(text: Any) -> bytes:
    return pack_protocol(json.loads(text))


def _to_deflated(text: Any) -> bytes:
    """Rollups store their sketches deflated (app.access_log.aggregate.SketchCounts)."""
    return pack_protocol(json.loads(text), deflate=True)


def _to_json(data: Any) -> str:
    return json.dumps(unpack_protocol(bytes(data)))


def _rebuild(layout: Layout, *, packed: bool, now: datetime) -> None:
    _rename_old(layout.table)
    kept = _create(layout, packed=packed, now=now)
    to_packed = _to_deflated if layout.listed else _to_packed
    _copy(layout, to_packed if packed else _to_json, kept=kept, packed=packed)
    op.execute(f"DROP TABLE {layout.table}{OLD} CASCADE")


def _convert_sqlite(*, packed: bool) -> None:
    """Retype the sketch columns and convert their values in place (SQLite has no partitions)."""
    bind = op.get_bind()
    new, old = (sa.LargeBinary(), sa.JSON()) if packed else (sa.JSON(), sa.LargeBinary())
    for layout in LAYOUTS:
        convert = (_to_deflated if layout.listed else _to_packed) if packed else _to_json
        with op.batch_alter_table(layout.table) as batch:
            for column in layout.sketches:
                batch.alter_column(column, type_=new, existing_type=old)
        for column in layout.sketches:
            rows = bind.execute(
                sa.text(
                    f"SELECT rowid, {column} FROM {layout.table} "  # noqa: S608
                    f"WHERE {column} IS NOT NULL"
                )
            ).all()
            if rows:
                bind.execute(
                    sa.text(f"UPDATE {layout.table} SET {column} = :value WHERE rowid = :id"),  # noqa: S608
                    [{"id": rowid, "value": convert(value)} for rowid, value in rows],
                )


def upgrade() -> None:
    """Apply this revision."""
    if op.get_bind().dialect.name != "postgresql":
        _convert_sqlite(packed=True)
        return
    now = datetime.now(UTC)
    for layout in LAYOUTS:
        _rebuild(layout, packed=True, now=now)


def downgrade() -> None:
    """Revert this revision."""
    if op.get_bind().dialect.name != "postgresql":
        _convert_sqlite(packed=False)
        return
    now = datetime.now(UTC)
    for layout in LAYOUTS:
        _rebuild(layout, packed=False, now=now)
