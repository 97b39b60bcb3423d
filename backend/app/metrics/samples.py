"""Storing pushed samples with their derived rates, idempotently on (host_id, seq)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import and_, bindparam, func, select, update
from sqlalchemy.orm import Session

from app.agents.schemas import Sample as PushedSample
from app.core.types import INT4_MAX
from app.metrics.models import Sample
from app.metrics.rates import CounterReading, derive_rate_series
from app.metrics.sql import dialect_name, insert_for_dialect, table_of

_samples = table_of(Sample)


def _capped(count: int | None) -> int | None:
    """A count of sockets or file descriptors in its 32-bit column: the protocol allows 64-bit
    counts, but no host has 2^31 of either (the kernel's nr_open stays below)."""
    return None if count is None else min(count, INT4_MAX)


def sample_row(host_id: int, sample: PushedSample) -> dict[str, Any]:
    """The samples-table row of one pushed sample (rates not yet derived).

    What is not kept (docs/storage.md, column types): per-host constants repeated every 10 s
    (nginx's master pid, the stub_status URL), load5/load15, the single cores' figures beyond
    their count and maximum, tcp states other than ESTABLISHED and TIME_WAIT, error-log levels
    below warn and the list of unreadable error logs."""
    status_page = sample.stub_status
    system = sample.system
    cpu = system.cpu if system else None
    memory = system.memory if system else None
    load = system.load if system else None
    network = system.network if system else None
    netstat = system.netstat if system else None
    tcp_states = (system.tcp_states if system else None) or {}
    per_core = cpu.per_core_pct if cpu else None
    processes = sample.nginx_processes
    error_log = sample.error_log
    levels = error_log.levels if error_log else None
    messages = error_log.messages if error_log else None
    return {
        "host_id": host_id,
        "seq": sample.seq,
        "ts": sample.ts,
        "nginx_up": sample.nginx.up,
        "nginx_error": sample.nginx.error,
        "workers": sample.nginx.workers,
        "stub_status_available": status_page.available,
        "stub_status_error": status_page.error,
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
        "cpu_iowait_pct": cpu.iowait_pct if cpu else None,
        "cpu_core_max_pct": max(per_core) if per_core else None,
        "cpu_cores": len(per_core) if per_core else None,
        "mem_used_bytes": memory.used_bytes if memory else None,
        "mem_total_bytes": memory.total_bytes if memory else None,
        "swap_used_bytes": memory.swap_used_bytes if memory else None,
        "load1": load.load1 if load else None,
        "net_rx_bytes": network.rx_bytes if network else None,
        "net_tx_bytes": network.tx_bytes if network else None,
        "listen_overflows": netstat.listen_overflows if netstat else None,
        "listen_drops": netstat.listen_drops if netstat else None,
        "tcp_established": _capped(tcp_states.get("ESTABLISHED")),
        "tcp_time_wait": _capped(tcp_states.get("TIME_WAIT")),
        "fds_open": _capped(processes.fds_open) if processes else None,
        "fds_limit": _capped(processes.fds_limit) if processes else None,
        "worker_fds_max": _capped(processes.worker_fds_max) if processes else None,
        "worker_fds_limit": _capped(processes.worker_fds_limit) if processes else None,
        "nginx_rss_bytes": processes.rss_bytes if processes else None,
        "nginx_cpu_pct": processes.cpu_pct if processes else None,
        "worker_cpu_pct": processes.worker_cpu_pct if processes else None,
        "errlog_severe": error_log.severe_lines() if error_log else None,
        "errlog_error": levels.error if levels else None,
        "errlog_warn": levels.warn if levels else None,
        "errlog_wc_not_enough": messages.worker_connections_not_enough if messages else None,
        "errlog_wc_reusing": messages.worker_connections_reusing if messages else None,
        "errlog_nofile": messages.too_many_open_files if messages else None,
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

    No conflict target (the key is (host_id, ts, seq)); it refuses a resent sample, which
    carries the same ts (store_samples filters a seq resent with another
    ts; the batch path only appends seqs above the newest stored)."""
    return insert_for_dialect(dialect, _samples).on_conflict_do_nothing().returning(_samples.c.seq)


def stored_seqs(
    session: Session, *, host_id: int, rows: Sequence[Mapping[str, Any]], newest_seq: int | None
) -> set[int]:
    """Which seqs of rows the host has stored already, whatever their ts.

    A resend carries each sample's same ts: looked up on the key's (host_id, ts) prefix over
    the push's time span (one range scan of the host's entries in it). A seq not found there
    can be stored under another ts only if it is not above the newest stored seq; those (rare:
    a late sample, a resend with a changed ts) are looked for among all the host's index
    entries in one scan with a range on seq (`seq IN (...)` could rescan them per seq)."""
    if not rows:
        return set()
    pushed = {(row["seq"], row["ts"]) for row in rows}
    times = [ts for _seq, ts in pushed]
    same_ts = select(_samples.c.seq, _samples.c.ts).where(
        _samples.c.host_id == host_id, _samples.c.ts.between(min(times), max(times))
    )
    stored = {seq for seq, ts in session.execute(same_ts) if (seq, ts) in pushed}
    unsure = {seq for seq, _ts in pushed if seq not in stored}
    if newest_seq is not None:
        unsure = {seq for seq in unsure if seq <= newest_seq}
    if unsure:
        any_ts = select(_samples.c.seq).where(
            _samples.c.host_id == host_id, _samples.c.seq.between(min(unsure), max(unsure))
        )
        stored |= {seq for seq in session.scalars(any_ts) if seq in unsure}
    return stored


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
    .where(
        and_(
            _samples.c.host_id == bindparam("b_host_id"),
            _samples.c.ts == bindparam("b_ts"),
            _samples.c.seq == bindparam("b_seq"),
        )
    )
    .values(
        req_per_s=bindparam("b_req_per_s"),
        accepts_per_s=bindparam("b_accepts_per_s"),
        drops_per_s=bindparam("b_drops_per_s"),
    )
)


def recompute_rates(session: Session, *, host_id: int, first_seq: int, last_seq: int) -> int:
    """Re-derive rates from the sample before first_seq through the one after last_seq."""
    # Both neighbours in one pass over the host's index entries (seq is not a key prefix).
    neighbours = select(
        func.max(_samples.c.seq).filter(_samples.c.seq < first_seq),
        func.min(_samples.c.seq).filter(_samples.c.seq > last_seq),
    ).where(_samples.c.host_id == host_id)
    low, high = session.execute(neighbours).one()
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
            "b_ts": row["ts"],
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
        known = stored_seqs(session, host_id=host_id, rows=rows, newest_seq=newest_seq)
        fresh = [row for row in rows if row["seq"] not in known]
        inserted = insert_samples(session, fresh) if fresh else set()
    if not appends and inserted:
        recompute_rates(session, host_id=host_id, first_seq=min(inserted), last_seq=max(inserted))
    return StoredSamples(rows=rows, inserted=inserted)
