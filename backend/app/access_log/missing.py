"""Why a figure is missing, from the host's newest files report and its latest analysis.

In order: no access log reported at all; every target unreadable; every readable format
lacking the variable (with the rule whose fix adds it, and that rule's finding on the host);
no line of the files matching their format; else there was simply no traffic for the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.access_log.schemas import MissingFigure, MissingFigures
from app.configs.models import ConfigAnalysis
from app.findings.models import Finding


@dataclass(frozen=True, slots=True)
class Need:
    """What a figure needs from the log format, and how the UI names it."""

    label: str
    variable: str
    rule: str | None
    # Why there can be traffic without the figure.
    quiet: str


NEEDS: dict[str, Need] = {
    "hit_ratio": Need(
        "the cache hit ratio",
        "upstream_cache_status",
        "C-observable",
        "no request in the range had a cache status (HIT, MISS, …)",
    ),
    "latency": Need(
        "latency percentiles", "request_time", "L-fields", "no request was logged in the range"
    ),
    "upstream_latency": Need(
        "upstream latency percentiles",
        "upstream_response_time",
        "L-fields",
        "no request in the range went to an upstream",
    ),
    "status": Need("status codes", "status", None, "no request was logged in the range"),
}


@dataclass(frozen=True, slots=True)
class FixingFinding:
    """A finding of the host's latest analysis that would add a missing variable."""

    id: int
    key: str
    rule: str
    evidence: dict[str, Any]


def fixing_findings(session: Session, host_id: int) -> list[FixingFinding]:
    """The C-observable and L-fields findings of the host's latest analysis."""
    latest = (
        select(func.max(ConfigAnalysis.id))
        .where(ConfigAnalysis.host_id == host_id)
        .scalar_subquery()
    )
    rules = {need.rule for need in NEEDS.values() if need.rule is not None}
    rows = session.execute(
        select(Finding.id, Finding.key, Finding.rule, Finding.evidence)
        .where(Finding.analysis_id == latest, Finding.rule.in_(rules))
        .order_by(Finding.id)
    )
    return [FixingFinding(row.id, row.key, row.rule, dict(row.evidence or {})) for row in rows]


def _finding_for(
    findings: Sequence[FixingFinding], rule: str | None, formats: Sequence[str]
) -> FixingFinding | None:
    """The finding of `rule`, preferring one about a format that lacks the variable."""
    candidates = [finding for finding in findings if finding.rule == rule]
    for finding in candidates:
        if finding.evidence.get("log_format") in formats:
            return finding
    return candidates[0] if candidates else None


def _unreadable(file: Mapping[str, Any]) -> str:
    """Why a target that is not `ok` gave nothing."""
    reason = file.get("reason")
    if reason:
        return str(reason)
    return {
        "missing": "the file does not exist (as the agent sees the file system)",
        "unreadable": "the agent cannot read it",
        "unsupported": "the agent cannot read this kind of target",
    }.get(str(file.get("state")), f"state {file.get('state')}")


def why_missing(
    figure: str,
    files: Sequence[Mapping[str, Any]] | None,
    findings: Sequence[FixingFinding],
) -> MissingFigure:
    """Why `figure` has no value, given the newest files report (None: never reported)."""
    need = NEEDS[figure]
    if files is None:
        return MissingFigure(
            reason="no_access_log",
            message=f"No access-log figures have been received from this host, so "
            f"{need.label} cannot be shown: its agent predates access-log reading or reads "
            "no log.",
        )
    if not files:
        return MissingFigure(
            reason="no_access_log",
            message=f"nginx writes no access log on this host (access_log off or syslog "
            f"only), so {need.label} cannot be measured.",
        )
    readable = [file for file in files if file.get("state") == "ok"]
    if not readable:
        first = files[0]
        why = _unreadable(first)
        return MissingFigure(
            reason="file_unreadable",
            message=f"The agent cannot read {first.get('path')}: {why}.",
            path=first.get("path"),
            file_reason=why,
        )
    lacking = [file for file in readable if need.variable in (file.get("missing_fields") or [])]
    if len(lacking) == len(readable):
        formats = sorted({name for file in lacking for name in file.get("formats") or []})
        finding = _finding_for(findings, need.rule, formats)
        named = f"log format {formats[0]}" if len(formats) == 1 else "log formats in use"
        if len(formats) > 1:
            named = f"log formats {', '.join(formats)}"
        return MissingFigure(
            reason="format_lacks_field",
            message=f"The {named} {'lacks' if len(formats) == 1 else 'lack'} "
            f"${need.variable}, so {need.label} cannot be measured.",
            variable=f"${need.variable}",
            formats=formats,
            rule=need.rule,
            finding_id=finding.id if finding else None,
            finding_key=finding.key if finding else None,
        )
    read = [file for file in readable if (file.get("lines") or 0) > 0]
    if read and all((file.get("unparsed") or 0) >= file["lines"] for file in read):
        example = next((file for file in read if file.get("unparsed_sample")), read[0])
        return MissingFigure(
            reason="lines_do_not_match",
            message=f"No line of {example.get('path')} matches its log format "
            f"{example.get('unparsed_format') or ', '.join(example.get('formats') or [])}.",
            path=example.get("path"),
            sample_line=example.get("unparsed_sample"),
            sample_format=example.get("unparsed_format"),
        )
    return MissingFigure(reason="no_traffic", message=f"No {need.label}: {need.quiet}.")


def missing_figures(
    present: Mapping[str, bool],
    files: Sequence[Mapping[str, Any]] | None,
    findings: Sequence[FixingFinding],
) -> MissingFigures:
    """Per figure, None when it has a value, else why it has none."""
    return MissingFigures(
        **{
            figure: None if present[figure] else why_missing(figure, files, findings)
            for figure in NEEDS
        }
    )
