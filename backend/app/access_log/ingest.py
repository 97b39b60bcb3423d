"""Storing the access-log aggregates of newly stored samples, and each host's files report.

Called by both ingest paths with the samples their INSERT actually stored, so a replayed
sample (a duplicate seq) never adds its figures twice."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sqlalchemy.orm import Session

from app.access_log.fields import CACHE_COUNTERS, STATUS_COUNTERS
from app.access_log.models import AccessLogFiles, LogStats, LogUpstreamStats
from app.access_log.rollups import raw_kept_since
from app.agents.access_log_schemas import AccessLog, SiteStats
from app.agents.schemas import Sample as PushedSample
from app.core.db import utcnow
from app.metrics.sql import dialect_name, insert_for_dialect, table_of

_stats = table_of(LogStats)
_upstreams = table_of(LogUpstreamStats)
_files = table_of(AccessLogFiles)

# Stored counter -> attribute of the pushed StatusCounts / CacheCounts.
_STATUS_ATTRIBUTES = dict(
    zip(
        STATUS_COUNTERS,
        (
            "class_1xx",
            "class_2xx",
            "class_3xx",
            "class_4xx",
            "class_5xx",
            "code_499",
            "code_500",
            "code_502",
            "code_503",
            "code_504",
        ),
        strict=True,
    )
)
_CACHE_ATTRIBUTES = {name: name.removeprefix("cache_") for name in CACHE_COUNTERS}


def _site_row(
    host_id: int, sample: PushedSample, site: SiteStats, paths: list[list[Any]] | None
) -> dict[str, Any]:
    """The log_stats row of one site of a sample."""
    status, cache = site.status, site.cache
    row: dict[str, Any] = {
        "host_id": host_id,
        "ts": sample.ts,
        "seq": sample.seq,
        "site": site.site,
        "requests": site.requests,
        "bytes_sent": site.bytes_sent,
        "get_2xx": site.get_2xx,
        "upstream_errors": site.upstream_errors,
        "request_time": site.request_time.to_stored() if site.request_time else None,
        "upstream_time": site.upstream_time.to_stored() if site.upstream_time else None,
        "top_paths": paths,
    }
    for name, attribute in _STATUS_ATTRIBUTES.items():
        row[name] = getattr(status, attribute) if status is not None else None
    for name, attribute in _CACHE_ATTRIBUTES.items():
        row[name] = getattr(cache, attribute) if cache is not None else None
    return row


def _paths_by_site(log: AccessLog) -> dict[str, list[list[Any]]]:
    """The sample's top paths as stored entries [path, requests, time_sum, time_max] per site."""
    paths: dict[str, list[list[Any]]] = {}
    for item in log.top_paths or []:
        paths.setdefault(item.site, []).append(
            [item.path, item.requests, item.time_sum, item.time_max]
        )
    return paths


def log_rows(
    host_id: int, sample: PushedSample
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The log_stats and log_upstream_stats rows of one sample (none without access_log)."""
    log = sample.access_log
    if log is None:
        return [], []
    paths = _paths_by_site(log)
    sites = [_site_row(host_id, sample, site, paths.get(site.site)) for site in log.sites]
    upstreams = [
        {
            "host_id": host_id,
            "ts": sample.ts,
            "seq": sample.seq,
            "site": item.site,
            "upstream": item.upstream,
            "attempts": item.attempts,
            "errors": item.errors,
            "response_time": item.response_time.to_stored() if item.response_time else None,
        }
        for item in log.upstreams
    ]
    return sites, upstreams


@lru_cache(maxsize=4)
def _insert_new(dialect: str, table_name: str) -> Any:
    """INSERT … ON CONFLICT DO NOTHING of one log table, built once per dialect (hot path)."""
    table = _stats if table_name == _stats.name else _upstreams
    return insert_for_dialect(dialect, table).on_conflict_do_nothing()


def _store_reports(session: Session, reports: dict[int, dict[str, Any]]) -> None:
    """Keep each host's newest files report; a replayed older sample does not replace it."""
    statement = insert_for_dialect(dialect_name(session), _files)
    statement = statement.on_conflict_do_update(
        index_elements=["host_id"],
        set_={name: statement.excluded[name] for name in ("ts", "seq", "files")},
        where=_files.c.ts <= statement.excluded.ts,
    )
    # In host order, as the host updates of a batch, so two batches cannot deadlock.
    session.execute(statement, [reports[host_id] for host_id in sorted(reports)])


def store_access_logs(session: Session, stored: Iterable[tuple[int, PushedSample]]) -> int:
    """Insert the log rows of these newly stored (host_id, sample) pairs and keep each host's
    newest files report; returns the site rows written. Does not commit."""
    sites: list[dict[str, Any]] = []
    upstreams: list[dict[str, Any]] = []
    reports: dict[int, dict[str, Any]] = {}
    # Rows older than the raw retention would never be rolled up (rollups.rollup_logs), and
    # expired one by one from the DEFAULT partition: their figures are not kept.
    oldest = raw_kept_since(utcnow())
    for host_id, sample in stored:
        log = sample.access_log
        if log is None or sample.ts < oldest:
            continue
        site_rows, upstream_rows = log_rows(host_id, sample)
        sites += site_rows
        upstreams += upstream_rows
        newest = reports.get(host_id)
        if newest is None or (sample.ts, sample.seq) >= (newest["ts"], newest["seq"]):
            reports[host_id] = {
                "host_id": host_id,
                "ts": sample.ts,
                "seq": sample.seq,
                "files": [item.model_dump(mode="json") for item in log.files],
            }
    dialect = dialect_name(session)
    if sites:
        session.connection().execute(_insert_new(dialect, _stats.name), sites)
    if upstreams:
        session.connection().execute(_insert_new(dialect, _upstreams.name), upstreams)
    if reports:
        _store_reports(session, reports)
    return len(sites)
