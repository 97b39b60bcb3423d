"""fleet queries: indexes for sorting, filtering and top findings

Revision ID: 0010_fleet_queries
Revises: 0009_partitioned_time_series
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

revision: str = "0010_fleet_queries"
down_revision: str | None = "0009_partitioned_time_series"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""
