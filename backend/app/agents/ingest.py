"""Accepting a push: samples, gaps, facts, config snapshot, host status, then live event and tasks.

Both ingest paths (this per-push one and the group commit of batch_ingest) end the same way:
`committed_push` turns what a commit stored into the agent's reply and the UI's live event, and
`announce` does the best-effort work after the commit."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from app.access_log.ingest import store_access_logs
from app.access_log.rollups import LOG_MINUTE_LOOKBACK
from app.agents.errors import AgentMismatchError
from app.agents.schemas import HostFacts as PushedFacts
from app.agents.schemas import PushPayload, PushReply
from app.agents.service import AuthenticatedHost
from app.changes import agent_actions, cadence
from app.changes import service as changes_service
from app.changes.models import Change
from app.configs import service as configs_service
from app.configs.analyzer import current_snapshot_id
from app.configs.tasks import enqueue_analysis
from app.core import pubsub
from app.core.config import get_settings
from app.hosts.fleet import build_fleet_host
from app.hosts.latest import refresh_latest_figures
from app.hosts.models import Host, HostFacts
from app.metrics.fields import CHARTED_FIELDS
from app.metrics.gaps import store_gaps
from app.metrics.rollups import MINUTE_LOOKBACK
from app.metrics.samples import store_samples
from app.metrics.schemas import SeriesPoint
from app.metrics.sql import insert_for, table_of
from app.metrics.tasks import enqueue_rollup

log = logging.getLogger(__name__)

_hosts = table_of(Host)
_facts = table_of(HostFacts)
# Samples older than this missed the periodic rollup window (the shorter one of the samples'
# and of their access-log figures) and get a rollup of their own.
LATE_SAMPLE_AGE = min(MINUTE_LOOKBACK, LOG_MINUTE_LOOKBACK) - timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Committed:
    """What the push stored, for the work done after the commit."""

    reply: PushReply
    new_snapshot_id: int | None
    # The current snapshot to analyse again because the facts the rules use changed.
    reanalyze_snapshot_id: int | None
    event: dict[str, Any] | None
    late_range: tuple[datetime, datetime] | None
    # Changes whose state this push moved (agent reports, sent actions), for the live streams.
    moved_changes: tuple[Change, ...] = ()


def _store_facts(session: Session, host_id: int, facts: PushedFacts, now: datetime) -> bool:
    """Replace the host's facts with the ones just sent; True when they differ from before."""
    values = {
        "host_id": host_id,
        "facts": facts.model_dump(mode="json", exclude_none=True),
        "nginx_version": facts.nginx_version,
        "cpu_count": facts.cpu_count,
        "mem_total_bytes": facts.mem_total_bytes,
        "updated_at": now,
    }
    statement = insert_for(session, _facts).values(values)
    # An agent restart resends unchanged facts: no write then, and no re-analysis.
    statement = statement.on_conflict_do_update(
        index_elements=["host_id"],
        set_={name: statement.excluded[name] for name in values if name != "host_id"},
        where=_facts.c.facts.is_distinct_from(statement.excluded.facts),
    ).returning(_facts.c.host_id)
    return session.execute(statement).scalar_one_or_none() is not None


# The fleet-row fields a host page patches from a `sample` event (its figures are in the point).
LIVE_HOST_FIELDS = frozenset(
    {
        "hostname",
        "status",
        "status_reason",
        "last_seen_at",
        "nginx_version",
        "stub_status_available",
        "stub_status_error",
    }
)


