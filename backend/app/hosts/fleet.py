"""The fleet page in SQL: one row per host with status, newest figures, latest analysis and
recent access-log figures, filtered, sorted and paged by the database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    FromClause,
    RowMapping,
    Select,
    and_,
    case,
    func,
    literal,
    or_,
    select,
    true,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import KeyedColumnElement

from app.access_log.models import AccessLogRecent
from app.configs.models import AnalysisStatus, ConfigAnalysis
from app.configs.rescoring import latest_analysis_id_of
from app.configs.schemas import FindingCounts
from app.hosts.latest import LATEST_FIGURES
from app.hosts.models import Host, HostFacts
from app.hosts.schemas import FleetHost, FleetSort, HostStatus, SortOrder
from app.hosts.status import STALE_AFTER_INTERVALS, host_status

# Columns of the latest config analysis that the fleet view shows.
FLEET_ANALYSIS_COLUMNS = ("status", "score", "error_count", "warning_count", "info_count")
# The access-log figures of the last 15 minutes, refreshed with the rollups every minute.
FLEET_LOG_FIGURES = ("cache_hit_ratio", "request_time_p95_s", "share_5xx")
FLEET_LOG_COLUMNS = ("computed_at", *FLEET_LOG_FIGURES)
# Older figures mean the rollups stopped: they no longer describe the last 15 minutes.
LOG_FIGURES_MAX_AGE = timedelta(minutes=5)
# Host columns build_fleet_host reads besides the figures.
HOST_STATUS_COLUMNS = (
    "id",
    "hostname",
    "labels",
    "last_seen_at",
    "nginx_up",
    "stub_status_available",
    "stub_status_error",
)

LabelFilter = dict[str, set[str]]


@dataclass(frozen=True, slots=True)
class FleetFilter:
    """What narrows the fleet: labels (every key, any of its values), statuses, a name part."""

    labels: LabelFilter
    statuses: frozenset[HostStatus] = frozenset()
    hostname_part: str | None = None


def build_fleet_host(
    *,
    host: Mapping[str, Any],
    sample: Mapping[str, Any] | None,
    nginx_version: str | None,
    now: datetime,
    push_interval_s: int,
    analysis: Mapping[str, Any] | None = None,
    access_log: Mapping[str, Any] | None = None,
) -> FleetHost:
    """A FleetHost from host columns, the newest sample's figures (LATEST_FIGURES; None before
    any push), the latest config analysis's columns (None before one) and the recent access-log
    figures."""
    status, reason = host_status(
        last_seen_at=host["last_seen_at"],
        nginx_up=host["nginx_up"],
        stub_status_available=host["stub_status_available"],
        stub_status_error=host["stub_status_error"],
        now=now,
        push_interval_s=push_interval_s,
    )
    figures = {name: (sample or {}).get(name) for name in LATEST_FIGURES}
    return FleetHost(
        id=host["id"],
        hostname=host["hostname"],
        labels=host["labels"] or {},
        status=status,
        status_reason=reason,
        last_seen_at=host["last_seen_at"],
        nginx_version=nginx_version,
        stub_status_available=host["stub_status_available"],
        stub_status_error=host["stub_status_error"],
        req_per_s=figures["req_per_s"],
        active=figures["active"],
        reading=figures["reading"],
        writing=figures["writing"],
        waiting=figures["waiting"],
        drops_per_s=figures["drops_per_s"],
        cpu_pct=figures["cpu_pct"],
        mem_used_pct=figures["mem_used_pct"],
        fds_open=figures["fds_open"],
        fds_limit=figures["fds_limit"],
        **log_figures(access_log, now),
        **analysis_figures(analysis),
    )


def log_figures(access_log: Mapping[str, Any] | None, now: datetime) -> dict[str, Any]:
    """The recent access-log figures, all None when there are none or they are out of date."""
    if access_log is None or access_log["computed_at"] is None:
        return dict.fromkeys(FLEET_LOG_FIGURES)
    if access_log["computed_at"] < now - LOG_FIGURES_MAX_AGE:
        return dict.fromkeys(FLEET_LOG_FIGURES)
    return {name: access_log[name] for name in FLEET_LOG_FIGURES}


def analysis_figures(analysis: Mapping[str, Any] | None) -> dict[str, Any]:
    """score and findings counts of a latest analysis; both None before one or when it failed."""
    if analysis is None or analysis["status"] != AnalysisStatus.ok:
        return {"score": None, "findings": None}
    return {
        "score": analysis["score"],
        "findings": FindingCounts(
            error=analysis["error_count"],
            warning=analysis["warning_count"],
            info=analysis["info_count"],
        ),
    }


def stale_before(now: datetime, push_interval_s: int) -> datetime:
    """Hosts last seen before this are stale (app.hosts.status)."""
    return now - timedelta(seconds=STALE_AFTER_INTERVALS * push_interval_s)


def status_condition(status: HostStatus, cutoff: datetime) -> ColumnElement[bool]:
    """The SQL test of app.hosts.status.host_status for one status."""
    fresh = Host.last_seen_at >= cutoff
    if status == "new":
        return Host.last_seen_at.is_(None)
    if status == "stale":
        return Host.last_seen_at < cutoff
    if status == "down":
        return and_(fresh, Host.nginx_up.is_(False))
    # IS NOT FALSE: a host whose agent never said whether nginx runs counts as up.
    return and_(fresh, Host.nginx_up.is_not(False))


def status_rank(cutoff: datetime) -> ColumnElement[int]:
    """Worst first when ascending: down 0, stale 1, new 2, up 3 (the UI's order)."""
    return case(
        (Host.last_seen_at.is_(None), 2),
        (Host.last_seen_at < cutoff, 1),
        (Host.nginx_up.is_(False), 0),
        else_=3,
    )


def label_condition(dialect: str, key: str, values: set[str]) -> ColumnElement[bool]:
    """The host has label `key` with one of `values`.

    On PostgreSQL a containment test per value (labels @> '{"k": "v"}'), which the GIN index
    ix_hosts_labels answers; elsewhere the key's value compared."""
    if dialect == "postgresql":
        labels = type_coerce(Host.labels, JSONB)
        tests: list[ColumnElement[bool]] = [
            labels.contains({key: value}) for value in sorted(values)
        ]
        return or_(*tests)
    value: ColumnElement[str] = Host.labels[key].as_string()
    return value.in_(sorted(values))


def escape_like(text: str) -> str:
    """text with LIKE's wildcards escaped by a backslash."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def host_conditions(
    *, dialect: str, fleet_filter: FleetFilter, cutoff: datetime
) -> list[ColumnElement[bool]]:
    """The WHERE terms of a filter, on hosts columns only (so counting needs no join)."""
    conditions = [
        label_condition(dialect, key, values) for key, values in sorted(fleet_filter.labels.items())
    ]
    if fleet_filter.statuses:
        conditions.append(
            or_(*(status_condition(status, cutoff) for status in sorted(fleet_filter.statuses)))
        )
    if fleet_filter.hostname_part:
        part = escape_like(fleet_filter.hostname_part)
        conditions.append(Host.hostname.ilike(f"%{part}%", escape="\\"))
    return conditions


def fresh_log(name: str, now: datetime) -> ColumnElement[Any]:
    """An access-log figure, NULL when its computation is out of date (see log_figures)."""
    column: KeyedColumnElement[Any] = AccessLogRecent.__table__.c[name]
    return case((AccessLogRecent.computed_at >= now - LOG_FIGURES_MAX_AGE, column))


def latest_analysis(dialect: str) -> tuple[FromClause, ColumnElement[bool]]:
    """Each host's latest analysis (FLEET_ANALYSIS_COLUMNS) and the ON clause joining it.

    On PostgreSQL a LATERAL subquery: one backward probe of ix_config_analyses_host_id_id per
    host the plan needs (a page, or every host when sorting by a score), never a scan of every
    analysis; SQLite has no LATERAL and joins the analysis its correlated max(id) names."""
    if dialect == "postgresql":
        columns = [ConfigAnalysis.__table__.c[name] for name in FLEET_ANALYSIS_COLUMNS]
        newest = (
            select(*columns)
            .where(ConfigAnalysis.host_id == Host.id)
            .order_by(ConfigAnalysis.id.desc())
            .limit(1)
            .lateral("latest_analysis")
        )
        return newest, true()
    table = ConfigAnalysis.__table__.alias("latest_analysis")
    return table, table.c.id == latest_analysis_id_of(Host.id.expression)


def ok_analysis(analysis: FromClause, name: str) -> ColumnElement[Any]:
    """A column of the latest analysis, NULL when it failed (see analysis_figures)."""
    return case((analysis.c.status == AnalysisStatus.ok, analysis.c[name]))


def sort_key(
    sort: FleetSort, *, analysis: FromClause, now: datetime, cutoff: datetime
) -> ColumnElement[Any]:
    """The SQL expression a fleet column sorts by.

    Figures and last_seen_at sort by their indexed copies (app.hosts.latest): the order is
    at most SORTED_COPY_MAX_AGE behind the figures the rows show."""
    keys: dict[FleetSort, ColumnElement[Any]] = {
        "hostname": Host.hostname.expression,
        "status": status_rank(cutoff),
        "req_per_s": Host.sort_req_per_s.expression,
        "active": Host.sort_active.expression,
        "waiting": Host.sort_waiting.expression,
        "drops_per_s": Host.sort_drops_per_s.expression,
        "cpu_pct": Host.sort_cpu_pct.expression,
        "mem_used_pct": Host.sort_mem_used_pct.expression,
        # Closest to its limit first is what an operator looks for, not the raw count.
        "fds": Host.sort_fds_used_pct.expression,
        "last_seen_at": Host.sort_last_seen_at.expression,
        "score": ok_analysis(analysis, "score"),
        "errors": ok_analysis(analysis, "error_count"),
        "warnings": ok_analysis(analysis, "warning_count"),
        "cache_hit_ratio": fresh_log("cache_hit_ratio", now),
        "request_time_p95_s": fresh_log("request_time_p95_s", now),
        "share_5xx": fresh_log("share_5xx", now),
    }
    return keys[sort]


def fleet_rows(dialect: str) -> tuple[Select[Any], FromClause]:
    """Hosts with their nginx version, latest analysis and recent access-log figures, and the
    latest analysis it joins (for sorting by its columns)."""
    analysis, on_clause = latest_analysis(dialect)
    host_columns = [Host.__table__.c[name] for name in (*HOST_STATUS_COLUMNS, *LATEST_FIGURES)]
    analysis_columns = [analysis.c[name].label(f"a_{name}") for name in FLEET_ANALYSIS_COLUMNS]
    log_columns = [
        AccessLogRecent.__table__.c[name].label(f"l_{name}") for name in FLEET_LOG_COLUMNS
    ]
    query = (
        select(*host_columns, HostFacts.nginx_version, *analysis_columns, *log_columns)
        .select_from(Host)
        .outerjoin(HostFacts, HostFacts.host_id == Host.id)
        .outerjoin(analysis, on_clause)
        .outerjoin(AccessLogRecent, AccessLogRecent.host_id == Host.id)
    )
    return query, analysis


# Sort keys that need the latest analysis or the access-log figures joined to be known.
ANALYSIS_SORTS: frozenset[FleetSort] = frozenset({"score", "errors", "warnings"})
LOG_SORTS: frozenset[FleetSort] = frozenset({"cache_hit_ratio", "request_time_p95_s", "share_5xx"})
# Sort keys with an index (sort_column DESC NULLS LAST, id DESC) on hosts (app.hosts.models).
DESC_INDEXED_SORTS: frozenset[FleetSort] = frozenset(
    {
        "req_per_s",
        "active",
        "waiting",
        "drops_per_s",
        "cpu_pct",
        "mem_used_pct",
        "fds",
        "last_seen_at",
    }
)


def read_off_an_index(sort: FleetSort, order: SortOrder) -> bool:
    """Whether PostgreSQL reads a page of this sort straight off an index, in order."""
    return sort == "hostname" or (order == "desc" and sort in DESC_INDEXED_SORTS)


def ordering(
    key: ColumnElement[Any], host_id: ColumnElement[int], *, sort: FleetSort, order: SortOrder
) -> list[ColumnElement[Any]]:
    """ORDER BY terms: unknown values last, ties by host id in the same direction."""
    # hostname is never NULL: no NULLS clause, so that both directions walk its index.
    if sort == "hostname":
        return [key.asc(), host_id.asc()] if order == "asc" else [key.desc(), host_id.desc()]
    if order == "asc":
        return [key.asc().nulls_last(), host_id.asc()]
    return [key.desc().nulls_last(), host_id.desc()]


def fleet_page_query(
    *,
    dialect: str,
    fleet_filter: FleetFilter,
    sort: FleetSort,
    order: SortOrder,
    limit: int,
    offset: int,
    now: datetime,
    push_interval_s: int,
) -> Select[Any]:
    """One page of the fleet: filtered, sorted (unknown values last, ties by host id in the
    same direction) and cut by the database.

    The first page of a sort read off an index takes its rows as the index gives them. Any
    other page chooses its hosts first, joining only what the sort key needs, then joins the
    rest of the row for those hosts alone: sorting every matching host costs a sixth of what
    it does with every host's facts, analysis and access-log figures joined (measured at
    10,000 hosts), and a deep page joins 50 rows, not every row before it."""
    cutoff = stale_before(now, push_interval_s)
    conditions = host_conditions(dialect=dialect, fleet_filter=fleet_filter, cutoff=cutoff)
    if read_off_an_index(sort, order) and offset == 0:
        rows, analysis = fleet_rows(dialect)
        key = sort_key(sort, analysis=analysis, now=now, cutoff=cutoff)
        terms = ordering(key, Host.id.expression, sort=sort, order=order)
        return rows.where(*conditions).order_by(*terms).limit(limit).offset(offset)
    analysis, on_clause = latest_analysis(dialect)
    key = sort_key(sort, analysis=analysis, now=now, cutoff=cutoff)
    chosen = select(Host.id.label("host_id"), key.label("sort_key")).select_from(Host)
    if sort in ANALYSIS_SORTS:
        chosen = chosen.outerjoin(analysis, on_clause)
    if sort in LOG_SORTS:
        chosen = chosen.outerjoin(AccessLogRecent, AccessLogRecent.host_id == Host.id)
    page = (
        chosen.where(*conditions)
        .order_by(*ordering(key, Host.id.expression, sort=sort, order=order))
        .limit(limit)
        .offset(offset)
        .subquery("page")
    )
    rows, _ = fleet_rows(dialect)
    return rows.join(page, page.c.host_id == Host.id).order_by(
        *ordering(page.c.sort_key, page.c.host_id, sort=sort, order=order)
    )


def fleet_count_query(
    *, dialect: str, fleet_filter: FleetFilter, now: datetime, push_interval_s: int
) -> Select[int]:
    """How many hosts the filter matches."""
    cutoff = stale_before(now, push_interval_s)
    conditions = host_conditions(dialect=dialect, fleet_filter=fleet_filter, cutoff=cutoff)
    return select(func.count()).select_from(Host).where(*conditions)


def fleet_host_of(row: RowMapping, *, now: datetime, push_interval_s: int) -> FleetHost:
    """The FleetHost of a fleet_rows() row."""
    analysis = None
    if row["a_status"] is not None:
        analysis = {name: row[f"a_{name}"] for name in FLEET_ANALYSIS_COLUMNS}
    return build_fleet_host(
        host={name: row[name] for name in HOST_STATUS_COLUMNS},
        sample={name: row[name] for name in LATEST_FIGURES},
        nginx_version=row["nginx_version"],
        now=now,
        push_interval_s=push_interval_s,
        analysis=analysis,
        access_log={name: row[f"l_{name}"] for name in FLEET_LOG_COLUMNS},
    )


def summary_query(
    *, dialect: str, fleet_filter: FleetFilter, now: datetime, push_interval_s: int
) -> Select[*tuple[Any, ...]]:
    """Counts by status, the summed load of hosts that are not stale, hosts dropping
    connections and the findings of the latest analyses, over the filtered hosts."""
    cutoff = stale_before(now, push_interval_s)
    fresh = Host.last_seen_at >= cutoff

    def hosts_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    analysis, on_clause = latest_analysis(dialect)

    def findings(name: str) -> ColumnElement[int]:
        return func.coalesce(func.sum(ok_analysis(analysis, name)), 0)

    statuses: Sequence[HostStatus] = ("up", "down", "stale", "new")
    conditions = host_conditions(dialect=dialect, fleet_filter=fleet_filter, cutoff=cutoff)
    return (
        select(
            func.count().label("hosts"),
            *(hosts_where(status_condition(s, cutoff)).label(s) for s in statuses),
            func.coalesce(func.sum(case((fresh, Host.req_per_s))), literal(0.0)).label("req_per_s"),
            hosts_where(and_(fresh, Host.drops_per_s > 0)).label("hosts_with_drops"),
            findings("error_count").label("error"),
            findings("warning_count").label("warning"),
            findings("info_count").label("info"),
        )
        .select_from(Host)
        .outerjoin(analysis, on_clause)
        .where(*conditions)
    )


def session_dialect(session: Session) -> str:
    """The name of the session's database dialect (postgresql, sqlite)."""
    return session.get_bind().dialect.name
