"""What a rule reports: a finding with its evidence and a machine-applicable fix."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import StrEnum

from nginx_fleet_analyzer.record import Record, replace

TYPE_CHECKING = False  # not typing's: see record.py
if TYPE_CHECKING:
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


class Fix(Record):
    """The change the diff generator applies: this edit and the companion edits in `also`.

    `file`/`line` anchor it: the directive to replace or remove, or the block to add into.
    `context` names that block for people, e.g. 'http', 'server', 'location /static/'.
    `also` holds the edits the fix needs besides this one (`tcp_nopush on` with `sendfile on`,
    the add half of a move), each anchored on its own, possibly in another file.
    """

    __slots__ = ("action", "also", "args", "context", "directive", "file", "line", "note")

    action: FixAction
    directive: str
    args: list[str]
    file: str
    line: int
    context: str
    note: str
    also: tuple[Fix, ...]

    def __init__(
        self,
        action: FixAction,
        directive: str,
        args: list[str],
        file: str,
        line: int,
        context: str,
        note: str = "",
        also: tuple[Fix, ...] = (),
    ) -> None:
        self.action = action
        self.directive = directive
        self.args = args
        self.file = file
        self.line = line
        self.context = context
        self.note = note
        self.also = also

    def edits(self) -> list[Fix]:
        """Every edit of the fix in order: this one, then its companions."""
        return [replace(self, also=()), *self.also] if self.also else [self]

    def _edit_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "directive": self.directive,
            "args": list(self.args),
            "file": self.file,
            "line": self.line,
            "context": self.context,
            "note": self.note,
        }

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form: the first edit's fields (for older readers) and every edit."""
        return {**self._edit_dict(), "edits": [edit._edit_dict() for edit in self.edits()]}


class Finding(Record):
    """One problem at one place, with the figures that show it and the fix.

    `place` is the block path of the directive the finding is about and `directive` that
    directive as the path's last step (see anchors.py); with the rule and the file they make
    the key that mutes it, which unlike `line` survives edits elsewhere in the file.
    `ordinal` tells apart findings of one rule about one directive (1, 2, ... in report order).
    """

    __slots__ = (
        "category",
        "directive",
        "doc_url",
        "evidence",
        "file",
        "fix",
        "line",
        "message",
        "ordinal",
        "place",
        "rule",
        "severity",
    )

    rule: str
    severity: Severity
    category: Category
    file: str
    line: int
    message: str
    evidence: dict[str, object]
    fix: Fix | None
    doc_url: str
    place: str
    directive: str
    ordinal: int

    def __init__(
        self,
        rule: str,
        severity: Severity,
        category: Category,
        file: str,
        line: int,
        message: str,
        evidence: dict[str, object] | None = None,
        fix: Fix | None = None,
        doc_url: str = "",
        place: str = "",
        directive: str = "",
        ordinal: int = 1,
    ) -> None:
        self.rule = rule
        self.severity = severity
        self.category = category
        self.file = file
        self.line = line
        self.message = message
        self.evidence = {} if evidence is None else evidence
        self.fix = fix
        self.doc_url = doc_url
        self.place = place
        self.directive = directive
        self.ordinal = ordinal

    @property
    def key(self) -> str:
        """Identity used to mute one finding: rule, file, block path and directive (no line).

        E.g. `S-protocols@/etc/nginx/nginx.conf:http/server[example.com]/ssl_protocols`;
        `~2` is appended to the second finding of a rule about one directive. A finding placed
        by file alone (a syntax error) is `rule@file`.
        """
        anchor = "/".join(part for part in (self.place, self.directive) if part)
        key = f"{self.rule}@{self.file}:{anchor}" if anchor else f"{self.rule}@{self.file}"
        return f"{key}~{self.ordinal}" if self.ordinal > 1 else key

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
            "place": self.place,
            "directive": self.directive,
            "key": self.key,
        }


def number_alike(findings: Iterable[Finding]) -> list[Finding]:
    """The findings with ordinals that make their keys unique, counted in the given order."""
    seen: Counter[str] = Counter()
    numbered = []
    for finding in findings:
        base = replace(finding, ordinal=1) if finding.ordinal != 1 else finding
        seen[base.key] += 1
        count = seen[base.key]
        numbered.append(replace(base, ordinal=count) if count > 1 else base)
    return numbered
