"""One-off move of finding keys from `rule@file:line` to line-free keys (migration 0004).

Each host's latest successful analysis is re-run by the engine on its stored snapshot with its
stored inputs; an old key names the findings of that rule at that file and line, so its stored
findings and its acks take the new keys of the engine's findings there. An ack whose old key
matches several findings (one line, several findings of the rule) is copied once per new key;
a fleet-wide ack collects the new keys of every host. Old keys nothing matches stay as they are
(their stored findings keep them too, so they still mute until the next analysis).
Plain SQL tables, not the ORM models: the migration must not depend on later model changes.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from nginx_fleet_analyzer import parse_dump
from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Finding as EngineFinding
from nginx_fleet_analyzer.record import field_names
from sqlalchemy.engine import Connection

log = logging.getLogger(__name__)

_analyses = sa.table(
    "config_analyses",
    sa.column("id", sa.Integer),
    sa.column("host_id", sa.Integer),
    sa.column("snapshot_id", sa.Integer),
    sa.column("status", sa.String),
    sa.column("inputs", sa.JSON),
)
_snapshots = sa.table("config_snapshots", sa.column("id", sa.Integer), sa.column("dump", sa.Text))
_findings = sa.table(
    "findings",
    sa.column("id", sa.Integer),
    sa.column("analysis_id", sa.Integer),
    sa.column("key", sa.String),
    sa.column("rule", sa.String),
    sa.column("file", sa.String),
    sa.column("line", sa.Integer),
    sa.column("place", sa.String),
    sa.column("directive", sa.String),
)
_ACK_COLUMNS = (
    "id",
    "rule",
    "host_id",
    "finding_key",
    "reason",
    "created_by",
    "created_at",
    "expires_at",
    "expiry_applied",
)
_acks = sa.table("acks", *(sa.column(name) for name in _ACK_COLUMNS))


def legacy_key(finding: EngineFinding) -> str:
    """The key the finding had before keys left out the line."""
    return f"{finding.rule}@{finding.file}:{finding.line}"


def stored_facts(data: Mapping[str, Any]) -> HostFacts:
    """The facts an analysis ran with, from their stored form (AnalysisInputs.to_dict).

    That form is the record's own fields with lists for tuples and sets, not the agent's
    facts object that HostFacts.from_dict reads."""
    values: dict[str, Any] = {}
    defaults = HostFacts()
    for name in field_names(HostFacts):
        if name not in data:
            continue
        value = data[name]
        if isinstance(value, list):
            empty = getattr(defaults, name)
            value = frozenset(value) if isinstance(empty, frozenset) else tuple(value)
        values[name] = value
    return HostFacts(**values)


def _rerun(dump: str, inputs: Mapping[str, Any] | None) -> list[EngineFinding]:
    stored = inputs or {}
    facts = stored_facts(stored["facts"]) if stored.get("facts") else None
    metrics = MetricsWindow.from_dict(stored["metrics"]) if stored.get("metrics") else None
    return analyze(parse_dump(dump), facts, metrics).findings


def _rekey_findings(
    connection: Connection, analysis_id: int, found: list[EngineFinding]
) -> dict[str, list[str]]:
    """New keys for the analysis's stored findings; returns old key -> new keys."""
    by_position: dict[str, list[EngineFinding]] = defaultdict(list)
    for finding in found:
        by_position[legacy_key(finding)].append(finding)
    rows = connection.execute(
        sa.select(_findings.c.id, _findings.c.key)
        .where(_findings.c.analysis_id == analysis_id)
        .order_by(_findings.c.id)
    ).all()
    used: dict[str, int] = defaultdict(int)
    for row in rows:
        candidates = by_position.get(row.key, [])
        if used[row.key] >= len(candidates):
            continue
        new = candidates[used[row.key]]
        used[row.key] += 1
        connection.execute(
            sa.update(_findings)
            .where(_findings.c.id == row.id)
            .values(key=new.key, place=new.place, directive=new.directive)
        )
    return {old: [f.key for f in news] for old, news in by_position.items()}


def _latest_mappings(connection: Connection) -> dict[int, dict[str, list[str]]]:
    """For each host with a successful latest analysis: old key -> new keys."""
    latest = sa.select(sa.func.max(_analyses.c.id)).group_by(_analyses.c.host_id).scalar_subquery()
    analyses = connection.execute(
        sa.select(_analyses.c.id, _analyses.c.host_id, _analyses.c.inputs, _snapshots.c.dump)
        .join(_snapshots, _snapshots.c.id == _analyses.c.snapshot_id)
        .where(_analyses.c.id.in_(latest), _analyses.c.status == "ok")
        .order_by(_analyses.c.host_id)
    ).all()
    mappings: dict[int, dict[str, list[str]]] = {}
    for analysis in analyses:
        try:
            found = _rerun(analysis.dump, analysis.inputs)
        # One config the engine cannot take must not stop the upgrade of the others.
        except Exception:
            log.exception("re-keying: the engine failed on analysis %d; its keys stay", analysis.id)
            continue
        mappings[analysis.host_id] = _rekey_findings(connection, analysis.id, found)
    return mappings


def rekey_findings_and_acks(connection: Connection) -> int:
    """Give latest findings and finding acks line-free keys; returns how many acks changed."""
    mappings = _latest_mappings(connection)
    acks = connection.execute(
        sa.select(*(_acks.c[name] for name in _ACK_COLUMNS))
        .where(_acks.c.finding_key.is_not(None))
        .order_by(_acks.c.id)
    ).all()
    changed = 0
    for ack in acks:
        scope = [ack.host_id] if ack.host_id is not None else list(mappings)
        new_keys = list(
            dict.fromkeys(
                key for host in scope for key in mappings.get(host, {}).get(ack.finding_key, [])
            )
        )
        if not new_keys:
            continue
        first, *others = new_keys
        connection.execute(sa.update(_acks).where(_acks.c.id == ack.id).values(finding_key=first))
        copy = {name: getattr(ack, name) for name in _ACK_COLUMNS if name != "id"}
        for key in others:
            connection.execute(sa.insert(_acks).values({**copy, "finding_key": key}))
        changed += 1
    return changed
