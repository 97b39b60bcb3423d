"""Asking the engine for a checked patch of a host's current config."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.changes.schemas import Proposal
from app.configs.inputs import gather_inputs
from app.configs.models import ConfigSnapshot
from app.core.errors import ConflictError, NotFoundError
from app.hosts.models import Host


@dataclass(frozen=True, slots=True)
class Base:
    """The snapshot a proposal is made against: the host's current config."""

    host: Host
    snapshot: ConfigSnapshot


def current_base(*, session: Session, host_id: int) -> Base:
    """The host and the stored snapshot of its current config; 404/409 when there is none."""
    host = session.get(Host, host_id)
    if host is None:
        raise NotFoundError(f"host {host_id} does not exist")
    snapshot = session.scalar(
        select(ConfigSnapshot).where(
            ConfigSnapshot.host_id == host_id, ConfigSnapshot.hash == host.config_hash
        )
    )
    if snapshot is None:
        raise ConflictError(
            f"host {host.hostname} has not sent its configuration yet: nothing to change"
        )
    return Base(host=host, snapshot=snapshot)


def propose(
    *,
    session: Session,
    base: Base,
    finding_keys: list[str],
    overrides: dict[str, list[str]],
    now: datetime,
) -> Proposal:
    """The engine's checked patch for these findings of the base snapshot (nothing stored)."""
    # The engine's remedy module is imported only where diffs are made.
    from nginx_fleet_analyzer.remedy import propose as engine_propose

    inputs = gather_inputs(session=session, host_id=base.host.id, now=now)
    result = engine_propose(
        base.snapshot.dump,
        finding_keys,
        facts=inputs.facts,
        metrics=inputs.metrics,
        overrides=overrides or None,
    )
    data: dict[str, Any] = result.to_dict()
    return Proposal.model_validate({**data, "snapshot_id": base.snapshot.id})
