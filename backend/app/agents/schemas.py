"""Bodies of the agent endpoints, exactly as docs/agent-protocol.md describes them."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from app.agents.access_log_schemas import AccessLog
from app.agents.labels import Labels
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.types import INT4_MAX, BoundedJson, Text, to_utc_in_range
from app.metrics.settings import get_retention

MAX_SAMPLES_PER_PUSH = 500
# The agent merges the seq ranges it drops into few records; more than this is a broken agent.
MAX_GAPS_PER_PUSH = 100
BIGINT_MAX = 2**63 - 1

Counter = Annotated[int, Field(strict=True, ge=0, le=BIGINT_MAX)]
# Connection counts of one moment (stub_status Active/Reading/Writing/Waiting): 32-bit columns.
Gauge = Annotated[int, Field(strict=True, ge=0, le=INT4_MAX)]
Percent = Annotated[float, Field(strict=True, ge=0, le=100, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
ShortText = Annotated[str, Field(strict=True, max_length=1024)]
Sha256Hex = Annotated[str, Field(strict=True, pattern=r"^[0-9a-f]{64}$")]
AgentId = Annotated[
    str, Field(strict=True, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
]
Hostname = Annotated[
    str, Field(strict=True, min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
]
AgentVersion = Annotated[
    str, Field(strict=True, min_length=1, max_length=32, pattern=r"^[A-Za-z0-9][A-Za-z0-9.+_-]*$")
]


def _require_rfc3339_string(value: object) -> object:
    """Refuse numbers: pydantic would read them as Unix times, the protocol says RFC 3339."""
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 string such as 2026-11-21T10:00:00Z")
    return value


def sample_time_window(now: datetime) -> tuple[datetime, datetime]:
    """The oldest and newest sample time accepted at `now`.

    Older than the raw retention, a sample would be deleted by the next retention run (and
    the agent's spool never holds that much); further ahead than the allowed clock skew, it is
    a broken host clock that would draw points in the future."""
    settings = get_settings()
    return now - get_retention().raw, now + timedelta(seconds=settings.sample_max_future_s)


def _check_window(value: datetime, oldest: datetime, newest: datetime, kept: str) -> datetime:
    """value, or ValueError when it lies outside [oldest, newest] (`kept`: why oldest)."""
    try:
        too_old, too_new = value < oldest, value > newest
    except OverflowError:
        too_old, too_new = value.year < oldest.year, value.year > newest.year
    if too_old:
        raise ValueError(f"is older than {kept} ({oldest.isoformat()}); check the host's clock")
    if too_new:
        ahead = get_settings().sample_max_future_s
        raise ValueError(f"is more than {ahead} s in the future; check the host's clock")
    return value


def _within_window(value: datetime) -> datetime:
    """Refuse timestamps outside sample_time_window (e.g. 1970 from a clock step, or 9999)."""
    oldest, newest = sample_time_window(utcnow())
    return _check_window(value, oldest, newest, "the raw retention")


def _within_gap_window(value: datetime) -> datetime:
    """Refuse gap times in the future or older than the charts go back (hourly retention)."""
    now = utcnow()
    newest = sample_time_window(now)[1]
    return _check_window(value, now - get_retention().hour, newest, "the hourly retention")


SampleTime = Annotated[
    AwareDatetime,
    BeforeValidator(_require_rfc3339_string),
    AfterValidator(_within_window),
    AfterValidator(to_utc_in_range),
]
GapTime = Annotated[
    AwareDatetime,
    BeforeValidator(_require_rfc3339_string),
    AfterValidator(_within_gap_window),
    AfterValidator(to_utc_in_range),
]


class _AgentModel(BaseModel):
    """Base of the protocol models: unknown fields are ignored so newer agents still push."""

    model_config = ConfigDict(extra="ignore")


class NginxState(_AgentModel):
    """Whether the nginx master runs, and its process layout."""

    up: bool = Field(strict=True)
    error: ShortText | None = None
    master_pid: Annotated[int, Field(strict=True, ge=1)] | None = None
    workers: Annotated[int, Field(strict=True, ge=0, le=65535)] | None = None


STUB_STATUS_COUNTERS = ("active", "reading", "writing", "waiting", "accepts", "handled", "requests")


class StubStatus(_AgentModel):
    """One reading of the stub_status page; counters are absent when it could not be read."""

    available: bool = Field(strict=True)
    url: Annotated[str, Field(strict=True, max_length=2048)] | None = None
    error: ShortText | None = None
    active: Gauge | None = None
    reading: Gauge | None = None
    writing: Gauge | None = None
    waiting: Gauge | None = None
    accepts: Counter | None = None
    handled: Counter | None = None
    requests: Counter | None = None

    @model_validator(mode="after")
    def _counters_present_when_available(self) -> StubStatus:
        """An available stub_status must carry every counter, or rates would be guesses."""
        if self.available:
            missing = [name for name in STUB_STATUS_COUNTERS if getattr(self, name) is None]
            if missing:
                raise ValueError(f"available is true but {', '.join(missing)} missing")
        return self


class CpuStats(_AgentModel):
    """CPU use over the last interval."""

    total_pct: Percent | None = None
    per_core_pct: Annotated[list[Percent], Field(max_length=4096)] | None = None
    iowait_pct: Percent | None = None


class MemoryStats(_AgentModel):
    """Memory figures from /proc/meminfo."""

    total_bytes: Counter | None = None
    available_bytes: Counter | None = None
    used_bytes: Counter | None = None
    swap_used_bytes: Counter | None = None


class LoadStats(_AgentModel):
    """Load averages."""

    load1: NonNegativeFloat | None = None
    load5: NonNegativeFloat | None = None
    load15: NonNegativeFloat | None = None


class NetworkStats(_AgentModel):
    """Cumulative interface byte counters."""

    rx_bytes: Counter | None = None
    tx_bytes: Counter | None = None


class NetstatStats(_AgentModel):
    """Cumulative TcpExt counters of the listen queues."""

    listen_overflows: Counter | None = None
    listen_drops: Counter | None = None


TcpStateName = Annotated[str, Field(strict=True, max_length=32, pattern=r"^[A-Z0-9_]+$")]


class SystemStats(_AgentModel):
    """The host's /proc figures."""

    cpu: CpuStats | None = None
    memory: MemoryStats | None = None
    load: LoadStats | None = None
    network: NetworkStats | None = None
    tcp_states: Annotated[dict[TcpStateName, Counter], Field(max_length=32)] | None = None
    netstat: NetstatStats | None = None


class NginxProcesses(_AgentModel):
    """File descriptors, memory and CPU of the nginx master and workers."""

    fds_open: Counter | None = None
    fds_limit: Counter | None = None
    rss_bytes: Counter | None = None
    # Percent of one core, summed over master and children, so it may exceed 100.
    cpu_pct: NonNegativeFloat | None = None
    # The same for the workers alone (absent from older agents).
    worker_cpu_pct: NonNegativeFloat | None = None
    worker_fds_max: Counter | None = None
    worker_fds_limit: Counter | None = None


class ErrorLogFile(_AgentModel):
    """One error_log target of the config and whether the agent can read it."""

    path: Annotated[str, Field(strict=True, max_length=4096)]
    readable: bool = Field(strict=True)
    error: ShortText | None = None


# Lines of one interval: stored in 32-bit columns, far beyond what nginx writes in one.
LineCount = Annotated[int, Field(strict=True, ge=0, le=INT4_MAX)]


class ErrorLogLevels(_AgentModel):
    """Lines per nginx log level read in the interval."""

    emerg: LineCount = 0
    alert: LineCount = 0
    crit: LineCount = 0
    error: LineCount = 0
    warn: LineCount = 0
    notice: LineCount = 0
    info: LineCount = 0


class ErrorLogMessages(_AgentModel):
    """Lines of the known messages that explain dropped connections (docs/alerts.md, 1)."""

    worker_connections_not_enough: LineCount = 0
    worker_connections_reusing: LineCount = 0
    too_many_open_files: LineCount = 0


class ErrorLog(_AgentModel):
    """Counts of the error-log lines read in the interval; never the lines themselves."""

    files: Annotated[list[ErrorLogFile], Field(max_length=256)] = Field(default_factory=list)
    lines: LineCount = 0
    levels: ErrorLogLevels = Field(default_factory=ErrorLogLevels)
    messages: ErrorLogMessages = Field(default_factory=ErrorLogMessages)

    def severe_lines(self) -> int:
        """Lines at alert, crit or emerg level: nginx's own "something is broken"."""
        levels = self.levels
        return min(levels.emerg + levels.alert + levels.crit, INT4_MAX)


class Sample(_AgentModel):
    """One collection of every metric at one moment."""

    seq: Counter
    ts: SampleTime
    nginx: NginxState
    stub_status: StubStatus
    system: SystemStats | None = None
    nginx_processes: NginxProcesses | None = None
    # Aggregates of the access logs read during the interval (docs/access-log.md, section 2).
    access_log: AccessLog | None = None
    # Counts of the error logs read during the interval (docs/alerts.md, section 1).
    error_log: ErrorLog | None = None


class TlsCertificate(_AgentModel):
    """Subject and validity of the leaf certificate of one `ssl_certificate` file."""

    path: Annotated[str, Field(strict=True, max_length=4096)]
    subject: Annotated[str, Field(strict=True, max_length=2048)] | None = None
    issuer: Annotated[str, Field(strict=True, max_length=2048)] | None = None
    not_before: Annotated[str, Field(strict=True, max_length=64)] | None = None
    not_after: Annotated[str, Field(strict=True, max_length=64)] | None = None
    dns_names: Annotated[list[ShortText], Field(max_length=1000)] = Field(default_factory=list)
    error: ShortText | None = None


class HostFacts(_AgentModel):
    """Slow-changing facts about the host and its nginx build; extra keys are kept as sent."""

    model_config = ConfigDict(extra="allow")
    # Facts beyond the known ones are free-form JSON, bounded so that storing them cannot fail.
    __pydantic_extra__: dict[str, BoundedJson] = Field(init=False)

    nginx_version: Annotated[str, Field(strict=True, max_length=64)] | None = None
    nginx_configure_args: Annotated[str, Field(strict=True, max_length=16384)] | None = None
    nginx_modules: Annotated[list[ShortText], Field(max_length=1000)] | None = None
    nginx_openssl_version: Annotated[str, Field(strict=True, max_length=64)] | None = None
    cpu_count: Annotated[int, Field(strict=True, ge=1, le=65535)] | None = None
    mem_total_bytes: Counter | None = None
    kernel: Annotated[str, Field(strict=True, max_length=256)] | None = None
    somaxconn: Counter | None = None
    os: Annotated[str, Field(strict=True, max_length=256)] | None = None
    # The agent's `allow_apply`: whether it applies approved changes (docs/changes.md).
    apply_allowed: Annotated[bool, Field(strict=True)] | None = None
    tls_certificates: Annotated[list[TlsCertificate], Field(max_length=500)] | None = None


class ConfigDump(_AgentModel):
    """The redacted `nginx -T` output and the SHA-256 the agent computed over it."""

    hash: Sha256Hex
    dump: str = Field(strict=True, min_length=1)

    @model_validator(mode="after")
    def _hash_matches_dump(self) -> ConfigDump:
        """The stored hash decides when the agent resends, so it must be the dump's real hash."""
        actual = hashlib.sha256(self.dump.encode("utf-8")).hexdigest()
        if actual != self.hash:
            raise ValueError(f"hash does not match the SHA-256 of dump ({actual})")
        return self


GapReason = Annotated[str, Field(strict=True, min_length=1, max_length=32, pattern=r"^[a-z_]+$")]


class PushedGap(_AgentModel):
    """Samples the agent collected but dropped undelivered (e.g. its spool overflowed)."""

    from_seq: Counter
    to_seq: Counter
    from_ts: GapTime
    to_ts: GapTime
    reason: GapReason

    @model_validator(mode="after")
    def _ranges_in_order(self) -> PushedGap:
        """A range whose end comes before its start cannot be shown."""
        if self.to_seq < self.from_seq:
            raise ValueError("to_seq must not be less than from_seq")
        if self.to_ts < self.from_ts:
            raise ValueError("to_ts must not be before from_ts")
        return self


MAX_ACTION_REPORTS_PER_PUSH = 200
StepName = Annotated[str, Field(strict=True, pattern=r"^[a-z_]{1,32}$")]


class ActionReport(_AgentModel):
    """One step of an action (a change being applied) as the agent reports it."""

    action_id: Annotated[int, Field(strict=True, ge=1, le=2**31 - 1)]
    seq: Annotated[int, Field(strict=True, ge=1, le=100_000)]
    step: StepName
    status: Annotated[str, Field(strict=True, pattern=r"^[a-z_]{1,16}$")]
    at: GapTime
    message: Annotated[str, Field(strict=True, max_length=8192)] = ""
    detail: dict[str, BoundedJson] = Field(default_factory=dict)


class PushEnvelope(_AgentModel):
    """Body of POST /agent/push, with each sample and gap still unchecked.

    Samples and gaps are validated one by one afterwards, so that one bad sample (a clock
    step, a broken counter) is refused alone instead of taking the whole batch with it."""

    agent_id: AgentId
    agent_version: AgentVersion | None = None
    hostname: Hostname
    labels: Labels | None = None
    facts: HostFacts | None = None
    config: ConfigDump | None = None
    config_hash: Sha256Hex | None = None
    samples: Annotated[list[Any], Field(min_length=1, max_length=MAX_SAMPLES_PER_PUSH)]
    gaps: Annotated[list[Any], Field(max_length=MAX_GAPS_PER_PUSH)] = Field(default_factory=list)
    action_reports: Annotated[list[Any], Field(max_length=MAX_ACTION_REPORTS_PER_PUSH)] = Field(
        default_factory=list
    )


class PushBody(PushEnvelope):
    """The push body as the OpenAPI document describes it: every sample and gap checked.

    Documentation only: the route reads PushEnvelope, then each sample and gap on its own."""

    samples: Annotated[list[Sample], Field(min_length=1, max_length=MAX_SAMPLES_PER_PUSH)]
    gaps: Annotated[list[PushedGap], Field(max_length=MAX_GAPS_PER_PUSH)] = Field(
        default_factory=list
    )
    action_reports: Annotated[list[ActionReport], Field(max_length=MAX_ACTION_REPORTS_PER_PUSH)] = (
        Field(default_factory=list)
    )


class Rejection(BaseModel):
    """One sample (or gap record) refused alone; the rest of its push was stored."""

    seq: int | None = Field(description="seq of the refused sample; null for a gap or no seq")
    field: str = Field(description="the first invalid field, e.g. samples[3].ts")
    reason: str = Field(description="what is wrong, naming each invalid field")


class PushPayload(BaseModel):
    """A push after validation: the samples and gaps that passed, and those that did not."""

    agent_id: str
    agent_version: str | None
    hostname: str
    labels: dict[str, str] | None
    facts: HostFacts | None
    config: ConfigDump | None
    config_hash: str | None
    # Valid samples, oldest first with increasing seq.
    samples: list[Sample]
    gaps: list[PushedGap]
    action_reports: list[ActionReport]
    rejected: list[Rejection]


class PushReply(BaseModel):
    """Reply to an accepted push: what was stored, what was refused, and pending work."""

    accepted: int
    duplicates: int
    rejected: list[Rejection] = Field(
        description="samples and gap records refused alone; the agent drops them and logs why"
    )
    gaps: int = Field(description="gap records stored (or already known) from this push")
    config_wanted: bool
    push_interval_s: int
    next_push_s: int | None = Field(
        default=None,
        description="while a change is in flight on the host (proposed by a person in the "
        "last 15 minutes, approved, sent, applying) and its agent may apply: push again after "
        "this many seconds instead of waiting for the interval; null otherwise",
    )
    actions: list[dict[str, Any]] = Field(
        description="pending work for the host: `apply` actions of approved changes "
        "(docs/changes.md), repeated until the agent reports a step of each"
    )


class EnrollRequest(_AgentModel):
    """Body of POST /agent/enroll."""

    enrollment_token: Annotated[Text, Field(strict=True, min_length=1, max_length=256)]
    agent_id: AgentId
    hostname: Hostname
    labels: Labels = Field(default_factory=dict)


class EnrollReply(BaseModel):
    """The host token, shown this once."""

    host_id: int
    host_token: str
    push_interval_s: int


class PingReply(BaseModel):
    """Reply of POST /agent/ping."""

    ok: bool
    host_id: int
