"""compact samples and rollups: typed columns instead of per-sample JSON, one index

The samples' `extra` JSON becomes typed columns for what is read or charted (nginx's CPU and
memory, the workers' fd limit, core count and busiest core, iowait, swap, two tcp states,
error-log levels, why nginx or stub_status could not be read); what nothing reads goes
(docs/storage.md). The key becomes (host_id, ts, seq) and the (host_id, ts) index goes: the key
serves the time-range reads. File-descriptor figures become 32-bit. On PostgreSQL the
partitioned table is rebuilt as 0009 did (renamed with its partitions, recreated with its
columns ordered by alignment so that no row carries padding, refilled, the old one dropped); on
SQLite it is rebuilt in place. The downgrade rebuilds `extra` from the columns (the per-core
list, load5/15, memory available, the master pid and the stub_status URL are gone for good).

Revision ID: 0012_compact_samples
Revises: 0011_pruning
Create Date: 2026-11-26 21:05:00
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from app.core.partitions import Period, TimePartitioning, ensure_partitions
from app.metrics.settings import get_retention

revision: str = "0012_compact_samples"
down_revision: str | None = "0011_pruning"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INT4_MAX = 2**31 - 1
# column -> (type, path of its value in `extra`, SQL type the JSON text is cast to)
COLUMNS: tuple[tuple[str, sa.types.TypeEngine[object], tuple[str, ...], str], ...] = (
    ("swap_used_bytes", sa.BigInteger(), ("memory", "swap_used_bytes"), "bigint"),
    ("worker_fds_limit", sa.Integer(), ("nginx_processes", "worker_fds_limit"), "bigint"),
    ("nginx_rss_bytes", sa.BigInteger(), ("nginx_processes", "rss_bytes"), "bigint"),
    ("cpu_iowait_pct", sa.REAL(), ("cpu", "iowait_pct"), "real"),
    ("cpu_core_max_pct", sa.REAL(), ("cpu", "per_core_pct"), "real"),
    ("nginx_cpu_pct", sa.REAL(), ("nginx_processes", "cpu_pct"), "real"),
    ("worker_cpu_pct", sa.REAL(), ("nginx_processes", "worker_cpu_pct"), "real"),
    ("tcp_established", sa.Integer(), ("tcp_states", "ESTABLISHED"), "bigint"),
    ("tcp_time_wait", sa.Integer(), ("tcp_states", "TIME_WAIT"), "bigint"),
    ("errlog_error", sa.Integer(), ("error_log", "levels", "error"), "integer"),
    ("errlog_warn", sa.Integer(), ("error_log", "levels", "warn"), "integer"),
    ("errlog_wc_reusing", sa.Integer(), ("error_log", "messages", "worker_connections_reusing"),
     "integer"),
    ("cpu_cores", sa.SmallInteger(), ("cpu", "per_core_pct"), "smallint"),
    ("nginx_error", sa.String(1024), ("nginx", "error"), "text"),
    ("stub_status_error", sa.String(1024), ("stub_status", "error"), "text"),
)  # fmt: skip
# Stored only when non-zero in `extra`; 0 when the sample had an error-log reading at all.
ERRLOG_COUNTS = ("errlog_error", "errlog_warn", "errlog_wc_reusing")
CAPPED = ("tcp_established", "tcp_time_wait", "worker_fds_limit")
# 64-bit before, 32-bit now (values above INT4_MAX are stored as INT4_MAX).
NARROWED = ("fds_open", "fds_limit", "worker_fds_max")
OLD = "_before_0012"

# The compact layout: 8-byte, 4-byte, 2-byte, 1-byte columns, then text (no padding in a row).
COMPACT = """
    ts timestamp with time zone NOT NULL, seq bigint NOT NULL, accepts bigint, handled bigint,
    requests bigint, mem_used_bytes bigint, mem_total_bytes bigint, swap_used_bytes bigint,
    net_rx_bytes bigint, net_tx_bytes bigint, listen_overflows bigint, listen_drops bigint,
    nginx_rss_bytes bigint, host_id integer NOT NULL, active integer, reading integer,
    writing integer, waiting integer, workers integer, fds_open integer, fds_limit integer,
    worker_fds_max integer, worker_fds_limit integer, tcp_established integer,
    tcp_time_wait integer, errlog_severe integer, errlog_error integer, errlog_warn integer,
    errlog_wc_not_enough integer, errlog_wc_reusing integer, errlog_nofile integer,
    req_per_s real, accepts_per_s real, drops_per_s real, cpu_pct real, cpu_iowait_pct real,
    cpu_core_max_pct real, load1 real, nginx_cpu_pct real, worker_cpu_pct real,
    cpu_cores smallint, nginx_up boolean NOT NULL, stub_status_available boolean NOT NULL,
    nginx_error varchar(1024), stub_status_error varchar(1024)
