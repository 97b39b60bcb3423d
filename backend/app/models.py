"""Every ORM model, imported so that Base.metadata is complete (Alembic, tests)."""

from app.access_log.models import (
    AccessLogFiles,
    AccessLogRecent,
    LogStats,
    LogStatsRollup,
    LogUpstreamRollup,
    LogUpstreamStats,
)
from app.alerts.models import AlertRule, AlertState, Incident, Silence
from app.audit.models import AuditEntry
from app.auth.models import LoginAttempts, UserSession
from app.changes.models import Change, ChangeEvent, Rollout
from app.configs.models import ConfigAnalysis, ConfigSnapshot
from app.core.db import Base
from app.enrollment.models import EnrollmentToken
from app.exposition.models import MetricsToken
from app.findings.models import Ack, Finding
from app.hosts.models import Host, HostFacts
from app.metrics.models import Sample, SampleGap, SampleRollup
from app.notify.models import AlertChannel, AlertDelivery, AlertDeliveryAttempt
from app.users.models import Role, User

__all__ = [
    "AccessLogFiles",
    "AccessLogRecent",
    "Ack",
    "AlertChannel",
    "AlertDelivery",
    "AlertDeliveryAttempt",
    "AlertRule",
    "AlertState",
    "AuditEntry",
    "Base",
    "Change",
    "ChangeEvent",
    "ConfigAnalysis",
    "ConfigSnapshot",
    "EnrollmentToken",
    "Finding",
    "Host",
    "HostFacts",
    "Incident",
    "LogStats",
    "LogStatsRollup",
    "LogUpstreamRollup",
    "LogUpstreamStats",
    "LoginAttempts",
    "MetricsToken",
    "Role",
    "Rollout",
    "Sample",
    "SampleGap",
    "SampleRollup",
    "Silence",
    "User",
    "UserSession",
]
