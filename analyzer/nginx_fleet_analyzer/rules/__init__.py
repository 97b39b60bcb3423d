"""Rule registry: each catalogue rule is a pure function of a RuleContext yielding findings.

A rule module (one per catalogue section) decorates its functions with `@rule(...)`; every
module of this package is imported by `all_rules()`, so adding a rule touches one file.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from nginx_fleet_analyzer.anchors import block_path, segment
from nginx_fleet_analyzer.directives import doc_url
from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow, Version
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import Record


class RuleContext(Record):
    """Everything a rule may look at."""

    __slots__ = ("config", "facts", "metrics")

    config: ParsedConfig
    facts: HostFacts | None
    metrics: MetricsWindow | None

    def __init__(
        self,
        config: ParsedConfig,
        facts: HostFacts | None = None,
        metrics: MetricsWindow | None = None,
    ) -> None:
        self.config = config
        self.facts = facts
        self.metrics = metrics

    @property
    def nginx_version(self) -> Version | None:
        """The reported nginx version, or None."""
        return self.facts.nginx_version if self.facts is not None else None


RuleCheck = Callable[[RuleContext], Iterable[Finding]]


class Rule(Record):
    """A registered rule: catalogue id, category, default severity and its check."""

    __slots__ = ("category", "check", "id", "severity")

    id: str
    category: Category
    severity: Severity
    check: RuleCheck

    def __init__(self, id: str, category: Category, severity: Severity, check: RuleCheck) -> None:
        self.id = id
        self.category = category
        self.severity = severity
        self.check = check

    def finding(
        self,
        *,
        at: Directive | None = None,
        file: str | None = None,
        line: int | None = None,
        message: str,
        evidence: dict[str, object] | None = None,
        fix: Fix | None = None,
        directive: str | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of this rule about `at` (or at file/line), linking `directive`'s docs.

        `at` is the directive (or block) where the fix belongs: its block path and name make
        the finding's key, so a mute survives edits elsewhere."""
        return Finding(
            rule=self.id,
            severity=severity or self.severity,
            category=self.category,
            file=file if file is not None else (at.file if at is not None else ""),
            line=line if line is not None else (at.line if at is not None else 0),
            message=message,
            evidence=evidence or {},
            fix=fix,
            doc_url=doc_url(directive or (at.name if at is not None else "")),
            place=block_path(at) if at is not None else "",
            directive=segment(at) if at is not None else "",
        )


_REGISTRY: dict[str, Rule] = {}


def rule(id: str, category: Category, severity: Severity) -> Callable[[RuleCheck], RuleCheck]:
    """Register a check under its catalogue id (ids are unique)."""

    def register(check: RuleCheck) -> RuleCheck:
        if id in _REGISTRY and _REGISTRY[id].check is not check:
            raise ValueError(f"rule {id} is registered twice")
        _REGISTRY[id] = Rule(id=id, category=category, severity=severity, check=check)
        return check

    return register


def get_rule(id: str) -> Rule:
    """The registered rule with this id (KeyError if none)."""
    _load_rule_modules()
    return _REGISTRY[id]


def all_rules() -> list[Rule]:
    """Every registered rule, sorted by id."""
    _load_rule_modules()
    return sorted(_REGISTRY.values(), key=lambda r: r.id)


# The modules that register rules, named rather than discovered: pkgutil's scan and import cost
# every CLI run a few ms (a test checks the list against the package's files).
RULE_MODULES = (
    "buffers",
    "cache",
    "compression",
    "keepalive",
    "logging",
    "security",
    "security_access",
    "security_headers",
    "security_injection",
    "security_origins",
    "tls",
    "transfer",
    "validity",
    "workers",
)
_loaded = False


def _load_rule_modules() -> None:
    global _loaded
    if _loaded:
        return
    for name in RULE_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    _loaded = True


__all__ = [
    "Category",
    "Finding",
    "Fix",
    "Rule",
    "RuleCheck",
    "RuleContext",
    "Severity",
    "all_rules",
    "doc_url",
    "get_rule",
    "rule",
]
