"""Run every rule over a parsed config and collect the findings and the score."""

from __future__ import annotations

from nginx_fleet_analyzer import anchors, effective
from nginx_fleet_analyzer.effective import has_own_list
from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Finding, Fix, Severity, number_alike
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import Record, replace
from nginx_fleet_analyzer.rules import Rule, RuleContext, all_rules, get_rule
from nginx_fleet_analyzer.rules._support import children_by_name
from nginx_fleet_analyzer.scoring import Muted, Score, score

# Bumped by hand whenever what the engine reports for a given config and inputs may change (a
# rule added, removed or edited, the parser, the scoring): the backend re-runs every host's
# analysis once after a deploy with a new version and otherwise skips hosts whose inputs stay.
# tests/test_engine_version.py holds the rule catalogue of each version.
ENGINE_VERSION = 1


class RuleFailure(Record):
    """A rule that crashed: an internal error of ours, not a problem of the config."""

    __slots__ = ("error", "rule")

    rule: str
    error: str

    def __init__(self, rule: str, error: str) -> None:
        self.rule = rule
        self.error = error


class Report(Record):
    """Findings sorted by file and line, the score, and any rule that failed."""

    __slots__ = ("failures", "findings", "score")

    findings: list[Finding]
    score: Score
    failures: list[RuleFailure]

    def __init__(
        self,
        findings: list[Finding],
        score: Score,
        failures: list[RuleFailure] | None = None,
    ) -> None:
        self.findings = findings
        self.score = score
        self.failures = [] if failures is None else failures

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
        # Imported here: logging costs the command line's start and is needed only now.
        import logging

        logging.getLogger(__name__).exception("rule %s failed", check.id)
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
    chosen = rules if rules is not None else all_rules()
    with anchors.memo():
        for check in chosen:
            found, failure = _run(check, context)
            findings.extend(found)
            if failure is not None:
                failures.append(failure)
        if any(check.id == UNRESOLVED_RULE for check in chosen):
            findings.extend(unresolved_findings(config))
    findings = soften_unseen(config, findings)
    effective.forget()
    children_by_name.cache_clear()
    findings.sort(key=lambda f: (f.file, f.line, f.rule))
    findings = number_alike(findings)
    return Report(findings=findings, score=score(findings, muted), failures=failures)


# Unresolved includes are reported under V-unknown: what the included file holds is unknown to
# the analysis. Not V-args: the include itself is well formed, and nginx accepted it (a dump).
UNRESOLVED_RULE = "V-unknown"
# Blocks that never appear in a file read in http, server or location context.
_UNSEEN_BLOCKS = frozenset({"main", "events"})
# Rules whose 'add' fixes supply a setting that inner blocks inherit: in a file read alone, the
# unseen nginx.conf may set it at http level, wherever the rule anchors the fix. Not the list
# rules (allow/deny, add_header inheritance) nor per-location ones (expires, upstream keepalive
# headers), where a block's own lines decide.
INHERITED_DEFAULT_RULES = frozenset(
    {
        "B-body-buffer",
        "B-header-buffers",
        "C-key-host",
        "C-lock",
        "C-stale",
        "G-min-length",
        "G-off",
        "G-proxied",
        "G-static",
        "G-types",
        "G-vary",
        "K-client-timeouts",
        "K-requests",
        "K-reset",
        "K-timeout",
        "L-buffer",
        "L-fields",
        "S-hsts",
        "S-session-cache",
        "S-session-timeout",
        "S-tickets",
        "T-nodelay",
        "T-open-file-cache",
        "T-sendfile",
        "W-connections",
        "W-multi-accept",
        "W-nofile",
        "W-processes",
        "X-tokens",
    }
)


