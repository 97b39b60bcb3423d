"""SQL that differs between PostgreSQL and SQLite: upserts and time buckets."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Float, Table, cast, func, literal_column
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from app.core.db import Base


def table_of(model: type[Base]) -> Table:
    """The Table of an ORM model, typed as one (mapped classes declare a plain FromClause)."""
    table = model.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not mapped to a single table")
    return table


def dialect_name(session: Session) -> str:
    """'postgresql' or 'sqlite'."""
    return session.get_bind().dialect.name


def insert_for_dialect(dialect: str, table: Table) -> Any:
    """An INSERT of the named dialect, which offers on_conflict_do_nothing/do_update."""
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def insert_for(session: Session, table: Table) -> Any:
    """An INSERT of the session's dialect, which offers on_conflict_do_nothing/do_update."""
    return insert_for_dialect(dialect_name(session), table)


def epoch_bucket(session: Session, ts: Any, step_s: int) -> ColumnElement[Any]:
    """Start of the step_s-wide bucket holding ts, in Unix seconds (buckets align to the epoch).

    64-bit: Unix seconds pass 2**31 on 2038-01-19."""
    return epoch_bucket_for(dialect_name(session), ts, step_s)


def epoch_bucket_for(dialect: str, ts: Any, step_s: int) -> ColumnElement[Any]:
    """epoch_bucket for the named dialect, for statements built before a session exists."""
    step: ColumnElement[int] = literal_column(str(int(step_s)))
    if dialect == "postgresql":
        return cast(func.floor(func.extract("epoch", ts) / step) * step, BigInteger)
    # `//` renders integer division; SQLAlchemy's `/` would divide as numeric.
    return (cast(func.strftime("%s", ts), BigInteger) // step) * step


def bucket_timestamp(session: Session, ts: Any, step_s: int) -> ColumnElement[Any]:
    """Start of the step_s-wide bucket holding ts, as a value of ts's own column type."""
    epoch = epoch_bucket(session, ts, step_s)
    if dialect_name(session) == "postgresql":
        return func.to_timestamp(epoch)
    # The exact text SQLAlchemy writes for SQLite datetimes, so equal instants compare equal.
    return func.strftime("%Y-%m-%d %H:%M:%S.000000", epoch, "unixepoch")


def as_float(expression: ColumnElement[Any]) -> ColumnElement[float]:
    """Cast to double precision: PostgreSQL's avg() of integers is numeric (Decimal)."""
    return cast(expression, Float)
