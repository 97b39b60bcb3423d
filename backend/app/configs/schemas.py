"""A host's config, its latest analysis and its score history as the API shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.findings.schemas import SeverityName


class SnapshotRead(BaseModel):
    """The config snapshot shown: which dump and when it arrived."""

    id: int
    hash: str
    received_at: datetime


class ConfigFileRead(BaseModel):
    """One file of the dump, redacted text as the agent sent it."""

    path: str
    text: str
    line_count: int


class FindingCounts(BaseModel):
    """Findings by severity (muted left out)."""

    error: int
    warning: int
    info: int


class FindingRead(BaseModel):
    """One finding at its file and line, with evidence, fix and whether it is muted."""

    id: int
    key: str
    rule: str
    severity: SeverityName
    category: str
    file: str
    line: int
    place: str = Field(
        description="block path of the directive, e.g. http/server[example.com]/location[/]"
    )
    directive: str = Field(description="the directive the finding is about, last step of the path")
    message: str
    evidence: dict[str, Any]
    fix: dict[str, Any] | None
    doc_url: str
    muted: bool
    ack_id: int | None


class AnalysisRead(BaseModel):
    """The latest analysis of the snapshot; score is null when the engine failed."""

    id: int
    analyzed_at: datetime
    status: Literal["ok", "failed"]
    score: int | None
    categories: dict[str, int]
    counts: FindingCounts
    error: str | None
    findings: list[FindingRead]


class HostConfigRead(BaseModel):
    """GET /hosts/{id}/config: files of the current snapshot and their latest analysis."""

    host_id: int
    snapshot: SnapshotRead | None
    files: list[ConfigFileRead]
    analysis: AnalysisRead | None


class ScorePoint(BaseModel):
    """One stored analysis on the score chart."""

    ts: datetime
    score: int
    errors: int
    warnings: int
    infos: int


class ScoreHistory(BaseModel):
    """GET /hosts/{id}/scores."""

    points: list[ScorePoint]
