"""What a rule reports: a finding with its evidence and a machine-applicable fix."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

FixAction = Literal["set", "add", "remove", "replace", "none"]


class Severity(StrEnum):
    """How bad a finding is: error (nginx -t fails or data leaks), warning, info."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Category(StrEnum):
    """Catalogue section a rule belongs to (one score per category)."""

    VALIDITY = "validity"
    WORKERS = "workers"
    KEEPALIVE = "keepalive"
    TRANSFER = "transfer"
    COMPRESSION = "compression"
    TLS = "tls"
    CACHE = "cache"
    BUFFERS = "buffers"
    LOGGING = "logging"
    SECURITY = "security"


@dataclass(slots=True, frozen=True)
class Fix:
    """The change the diff generator applies.

    `file`/`line` anchor it: the directive to replace or remove, or the block to add into.
    `context` names that block for people, e.g. 'http', 'server', 'location /static/'.
    """

    action: FixAction
    directive: str
    args: list[str]
    file: str
    line: int
    context: str
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "action": self.action,
            "directive": self.directive,
            "args": list(self.args),
            "file": self.file,
            "line": self.line,
            "context": self.context,
            "note": self.note,
        }


@dataclass(slots=True, frozen=True)
class Finding:
    """One problem at one place, with the figures that show it and the fix."""

    rule: str
    severity: Severity
    category: Category
    file: str
    line: int
    message: str
    evidence: dict[str, object] = field(default_factory=dict)
    fix: Fix | None = None
    doc_url: str = ""

    @property
    def key(self) -> str:
        """Stable identity used to mute one finding: rule, file and line."""
        return f"{self.rule}@{self.file}:{self.line}"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "rule": self.rule,
            "severity": str(self.severity),
            "category": str(self.category),
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "evidence": dict(self.evidence),
            "fix": self.fix.to_dict() if self.fix is not None else None,
            "doc_url": self.doc_url,
            "key": self.key,
        }
