"""Enrolled hosts and the facts their agents report."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class Host(Base):
    """One nginx server with its agent; the status fields mirror its newest sample."""

    __tablename__ = "hosts"

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
