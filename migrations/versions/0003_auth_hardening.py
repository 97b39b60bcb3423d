"""auth hardening: atomic sign-in attempt counters, admin reset of a host's enrolment

Revision ID: 0003_auth_hardening
Revises: 0002_sample_gaps
Create Date: 2026-11-23 08:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_auth_hardening"
down_revision: str | None = "0002_sample_gaps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "login_attempts",
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("key_hash", name=op.f("pk_login_attempts")),
    )
    with op.batch_alter_table("login_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_login_attempts_window_start"), ["window_start"], unique=False
        )
    with op.batch_alter_table("login_failures", schema=None) as batch_op:
        batch_op.drop_index("ix_login_failures_username_ip_at")
    op.drop_table("login_failures")
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("enrolment_reset_at", sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.drop_column("enrolment_reset_at")
    op.create_table(
        "login_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("ip", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    with op.batch_alter_table("login_failures", schema=None) as batch_op:
        batch_op.create_index(
            "ix_login_failures_username_ip_at", ["username", "ip", "at"], unique=False
        )
    with op.batch_alter_table("login_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_login_attempts_window_start"))
    op.drop_table("login_attempts")
