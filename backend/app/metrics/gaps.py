"""Gap records: seq ranges of samples an agent dropped, so the UI can say why data is missing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.agents.schemas import PushedGap
from app.metrics.models import SampleGap
from app.metrics.schemas import SampleGapRead
from app.metrics.sql import insert_for, table_of

_gaps = table_of(SampleGap)


def store_gaps(session: Session, *, host_id: int, gaps: Sequence[PushedGap], now: datetime) -> int:
    """Insert or update the host's gap records (idempotent on from_seq); returns how many."""
    if not gaps:
        return 0
    # One record per from_seq: the last one sent wins (an agent extends a record it could
    # not deliver yet when more samples are dropped right after it).
    rows = {
        gap.from_seq: {
            "host_id": host_id,
            "from_seq": gap.from_seq,
            "to_seq": gap.to_seq,
            "from_ts": gap.from_ts,
            "to_ts": gap.to_ts,
            "reason": gap.reason,
            "reported_at": now,
        }
        for gap in gaps
    }
    statement = insert_for(session, _gaps).values([rows[key] for key in sorted(rows)])
    statement = statement.on_conflict_do_update(
        index_elements=["host_id", "from_seq"],
        set_={
            name: statement.excluded[name]
            for name in ("to_seq", "from_ts", "to_ts", "reason", "reported_at")
        },
    )
    session.execute(statement)
    return len(rows)


def gaps_between(
    session: Session, *, host_id: int, start: datetime, end: datetime
) -> list[SampleGapRead]:
    """The host's gap records that overlap [start, end), oldest first."""
    # Columns rather than entities: every series read asks, and rarely finds one.
    rows = session.execute(
        select(_gaps.c.from_seq, _gaps.c.to_seq, _gaps.c.from_ts, _gaps.c.to_ts, _gaps.c.reason)
        .where(_gaps.c.host_id == host_id, _gaps.c.to_ts >= start, _gaps.c.from_ts < end)
        .order_by(_gaps.c.from_ts, _gaps.c.from_seq)
    )
    return [
        SampleGapRead(
            from_seq=from_seq,
            to_seq=to_seq,
            from_ts=from_ts,
            to_ts=to_ts,
            reason=reason,
            samples_lost=to_seq - from_seq + 1,
        )
        for from_seq, to_seq, from_ts, to_ts, reason in rows
    ]
