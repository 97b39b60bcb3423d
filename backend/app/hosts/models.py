"""Enrolled hosts and the facts their agents report."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, String, literal_column
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow

# Room left in each heap page, so that the update of every push writes the row's new version
# on the same page (HOT): then no index gets an entry for it.
HOSTS_FILLFACTOR = 70

# The fleet page's figure columns kept on the host row that it sorts by (PostgreSQL: with a
# sort index each, on their copies, see SORTED_COPY_COLUMNS).
FIGURE_SORT_COLUMNS = (
    "req_per_s",
    "active",
    "waiting",
    "drops_per_s",
    "cpu_pct",
    "mem_used_pct",
    "fds_used_pct",
)


# Columns the fleet page sorts by, each with an indexed copy (sort_<column>) that a push refreshes
# only when the copies are older than SORTED_COPY_MAX_AGE (app.hosts.latest): the pushes in
# between change no indexed column, so their update is HOT.
SORTED_COPY_COLUMNS = ("last_seen_at", *FIGURE_SORT_COLUMNS)


def _sort_index(column: str) -> Index:
    """(sort_column DESC NULLS LAST, id DESC): the fleet page's first click on a figure, worst
    first, is read straight off the index; the other direction sorts the matching rows."""
    index = Index(
        f"ix_hosts_sort_{column}",
        literal_column(f"sort_{column} DESC NULLS LAST"),
        literal_column("id DESC"),
    )
    return index.ddl_if(dialect="postgresql")


class Host(Base):
    """One nginx server with its agent; the status and figure fields mirror its newest sample."""

    __tablename__ = "hosts"
    __table_args__ = (
        Index("ix_hosts_hostname_id", "hostname", "id"),
        # Label filters are containment tests (labels @> '{"env": "prod"}'), what jsonb_path_ops
        # indexes; on SQLite (embedded, small fleets) it is a plain index the filter does not use.
        Index(
            "ix_hosts_labels",
            "labels",
            postgresql_using="gin",
            postgresql_ops={"labels": "jsonb_path_ops"},
        ),
        *(_sort_index(column) for column in SORTED_COPY_COLUMNS),
        {"postgresql_with": {"fillfactor": HOSTS_FILLFACTOR}},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    agent_id: Mapped[str] = mapped_column(String(64), unique=True)
    hostname: Mapped[str] = mapped_column(String(253))
    labels: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    enrolled_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Set by an admin's "reset agent enrolment": the next enrolment of this agent_id may take the
    # host over without the current host token (once); cleared by that enrolment.
    enrolment_reset_at: Mapped[datetime | None]
    last_seen_at: Mapped[datetime | None]
    agent_version: Mapped[str | None] = mapped_column(String(32))
    nginx_up: Mapped[bool | None]
    stub_status_available: Mapped[bool | None]
    stub_status_error: Mapped[str | None] = mapped_column(String(1024))
    # Hash of the newest config snapshot stored; a different config_hash in a push asks for it.
    config_hash: Mapped[str | None] = mapped_column(String(64))
    # seq of the newest sample: the fleet view and the next push's rates start from it.
    last_seq: Mapped[int | None] = mapped_column(BigInteger)
    # When someone last previewed a recommended change of this host: its agent pushes sooner
    # for a while (app.changes.cadence), so a one-click approval reaches it within seconds.
    change_previewed_at: Mapped[datetime | None]
    # Figures of the newest sample, written by the push that stored it (app.hosts.latest), so
    # the fleet page sorts and pages 10,000 hosts without reading samples.
    req_per_s: Mapped[float | None]
    active: Mapped[int | None]
    reading: Mapped[int | None]
    writing: Mapped[int | None]
    waiting: Mapped[int | None]
    drops_per_s: Mapped[float | None]
    cpu_pct: Mapped[float | None]
    mem_used_pct: Mapped[float | None]
    fds_open: Mapped[int | None] = mapped_column(BigInteger)
    fds_limit: Mapped[int | None] = mapped_column(BigInteger)
    # fds_open / fds_limit in percent: the fds column sorts by how close a host is to its limit.
    fds_used_pct: Mapped[float | None]
    # The copies the fleet page sorts by (indexed), as of sorted_at: at most SORTED_COPY_MAX_AGE
    # behind the columns above while the host pushes (the figures shown are always the newest).
    sorted_at: Mapped[datetime | None]
    sort_last_seen_at: Mapped[datetime | None]
    sort_req_per_s: Mapped[float | None]
    sort_active: Mapped[int | None]
    sort_waiting: Mapped[int | None]
    sort_drops_per_s: Mapped[float | None]
    sort_cpu_pct: Mapped[float | None]
    sort_mem_used_pct: Mapped[float | None]
    sort_fds_used_pct: Mapped[float | None]


class HostFacts(Base):
    """The facts object of the latest push that carried one, plus the columns queries need."""

    __tablename__ = "host_facts"

    host_id: Mapped[int] = mapped_column(
        ForeignKey("hosts.id", ondelete="CASCADE"), primary_key=True
    )
    facts: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    nginx_version: Mapped[str | None] = mapped_column(String(64))
    cpu_count: Mapped[int | None]
    mem_total_bytes: Mapped[int | None] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
