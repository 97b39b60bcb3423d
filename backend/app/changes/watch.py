"""The periodic look at applied changes: metric gates, next waves, impact cards."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.changes import impact, rollouts
from app.changes.models import Change, ChangeStatus
from app.core.config import get_settings

# Impact cards are filled for changes applied within this long (older ones keep theirs).
MEASURE_HORIZON = timedelta(days=1)


def measure_impacts(*, session: Session, now: datetime) -> list[Change]:
    """Fill or refresh the impact card of recently verified changes; commits."""
    window = timedelta(seconds=get_settings().impact_window_s)
    changes = session.scalars(
        select(Change).where(
            Change.status == ChangeStatus.verified,
            Change.finished_at >= now - MEASURE_HORIZON,
        )
    ).all()
    moved = []
    for change in changes:
        card = change.impact
        # A measured card is final once it also has the score after the apply.
        settled = card is not None and card.get("status") != "waiting"
        if settled and card is not None and card.get("score_after") is not None:
            continue
        card = impact.measure(session=session, change=change, window=window, now=now)
        if card != change.impact:
            change.impact = card
            moved.append(change)
    session.commit()
    return moved


def watch_changes(*, session: Session, now: datetime) -> list[Change]:
    """One watch cycle; returns the changes whose state moved (for the live streams)."""
    moved = rollouts.check_gates(session=session, now=now)
    rollouts.advance_running(session=session, now=now)
    moved += measure_impacts(session=session, now=now)
    return moved
