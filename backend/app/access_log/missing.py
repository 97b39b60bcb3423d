"""Why a figure is missing, from the host's newest files report, config and latest analysis.

In order: the figure does not apply to the host's config (no cache: no hit ratio; nothing
passed to an upstream: no upstream times); no access log reported at all; every target
unreadable; every readable format lacking the variable (with the rule whose fix adds it, and
that rule's finding on the host); no line of the files matching their format; else there was
simply no traffic for the figure.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nginx_fleet_analyzer.access_logs import caches, goes_upstream
from nginx_fleet_analyzer.loader import parse_dump
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.access_log.schemas import MissingFigure, MissingFigures
from app.configs.models import ConfigAnalysis, ConfigSnapshot
from app.findings.models import Finding


@dataclass(frozen=True, slots=True)
class Need:
    """What a figure needs from the log format, and how the UI names it."""

    label: str
    variable: str
    rule: str | None
    # Why there can be traffic without the figure.
    quiet: str
    # Why the figure does not apply to a config that lacks what it measures (None: always).
    not_applicable: str | None = None


NEEDS: dict[str, Need] = {
    "hit_ratio": Need(
        "the cache hit ratio",
        "upstream_cache_status",
        "C-observable",
        "no request in the range had a cache status (HIT, MISS, …)",
        "no location caches what it passes to an upstream (proxy_cache, fastcgi_cache, …), "
        "so there is no hit ratio to measure",
    ),
    "latency": Need(
        "latency percentiles", "request_time", "L-fields", "no request was logged in the range"
    ),
    "upstream_latency": Need(
        "upstream latency percentiles",
        "upstream_response_time",
        "L-fields",
        "no request in the range went to an upstream",
        "the config passes no request to an upstream (proxy_pass, fastcgi_pass, …), so there "
        "are no upstream times",
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
    serves: ConfigServes | None = None,
) -> MissingFigure:
    """Why `figure` has no value, given the newest files report (None: never reported) and
    what the host's latest config does (None: no config received)."""
    need = NEEDS[figure]
    if serves is not None and need.not_applicable and not serves.applies(figure):
        return MissingFigure(reason="not_applicable", message=f"{need.not_applicable}.")
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
        rule = need.rule
        if figure == "upstream_latency" and any(
            "request_time" not in (file.get("missing_fields") or []) for file in lacking
        ):
            # L-fields is about $request_time: with it present there is no finding to show.
            rule = None
        finding = _finding_for(findings, rule, formats)
        named = f"log format {formats[0]}" if len(formats) == 1 else "log formats in use"
        if len(formats) > 1:
            named = f"log formats {', '.join(formats)}"
        return MissingFigure(
            reason="format_lacks_field",
            message=f"The {named} {'lacks' if len(formats) == 1 else 'lack'} "
            f"${need.variable}, so {need.label} cannot be measured.",
            variable=f"${need.variable}",
            formats=formats,
            rule=rule,
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
    return MissingFigure(
        reason="no_traffic", message=f"Nothing to show for {need.label}: {need.quiet}."
    )


def missing_figures(
    present: Mapping[str, bool],
    files: Sequence[Mapping[str, Any]] | None,
    findings: Sequence[FixingFinding],
    serves: ConfigServes | None = None,
) -> MissingFigures:
    """Per figure, None when it has a value, else why it has none."""
    return MissingFigures(
        **{
            figure: None if present[figure] else why_missing(figure, files, findings, serves)
            for figure in NEEDS
        }
    )


@dataclass(frozen=True, slots=True)
class ConfigServes:
    """What the host's config does that some figures need."""

    caches: bool
    goes_upstream: bool

    def applies(self, figure: str) -> bool:
        """Whether `figure` can exist for this config at all."""
        if figure == "hit_ratio":
            return self.caches
        if figure == "upstream_latency":
            return self.goes_upstream
        return True


# Parsing a dump costs milliseconds to a few hundred for a large one: remembered per snapshot
# (a snapshot never changes; its hash is in the key so a reused id is never mistaken for it),
# for the host pages that refresh every few seconds.
_SERVES: OrderedDict[tuple[int, str], ConfigServes] = OrderedDict()
_SERVES_KEPT = 256


def config_serves(session: Session, host_id: int) -> ConfigServes | None:
    """Whether the host's newest config caches and passes to upstreams; None without one."""
    newest = session.execute(
        select(ConfigSnapshot.id, ConfigSnapshot.hash)
        .where(ConfigSnapshot.host_id == host_id)
        .order_by(ConfigSnapshot.id.desc())
        .limit(1)
    ).first()
    if newest is None:
        return None
    key = (newest.id, newest.hash)
    found = _SERVES.get(key)
    if found is None:
        dump = session.scalar(select(ConfigSnapshot.dump).where(ConfigSnapshot.id == newest.id))
        config = parse_dump(dump or "")
        found = ConfigServes(caches=caches(config), goes_upstream=goes_upstream(config))
        _SERVES[key] = found
        if len(_SERVES) > _SERVES_KEPT:
            _SERVES.popitem(last=False)
    return found
