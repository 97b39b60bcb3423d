"""Alert rules, incidents and silences as the API shows and takes them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from app.alerts.signals import SIGNALS
from app.core.types import DbId, Text, Timestamp, TrimmedText

Severity = Literal["critical", "warning", "info"]
Op = Literal[">", ">=", "<", "<="]
NoData = Literal["ok", "keep", "alerting", "nodata"]
LabelName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$")
]
LabelValue = Annotated[Text, StringConstraints(max_length=253)]
RuleKey = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9-]*$")
]
# A day is the longest a rule looks back, a week the longest repeat.
WindowSeconds = Annotated[int, Field(ge=10, le=86_400)]
DelaySeconds = Annotated[int, Field(ge=0, le=86_400)]
RepeatSeconds = Annotated[int, Field(ge=60, le=7 * 86_400)]
MAX_CHANNELS_PER_RULE = 20


class RuleWrite(BaseModel):
    """Body of POST/PUT /alerts/rules and of /alerts/rules/preview."""

    model_config = ConfigDict(extra="forbid")

    key: RuleKey
    name: Annotated[TrimmedText, StringConstraints(min_length=1, max_length=200)]
    description: Annotated[Text, StringConstraints(max_length=2000)] = ""
    enabled: bool = True
    signal: str = Field(description="a signal name from GET /alerts/signals")
    op: Op
    threshold: float = Field(allow_inf_nan=False)
    clear_threshold: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="once firing, clear only past this value (hysteresis); null: the threshold",
    )
    min_requests: Annotated[int, Field(ge=1, le=10**9)] | None = Field(
        default=None, description="rate-style signals: fewer requests in the window judge fine"
    )
    window_s: WindowSeconds
    for_s: DelaySeconds = 0
    keep_firing_s: DelaySeconds = 0
    repeat_interval_s: RepeatSeconds | None = None
    severity: Severity
    no_data: NoData = "ok"
    scope: Annotated[dict[LabelName, LabelValue], Field(max_length=20)] = Field(
        default_factory=dict
    )
    channel_ids: Annotated[list[DbId], Field(max_length=MAX_CHANNELS_PER_RULE)] = Field(
        default_factory=list
    )

    @field_validator("signal")
    @classmethod
    def _known_signal(cls, value: str) -> str:
        if value not in SIGNALS:
            raise ValueError(f"unknown signal; one of: {', '.join(SIGNALS)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> RuleWrite:
        """A clear threshold past the firing one would make the rule flap, so it is refused;
        a request minimum on a signal without a request volume would never apply."""
        clear = self.clear_threshold
        if clear is not None and self.op in (">", ">=") and clear > self.threshold:
            raise ValueError("clear_threshold must not be above threshold for > and >= rules")
        if clear is not None and self.op in ("<", "<=") and clear < self.threshold:
            raise ValueError("clear_threshold must not be below threshold for < and <= rules")
        if self.min_requests is not None and not SIGNALS[self.signal].needs_requests:
            raise ValueError(
                f"min_requests only applies to request-rate signals, not {self.signal}"
            )
        return self


class RuleRead(BaseModel):
    """A rule."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    key: str
    name: str
    description: str
    enabled: bool
    signal: str
    op: str
    threshold: float
    clear_threshold: float | None
    min_requests: int | None
    window_s: int
    for_s: int
    keep_firing_s: int
    repeat_interval_s: int | None
    severity: str
    no_data: str
    scope: dict[str, str]
    channel_ids: list[int]
    last_error: str | None
    firing: int = Field(default=0, description="incidents of this rule open now")


class SignalRead(BaseModel):
    """A signal rules can watch."""

    name: str
    title: str
    unit: str
    kind: str
    default_op: str
    needs_requests: bool
    fixed_window_s: int | None


class PreviewHost(BaseModel):
    """One host in the scope of a previewed rule."""

    host_id: int
    hostname: str
    labels: dict[str, str]
    value: float | None
    matches: bool
    no_data: bool


class PreviewRead(BaseModel):
    """Which hosts a rule would match now (hysteresis and `for` left out)."""

    evaluated: int
    matching: int
    hosts: list[PreviewHost]


class RulesFileResult(BaseModel):
    """What an import of the rules file did."""

    created: int
    updated: int


class Cause(BaseModel):
    """The likely cause of dropped connections."""

    code: Literal["worker_connections", "fd_limit", "listen_queue", "unknown"]
    title: str
    detail: str
    evidence: dict[str, Any]


class LinkedFinding(BaseModel):
    """The config finding that carries the fix."""

    rule: str
    finding_id: int
    url: str


class IncidentRead(BaseModel):
    """One firing of a rule on a host."""

    id: int
    rule_id: int
    rule_key: str
    rule_name: str
    severity: str
    host_id: int
    hostname: str
    labels: dict[str, str]
    state: str
    started_at: datetime
    fired_at: datetime
    resolved_at: datetime | None
    value: float | None
    peak_value: float | None
    unit: str
    summary: str
    cause: Cause | None
    finding: LinkedFinding | None
    silenced_by: int | None
    last_notified_at: datetime | None
    url: str


class IncidentPage(BaseModel):
    """A page of incidents, newest first."""

    items: list[IncidentRead]
    next_before_id: int | None = Field(
        description="pass as before_id for the next page; null: no more"
    )


class IncidentDetail(IncidentRead):
    """An incident with its notifications' deliveries."""

    deliveries: list[dict[str, Any]]


class AlertSummary(BaseModel):
    """Counts for the navigation badge."""

    firing: int
    pending: int
    by_severity: dict[str, int]


class AlertPeriod(BaseModel):
    """When one incident fired on a host, for marks on its charts."""

    incident_id: int
    rule_key: str
    rule_name: str
    severity: str
    start: datetime
    end: datetime | None


class Matcher(BaseModel):
    """One label condition of a silence."""

    model_config = ConfigDict(extra="forbid")

    label: LabelName
    op: Literal["=", "!="]
    value: LabelValue


class SilenceCreate(BaseModel):
    """Body of POST /alerts/silences."""

    model_config = ConfigDict(extra="forbid")

    rule_id: DbId | None = None
    matchers: Annotated[list[Matcher], Field(max_length=20)] = Field(default_factory=list)
    ends_at: Timestamp
    reason: Annotated[TrimmedText, StringConstraints(min_length=3, max_length=500)]

    @model_validator(mode="after")
    def _narrow(self) -> SilenceCreate:
        """A silence of everything would hide every alert of the fleet, so it is refused."""
        if self.rule_id is None and not self.matchers:
            raise ValueError("name a rule or at least one label matcher")
        return self


class SilenceRead(BaseModel):
    """A silence."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    rule_id: int | None
    rule_key: str | None = None
    matchers: list[dict[str, str]]
    starts_at: datetime
    ends_at: datetime
    reason: str
    created_by: str
    created_at: datetime
    active: bool = False
