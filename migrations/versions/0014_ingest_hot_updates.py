"""ingest: host rows updated in place (HOT) on every push

Revision ID: 0014_ingest_hot_updates
Revises: 0013_compact_access_log
Create Date: 2026-11-26 21:05:00
"""

from collections.abc import Sequence

revision: str = "0014_ingest_hot_updates"
down_revision: str | None = "0013_compact_access_log"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""
