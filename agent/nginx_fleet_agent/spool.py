"""A bounded on-disk spool of samples (SQLite in the state dir) and the persisted `seq` counter.

Appending a sample assigns its `seq` in the same transaction that stores it, so a crash can
neither reuse a number nor lose one that was handed out. When the spool is over its bounds the
oldest samples are dropped (with a warning): recent data is worth more than old. Each dropped
seq range is kept as a gap record (same transaction) until a push has told the server about it,
so the UI can say "agent spool overflow" instead of showing an unexplained hole.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

from nginx_fleet_agent import defaults

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (seq INTEGER PRIMARY KEY, body TEXT NOT NULL,
                                    size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS gaps (from_seq INTEGER PRIMARY KEY, to_seq INTEGER NOT NULL,
                                 from_ts TEXT NOT NULL, to_ts TEXT NOT NULL,
                                 reason TEXT NOT NULL);
"""
SPOOL_OVERFLOW = "spool_overflow"


class Spool:
    """Samples waiting to be pushed, oldest first."""

    def __init__(
        self,
        path: Path,
        max_samples: int = defaults.SPOOL_MAX_SAMPLES,
        max_bytes: int = defaults.SPOOL_MAX_BYTES,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            # Create it private before SQLite opens it with the umask's mode.
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        # One thread uses the spool at a time, but not always the one that opened it.
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._max_samples = max_samples
        self._max_bytes = max_bytes

    def append(self, sample: dict[str, Any], meta: dict[str, str] | None = None) -> int:
        """Give the sample the next `seq`, store it, enforce the bounds; return the seq.

        `meta` values are stored in the same transaction (the access logs' read positions, so
        a crash can neither count their lines twice nor lose them)."""
        with self._transaction():
            for key, value in (meta or {}).items():
                self._set_meta(key, value)
            seq = int(self.get_meta("next_seq") or "1")
            body = json.dumps({"seq": seq, **sample}, separators=(",", ":"))
            self._db.execute(
                "INSERT INTO samples (seq, body, size) VALUES (?, ?, ?)",
                (seq, body, len(body)),
            )
            self._set_meta("next_seq", str(seq + 1))
            dropped = self._enforce_bounds()
        if dropped:
            log.warning(
                "spool full (%d samples / %d bytes max): dropped the %d oldest sample(s)",
                self._max_samples,
                self._max_bytes,
                dropped,
            )
        return seq

    def oldest(self, limit: int) -> list[dict[str, Any]]:
        """Up to `limit` samples, oldest first."""
        rows = self._db.execute(
            "SELECT body FROM samples ORDER BY seq LIMIT ?", (limit,)
        ).fetchall()
        return [json.loads(body) for (body,) in rows]

    def gaps(self, limit: int) -> list[dict[str, Any]]:
        """Up to `limit` gap records not yet confirmed by the server, oldest first."""
        rows = self._db.execute(
            "SELECT from_seq, to_seq, from_ts, to_ts, reason FROM gaps ORDER BY from_seq LIMIT ?",
            (limit,),
        ).fetchall()
        names = ("from_seq", "to_seq", "from_ts", "to_ts", "reason")
        return [dict(zip(names, row, strict=True)) for row in rows]

    def remove_gaps(self, gaps: list[dict[str, Any]]) -> None:
        """Forget gap records the server confirmed, unless they grew since they were read."""
        self._db.executemany(
            "DELETE FROM gaps WHERE from_seq = ? AND to_seq = ?",
            [(gap["from_seq"], gap["to_seq"]) for gap in gaps],
        )

    def remove_through(self, seq: int) -> None:
        """Forget every sample up to and including `seq` (they were delivered or dropped)."""
        self._db.execute("DELETE FROM samples WHERE seq <= ?", (seq,))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])

    def size_bytes(self) -> int:
        """Total JSON size of the spooled samples."""
        return int(self._db.execute("SELECT COALESCE(SUM(size), 0) FROM samples").fetchone()[0])

    def get_meta(self, key: str) -> str | None:
        """A persisted agent value (next seq, acknowledged config hash)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str | None) -> None:
        """Persist (or with None, delete) an agent value."""
        if value is None:
            self._db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self._set_meta(key, value)

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _enforce_bounds(self) -> int:
        """Drop the oldest samples until within bounds, recording them as a gap; how many."""
        count, size = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM samples"
        ).fetchone()
        if count <= self._max_samples and size <= self._max_bytes:
            return 0
        dropped: list[int] = []
        oldest_first = self._db.execute("SELECT seq, size FROM samples ORDER BY seq")
        for seq, row_size in oldest_first:
            if count <= self._max_samples and size <= self._max_bytes:
                break
            count, size = count - 1, size - row_size
            dropped.append(seq)
        oldest_first.close()
        self._record_gap(dropped[0], dropped[-1])
        self._db.execute("DELETE FROM samples WHERE seq <= ?", (dropped[-1],))
        return len(dropped)

    def _record_gap(self, first: int, last: int) -> None:
        """Note that samples first..last are lost, extending the record that ends just before."""
        first_ts, last_ts = (self._ts_of(first), self._ts_of(last))
        extended = self._db.execute(
            "UPDATE gaps SET to_seq = ?, to_ts = ? WHERE to_seq = ? AND reason = ?",
            (last, last_ts, first - 1, SPOOL_OVERFLOW),
        ).rowcount
        if not extended:
            self._db.execute(
                "INSERT INTO gaps (from_seq, to_seq, from_ts, to_ts, reason) "
                "VALUES (?, ?, ?, ?, ?)",
                (first, last, first_ts, last_ts, SPOOL_OVERFLOW),
            )

    def _ts_of(self, seq: int) -> str:
        """The collection time of a spooled sample."""
        (body,) = self._db.execute("SELECT body FROM samples WHERE seq = ?", (seq,)).fetchone()
        return str(json.loads(body).get("ts", ""))

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def peek_next_seq(path: Path) -> int:
    """The seq the next sample would get, reading the spool without creating or changing it."""
    if not path.exists():
        return 1
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return 1
    return int(row[0]) if row else 1
