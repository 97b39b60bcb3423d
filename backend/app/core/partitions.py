"""Time partitions of the time-series tables: the one seam between PostgreSQL and SQLite.

On PostgreSQL each table named by a `TimePartitioning` is declaratively partitioned by range
of one timestamp column (daily or monthly), with a DEFAULT partition so that a row whose
partition was not created yet is stored anyway instead of failing its whole push. Expiry
drops whole partitions. On SQLite (the embedded mode) there are no partitions: creation is a
no-op and expiry is a DELETE. Callers never look at the dialect themselves.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, Dialect, text
from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

# Serialises partition creation and expiry between processes (api replicas, worker, beat,
# a migration): whoever comes second sees the partitions the first one made.
ADVISORY_LOCK_KEY = 0x6E66_7061  # "nfpa"
# Creating or dropping a partition waits for an exclusive lock on its parent; waiting behind a
# long read would queue every insert behind it, so it gives up instead (a transient error: the
# task retries, and rows without a partition go to the DEFAULT one meanwhile).
DDL_LOCK_TIMEOUT = "2s"
# How far ahead of now partitions exist, so the beat task may miss a couple of runs.
DEFAULT_AHEAD = timedelta(days=3)


class Period(enum.StrEnum):
    """The time span of one partition."""

    hour = "1h"
    quarter_day = "6h"
    day = "day"
    month = "month"

    @property
    def _format(self) -> str:
        return {"1h": "%Y%m%d%H", "6h": "%Y%m%d%H", "day": "%Y%m%d", "month": "%Y%m"}[self.value]

    def floor(self, moment: datetime) -> datetime:
        """Start of the period holding moment (UTC)."""
        moment = moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        if self is Period.hour:
            return moment
        if self is Period.quarter_day:
            return moment.replace(hour=moment.hour - moment.hour % 6)
        start = moment.replace(hour=0)
        return start.replace(day=1) if self is Period.month else start

    def next(self, start: datetime) -> datetime:
        """Start of the period after the one starting at start."""
        if self is Period.hour:
            return start + timedelta(hours=1)
        if self is Period.quarter_day:
            return start + timedelta(hours=6)
        if self is Period.day:
            return start + timedelta(days=1)
        year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
        return start.replace(year=year, month=month)

    def suffix(self, start: datetime) -> str:
        """The partition name suffix of the period starting at start."""
        return start.strftime(self._format)

    def parse(self, suffix: str) -> datetime | None:
        """The start of the period a name suffix stands for, None if it is not one of ours."""
        digits = {"1h": 10, "6h": 10, "day": 8, "month": 6}[self.value]
        if not re.fullmatch(rf"\d{{{digits}}}", suffix):
            return None
        return datetime.strptime(suffix, self._format).replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class TimePartitioning:
    """How one table's rows are split in time.

    `parent` is the range-partitioned PostgreSQL table; `table` the table queries name (the
    same, or the LIST-partitioned table above parent when `only` names the list key and value,
    e.g. sample_rollups -> sample_rollups_1m holding resolution '1m')."""

    table: str
    column: str
    period: Period
    parent: str = ""
    only: tuple[str, str] | None = None

    @property
    def range_parent(self) -> str:
        """The table whose partitions are ranges of `column`."""
        return self.parent or self.table

    @property
    def default_partition(self) -> str:
        """Where rows without a partition of their own are kept."""
        return f"{self.range_parent}_default"

    def partition_name(self, start: datetime) -> str:
        """The name of the partition of the period starting at start."""
        return f"{self.range_parent}_p{self.period.suffix(start)}"


# A service's session, or a migration's connection.
Executor = Session | Connection


def _dialect(session: Executor) -> Dialect:
    return session.dialect if isinstance(session, Connection) else session.get_bind().dialect


def _is_postgresql(session: Executor) -> bool:
    return _dialect(session).name == "postgresql"


def _q(session: Executor, name: str) -> str:
    """name quoted as an identifier. Every identifier here comes from code, never from input;
    they are quoted anyway, and the S608 waivers below rest on that."""
    return str(_dialect(session).identifier_preparer.quote(name))


def _lock(session: Executor) -> None:
    """Take the partition lock until the end of the transaction, and wait for table locks
    no longer than DDL_LOCK_TIMEOUT."""
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
    session.execute(text(f"SET LOCAL lock_timeout = '{DDL_LOCK_TIMEOUT}'"))


def _end_short_waits(session: Executor) -> None:
    """Give the rest of the caller's transaction its usual lock timeout back."""
    session.execute(text("SET LOCAL lock_timeout = DEFAULT"))


