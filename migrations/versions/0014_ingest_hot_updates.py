"""ingest: host rows updated in place (HOT) on every push

The fleet page sorts by indexed copies of the figures and of last_seen_at that a push refreshes
at most once a minute (app.hosts.latest); the columns every push writes lose their indexes, and
the table keeps room on its pages for the new row versions (fillfactor).

Revision ID: 0014_ingest_hot_updates
Revises: 0013_compact_access_log
Create Date: 2026-11-26 21:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_ingest_hot_updates"
down_revision: str | None = "0013_compact_access_log"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The columns the fleet page sorts by, as app.hosts.models.SORTED_COPY_COLUMNS names them.
FLOAT_COPIES = ("req_per_s", "drops_per_s", "cpu_pct", "mem_used_pct", "fds_used_pct")
INT_COPIES = ("active", "waiting")
SORTED_COPY_COLUMNS = (
    "last_seen_at",
    "req_per_s",
    "active",
    "waiting",
    "drops_per_s",
    "cpu_pct",
    "mem_used_pct",
    "fds_used_pct",
)
HOSTS_FILLFACTOR = 70

# Every host's sorted copies taken from its current figures.
COPY_NOW = """
UPDATE hosts SET
    sort_last_seen_at = last_seen_at, sort_req_per_s = req_per_s, sort_active = active,
    sort_waiting = waiting, sort_drops_per_s = drops_per_s, sort_cpu_pct = cpu_pct,
    sort_mem_used_pct = mem_used_pct, sort_fds_used_pct = fds_used_pct, sorted_at = last_seen_at
"""


def _sort_index(column: str, key: str) -> None:
    """(key DESC NULLS LAST, id DESC) as ix_hosts_sort_<column>."""
    op.create_index(
        f"ix_hosts_sort_{column}",
        "hosts",
        [sa.literal_column(f"{key} DESC NULLS LAST"), sa.literal_column("id DESC")],
        unique=False,
    )


def upgrade() -> None:
    """Apply this revision."""
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        for name in SORTED_COPY_COLUMNS:
            op.drop_index(f"ix_hosts_sort_{name}", table_name="hosts")
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        for name in ("sorted_at", "sort_last_seen_at"):
            batch_op.add_column(sa.Column(name, sa.DateTime(timezone=True), nullable=True))
        for name in FLOAT_COPIES:
            batch_op.add_column(sa.Column(f"sort_{name}", sa.Double(), nullable=True))
        for name in INT_COPIES:
            batch_op.add_column(sa.Column(f"sort_{name}", sa.Integer(), nullable=True))
    op.execute(COPY_NOW)
    if postgresql:
        for name in SORTED_COPY_COLUMNS:
            _sort_index(name, f"sort_{name}")
        # Rows already written keep their layout; pages get the room as they are rewritten.
        op.execute(f"ALTER TABLE hosts SET (fillfactor = {HOSTS_FILLFACTOR})")


def downgrade() -> None:
    """Revert this revision."""
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        op.execute("ALTER TABLE hosts RESET (fillfactor)")
        for name in SORTED_COPY_COLUMNS:
            op.drop_index(f"ix_hosts_sort_{name}", table_name="hosts")
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        for name in SORTED_COPY_COLUMNS:
            batch_op.drop_column(f"sort_{name}")
        batch_op.drop_column("sorted_at")
    if postgresql:
        for name in SORTED_COPY_COLUMNS:
            _sort_index(name, name)
