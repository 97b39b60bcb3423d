"""compact access-log storage: binary sketches, access-log retention of its own

Revision ID: 0013_compact_access_log
Revises: 0012_compact_samples
Create Date: 2026-11-26 21:05:00
"""

from collections.abc import Sequence

revision: str = "0013_compact_access_log"
down_revision: str | None = "0012_compact_samples"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""