"""
# The layout of 0009-0011 (columns in their order of creation).
PREVIOUS = """
    host_id integer NOT NULL, seq bigint NOT NULL, ts timestamp with time zone NOT NULL,
    nginx_up boolean NOT NULL, workers integer, stub_status_available boolean NOT NULL,
    active integer, reading integer, writing integer, waiting integer, accepts bigint,
    handled bigint, requests bigint, req_per_s real, accepts_per_s real, drops_per_s real,
    cpu_pct real, mem_used_bytes bigint, mem_total_bytes bigint, load1 real, fds_open bigint,
    fds_limit bigint, net_rx_bytes bigint, net_tx_bytes bigint, listen_overflows bigint,
    listen_drops bigint, worker_fds_max bigint, extra json NOT NULL, errlog_severe integer,
    errlog_wc_not_enough integer, errlog_nofile integer
"""


def _names(columns: str) -> list[str]:
    """Column names of a column list as written above."""
    return [definition.split()[0] for definition in columns.split(",")]


def _pg_value(name: str, path: tuple[str, ...], cast: str) -> str:
    """The SQL (PostgreSQL, `extra` json) giving a new column's value."""
    if name == "cpu_cores":
        return "NULLIF(json_array_length(extra->'cpu'->'per_core_pct'), 0)"
    if name == "cpu_core_max_pct":
        return (
            "(SELECT max(core::real) FROM json_array_elements_text(extra->'cpu'->'per_core_pct') "
            "AS core)"
        )
    reference = "extra" + "".join(f"->'{key}'" for key in path[:-1]) + f"->>'{path[-1]}'"
    value = f"({reference})::{cast}"
    if name in CAPPED:
        return f"least({value}, {INT4_MAX})::integer"
    if name in ERRLOG_COUNTS:
        return f"CASE WHEN errlog_severe IS NOT NULL THEN coalesce({value}, 0) END"
    return value


def _sqlite_value(name: str, path: tuple[str, ...]) -> str:
    """The SQL (SQLite JSON1) giving a new column's value."""
    if name == "cpu_cores":
        return "NULLIF(json_array_length(extra, '$.cpu.per_core_pct'), 0)"
    if name == "cpu_core_max_pct":
        return "(SELECT max(value) FROM json_each(extra, '$.cpu.per_core_pct'))"
    value = f"json_extract(extra, '$.{'.'.join(path)}')"
    if name in CAPPED:
        return f"min({value}, {INT4_MAX})"
    if name in ERRLOG_COUNTS:
        return f"CASE WHEN errlog_severe IS NOT NULL THEN coalesce({value}, 0) END"
    return value


def _pg_extra() -> str:
    """`extra` rebuilt from the columns (PostgreSQL), sections as the old code wrote them."""
    sections: dict[str, list[str]] = {}
    for name, _type, path, _cast in COLUMNS:
        if name in ("cpu_cores", "cpu_core_max_pct") or len(path) != 2:
            continue
        sections.setdefault(path[0], []).append(f"'{path[1]}', {name}")
    sections.setdefault("error_log", []).extend(
        (
            "'levels', json_build_object('error', NULLIF(errlog_error, 0), "
            "'warn', NULLIF(errlog_warn, 0))",
            "'messages', json_build_object("
            "'worker_connections_not_enough', NULLIF(errlog_wc_not_enough, 0), "
            "'worker_connections_reusing', NULLIF(errlog_wc_reusing, 0), "
            "'too_many_open_files', NULLIF(errlog_nofile, 0))",
        )
    )
    parts = [f"'{section}', json_build_object({', '.join(v)})" for section, v in sections.items()]
    return f"json_strip_nulls(json_build_object({', '.join(parts)}))"


def _sqlite_extra() -> str:
    """`extra` rebuilt from the columns (SQLite)."""
    sections: dict[str, list[str]] = {}
    for name, _type, path, _cast in COLUMNS:
        if name in ("cpu_cores", "cpu_core_max_pct") or len(path) != 2:
            continue
        sections.setdefault(path[0], []).append(f"'{path[1]}', {name}")
    parts = [f"'{section}', json_object({', '.join(v)})" for section, v in sections.items()]
    return f"json_object({', '.join(parts)})"


def _rename_old() -> list[str]:
    """Move samples, its partitions, key, foreign key and index out of the way; returns the
    partitions' new names."""
    bind = op.get_bind()
    partitions = bind.scalars(
        sa.text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = 'samples'::regclass"
        )
    ).all()
    # The partitions' own index names too, or the new partitions' would get a numeral suffix.
    indexes = bind.scalars(
        sa.text(
            "SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid "
            "JOIN pg_inherits i ON i.inhrelid = x.indrelid "
            "WHERE i.inhparent = 'samples'::regclass"
        )
    ).all()
    for index in indexes:
        op.execute(f"ALTER INDEX {index} RENAME TO {index}{OLD}")
    for partition in partitions:
        op.execute(f"ALTER TABLE {partition} RENAME TO {partition}{OLD}")
    op.execute(f"ALTER TABLE samples RENAME TO samples{OLD}")
    op.execute(f"ALTER TABLE samples{OLD} RENAME CONSTRAINT pk_samples TO pk_samples{OLD}")
    op.execute(
        f"ALTER TABLE samples{OLD} RENAME CONSTRAINT fk_samples_host_id_hosts "
        f"TO fk_samples{OLD}_host_id_hosts"
    )
    return [f"{partition}{OLD}" for partition in partitions]


