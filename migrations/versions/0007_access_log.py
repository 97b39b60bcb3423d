"""access-log figures: log_stats, log_upstream_stats, their rollups, files reports, recent figures

Revision ID: 0007_access_log
Revises: 0006_change_previewed_at
Create Date: 2026-11-25 12:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.schema import SchemaItem

revision: str = "0007_access_log"
down_revision: str | None = "0006_change_previewed_at"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Nullable counters of a site (absent when the log format lacks their variable), as of now.
COUNTERS = (
    "status_1xx", "status_2xx", "status_3xx", "status_4xx", "status_5xx",
    "status_499", "status_500", "status_502", "status_503", "status_504",
    "bytes_sent", "get_2xx",
    "cache_hit", "cache_miss", "cache_expired", "cache_stale", "cache_updating",
    "cache_revalidated", "cache_bypass",
    "upstream_errors",
)  # fmt: skip
SKETCHES = ("request_time", "upstream_time", "top_paths")


def _json() -> sa.JSON:
    return sa.JSON(none_as_null=True)


def _host_id(table: str) -> list[SchemaItem]:
    """The host_id column and its cascading foreign key."""
    return [
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["host_id"], ["hosts.id"], name=op.f(f"fk_{table}_host_id_hosts"), ondelete="CASCADE"
        ),
    ]


def _site_figures(summed: bool) -> list[SchemaItem]:
    """requests, the nullable counters (32-bit per sample, 64-bit summed) and the sketches."""
    wide = sa.BigInteger()
    narrow = wide if summed else sa.Integer()
    return [
        sa.Column("requests", narrow, nullable=False),
        *(
            sa.Column(name, wide if name == "bytes_sent" else narrow, nullable=True)
            for name in COUNTERS
        ),
        *(sa.Column(name, _json(), nullable=True) for name in SKETCHES),
    ]


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "log_stats",
        *_host_id("log_stats"),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("site", sa.String(length=255), nullable=False),
        *_site_figures(summed=False),
        sa.PrimaryKeyConstraint("host_id", "ts", "seq", "site", name=op.f("pk_log_stats")),
    )
    op.create_table(
        "log_stats_rollups",
        *_host_id("log_stats_rollups"),
        sa.Column("resolution", sa.String(length=2), nullable=False),
        sa.Column("bucket_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("site", sa.String(length=255), nullable=False),
        *_site_figures(summed=True),
        sa.PrimaryKeyConstraint(
            "host_id", "resolution", "bucket_start", "site", name=op.f("pk_log_stats_rollups")
        ),
    )
    op.create_table(
        "log_upstream_stats",
        *_host_id("log_upstream_stats"),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("site", sa.String(length=255), nullable=False),
        sa.Column("upstream", sa.String(length=255), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("errors", sa.Integer(), nullable=False),
        sa.Column("response_time", _json(), nullable=True),
        sa.PrimaryKeyConstraint(
            "host_id", "ts", "seq", "site", "upstream", name=op.f("pk_log_upstream_stats")
        ),
    )
    op.create_table(
        "log_upstream_rollups",
        *_host_id("log_upstream_rollups"),
        sa.Column("resolution", sa.String(length=2), nullable=False),
        sa.Column("bucket_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("site", sa.String(length=255), nullable=False),
        sa.Column("upstream", sa.String(length=255), nullable=False),
        sa.Column("attempts", sa.BigInteger(), nullable=False),
        sa.Column("errors", sa.BigInteger(), nullable=False),
        sa.Column("response_time", _json(), nullable=True),
        sa.PrimaryKeyConstraint(
            "host_id",
            "resolution",
            "bucket_start",
            "site",
            "upstream",
            name=op.f("pk_log_upstream_rollups"),
        ),
    )
    op.create_table(
        "access_log_files",
        *_host_id("access_log_files"),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("files", _json(), nullable=False),
        sa.PrimaryKeyConstraint("host_id", name=op.f("pk_access_log_files")),
    )
    op.create_table(
        "access_log_recent",
        *_host_id("access_log_recent"),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        sa.Column("cache_hit_ratio", sa.Double(), nullable=True),
        sa.Column("request_time_p95_s", sa.Double(), nullable=True),
        sa.Column("share_5xx", sa.Double(), nullable=True),
        sa.PrimaryKeyConstraint("host_id", name=op.f("pk_access_log_recent")),
    )


def downgrade() -> None:
    """Revert this revision."""
    for table in (
        "access_log_recent",
        "access_log_files",
        "log_upstream_rollups",
        "log_upstream_stats",
        "log_stats_rollups",
        "log_stats",
    ):
        op.drop_table(table)
