"""Bodies of the agent endpoints, exactly as docs/agent-protocol.md describes them."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from app.agents.labels import Labels
from app.core.db import utcnow
from app.core.types import BoundedJson, Text, Timestamp

MAX_SAMPLES_PER_PUSH = 500
# Host clocks drift; beyond this a timestamp is a broken clock and would draw points in the future.
MAX_CLOCK_SKEW = timedelta(minutes=15)
BIGINT_MAX = 2**63 - 1

Counter = Annotated[int, Field(strict=True, ge=0, le=BIGINT_MAX)]
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


def _refuse_future(value: datetime) -> datetime:
    """Refuse timestamps from a clock that runs far ahead of ours."""
    if value - utcnow() > MAX_CLOCK_SKEW:
        raise ValueError(
            f"is more than {int(MAX_CLOCK_SKEW.total_seconds() // 60)} minutes in the future; "
            "check the host's clock"
        )
    return value


SampleTime = Annotated[
    Timestamp, BeforeValidator(_require_rfc3339_string), AfterValidator(_refuse_future)
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
    active: Counter | None = None
    reading: Counter | None = None
    writing: Counter | None = None
    waiting: Counter | None = None
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
    # Summed over the workers, so it may exceed 100 on a multi-core host.
    cpu_pct: NonNegativeFloat | None = None
    worker_fds_max: Counter | None = None
    worker_fds_limit: Counter | None = None


class Sample(_AgentModel):
    """One collection of every metric at one moment."""

    seq: Counter
    ts: SampleTime
    nginx: NginxState
    stub_status: StubStatus
    system: SystemStats | None = None
    nginx_processes: NginxProcesses | None = None


class HostFacts(_AgentModel):
    """Slow-changing facts about the host and its nginx build; extra keys are kept as sent."""

    model_config = ConfigDict(extra="allow")
    # Facts beyond the known ones are free-form JSON, bounded so that storing them cannot fail.
    __pydantic_extra__: dict[str, BoundedJson] = Field(init=False)

    nginx_version: Annotated[str, Field(strict=True, max_length=64)] | None = None
    nginx_configure_args: Annotated[str, Field(strict=True, max_length=16384)] | None = None
    nginx_modules: Annotated[list[ShortText], Field(max_length=1000)] | None = None
    cpu_count: Annotated[int, Field(strict=True, ge=1, le=65535)] | None = None
    mem_total_bytes: Counter | None = None
    kernel: Annotated[str, Field(strict=True, max_length=256)] | None = None
    somaxconn: Counter | None = None
    os: Annotated[str, Field(strict=True, max_length=256)] | None = None


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


class PushPayload(_AgentModel):
    """Body of POST /agent/push."""

    agent_id: AgentId
    agent_version: AgentVersion | None = None
    hostname: Hostname
    labels: Labels | None = None
    facts: HostFacts | None = None
    config: ConfigDump | None = None
    config_hash: Sha256Hex | None = None
    samples: Annotated[list[Sample], Field(min_length=1, max_length=MAX_SAMPLES_PER_PUSH)]

    @field_validator("samples")
    @classmethod
    def _oldest_first(cls, samples: list[Sample]) -> list[Sample]:
        """Samples come oldest first with increasing seq; anything else is a broken spool."""
        for index in range(1, len(samples)):
            if samples[index].seq <= samples[index - 1].seq:
                raise ValueError(
                    f"samples[{index}].seq must be greater than samples[{index - 1}].seq "
                    "(samples are sent oldest first)"
                )
        return samples


class PushReply(BaseModel):
    """Reply to an accepted push."""

    accepted: int
    duplicates: int
    config_wanted: bool
    push_interval_s: int
    actions: list[dict[str, Any]]


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
