"""pruning of analyses, findings and snapshots; per-host analysis dedup

Revision ID: 0011_pruning
Revises: 0010_fleet_queries
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

revision: str = "0011_pruning"
down_revision: str | None = "0010_fleet_queries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""
