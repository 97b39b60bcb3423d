"""Storing pushed samples with their derived rates, idempotently on (host_id, seq[, ts])."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import and_, bindparam, func, select, update
from sqlalchemy.orm import Session

from app.agents.schemas import ErrorLog
from app.agents.schemas import Sample as PushedSample
from app.metrics.models import Sample
from app.metrics.rates import CounterReading, derive_rate_series
from app.metrics.sql import dialect_name, insert_for_dialect, table_of

_samples = table_of(Sample)


def _compact(values: dict[str, Any]) -> dict[str, Any]:
    """values without None entries."""
    return {key: value for key, value in values.items() if value is not None}


def _error_log_extra(error_log: ErrorLog) -> dict[str, Any]:
    """The error-log figures kept beyond the columns: non-zero counts and unreadable files."""
    levels = {k: v for k, v in error_log.levels.model_dump().items() if v}
    messages = {k: v for k, v in error_log.messages.model_dump().items() if v}
    unreadable = [f.model_dump(exclude_none=True) for f in error_log.files if not f.readable]
    return _compact(
        {"levels": levels or None, "messages": messages or None, "unreadable": unreadable or None}
    )


def sample_row(host_id: int, sample: PushedSample) -> dict[str, Any]:
    """The samples-table row of one pushed sample (rates not yet derived)."""
    status_page = sample.stub_status
    system = sample.system
    cpu = system.cpu if system else None
    memory = system.memory if system else None
    load = system.load if system else None
    network = system.network if system else None
    netstat = system.netstat if system else None
    processes = sample.nginx_processes
    error_log = sample.error_log
    extra = {
        "nginx": _compact({"error": sample.nginx.error, "master_pid": sample.nginx.master_pid}),
        "stub_status": _compact({"url": status_page.url, "error": status_page.error}),
        "cpu": _compact(
            {"per_core_pct": cpu.per_core_pct, "iowait_pct": cpu.iowait_pct} if cpu else {}
        ),
        "memory": _compact(
            {"available_bytes": memory.available_bytes, "swap_used_bytes": memory.swap_used_bytes}
            if memory
            else {}
        ),
        "load": _compact({"load5": load.load5, "load15": load.load15} if load else {}),
        "tcp_states": dict(system.tcp_states) if system and system.tcp_states else {},
        "nginx_processes": processes.model_dump(
            include={
                "rss_bytes",
                "cpu_pct",
                "worker_cpu_pct",
                "worker_fds_max",
                "worker_fds_limit",
            },
            exclude_none=True,
        )
        if processes
        else {},
        "error_log": _error_log_extra(error_log) if error_log else {},
    }
    return {
        "host_id": host_id,
        "seq": sample.seq,
        "ts": sample.ts,
        "nginx_up": sample.nginx.up,
        "workers": sample.nginx.workers,
        "stub_status_available": status_page.available,
        "active": status_page.active,
        "reading": status_page.reading,
        "writing": status_page.writing,
        "waiting": status_page.waiting,
        "accepts": status_page.accepts,
        "handled": status_page.handled,
        "requests": status_page.requests,
        "req_per_s": None,
        "accepts_per_s": None,
        "drops_per_s": None,
        "cpu_pct": cpu.total_pct if cpu else None,
        "mem_used_bytes": memory.used_bytes if memory else None,
        "mem_total_bytes": memory.total_bytes if memory else None,
        "load1": load.load1 if load else None,
        "fds_open": processes.fds_open if processes else None,
        "fds_limit": processes.fds_limit if processes else None,
        "net_rx_bytes": network.rx_bytes if network else None,
        "net_tx_bytes": network.tx_bytes if network else None,
        "listen_overflows": netstat.listen_overflows if netstat else None,
        "listen_drops": netstat.listen_drops if netstat else None,
        "worker_fds_max": processes.worker_fds_max if processes else None,
        "errlog_severe": error_log.severe_lines() if error_log else None,
        "errlog_wc_not_enough": error_log.messages.worker_connections_not_enough
        if error_log
        else None,
        "errlog_nofile": error_log.messages.too_many_open_files if error_log else None,
        "extra": {key: value for key, value in extra.items() if value},
    }


def reading_of(row: Mapping[str, Any]) -> CounterReading:
    """The counters of a samples row."""
    return CounterReading(
        ts=row["ts"], accepts=row["accepts"], handled=row["handled"], requests=row["requests"]
    )


def fill_rates(rows: Sequence[dict[str, Any]], *, before: CounterReading | None) -> None:
    """Set the rate columns of consecutive rows, the first against `before`."""
    readings = [reading_of(row) for row in rows]
    for row, rates in zip(rows, derive_rate_series(readings, before=before), strict=True):
        row["req_per_s"] = rates.req_per_s
        row["accepts_per_s"] = rates.accepts_per_s
        row["drops_per_s"] = rates.drops_per_s


@lru_cache(maxsize=2)
def _insert_skipping_duplicates(dialect: str) -> Any:
    """INSERT … ON CONFLICT DO NOTHING RETURNING seq, built once per dialect (hot path).

    No conflict target: the key is (host_id, seq, ts) on partitioned PostgreSQL and may still
    be (host_id, seq) on a database migrated before partitioning (SQLite); either refuses a
    resent sample, which carries the same ts (store_samples filters a seq resent with another
    ts; the batch path only appends seqs above the newest stored)."""
    return insert_for_dialect(dialect, _samples).on_conflict_do_nothing().returning(_samples.c.seq)


def stored_seqs(session: Session, *, host_id: int, seqs: Sequence[int]) -> set[int]:
    """Which of seqs the host has stored already, whatever their ts."""
    query = select(_samples.c.seq).where(_samples.c.host_id == host_id, _samples.c.seq.in_(seqs))
    return set(session.scalars(query))


def insert_samples(session: Session, rows: Sequence[dict[str, Any]]) -> set[int]:
    """Insert rows, skipping (host_id, seq) already stored; returns the seqs inserted."""
    statement = _insert_skipping_duplicates(dialect_name(session))
    return set(session.connection().execute(statement, list(rows)).scalars())


@lru_cache(maxsize=2)
def _insert_of_many_hosts(dialect: str) -> Any:
    """INSERT … ON CONFLICT DO NOTHING RETURNING host_id, seq, built once per dialect."""
    return (
        insert_for_dialect(dialect, _samples)
        .on_conflict_do_nothing()
        .returning(_samples.c.host_id, _samples.c.seq)
    )


def insert_rows_of_hosts(session: Session, rows: Sequence[dict[str, Any]]) -> set[tuple[int, int]]:
    """Insert rows of any hosts in one statement, skipping stored (host_id, seq); returns the
    (host_id, seq) pairs inserted."""
    statement = _insert_of_many_hosts(dialect_name(session))
    result = session.connection().execute(statement, list(rows))
    return {(host_id, seq) for host_id, seq in result}


_RATE_UPDATE = (
    update(_samples)
    .where(and_(_samples.c.host_id == bindparam("b_host_id"), _samples.c.seq == bindparam("b_seq")))
    .values(
        req_per_s=bindparam("b_req_per_s"),
        accepts_per_s=bindparam("b_accepts_per_s"),
        drops_per_s=bindparam("b_drops_per_s"),
    )
)


def recompute_rates(session: Session, *, host_id: int, first_seq: int, last_seq: int) -> int:
    """Re-derive rates from the sample before first_seq through the one after last_seq."""
    lower = select(func.max(_samples.c.seq)).where(
        _samples.c.host_id == host_id, _samples.c.seq < first_seq
    )
    upper = select(func.min(_samples.c.seq)).where(
        _samples.c.host_id == host_id, _samples.c.seq > last_seq
    )
    low = session.scalar(lower)
    high = session.scalar(upper)
    rows = session.execute(
        select(
            _samples.c.seq,
            _samples.c.ts,
            _samples.c.accepts,
            _samples.c.handled,
            _samples.c.requests,
            _samples.c.req_per_s,
            _samples.c.accepts_per_s,
            _samples.c.drops_per_s,
        )
        .where(
            _samples.c.host_id == host_id,
            _samples.c.seq >= (first_seq if low is None else low),
            _samples.c.seq <= (last_seq if high is None else high),
        )
        .order_by(_samples.c.seq)
    ).all()
    stored = [dict(row._mapping) for row in rows]
    # The lower neighbour's own rate depends on a sample outside the window: leave it as is.
    window = stored[1:] if low is not None else stored
    before = reading_of(stored[0]) if low is not None else None
    previous = {
        row["seq"]: (row["req_per_s"], row["accepts_per_s"], row["drops_per_s"]) for row in window
    }
    fill_rates(window, before=before)
    changes = [
        {
            "b_host_id": host_id,
            "b_seq": row["seq"],
            "b_req_per_s": row["req_per_s"],
            "b_accepts_per_s": row["accepts_per_s"],
            "b_drops_per_s": row["drops_per_s"],
        }
        for row in window
        if previous[row["seq"]] != (row["req_per_s"], row["accepts_per_s"], row["drops_per_s"])
    ]
    if changes:
        session.execute(_RATE_UPDATE, changes)
    return len(changes)


@dataclass(frozen=True, slots=True)
class StoredSamples:
    """What happened to a batch: rows built (by seq) and the seqs actually inserted."""

    rows: list[dict[str, Any]]
    inserted: set[int]


def store_samples(
    session: Session,
    *,
    host_id: int,
    samples: Sequence[PushedSample],
    newest_seq: int | None,
    newest_reading: CounterReading | None,
) -> StoredSamples:
    """Insert a batch with rates; a batch reaching back before the newest stored sample
    (a replay or a late sample) gets its rates, and its neighbours', recomputed from storage."""
    rows = [sample_row(host_id, sample) for sample in samples]
    appends = newest_seq is None or rows[0]["seq"] > newest_seq
    if appends:
        fill_rates(rows, before=newest_reading)
        inserted = insert_samples(session, rows)
    else:
        # The protocol's key is (host_id, seq), but the partitioned table's includes ts: a seq
        # stored before under another ts would not conflict, so replays are filtered here.
        known = stored_seqs(session, host_id=host_id, seqs=[row["seq"] for row in rows])
        fresh = [row for row in rows if row["seq"] not in known]
        inserted = insert_samples(session, fresh) if fresh else set()
    if not appends and inserted:
        recompute_rates(session, host_id=host_id, first_seq=min(inserted), last_seq=max(inserted))
    return StoredSamples(rows=rows, inserted=inserted)