def live_event(
    host: AuthenticatedHost,
    payload: PushPayload,
    newest: dict[str, Any],
    host_fields: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """The `sample` event of docs/live-events.md for the newest accepted sample.

    Small on purpose (the host's status and one series point, no score or log figures that
    would cost queries per push): only the host's own page receives it."""
    nginx_version = payload.facts.nginx_version if payload.facts else None
    fleet_host = build_fleet_host(
        host={"id": host.id, "labels": host.labels, **host_fields},
        sample=None,
        nginx_version=nginx_version or host.nginx_version,
        now=now,
        push_interval_s=get_settings().push_interval_s,
    )
    point = SeriesPoint(ts=newest["ts"], **{name: newest[name] for name in CHARTED_FIELDS})
    return {
        "host_id": host.id,
        "host": fleet_host.model_dump(mode="json", include=set(LIVE_HOST_FIELDS)),
        "point": point.model_dump(mode="json"),
    }


def stub_status_error(row: dict[str, Any]) -> str | None:
    """Why stub_status could not be read in this sample row, if it could not."""
    error: str | None = row["stub_status_error"]
    return error


def late_sample_range(
    accepted: list[dict[str, Any]], now: datetime
) -> tuple[datetime, datetime] | None:
    """The span of accepted rows to roll up on their own, when they missed the periodic one."""
    if accepted and accepted[0]["ts"] < now - LATE_SAMPLE_AGE:
        return (accepted[0]["ts"], accepted[-1]["ts"])
    return None


def check_agent(host: AuthenticatedHost, payload: PushPayload) -> None:
    """Refuse a push that names another agent than the token's."""
    if payload.agent_id != host.agent_id:
        raise AgentMismatchError(
            f"this token belongs to agent {host.agent_id}, not to {payload.agent_id}"
        )


def committed_push(
    *,
    host: AuthenticatedHost,
    payload: PushPayload,
    rows: Sequence[dict[str, Any]],
    inserted: set[int],
    gaps_stored: int,
    known_config_hash: str | None,
    now: datetime,
    new_snapshot_id: int | None = None,
    reanalyze_snapshot_id: int | None = None,
    actions: list[dict[str, Any]] | None = None,
    moved_changes: Sequence[Change] = (),
    push_sooner: bool | None = None,
) -> Committed:
    """The reply and live event of a push whose rows are committed (`inserted`: new seqs).

    The one place both ingest paths build what the agent and the UI are told. `push_sooner`
    (a change in flight after this push) defaults to what was known when the host was
    authenticated."""
    accepted = [row for row in rows if row["seq"] in inserted]
    event = None
    if accepted:
        newest = accepted[-1]
        status_fields = {
            "hostname": payload.hostname,
            "last_seen_at": now,
            "nginx_up": newest["nginx_up"],
            "stub_status_available": newest["stub_status_available"],
            "stub_status_error": stub_status_error(newest),
        }
        event = live_event(host, payload, newest, status_fields, now)
    reply = PushReply(
        accepted=len(accepted),
        duplicates=len(rows) - len(accepted),
        rejected=payload.rejected,
        gaps=gaps_stored,
        config_wanted=payload.config_hash is not None and payload.config_hash != known_config_hash,
        push_interval_s=get_settings().push_interval_s,
        next_push_s=cadence.next_push_s(host.push_sooner if push_sooner is None else push_sooner),
        actions=list(actions or []),
    )
    return Committed(
        reply=reply,
        new_snapshot_id=new_snapshot_id,
        reanalyze_snapshot_id=reanalyze_snapshot_id,
        event=event,
        late_range=late_sample_range(accepted, now),
        moved_changes=tuple(moved_changes),
    )


def _store(
    session: Session, host: AuthenticatedHost, payload: PushPayload, now: datetime
) -> Committed:
    """Every database write of a push, in one transaction; commits."""
    rows: list[dict[str, Any]] = []
    inserted: set[int] = set()
    host_fields: dict[str, Any] = {
        "hostname": payload.hostname,
        "last_seen_at": now,
        "agent_version": payload.agent_version,
    }
    if payload.samples:
        stored = store_samples(
            session,
            host_id=host.id,
            samples=payload.samples,
            newest_seq=host.newest_seq,
            newest_reading=host.newest_reading,
        )
        rows, inserted = stored.rows, stored.inserted
        store_access_logs(
            session, ((host.id, sample) for sample in payload.samples if sample.seq in inserted)
        )
        newest = rows[-1]
        if host.newest_seq is None or newest["seq"] > host.newest_seq:
            host_fields.update(
                last_seq=newest["seq"],
                nginx_up=newest["nginx_up"],
                stub_status_available=newest["stub_status_available"],
                stub_status_error=stub_status_error(newest),
            )
    gaps_stored = store_gaps(session, host_id=host.id, gaps=payload.gaps, now=now)
    facts_changed = payload.facts is not None and _store_facts(session, host.id, payload.facts, now)
    stored_hash = host.config_hash
    new_snapshot_id = None
    if payload.config is not None:
        new_snapshot_id = configs_service.store_snapshot(
            session=session,
            host_id=host.id,
            config_hash=payload.config.hash,
            dump=payload.config.dump,
            now=now,
        )
        stored_hash = host_fields["config_hash"] = payload.config.hash
    session.execute(update(_hosts).where(_hosts.c.id == host.id).values(host_fields))
    if inserted:
        refresh_latest_figures(session, host_id=host.id)
    reanalyze_snapshot_id = None
    # A config the host had before (a rollback restores one) is stored already: analyse it
    # again, or the host's latest analysis stays that of the config it left.
    config_returned = payload.config is not None and payload.config.hash != host.config_hash
    if (facts_changed or config_returned) and new_snapshot_id is None:
        reanalyze_snapshot_id = current_snapshot_id(session=session, host_id=host.id)
    moved: list[Change] = []
    if payload.action_reports:
        moved += agent_actions.record_reports(
            session=session, host_id=host.id, reports=payload.action_reports, now=now
        )
    actions, sent = agent_actions.pending_actions(session=session, host_id=host.id, now=now)
    moved += sent
    # After this push's reports and facts: an outcome just reported ends the faster cadence.
    push_sooner = cadence.should_push_sooner(session=session, host_id=host.id, now=now)
    session.commit()
    return committed_push(
        host=host,
        payload=payload,
        rows=rows,
        inserted=inserted,
        gaps_stored=gaps_stored,
        known_config_hash=stored_hash,
        now=now,
        new_snapshot_id=new_snapshot_id,
        reanalyze_snapshot_id=reanalyze_snapshot_id,
        actions=actions,
        moved_changes=moved,
        push_sooner=push_sooner,
    )


def ingest_push(
    *, session: Session, host: AuthenticatedHost, payload: PushPayload, now: datetime
) -> PushReply:
    """Store a push (idempotent on seq), then announce it and queue its follow-up work."""
    check_agent(host, payload)
    committed = _store(session, host, payload, now)
    announce(host.id, committed)
    return committed.reply


def announce(host_id: int, committed: Committed) -> None:
    """The work after a push's commit: analyses and rollups to queue, the live event.

    Best-effort: the push is stored, so a broker or Redis outage is logged, never turned into
    an error that would make the agent resend what we already have."""
    announce_many([(host_id, committed)])


def announce_many(pushes: Sequence[tuple[int, Committed]]) -> None:
    """announce() for the pushes of one commit, their live events sent in one round trip."""
    for host_id, committed in pushes:
        # One analysis of the host's current config covers both (at most one queued per host).
        if committed.new_snapshot_id is not None or committed.reanalyze_snapshot_id is not None:
            enqueue_analysis(host_id=host_id)
        if committed.late_range is not None:
            enqueue_rollup(host_id, *committed.late_range)
    events = [committed.event for _, committed in pushes if committed.event is not None]
    pubsub.publish_many("sample", events)  # best-effort: never raises
    for _, committed in pushes:
        for change in committed.moved_changes:
            changes_service.announce(change)
