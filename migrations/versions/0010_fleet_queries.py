"""fleet queries: the newest figures on the host row, indexes for sorting, filtering and top findings

Revision ID: 0010_fleet_queries
Revises: 0009_partitioned_time_series
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_fleet_queries"
down_revision: str | None = "0009_partitioned_time_series"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FLOAT_FIGURES = ("req_per_s", "drops_per_s", "cpu_pct", "mem_used_pct", "fds_used_pct")
INT_FIGURES = ("active", "reading", "writing", "waiting")
BIGINT_FIGURES = ("fds_open", "fds_limit")
# (column DESC NULLS LAST, id DESC) on PostgreSQL, as app.hosts.models declares them.
SORT_COLUMNS = (
    "last_seen_at",
    "req_per_s",
    "active",
    "waiting",
    "drops_per_s",
    "cpu_pct",
    "mem_used_pct",
    "fds_used_pct",
)

# The newest sample's figures onto each host that has one (hosts.last_seq names it).
BACKFILL = """
UPDATE hosts SET
    req_per_s = s.req_per_s, active = s.active, reading = s.reading, writing = s.writing,
    waiting = s.waiting, drops_per_s = s.drops_per_s, cpu_pct = s.cpu_pct,
    mem_used_pct = CASE WHEN s.mem_total_bytes > 0
                        THEN 100.0 * s.mem_used_bytes / s.mem_total_bytes END,
    fds_open = s.fds_open, fds_limit = s.fds_limit,
    fds_used_pct = CASE WHEN s.fds_limit > 0 THEN 100.0 * s.fds_open / s.fds_limit END
FROM samples AS s
WHERE s.host_id = hosts.id AND s.seq = hosts.last_seq
"""


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        for name in FLOAT_FIGURES:
            batch_op.add_column(sa.Column(name, sa.Double(), nullable=True))
        for name in INT_FIGURES:
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=True))
        for name in BIGINT_FIGURES:
            batch_op.add_column(sa.Column(name, sa.BigInteger(), nullable=True))
        batch_op.create_index("ix_hosts_hostname_id", ["hostname", "id"], unique=False)
    op.execute(BACKFILL)
    op.create_index(
        "ix_hosts_labels",
        "hosts",
        ["labels"],
        unique=False,
        postgresql_using="gin",
        postgresql_ops={"labels": "jsonb_path_ops"},
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    for name in SORT_COLUMNS:
        op.create_index(
            f"ix_hosts_sort_{name}",
            "hosts",
            [sa.literal_column(f"{name} DESC NULLS LAST"), sa.literal_column("id DESC")],
            unique=False,
        )


def downgrade() -> None:
    """Revert this revision."""
    if op.get_bind().dialect.name == "postgresql":
        for name in SORT_COLUMNS:
            op.drop_index(f"ix_hosts_sort_{name}", table_name="hosts")
    op.drop_index("ix_hosts_labels", table_name="hosts", postgresql_using="gin")
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.drop_index("ix_hosts_hostname_id")
        for name in (*FLOAT_FIGURES, *INT_FIGURES, *BIGINT_FIGURES):
            batch_op.drop_column(name)
