"""Alert rules, the state of each (rule, host) pair, incidents and silences."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import Enum, Float, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class PairState(enum.StrEnum):
    """Where one (rule, host) pair is (docs/alerts.md, section 4); inactive pairs have no row."""

    inactive = "inactive"
    pending = "pending"
    firing = "firing"
    recovering = "recovering"
    nodata = "nodata"
    error = "error"


class IncidentState(enum.StrEnum):
    """An incident is open while its pair fires (or has no data), then resolved for good."""

    firing = "firing"
    recovering = "recovering"
    nodata = "nodata"
    resolved = "resolved"


OPEN_INCIDENT_STATES = (IncidentState.firing, IncidentState.recovering, IncidentState.nodata)


def _enum_column(enum_class: type[enum.StrEnum]) -> Any:
    return Enum(enum_class, native_enum=False, length=16, validate_strings=True)


class AlertRule(Base):
    """A condition over one host signal, with its timing, scope and channels."""

    __tablename__ = "alert_rules"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    enabled: Mapped[bool] = mapped_column(default=True)
    signal: Mapped[str] = mapped_column(String(64))
    op: Mapped[str] = mapped_column(String(2))
    threshold: Mapped[float] = mapped_column(Float)
    clear_threshold: Mapped[float | None] = mapped_column(Float)
    min_requests: Mapped[int | None]
    window_s: Mapped[int]
    for_s: Mapped[int] = mapped_column(default=0)
    keep_firing_s: Mapped[int] = mapped_column(default=0)
    repeat_interval_s: Mapped[int | None]
    severity: Mapped[str] = mapped_column(String(16))
    no_data: Mapped[str] = mapped_column(String(16), default="ok")
    scope: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    channel_ids: Mapped[list[int]] = mapped_column(JSONType, default=list)
    # Set when the last evaluation could not compute the signal; cleared by the next good one.
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class AlertState(Base):
    """The state machine of one (rule, host) pair that is not inactive."""

    __tablename__ = "alert_states"

    rule_id: Mapped[int] = mapped_column(
        ForeignKey("alert_rules.id", ondelete="CASCADE"), primary_key=True
    )
    host_id: Mapped[int] = mapped_column(
        ForeignKey("hosts.id", ondelete="CASCADE"), primary_key=True
    )
    state: Mapped[PairState] = mapped_column(_enum_column(PairState))
    # When the condition started to hold (pending) and when it stopped (recovering).
    pending_since: Mapped[datetime | None]
    recovering_since: Mapped[datetime | None]
    incident_id: Mapped[int | None] = mapped_column(
        ForeignKey("alert_incidents.id", ondelete="SET NULL")
    )
    value: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    evaluated_at: Mapped[datetime] = mapped_column(default=utcnow)


class Incident(Base):
    """One firing of a rule on a host, from the moment it fired until it resolved."""

    __tablename__ = "alert_incidents"
    __table_args__ = (
        Index("ix_alert_incidents_state", "state"),
        Index("ix_alert_incidents_host_id_fired_at", "host_id", "fired_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rule_id: Mapped[int] = mapped_column(ForeignKey("alert_rules.id", ondelete="CASCADE"))
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"))
    # Copied from the rule when it fired: history stays readable after a rule is edited.
    rule_key: Mapped[str] = mapped_column(String(64))
    rule_name: Mapped[str] = mapped_column(String(200))
    severity: Mapped[str] = mapped_column(String(16))
    state: Mapped[IncidentState] = mapped_column(_enum_column(IncidentState))
    started_at: Mapped[datetime]
    fired_at: Mapped[datetime]
    resolved_at: Mapped[datetime | None]
    value: Mapped[float | None] = mapped_column(Float)
    peak_value: Mapped[float | None] = mapped_column(Float)
    summary: Mapped[str] = mapped_column(Text, default="")
    # The likely cause (drop alerts): {code, title, detail, evidence}.
    cause: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # The config finding that explains it and carries the fix: {rule, finding_id, url}.
    finding: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    silenced_by: Mapped[int | None] = mapped_column(
        ForeignKey("alert_silences.id", ondelete="SET NULL")
    )
    # Set once a firing notification went out; a resolve is announced only after one did.
    last_notified_at: Mapped[datetime | None]
    notified_resolved: Mapped[bool] = mapped_column(default=False)


class Silence(Base):
    """Notifications muted for a rule and/or hosts matching label matchers, until ends_at."""

    __tablename__ = "alert_silences"

    id: Mapped[int] = mapped_column(primary_key=True)
    rule_id: Mapped[int | None] = mapped_column(ForeignKey("alert_rules.id", ondelete="CASCADE"))
    # [{"label": "env", "op": "=" | "!=", "value": "prod"}]; the label `host` is the hostname.
    matchers: Mapped[list[dict[str, str]]] = mapped_column(JSONType, default=list)
    starts_at: Mapped[datetime] = mapped_column(default=utcnow)
    ends_at: Mapped[datetime] = mapped_column(index=True)
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(150))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