def unresolved_findings(config: ParsedConfig) -> list[Finding]:
    """One finding per include whose files were not read: warning in a dump, else info."""
    reporter = get_rule(UNRESOLVED_RULE)
    found: list[Finding] = []
    for item in config.unresolved:
        pattern = item.include.args[0]
        if config.from_dump:
            message = f'include "{pattern}": {item.reason}, so what it holds is not analysed'
        else:
            message = (
                f'include "{pattern}" is not resolved from this file ({item.reason}), '
                "so what it holds is not analysed"
            )
        found.append(
            reporter.finding(
                at=item.include,
                message=message,
                evidence={"include": pattern, "reason": item.reason, "unresolved": True},
                severity=Severity.WARNING if config.from_dump else Severity.INFO,
            )
        )
    return found


def soften_unseen(config: ParsedConfig, findings: list[Finding]) -> list[Finding]:
    """Findings that may be settled by a file the analysis did not see become info, with a note.

    Two causes: a file read alone (a site file) has its main/http settings in the unseen
    nginx.conf, so a finding anchored on the stand-in blocks (line 0), fixed in main/events or
    adding an inherited setting (INHERITED_DEFAULT_RULES) is undecided; and a setting a fix
    would add to a block may come from an unresolved include in force there.
    """
    covered = _blocks_under_unresolved(config)
    out: list[Finding] = []
    for finding in findings:
        note = _unseen_note(config, finding, covered)
        if note is None:
            out.append(finding)
            continue
        out.append(
            replace(
                finding,
                severity=Severity.INFO,
                message=f"{finding.message} (undecided: {note})",
                evidence={**finding.evidence, "undecided": note},
            )
        )
    return out


def _unseen_note(
    config: ParsedConfig,
    finding: Finding,
    covered: dict[tuple[str, int], tuple[Directive, Directive]],
) -> str | None:
    if finding.evidence.get("unresolved") is True:
        return None
    fix = finding.fix
    if config.partial and (
        finding.line == 0
        or (fix is not None and (fix.line == 0 or fix.context in _UNSEEN_BLOCKS))
        or (fix is not None and fix.action == "add" and finding.rule in INHERITED_DEFAULT_RULES)
    ):
        return (
            f"{config.main_file} was read alone, as if included in {config.context} context; "
            "the nginx.conf that includes it may set this"
        )
    if fix is not None and fix.action == "add":
        include = _unread_include_in_force(config, covered.get((fix.file, fix.line)), fix)
        if include is not None:
            return (
                f'the include "{include.args[0]}" at {include.file}:{include.line} '
                "was not read and may set this"
            )
    return None


def _unread_include_in_force(
    config: ParsedConfig, covered: tuple[Directive, Directive] | None, fix: Fix
) -> Directive | None:
    """The unresolved include that may already hold what `fix` adds to its block, or None.

    A list setting (allow/deny, add_header, proxy_set_header ...) is inherited all or nothing:
    when the block has entries of its own, what an enclosing block's include sets is not in
    force there, and only an include written in the block itself may add to its list.
    """
    if covered is None:
        return None
    block, include = covered
    if not has_own_list(block, fix.directive):
        return include
    return next((u.include for u in config.unresolved if u.include.parent is block), None)


def _blocks_under_unresolved(
    config: ParsedConfig,
) -> dict[tuple[str, int], tuple[Directive, Directive]]:
    """(file, line) of every block an unresolved include is in force in: (block, that include)."""
    # The first unresolved include of each block speaks for it: each block is walked once.
    by_block: dict[int, tuple[Directive | None, Directive]] = {}
    for item in config.unresolved:
        parent = item.include.parent
        by_block.setdefault(id(parent), (parent, item.include))
    covered: dict[tuple[str, int], tuple[Directive, Directive]] = {}
    for parent, include in by_block.values():
        blocks = (
            [node for node in config.walk() if node.block is not None]
            if parent is None
            else [parent, *(node for node in parent.walk() if node.block is not None)]
        )
        for block in blocks:
            covered.setdefault((block.file, block.line), (block, include))
    return covered
