"""Scores 0-100, overall and per category, from findings weighted by severity.

Formula: every rule that fired takes a share of what is left of 100, so scores never go below 0
and each extra problem costs less than the one before:
  penalty(rule) = weight(severity) x (2 - 2^(1 - hits))   (1 hit: w, 2 hits: 1.5w, many: 2w)
  score = 100 x product over rules of (1 - penalty(rule)), rounded
with weights error 0.25, warning 0.10, info 0.03. A category's score uses its rules; the overall
score uses every rule, so one error anywhere costs the overall score as much as its category.
Repeated hits of one rule (the same advice for 200 servers) are capped at twice its weight.
Muted findings are left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable

from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.record import Record

WEIGHTS = {Severity.ERROR: 0.25, Severity.WARNING: 0.10, Severity.INFO: 0.03}

Muted = Callable[[Finding], bool] | Collection[str] | None


class Score(Record):
    """Overall and per-category scores (every category present, 100 when clean)."""

    __slots__ = ("categories", "overall")

    overall: int
    categories: dict[str, int]

    def __init__(self, overall: int, categories: dict[str, int]) -> None:
        self.overall = overall
        self.categories = categories

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"overall": self.overall, "categories": dict(self.categories)}


def is_muted(finding: Finding, muted: Muted) -> bool:
    """Whether a finding is muted: by predicate, or by its key or rule id in a collection."""
    if muted is None:
        return False
    if callable(muted):
        return bool(muted(finding))
    return finding.key in muted or finding.rule in muted


def _score(findings: Iterable[Finding]) -> int:
    hits: Counter[tuple[str, Severity]] = Counter((f.rule, f.severity) for f in findings)
    remaining = 1.0
    for (_rule, severity), count in hits.items():
        penalty = WEIGHTS[severity] * (2 - 2 ** (1 - count))
        remaining *= 1 - penalty
    return round(100 * remaining)


def score(findings: Iterable[Finding], muted: Muted = None) -> Score:
    """Score a config's findings, leaving muted ones out."""
    counted = [f for f in findings if not is_muted(f, muted)]
    categories = {
        str(category): _score(f for f in counted if f.category == category) for category in Category
    }
    return Score(overall=_score(counted), categories=categories)
