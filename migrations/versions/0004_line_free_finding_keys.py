"""line-free finding keys: findings get their block path and directive, keys and acks re-keyed

A finding's key was rule@file:line, so any edit above a muted finding unmuted it. Keys now name
the block path and directive (rule@file:place/directive). The latest analysis of every host is
re-run by the engine on its stored snapshot to map the old keys of its findings and of the acks
to the new ones (app.findings.rekey); acks by rule alone are untouched.

Revision ID: 0004_line_free_finding_keys
Revises: 0003_auth_hardening
Create Date: 2026-11-23 14:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_line_free_finding_keys"
down_revision: str | None = "0003_auth_hardening"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    from app.findings.rekey import rekey_findings_and_acks

    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("place", sa.String(length=1200), server_default="", nullable=False)
        )
        batch_op.add_column(
            sa.Column("directive", sa.String(length=300), server_default="", nullable=False)
        )
    rekey_findings_and_acks(op.get_bind())


def downgrade() -> None:
    """Revert this revision (the new keys stay: old code only compares them as strings)."""
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_column("directive")
        batch_op.drop_column("place")
