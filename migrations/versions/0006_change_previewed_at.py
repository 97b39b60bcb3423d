"""hosts.change_previewed_at: a previewed change makes the host's agent push sooner

Revision ID: 0006_change_previewed_at
Revises: 0005_changes
Create Date: 2026-11-25 03:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_change_previewed_at"
down_revision: str | None = "0005_changes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column(
        "hosts", sa.Column("change_previewed_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("hosts", "change_previewed_at")
