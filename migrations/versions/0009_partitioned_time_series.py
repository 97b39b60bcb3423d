"""time series in partitioned tables

Revision ID: 0009_partitioned_time_series
Revises: 0008_alerts
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

revision: str = "0009_partitioned_time_series"
down_revision: str | None = "0008_alerts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""
