"""sample gaps: seq ranges of samples an agent dropped (spool overflow)

Revision ID: 0002_sample_gaps
Revises: 0001
Create Date: 2026-11-23 08:12:23.779599
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_sample_gaps"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "sample_gaps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("from_seq", sa.BigInteger(), nullable=False),
        sa.Column("to_seq", sa.BigInteger(), nullable=False),
        sa.Column("from_ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("to_ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("reported_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["host_id"], ["hosts.id"], name=op.f("fk_sample_gaps_host_id_hosts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sample_gaps")),
        sa.UniqueConstraint("host_id", "from_seq", name=op.f("uq_sample_gaps_host_id_from_seq")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("sample_gaps")
