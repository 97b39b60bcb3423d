"""A host's access-log figures over a range, and totals over any set of hosts and sites."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access_log.fields import STATUS_CLASSES
from app.access_log.missing import config_serves, fixing_findings, missing_figures
from app.access_log.models import AccessLogFiles
from app.access_log.schemas import (
    AccessLogFileRead,
    AccessLogSummaryRead,
    HostAccessLogRead,
    SiteRead,
)
from app.access_log.series import plan, range_figures, rows_of, site_requests, upstream_figures
from app.core.errors import NotFoundError
from app.hosts.models import Host


def _require_hosts(session: Session, host_ids: Sequence[int]) -> None:
    """NotFoundError naming the hosts that do not exist."""
    known = set(session.scalars(select(Host.id).where(Host.id.in_(host_ids))))
    unknown = sorted(set(host_ids) - known)
    if len(unknown) == 1:
        raise NotFoundError(f"host {unknown[0]} does not exist")
    if unknown:
        raise NotFoundError(f"hosts {', '.join(map(str, unknown))} do not exist")


def _files_read(files: list[dict[str, object]]) -> list[AccessLogFileRead]:
    """The stored report as the API shows it (fields a newer agent adds are left out)."""
    return [AccessLogFileRead.model_validate(file) for file in files]


def host_access_log(
    *,
    session: Session,
    host_id: int,
    start: datetime,
    end: datetime,
    site: str | None,
    now: datetime,
) -> HostAccessLogRead:
    """Series, totals, upstreams, sites, files report and missing reasons of one host."""
    _require_hosts(session, [host_id])
    chosen = plan(start, end, now)
    sites = [site] if site is not None else []
    figures = range_figures(chosen)
    for row in rows_of(
        session,
        "site",
        chosen.source,
        host_ids=[host_id],
        sites=sites,
        start=start,
        end=end,
        now=now,
    ):
        figures.add(row)
    totals, total_figures = figures.total()
    upstreams = upstream_figures(
        rows_of(
            session,
            "upstream",
            chosen.source,
            host_ids=[host_id],
            sites=sites,
            start=start,
            end=end,
            now=now,
        )
    )
    report = session.get(AccessLogFiles, host_id)
    files = list(report.files) if report is not None else None
    present = {
        "hit_ratio": total_figures.hit_ratio is not None,
        "latency": total_figures.request_time_p50_s is not None,
        "upstream_latency": total_figures.upstream_time_p50_s is not None,
        "status": any(totals.counters[name] for name in STATUS_CLASSES),
    }
    complete = all(present.values())
    missing = missing_figures(
        present,
        files,
        fixing_findings(session, host_id) if not complete else [],
        config_serves(session, host_id) if not complete else None,
    )
    return HostAccessLogRead(
        host_id=host_id,
        start=start,
        end=end,
        step_s=chosen.step_s,
        site=site,
        points=figures.points(),
        totals=total_figures,
        upstreams=upstreams,
        sites=[
            SiteRead(site=name, requests=requests)
            for name, requests in site_requests(
                session, chosen.source, host_ids=[host_id], start=start, end=end, now=now
            )
        ],
        files=_files_read(files or []),
        files_reported_at=report.ts if report is not None else None,
        missing=missing,
        top_paths=figures.top_paths(),
    )


def access_log_summary(
    *,
    session: Session,
    host_ids: Sequence[int],
    sites: Sequence[str],
    start: datetime,
    end: datetime,
    now: datetime,
) -> AccessLogSummaryRead:
    """Totals over the given hosts (none: every host) and sites (none: every site)."""
    if host_ids:
        _require_hosts(session, host_ids)
    chosen = plan(start, end, now)
    figures = range_figures(chosen)
    for row in rows_of(
        session,
        "site",
        chosen.source,
        host_ids=list(host_ids) or None,
        sites=sites,
        start=start,
        end=end,
        now=now,
    ):
        figures.add(row)
    return AccessLogSummaryRead(
        start=start,
        end=end,
        host_ids=sorted(set(host_ids)),
        sites=sorted(set(sites)),
        hosts_with_data=len(figures.hosts),
        totals=figures.total()[1],
    )
