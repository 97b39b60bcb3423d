"""The newest sample's figures as the host row keeps them for the fleet page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import RowMapping, and_, select, update
from sqlalchemy.orm import Session

from app.hosts.models import Host
from app.metrics.models import Sample

# Sample columns copied as they are onto the host row by the push that stores the sample.
COPIED_FIGURES = (
    "req_per_s",
    "active",
    "reading",
    "writing",
    "waiting",
    "drops_per_s",
    "cpu_pct",
    "fds_open",
    "fds_limit",
)
# Every figure column of the host row: the copied ones and the two percentages derived here.
LATEST_FIGURES = (*COPIED_FIGURES, "mem_used_pct", "fds_used_pct")


def share_pct(used: float | None, total: float | None) -> float | None:
    """used as a percentage of total, when both are known and total is not zero."""
    if used is None or not total:
        return None
    return 100.0 * used / total


def latest_figures(sample: Mapping[str, Any] | RowMapping) -> dict[str, Any]:
    """The host-row figure columns (LATEST_FIGURES) of a stored samples row."""
    figures = {name: sample.get(name) for name in COPIED_FIGURES}
    figures["mem_used_pct"] = share_pct(sample.get("mem_used_bytes"), sample.get("mem_total_bytes"))
    figures["fds_used_pct"] = share_pct(sample.get("fds_open"), sample.get("fds_limit"))
    return figures


# The sample columns latest_figures reads.
SAMPLE_COLUMNS = (*COPIED_FIGURES, "mem_used_bytes", "mem_total_bytes")


def refresh_latest_figures(session: Session, *, host_id: int) -> None:
    """Copy the figures of the host's newest stored sample (hosts.last_seq) onto its row.

    For the per-push path: a late sample stored there re-derives the rates of the samples after
    it, the newest included, so the figures are read back rather than taken from the push."""
    columns = [Sample.__table__.c[name] for name in SAMPLE_COLUMNS]
    newest = (
        session.execute(
            select(*columns)
            .join(Host, and_(Sample.host_id == Host.id, Sample.seq == Host.last_seq))
            .where(Host.id == host_id)
            # One row: a seq is stored once (app.metrics.samples.store_samples).
            .order_by(Sample.ts.desc())
            .limit(1)
        )
        .mappings()
        .one_or_none()
    )
    if newest is not None:
        session.execute(update(Host).where(Host.id == host_id).values(latest_figures(newest)))
