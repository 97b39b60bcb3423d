"""Changes, their proposals and rollouts as the API shows them (docs/changes.md, section 4)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.core.types import BoundedJson, Text, TrimmedText

FindingKey = Annotated[Text, StringConstraints(min_length=1, max_length=1200)]
EditId = Annotated[str, StringConstraints(pattern=r"^e[0-9]{1,4}$")]
# One argument of a directive: the engine refuses `;`, braces and line breaks with a reason.
Argument = Annotated[Text, StringConstraints(min_length=1, max_length=1024)]
Comment = Annotated[TrimmedText, StringConstraints(max_length=2000)]
RuleId = Annotated[TrimmedText, StringConstraints(min_length=1, max_length=64)]
LabelValue = Annotated[Text, StringConstraints(min_length=1, max_length=256)]


class ProposalRequest(BaseModel):
    """Which findings of the host's latest analysis to fix together, and adjusted values."""

    model_config = ConfigDict(extra="forbid")

    finding_keys: Annotated[list[FindingKey], Field(min_length=1, max_length=50)]
    overrides: Annotated[
        dict[EditId, Annotated[list[Argument], Field(min_length=1, max_length=20)]],
        Field(max_length=50, description="edit id → the arguments the operator chose"),
    ] = Field(default_factory=dict)


class ChangeCreate(ProposalRequest):
    """Body of POST /hosts/{id}/changes."""

    comment: Comment = ""


class CommentBody(BaseModel):
    """Body of approve, reject and rollback: an optional comment for the trail."""

    model_config = ConfigDict(extra="forbid")

    comment: Comment = ""


class PatchOp(BaseModel):
    """Replace `count` lines from line `start` (1-based) with `new`; `old` is what they were."""

    start: int
    count: int
    old: list[str]
    new: list[str]


class FilePatch(BaseModel):
    """The ops of one file, with the hashes of its text before and after."""

    path: str
    base_sha256: str
    new_sha256: str
    ops: list[PatchOp]


class ProposalEdit(BaseModel):
    """One edit of a proposal; `adjustable` when the operator may change its arguments."""

    id: str
    key: str
    action: str
    directive: str
    args: list[str]
    file: str
    line: int
    context: str
    adjustable: bool


class Proposal(BaseModel):
    """The engine's checked patch for some findings (nothing stored)."""

    ok: bool
    reason: str
    keys: list[str]
    resolved: list[str]
    introduced: list[dict[str, Any]]
    edits: list[ProposalEdit]
    files: list[FilePatch]
    diff: str
    score_before: int | None
    score_after: int | None
    snapshot_id: int


class ChangeRead(BaseModel):
    """A change and where it is."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    host_id: int
    hostname: str
    kind: Literal["fix", "rollback"]
    reverts_change_id: int | None
    rollout_id: int | None
    wave: int | None
    status: str
    step: str | None
    finding_keys: list[str]
    rules: list[str]
    title: str
    diff: str
    edits: list[dict[str, Any]]
    base_snapshot_id: int | None
    created_by: str
    created_at: datetime
    approved_by: str | None
    approved_at: datetime | None
    sent_at: datetime | None
    finished_at: datetime | None
    comment: str
    outcome_message: str | None
    failed_step: str | None
    score_before: int | None
    score_after: int | None
    impact: dict[str, Any] | None


class ChangeEventRead(BaseModel):
    """One transition or agent step of a change."""

    model_config = ConfigDict(from_attributes=True)

    at: datetime
    status: str
    step: str | None
    step_status: str | None
    actor: str
    message: str
    detail: dict[str, Any]


class ChangeDetail(ChangeRead):
    """A change with its whole trail."""

    events: list[ChangeEventRead]


class ChangePage(BaseModel):
    """One page of changes, newest first."""

    items: list[ChangeRead]
    total: int


GateFigure = Literal["waiting_share", "worker_cpu_pct", "rss_bytes"]


class AutoRollback(BaseModel):
    """Metric gate of a rollout: roll a host back when a check fails `checks` times in a row."""

    model_config = ConfigDict(extra="forbid")

    # 5xx share and p99 latency join the gate once access-log figures exist (issue 9).
    drops: bool = Field(default=True, description="dropped connections appearing fail a check")
    max_rise_pct: dict[GateFigure, Annotated[float, Field(gt=0, le=10_000)]] = Field(
        default_factory=dict,
        description="a figure whose mean over a check rises more than this percentage above its "
        "mean in the window before the apply fails the check",
    )
    checks: Annotated[int, Field(ge=1, le=20)] = Field(
        default=3, description="consecutive failed checks (one every 30 s) that roll a host back"
    )
    watch_s: Annotated[int, Field(ge=30, le=86_400)] = Field(
        default=300,
        description="how long after each host's apply the gate watches before the next wave",
    )


class RolloutCreate(BaseModel):
    """Body of POST /rollouts: fix one rule on every matching host, in waves."""

    model_config = ConfigDict(extra="forbid")

    rule: RuleId
    labels: Annotated[
        dict[
            Annotated[Text, StringConstraints(min_length=1, max_length=64)],
            Annotated[list[LabelValue], Field(min_length=1, max_length=50)],
        ],
        Field(max_length=20),
    ] = Field(default_factory=dict)
    canary: Annotated[int, Field(ge=1, le=10)] = 1
    batch_size: Annotated[int, Field(ge=1, le=1000)] = 5
    auto_rollback: AutoRollback | None = None
    comment: Comment = ""


class RolloutHost(BaseModel):
    """A host of a rollout: its wave and its change."""

    host_id: int
    hostname: str
    wave: int | None
    change_id: int | None
    status: str
    reason: str | None = None


class RolloutRead(BaseModel):
    """A rollout with per-host progress."""

    id: int
    rule: str
    labels: dict[str, list[str]]
    status: str
    stop_reason: str | None
    canary: int
    batch_size: int
    auto_rollback: dict[str, BoundedJson] | None
    comment: str
    created_by: str
    created_at: datetime
    finished_at: datetime | None
    hosts: list[RolloutHost]
