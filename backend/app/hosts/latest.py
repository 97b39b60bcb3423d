"""The newest sample's figures as the host row keeps them for the fleet page, and the indexed
copies the page sorts by."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, and_, case, or_, select, update
from sqlalchemy.orm import Session

from app.hosts.models import SORTED_COPY_COLUMNS, Host
from app.metrics.models import Sample
from app.metrics.sql import table_of

_hosts = table_of(Host)

# How far the sort order of the fleet page may lag behind the figures it shows. A host pushing
# every 10 s rewrites its indexed copies on one push in six; the other five updates change no
# indexed column and stay on the row's page (HOT), which is most of what a push costs PostgreSQL.
SORTED_COPY_MAX_AGE = timedelta(seconds=60)

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
        # The rare path: the sorted copies follow at once (rows whose figures were re-derived).
        session.execute(update(Host).where(Host.id == host_id).values(latest_figures(newest)))
        session.execute(update(_hosts).where(_hosts.c.id == host_id).values(copy_sorted_now()))


def sorted_copies_due(refresh_before: ColumnElement[datetime]) -> ColumnElement[bool]:
    """True for a host row whose sorted copies were taken before `refresh_before` (or never)."""
    return or_(_hosts.c.sorted_at.is_(None), _hosts.c.sorted_at < refresh_before)


def sorted_copy_values(
    new: Mapping[str, ColumnElement[Any]], refresh_before: ColumnElement[datetime]
) -> dict[str, ColumnElement[Any]]:
    """UPDATE values that set each sort_<column> (and sorted_at) to `new[column]` when the
    copies are due, and leave them unchanged otherwise (so the update stays HOT).

    `new` holds a value for last_seen_at and each figure of SORTED_COPY_COLUMNS."""
    due = sorted_copies_due(refresh_before)
    values: dict[str, ColumnElement[Any]] = {
        f"sort_{name}": case((due, new[name]), else_=_hosts.c[f"sort_{name}"])
        for name in SORTED_COPY_COLUMNS
    }
    values["sorted_at"] = case((due, new["last_seen_at"]), else_=_hosts.c.sorted_at)
    return values


def copy_sorted_now() -> dict[str, Any]:
    """UPDATE values that copy the row's own figures into its sorted copies at once."""
    values: dict[str, Any] = {f"sort_{name}": _hosts.c[name] for name in SORTED_COPY_COLUMNS}
    values["sorted_at"] = _hosts.c.last_seen_at
    return values


def refresh_sorted_copies(*, session: Session, now: datetime) -> int:
    """Bring the sorted copies that are due and differ up to date; how many hosts. The caller
    commits.

    Pushing hosts refresh their own copies; this catches the hosts that stopped pushing within
    SORTED_COPY_MAX_AGE of their last refresh, so that their order matches their figures."""
    differs = or_(
        *(_hosts.c[f"sort_{name}"].is_distinct_from(_hosts.c[name]) for name in SORTED_COPY_COLUMNS)
    )
    due = or_(_hosts.c.sorted_at.is_(None), _hosts.c.sorted_at < now - SORTED_COPY_MAX_AGE)
    result = session.execute(update(_hosts).where(due, differs).values(copy_sorted_now()))
    return int(getattr(result, "rowcount", 0) or 0)
