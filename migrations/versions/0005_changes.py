"""changes: recommended diffs, their trail, rollouts

Revision ID: 0005_changes
Revises: 0004_line_free_finding_keys
Create Date: 2026-11-24 18:42:52.787071
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005_changes"
down_revision: str | None = "0004_line_free_finding_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "rollouts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rule", sa.String(length=64), nullable=False),
        sa.Column(
            "labels",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "status",
            sa.Enum(
                "running",
                "completed",
                "stopped",
                name="rolloutstatus",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("stop_reason", sa.Text(), nullable=True),
        sa.Column("canary", sa.Integer(), nullable=False),
        sa.Column("batch_size", sa.Integer(), nullable=False),
        sa.Column(
            "auto_rollback",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "skipped",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=150), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rollouts")),
    )
    op.create_table(
        "changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("reverts_change_id", sa.Integer(), nullable=True),
        sa.Column("rollout_id", sa.Integer(), nullable=True),
        sa.Column("wave", sa.Integer(), nullable=True),
        sa.Column(
            "status",
            sa.Enum(
                "proposed",
                "approved",
                "sent",
                "applying",
                "verified",
                "rolled_back",
                "failed",
                "refused",
                "rejected",
                "superseded",
                name="changestatus",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("step", sa.String(length=32), nullable=True),
        sa.Column(
            "finding_keys",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "rules",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("base_snapshot_id", sa.Integer(), nullable=True),
        sa.Column("base_config_hash", sa.String(length=64), nullable=False),
        sa.Column("diff", sa.Text(), nullable=False),
        sa.Column(
            "files",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "edits",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "overrides",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("score_before", sa.Integer(), nullable=True),
        sa.Column("score_after", sa.Integer(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=150), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("approved_by", sa.String(length=150), nullable=True),
        sa.Column("approved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome_message", sa.Text(), nullable=True),
        sa.Column("failed_step", sa.String(length=32), nullable=True),
        sa.Column("report_seq", sa.Integer(), nullable=False),
        sa.Column(
            "impact",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("gate_failures", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["base_snapshot_id"],
            ["config_snapshots.id"],
            name=op.f("fk_changes_base_snapshot_id_config_snapshots"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["host_id"], ["hosts.id"], name=op.f("fk_changes_host_id_hosts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["reverts_change_id"],
            ["changes.id"],
            name=op.f("fk_changes_reverts_change_id_changes"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["rollouts.id"],
            name=op.f("fk_changes_rollout_id_rollouts"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_changes")),
    )
    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.create_index("ix_changes_host_id_status", ["host_id", "status"], unique=False)
        batch_op.create_index(batch_op.f("ix_changes_rollout_id"), ["rollout_id"], unique=False)

    op.create_table(
        "change_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("change_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("step", sa.String(length=32), nullable=True),
        sa.Column("step_status", sa.String(length=16), nullable=True),
        sa.Column("actor", sa.String(length=150), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column(
            "detail",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("report_seq", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["change_id"],
            ["changes.id"],
            name=op.f("fk_change_events_change_id_changes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_change_events")),
        sa.UniqueConstraint(
            "change_id", "report_seq", name=op.f("uq_change_events_change_id_report_seq")
        ),
    )
    with op.batch_alter_table("change_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_change_events_change_id"), ["change_id"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("change_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_change_events_change_id"))

    op.drop_table("change_events")
    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_changes_rollout_id"))
        batch_op.drop_index("ix_changes_host_id_status")

    op.drop_table("changes")
    op.drop_table("rollouts")
