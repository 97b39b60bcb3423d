"""A throw-away PostgreSQL database per benchmark run, dropped afterwards."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import sql

ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


def sqlalchemy_url(name: str) -> str:
    """DATABASE_URL (SQLAlchemy form, psycopg 3 driver) of database `name` on the local server."""
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def libpq_dsn(name: str) -> str:
    """libpq DSN of database `name` for direct psycopg connections."""
    return f"postgresql://postgres@127.0.0.1:5432/{name}"


def database_exists(name: str) -> bool:
    """True when a database called `name` exists."""
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        row = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        return row is not None


@contextlib.contextmanager
def temporary_database(prefix: str = "nf_bench_") -> Iterator[str]:
    """Create an empty database with a random name; yield the name; drop it on the way out."""
    name = f"{prefix}{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            # FORCE: API workers stopped a moment ago may still hold a backend connection.
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def copy_rows(
    conn: psycopg.Connection, table: str, columns: Sequence[str], rows: Iterable[tuple[Any, ...]]
) -> None:
    """Bulk-load rows with COPY (the fastest way in: the benchmarks time reads, not loads)."""
    with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
