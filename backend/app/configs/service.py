"""Storing config snapshots once per hash and recording what parsing them found."""

from __future__ import annotations

import logging
from datetime import datetime

from nginx_fleet_analyzer import parse_dump
from sqlalchemy.orm import Session

from app.configs.analyzer import record_summary
from app.configs.models import ConfigSnapshot, ParseStatus
from app.core.db import utcnow
from app.metrics.sql import insert_for, table_of

log = logging.getLogger(__name__)

_snapshots = table_of(ConfigSnapshot)


def store_snapshot(
    *, session: Session, host_id: int, config_hash: str, dump: str, now: datetime
) -> int | None:
    """Add the dump unless this host already has one with this hash; returns the new id."""
    statement = (
        insert_for(session, _snapshots)
        .values(
            host_id=host_id,
            hash=config_hash,
            dump=dump,
            received_at=now,
            parse_status=ParseStatus.pending.value,
        )
        .on_conflict_do_nothing(index_elements=["host_id", "hash"])
        .returning(_snapshots.c.id)
    )
    new_id: int | None = session.execute(statement).scalar_one_or_none()
    return new_id


def summarize_snapshot(*, session: Session, snapshot_id: int) -> ConfigSnapshot | None:
    """Parse a snapshot and store its file count, line count and parse problems; commits.

    Returns None when the snapshot no longer exists (its host was deleted meanwhile)."""
    snapshot = session.get(ConfigSnapshot, snapshot_id)
    if snapshot is None:
        log.warning("config snapshot %d vanished before analysis", snapshot_id)
        return None
    record_summary(snapshot, parse_dump(snapshot.dump), utcnow())
    session.commit()
    return snapshot
