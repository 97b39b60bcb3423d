"""pruning of analyses, findings and snapshots; per-host analysis dedup

Revision ID: 0011_pruning
Revises: 0010_fleet_queries
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_pruning"
down_revision: str | None = "0010_fleet_queries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "pending_analyses",
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["host_id"],
            ["hosts.id"],
            name=op.f("fk_pending_analyses_host_id_hosts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("host_id", name=op.f("pk_pending_analyses")),
    )
    # (snapshot_id, id) serves every use of the single-column index and finds a snapshot's
    # latest analysis in one index probe.
    op.create_index(
        "ix_config_analyses_snapshot_id_id", "config_analyses", ["snapshot_id", "id"], unique=False
    )
    op.drop_index("ix_config_analyses_snapshot_id", table_name="config_analyses")
    op.create_index(
        "ix_config_analyses_host_id_analyzed_at",
        "config_analyses",
        ["host_id", "analyzed_at"],
        unique=False,
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_config_analyses_host_id_analyzed_at", table_name="config_analyses")
    op.create_index(
        "ix_config_analyses_snapshot_id", "config_analyses", ["snapshot_id"], unique=False
    )
    op.drop_index("ix_config_analyses_snapshot_id_id", table_name="config_analyses")
    op.drop_table("pending_analyses")