def _literal(moment: datetime) -> str:
    """A timestamptz literal, independent of the session's TimeZone."""
    return f"'{moment.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S')}+00'"


def _exists(session: Executor, name: str) -> bool:
    return session.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": name}) is True


def periods(period: Period, since: datetime, until: datetime) -> list[datetime]:
    """Starts of the periods overlapping [since, until]."""
    starts = [period.floor(since)]
    while period.next(starts[-1]) <= until:
        starts.append(period.next(starts[-1]))
    return starts


def _create_partition(session: Executor, spec: TimePartitioning, start: datetime) -> None:
    """Create one partition; rows already kept in the DEFAULT partition for its range move in.

    PostgreSQL refuses to create a partition whose range has rows in the DEFAULT partition, so
    such rows go to a new plain table first, which is then attached."""
    name = _q(session, spec.partition_name(start))
    parent, default = _q(session, spec.range_parent), _q(session, spec.default_partition)
    low, high = _literal(start), _literal(spec.period.next(start))
    bounds = f"FOR VALUES FROM ({low}) TO ({high})"
    column = _q(session, spec.column)
    in_range = f"{column} >= {low} AND {column} < {high}"
    stray = session.scalar(text(f"SELECT EXISTS (SELECT 1 FROM {default} WHERE {in_range})"))  # noqa: S608
    if not stray:
        session.execute(text(f"CREATE TABLE {name} PARTITION OF {parent} {bounds}"))
        return
    session.execute(text(f"CREATE TABLE {name} (LIKE {parent} INCLUDING DEFAULTS)"))
    session.execute(
        text(
            f"WITH moved AS (DELETE FROM {default} WHERE {in_range} RETURNING *) "  # noqa: S608
            f"INSERT INTO {name} SELECT * FROM moved"
        )
    )
    session.execute(text(f"ALTER TABLE {parent} ATTACH PARTITION {name} {bounds}"))
    log.info("partition %s created with rows moved from %s", name, default)


def ensure_partitions(
    *,
    session: Executor,
    specs: Iterable[TimePartitioning],
    now: datetime,
    since: datetime | None = None,
    ahead: timedelta = DEFAULT_AHEAD,
) -> list[str]:
    """Create the partitions covering [since or now, now + ahead] that are missing; returns
    their names. Does not commit. A no-op on SQLite."""
    if not _is_postgresql(session):
        return []
    _lock(session)
    created = []
    for spec in specs:
        for start in periods(spec.period, since or now, now + ahead):
            name = spec.partition_name(start)
            if not _exists(session, name):
                _create_partition(session, spec, start)
                created.append(name)
    _end_short_waits(session)
    return created


@dataclass(frozen=True, slots=True)
class Expired:
    """What one expiry removed: whole partitions dropped and rows deleted one by one."""

    partitions: tuple[str, ...] = ()
    rows_deleted: int = 0


def _partitions_of(session: Executor, spec: TimePartitioning) -> Sequence[tuple[str, datetime]]:
    """(name, period start) of the range partitions this module made for spec."""
    names = session.scalars(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(:parent)"
        ),
        {"parent": spec.range_parent},
    ).all()
    prefix = f"{spec.range_parent}_p"
    found = []
    for name in names:
        start = spec.period.parse(name[len(prefix) :]) if name.startswith(prefix) else None
        if start is not None:
            found.append((name, start))
    return sorted(found, key=lambda item: item[1])


