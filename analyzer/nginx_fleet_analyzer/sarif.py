"""SARIF 2.1.0 output, so code-scanning UIs show the findings at their lines."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

from nginx_fleet_analyzer.engine import Report
from nginx_fleet_analyzer.findings import Finding, Severity
from nginx_fleet_analyzer.model import ParsedConfig
from nginx_fleet_analyzer.rules import Rule

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "nginx-fleet-analyze"
# SARIF has no 'info' level; 'note' is its lowest.
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# Rules with no finding in this run link the index of every nginx directive.
FALLBACK_HELP = "https://nginx.org/en/docs/dirindex.html"
FINGERPRINT = "nginxFleetFindingKey/v1"


def artifact_uri(path: str) -> str:
    """A file's URI: relative paths stay relative (to the checkout), absolute ones file://."""
    if path.startswith("/"):
        return "file://" + quote(path)
    return quote(path.replace("\\", "/"))


def _describe(check: Rule) -> str:
    doc = (check.check.__doc__ or check.id).strip()
    return doc.splitlines()[0]


def _columns(config: ParsedConfig) -> dict[tuple[str, int], int]:
    """Column of the first directive starting on each (file, line)."""
    columns: dict[tuple[str, int], int] = {}
    for node in config.walk():
        columns.setdefault((node.file, node.line), node.column)
    return columns


def _rule_entry(check: Rule, help_uri: str) -> dict[str, object]:
    text = _describe(check)
    return {
        "id": check.id,
        "shortDescription": {"text": text},
        "fullDescription": {"text": text},
        "helpUri": help_uri,
        "defaultConfiguration": {"level": LEVELS[check.severity]},
        "properties": {"category": str(check.category)},
    }


def _result(finding: Finding, index: int, column: int) -> dict[str, object]:
    # Line 0 is a file-level finding (about a setting of the unseen including file).
    region = {"startLine": max(finding.line, 1), "startColumn": max(column, 1)}
    return {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(finding.file)},
                    "region": region,
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT: finding.key},
        "properties": {
            "severity": str(finding.severity),
            "category": str(finding.category),
            "evidence": finding.evidence,
            "fix": finding.fix.to_dict() if finding.fix is not None else None,
            "fileLevel": finding.line == 0,
        },
    }


def to_sarif(
    report: Report,
    shown: Iterable[Finding],
    rules: list[Rule],
    config: ParsedConfig,
    version: str,
) -> dict[str, object]:
    """A SARIF log with one run: every rule in tool.driver.rules, the shown findings as results."""
    shown = list(shown)
    help_uris: dict[str, str] = {}
    for finding in report.findings:
        if finding.doc_url:
            help_uris.setdefault(finding.rule, finding.doc_url)
    index = {check.id: position for position, check in enumerate(rules)}
    columns = _columns(config)
    results = []
    for finding in shown:
        column = columns.get((finding.file, finding.line), 1)
        raw_column = finding.evidence.get("column")
        if isinstance(raw_column, int):
            column = raw_column
        results.append(_result(finding, index.get(finding.rule, -1), column))
    notifications = [
        {"level": "error", "message": {"text": f"rule {failure.rule} failed: {failure.error}"}}
        for failure in report.failures
    ]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL,
                        "version": version,
                        "rules": [
                            _rule_entry(check, help_uris.get(check.id, FALLBACK_HELP))
                            for check in rules
                        ],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not report.failures,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": {
                    "score": report.score.overall,
                    "categories": dict(report.score.categories),
                    "context": config.context,
                },
            }
        ],
    }
