"""Which acknowledgement mutes a finding, if any."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.findings.models import Ack


def active_acks(
    *, session: Session, now: datetime, host_ids: Sequence[int] | None = None
) -> list[Ack]:
    """Acks in force at `now`: fleet-wide ones plus those of the given hosts (all when None)."""
    query = select(Ack).where(or_(Ack.expires_at.is_(None), Ack.expires_at > now))
    if host_ids is not None:
        query = query.where(or_(Ack.host_id.is_(None), Ack.host_id.in_(list(host_ids))))
    return list(session.scalars(query.order_by(Ack.id)))


def _specificity(ack: Ack) -> int:
    """A host- and finding-specific ack explains a mute better than a fleet-wide rule ack."""
    return (2 if ack.host_id is not None else 0) + (1 if ack.finding_key is not None else 0)


def matching_ack(acks: Sequence[Ack], *, host_id: int, rule: str, key: str) -> Ack | None:
    """The most specific of `acks` that mutes this finding of this host, or None."""
    found = [
        ack
        for ack in acks
        if ack.rule == rule
        and (ack.host_id is None or ack.host_id == host_id)
        and (ack.finding_key is None or ack.finding_key == key)
    ]
    return max(found, key=_specificity, default=None)