def expire(*, session: Executor, spec: TimePartitioning, before: datetime) -> Expired:
    """Remove spec's rows older than before: detach the partitions wholly older (PostgreSQL;
    drop_detached deletes them once this transaction is committed), delete the rest of them one
    by one where no partition holds them. Does not commit.

    Detaching only changes the catalog, so the parent (and every insert into it) waits for
    milliseconds; removing a partition's files takes about a second per few GB, which
    drop_detached spends holding no lock any other statement needs.
    A partition still holding some rows newer than before stays whole until its end passes:
    data is kept up to one partition longer than asked, never shorter."""
    column = _q(session, spec.column)
    condition = f"{column} < :before"
    if spec.only is not None:
        condition += f" AND {_q(session, spec.only[0])} = :only"
    values: dict[str, object] = {"before": before, "only": spec.only[1] if spec.only else None}
    if not _is_postgresql(session):
        table = _q(session, spec.table)
        result = session.execute(text(f"DELETE FROM {table} WHERE {condition}"), values)  # noqa: S608
        return Expired(rows_deleted=int(getattr(result, "rowcount", 0) or 0))
    _lock(session)
    parent = _q(session, spec.range_parent)
    detached = []
    for name, start in _partitions_of(session, spec):
        if spec.period.next(start) <= before:
            session.execute(text(f"ALTER TABLE {parent} DETACH PARTITION {_q(session, name)}"))
            detached.append(name)
    default = _q(session, spec.default_partition)
    deleted = session.execute(
        text(f"DELETE FROM {default} WHERE {column} < :before"),  # noqa: S608
        {"before": before},
    )
    _end_short_waits(session)
    return Expired(tuple(detached), int(getattr(deleted, "rowcount", 0) or 0))


def drop_detached(*, session: Session, specs: Iterable[TimePartitioning]) -> list[str]:
    """Drop the expired partitions expire detached, and any an interrupted run left behind;
    commits after each step. A no-op on SQLite.

    The foreign key to hosts goes first, in a transaction of its own: dropping it locks the
    hosts table (which every push updates), and must not hold that lock while the files go."""
    if not _is_postgresql(session):
        return []
    dropped = []
    for spec in specs:
        names = session.scalars(
            text(
                "SELECT relname FROM pg_class WHERE relkind = 'r' AND NOT relispartition "
                "AND relname ~ :pattern ORDER BY relname"
            ),
            {"pattern": f"^{re.escape(spec.range_parent)}_p[0-9]+$"},
        ).all()
        session.commit()
        for name in names:
            table = _q(session, name)
            keys = session.scalars(
                text(
                    "SELECT conname FROM pg_constraint "
                    "WHERE conrelid = to_regclass(:table) AND contype = 'f'"
                ),
                {"table": name},
            ).all()
            for key in keys:
                session.execute(text(f"ALTER TABLE {table} DROP CONSTRAINT {_q(session, key)}"))
            session.commit()
            session.execute(text(f"DROP TABLE {table}"))
            session.commit()
            dropped.append(name)
    return dropped


# Marks a partition whose indexes were rebuilt once its period had ended (a table comment).
SEALED = "nginx-fleet: sealed"


def ended_unsealed(
    *, connection: Connection, spec: TimePartitioning, before: datetime
) -> list[tuple[str, datetime]]:
    """(name, end) of spec's partitions whose period ended before `before` and that are not
    sealed yet; empty on SQLite."""
    if not _is_postgresql(connection):
        return []
    found = []
    for name, start in _partitions_of(connection, spec):
        end = spec.period.next(start)
        if end > before:
            continue
        comment = connection.scalar(
            text("SELECT obj_description(to_regclass(:name), 'pg_class')"), {"name": name}
        )
        if comment != SEALED:
            found.append((name, end))
    return found


def seal(*, connection: Connection, name: str) -> None:
    """Rebuild a partition's indexes and mark it sealed.

    Rows arrive in time order across hosts, so each host's run of keys grows in the middle of
    the index: its pages split in halves that never fill again (measured ~55% full). Rebuilt
    once no more rows are expected, an index is packed to its fillfactor (90%). REINDEX
    CONCURRENTLY blocks neither reads nor late writes; it cannot run in a transaction, so the
    connection must be in autocommit mode."""
    table = _q(connection, name)
    connection.execute(text(f"REINDEX TABLE CONCURRENTLY {table}"))
    connection.execute(text(f"COMMENT ON TABLE {table} IS '{SEALED}'"))
