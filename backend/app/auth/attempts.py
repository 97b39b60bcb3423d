"""Counting sign-in attempts per username and address, per address and overall, atomically."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from math import ceil
from typing import cast

from sqlalchemy import Table, case, delete, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.auth.models import LoginAttempts
from app.core.config import get_settings

# Typed as the Table it is (mapped classes declare a plain FromClause).
_table = cast(Table, LoginAttempts.__table__)


@dataclass(frozen=True, slots=True)
class AttemptKey:
    """One counter an attempt is counted in, and how many attempts its window allows."""

    key_hash: str
    limit: int


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether the attempt may check a password, and else how long until a window ends."""

    allowed: bool
    retry_after_s: int


def _hashed(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class AttemptKeys:
    """The counters one attempt is counted in."""

    user_address: AttemptKey
    address: AttemptKey
    overall: AttemptKey

    def own(self) -> list[AttemptKey]:
        """The counters of this username and address, in one order for every request, so that
        parallel upserts never deadlock (the overall counter is always locked after them)."""
        return sorted((self.user_address, self.address), key=lambda k: k.key_hash)


def keys_of(*, username: str, address: str) -> AttemptKeys:
    """The counters of an attempt: this username from this address, this address, everyone."""
    settings = get_settings()
    return AttemptKeys(
        user_address=AttemptKey(
            _hashed(f"user-address\x1f{username}\x1f{address}"), settings.login_max_failures
        ),
        address=AttemptKey(
            _hashed(f"address\x1f{address}"), settings.login_max_failures_per_address
        ),
        overall=AttemptKey(_hashed("overall"), settings.login_max_failures_overall),
    )


def window() -> timedelta:
    """How long a counter counts before it starts again from zero."""
    return timedelta(seconds=get_settings().login_failure_window_s)


def count_attempt(*, session: Session, keys: AttemptKeys, now: datetime) -> Verdict:
    """Count one attempt and say whether every counter stays within its limit; commits.

    The overall counter counts only attempts that this username and address may still make:
    an address already refused cannot, by retrying, lock everyone else out."""
    retry_after_s = _count(session, keys.own(), now)
    if retry_after_s == 0:
        retry_after_s = _count(session, [keys.overall], now)
    session.commit()
    return Verdict(allowed=retry_after_s == 0, retry_after_s=retry_after_s)


def _count(session: Session, counted_keys: list[AttemptKey], now: datetime) -> int:
    """Add one to each counter; the seconds until the latest window over its limit ends, or 0.

    One INSERT … ON CONFLICT DO UPDATE … RETURNING: the database row lock orders parallel
    attempts, so N parallel attempts see the counts 1..N and exactly `limit` of them pass."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    expired = _table.c.window_start <= now - window()
    rows = [{"key_hash": key.key_hash, "window_start": now, "attempts": 1} for key in counted_keys]
    statement = (
        insert(_table)
        .values(rows)
        .on_conflict_do_update(
            index_elements=[_table.c.key_hash],
            set_={
                "attempts": case((expired, 1), else_=_table.c.attempts + 1),
                "window_start": case((expired, now), else_=_table.c.window_start),
            },
        )
        .returning(_table.c.key_hash, _table.c.attempts, _table.c.window_start)
    )
    counted = {row.key_hash: row for row in session.execute(statement)}
    retry_after_s = 0
    for key in counted_keys:
        row = counted[key.key_hash]
        if row.attempts > key.limit:
            remaining = (row.window_start + window() - now).total_seconds()
            retry_after_s = max(retry_after_s, 1, ceil(remaining))
    return retry_after_s


def forgive(*, session: Session, keys: AttemptKeys) -> None:
    """After a successful sign-in: forget this username's failures, give back its other counts.

    Rows are locked in count_attempt's order (own counters by hash, then overall), one
    statement each, so a sign-in never deadlocks with an attempt being counted. The caller
    commits, together with the new session."""
    for key in keys.own():
        if key is keys.user_address:
            session.execute(delete(LoginAttempts).where(LoginAttempts.key_hash == key.key_hash))
        else:
            _give_back(session, key)
    _give_back(session, keys.overall)


def _give_back(session: Session, key: AttemptKey) -> None:
    """One attempt less in a counter."""
    session.execute(
        update(LoginAttempts)
        .where(LoginAttempts.key_hash == key.key_hash, LoginAttempts.attempts > 0)
        .values(attempts=LoginAttempts.attempts - 1)
    )


def purge_expired(*, session: Session, now: datetime) -> None:
    """Delete counters whose window ended (the caller commits)."""
    session.execute(delete(LoginAttempts).where(LoginAttempts.window_start <= now - window()))
