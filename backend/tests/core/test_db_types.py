"""UTCDateTime keeps time zones on SQLite and PostgreSQL alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from app.core.db import UTCDateTime, build_engine, get_engine
from sqlalchemy import Column, Integer, MetaData, Table, insert, select, text
from sqlalchemy.exc import StatementError

metadata = MetaData()
stamps = Table(
    "test_stamps", metadata, Column("id", Integer, primary_key=True), Column("at", UTCDateTime())
)
PARIS_SUMMER = timezone(timedelta(hours=2))


def _round_trip(url: str) -> datetime:
    engine = build_engine(url)
    try:
        with engine.begin() as connection:
            metadata.create_all(connection)
            local = datetime(2026, 7, 1, 14, 30, tzinfo=PARIS_SUMMER)
            connection.execute(insert(stamps).values(id=1, at=local))
            value = connection.scalar(select(stamps.c.at))
            metadata.drop_all(connection)
    finally:
        engine.dispose()
    assert isinstance(value, datetime)
    return value


def test_sqlite_round_trip_is_aware_utc(tmp_path: Path) -> None:
    value = _round_trip(f"sqlite:///{tmp_path / 'types.db'}")
    assert value == datetime(2026, 7, 1, 12, 30, tzinfo=UTC)
    assert value.utcoffset() == timedelta(0)


def test_postgresql_round_trip_is_aware_utc(database_url: str) -> None:
    value = _round_trip(database_url)
    assert value == datetime(2026, 7, 1, 12, 30, tzinfo=UTC)
    assert value.utcoffset() == timedelta(0)


def test_naive_datetimes_are_refused(tmp_path: Path) -> None:
    engine = build_engine(f"sqlite:///{tmp_path / 'naive.db'}")
    try:
        with engine.begin() as connection:
            metadata.create_all(connection)
            with pytest.raises(StatementError, match="naive datetime"):
                connection.execute(insert(stamps).values(id=1, at=datetime(2026, 1, 1)))
    finally:
        engine.dispose()


def test_sqlite_connections_enforce_foreign_keys_and_use_wal(tmp_path: Path) -> None:
    engine = build_engine(f"sqlite:///{tmp_path / 'sub' / 'pragmas.db'}")
    try:
        with engine.connect() as connection:
            assert connection.scalar(text("PRAGMA foreign_keys")) == 1
            assert connection.scalar(text("PRAGMA journal_mode")) == "wal"
    finally:
        engine.dispose()


def test_app_engine_is_postgresql_with_psycopg(database_url: str) -> None:
    assert get_engine().dialect.name == "postgresql"
    assert get_engine().dialect.driver == "psycopg"
