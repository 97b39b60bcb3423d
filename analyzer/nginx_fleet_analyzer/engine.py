"""Run every rule over a parsed config and collect the findings and the score."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from nginx_fleet_analyzer import anchors
from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Finding, number_alike
from nginx_fleet_analyzer.model import ParsedConfig
from nginx_fleet_analyzer.rules import Rule, RuleContext, all_rules
from nginx_fleet_analyzer.scoring import Muted, Score, score

log = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class RuleFailure:
    """A rule that crashed: an internal error of ours, not a problem of the config."""

    rule: str
    error: str


@dataclass(slots=True, frozen=True)
class Report:
    """Findings sorted by file and line, the score, and any rule that failed."""

    findings: list[Finding]
    score: Score
    failures: list[RuleFailure] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        """Whether any finding is an error (nginx -t would fail or data leaks)."""
        return any(f.severity == "error" for f in self.findings)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form: score, categories, findings, failures."""
        return {
            "score": self.score.overall,
            "categories": dict(self.score.categories),
            "findings": [f.to_dict() for f in self.findings],
            "failures": [{"rule": f.rule, "error": f.error} for f in self.failures],
        }


def _run(check: Rule, context: RuleContext) -> tuple[list[Finding], RuleFailure | None]:
    try:
        return list(check.check(context)), None
    except Exception as exc:  # a buggy rule must not hide the other rules' findings
        log.exception("rule %s failed", check.id)
        return [], RuleFailure(check.id, f"{type(exc).__name__}: {exc}")


def analyze(
    config: ParsedConfig,
    facts: HostFacts | None = None,
    metrics: MetricsWindow | None = None,
    *,
    muted: Muted = None,
    rules: list[Rule] | None = None,
) -> Report:
    """Run all rules (or `rules`) and score the result; never raises because of the input."""
    context = RuleContext(config=config, facts=facts, metrics=metrics)
    findings: list[Finding] = []
    failures: list[RuleFailure] = []
    with anchors.memo():
        for check in rules if rules is not None else all_rules():
            found, failure = _run(check, context)
            findings.extend(found)
            if failure is not None:
                failures.append(failure)
    findings.sort(key=lambda f: (f.file, f.line, f.rule))
    findings = number_alike(findings)
    return Report(findings=findings, score=score(findings, muted), failures=failures)
