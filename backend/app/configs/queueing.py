"""At most one queued analysis per host: a host is claimed before its analysis is queued."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from app.configs.models import ConfigSnapshot, ParseStatus, PendingAnalysis
from app.hosts.models import Host
from app.metrics.sql import insert_for, table_of

# A claim this old is taken for a lost task (broker restarted empty, message dropped), so the
# host may be claimed and queued again. Longer than a 10,000-host backlog takes to drain.
CLAIM_TIMEOUT = timedelta(minutes=30)
# Hosts silent for longer have no fresh metrics: their last analysis still holds.
RECENT_PUSH = timedelta(minutes=10)
# SQLite allows 32,766 bound parameters per statement; two per row.
_CLAIM_CHUNK = 1000

_pending = table_of(PendingAnalysis)


def claim_hosts(*, session: Session, host_ids: Sequence[int], now: datetime) -> list[int]:
    """Mark the hosts as having an analysis queued; returns the ones that had none queued
    (or only a stale claim), whose analysis the caller must now queue. The caller commits."""
    claimed: list[int] = []
    unique = sorted(set(host_ids))
    for start in range(0, len(unique), _CLAIM_CHUNK):
        rows = [{"host_id": host_id, "queued_at": now} for host_id in unique[start:][:_CLAIM_CHUNK]]
        statement = insert_for(session, _pending).values(rows)
        statement = statement.on_conflict_do_update(
            index_elements=["host_id"],
            set_={"queued_at": statement.excluded.queued_at},
            where=_pending.c.queued_at < now - CLAIM_TIMEOUT,
        ).returning(_pending.c.host_id)
        claimed.extend(session.scalars(statement))
    return claimed


def release(*, session: Session, host_ids: Sequence[int]) -> None:
    """Drop the hosts' claims: a task starting, or a message the broker did not take."""
    if host_ids:
        session.execute(delete(PendingAnalysis).where(PendingAnalysis.host_id.in_(list(host_ids))))


def hosts_due(*, session: Session, now: datetime, interval: timedelta) -> list[int]:
    """Hosts whose current snapshot needs a periodic analysis and has none queued.

    Due: the host pushed recently and its snapshot was not analysed in the last half interval
    (so an analysis a push just caused is not repeated), or the snapshot was never analysed
    (its task was lost). Hosts with a live claim are left out: their analysis is queued."""
    live_claim = (
        select(PendingAnalysis.host_id)
        .where(PendingAnalysis.queued_at >= now - CLAIM_TIMEOUT)
        .scalar_subquery()
    )
    return list(
        session.scalars(
            select(Host.id)
            .join(
                ConfigSnapshot,
                (ConfigSnapshot.host_id == Host.id) & (ConfigSnapshot.hash == Host.config_hash),
            )
            .where(
                or_(
                    (Host.last_seen_at > now - RECENT_PUSH)
                    & (ConfigSnapshot.analyzed_at < now - interval / 2),
                    ConfigSnapshot.parse_status == ParseStatus.pending,
                ),
                Host.id.not_in(live_claim),
            )
            .order_by(Host.id)
        )
    )