def _recreate(columns: str, key: str, select: str, *, index: bool) -> None:
    """samples recreated with `columns` and its partitions, refilled by `select` (reading
    the renamed table), the old one dropped."""
    op.execute(f"CREATE TABLE samples ({columns}) PARTITION BY RANGE (ts)")
    op.execute(f"ALTER TABLE samples ADD CONSTRAINT pk_samples PRIMARY KEY ({key})")
    op.execute(
        "ALTER TABLE samples ADD CONSTRAINT fk_samples_host_id_hosts FOREIGN KEY (host_id) "
        "REFERENCES hosts (id) ON DELETE CASCADE"
    )
    if index:
        op.execute("CREATE INDEX ix_samples_host_id_ts ON samples (host_id, ts)")
    op.execute("CREATE TABLE samples_default PARTITION OF samples DEFAULT")
    now = datetime.now(UTC)
    oldest = op.get_bind().scalar(sa.text(f"SELECT min(ts) FROM samples{OLD}"))  # noqa: S608
    # Partitions for the rows still within retention (older ones wait in DEFAULT for the next
    # retention run), and for the days ahead.
    since = max(oldest, now - get_retention().raw) if isinstance(oldest, datetime) else now
    spec = TimePartitioning("samples", "ts", Period.quarter_day)
    ensure_partitions(session=op.get_bind(), specs=[spec], now=now, since=min(since, now))
    names = ", ".join(_names(columns))
    op.execute(f"INSERT INTO samples ({names}) {select}")
    op.execute(f"DROP TABLE samples{OLD}")


def _compact_select() -> str:
    """The renamed table's rows in the compact layout (PostgreSQL)."""
    values = {name: _pg_value(name, path, cast) for name, _t, path, cast in COLUMNS}
    for name in NARROWED:
        values[name] = f"least({name}, {INT4_MAX})::integer"
    parts = [values.get(name, name) for name in _names(COMPACT)]
    return f"SELECT {', '.join(parts)} FROM samples{OLD}"  # noqa: S608


def _previous_select() -> str:
    """The renamed table's rows in the layout before this revision (PostgreSQL)."""
    parts = [_pg_extra() if name == "extra" else name for name in _names(PREVIOUS)]
    return f"SELECT {', '.join(parts)} FROM samples{OLD}"  # noqa: S608


def upgrade() -> None:
    """Apply this revision."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER INDEX ix_samples_host_id_ts RENAME TO ix_samples_host_id_ts{OLD}")
        _rename_old()
        _recreate(COMPACT, "host_id, ts, seq", _compact_select(), index=False)
        return
    with op.batch_alter_table("samples") as batch:
        for name, type_, _path, _cast in COLUMNS:
            batch.add_column(sa.Column(name, type_, nullable=True))
    values = ", ".join(f"{name} = {_sqlite_value(name, path)}" for name, _t, path, _c in COLUMNS)
    narrowed = ", ".join(f"{name} = min({name}, {INT4_MAX})" for name in NARROWED)
    op.execute(f"UPDATE samples SET {values}, {narrowed}")  # noqa: S608
    with op.batch_alter_table("samples", recreate="always") as batch:
        batch.drop_index("ix_samples_host_id_ts")
        batch.drop_column("extra")
        for name in NARROWED:
            batch.alter_column(name, type_=sa.Integer(), existing_type=sa.BigInteger())
        batch.drop_constraint("pk_samples", type_="primary")
        batch.create_primary_key("pk_samples", ["host_id", "ts", "seq"])


def downgrade() -> None:
    """Revert this revision."""
    if op.get_bind().dialect.name == "postgresql":
        _rename_old()
        _recreate(PREVIOUS, "host_id, seq, ts", _previous_select(), index=True)
        return
    with op.batch_alter_table("samples") as batch:
        batch.add_column(sa.Column("extra", sa.JSON(), nullable=True))
    op.execute(f"UPDATE samples SET extra = {_sqlite_extra()}")  # noqa: S608
    with op.batch_alter_table("samples", recreate="always") as batch:
        batch.alter_column("extra", existing_type=sa.JSON(), nullable=False)
        for name, _type, _path, _cast in COLUMNS:
            batch.drop_column(name)
        for name in NARROWED:
            batch.alter_column(name, type_=sa.BigInteger(), existing_type=sa.Integer())
        batch.drop_constraint("pk_samples", type_="primary")
        batch.create_primary_key("pk_samples", ["host_id", "seq"])
        batch.create_index("ix_samples_host_id_ts", ["host_id", "ts"], unique=False)
