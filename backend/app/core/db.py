"""Database engine, sessions and the declarative base shared by every domain."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, DateTime, Dialect, MetaData, create_engine, event
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

from app.core.config import get_settings

# Deterministic constraint names, so that Alembic can create and later alter them by name.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back timezone-aware, SQLite included."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Refuse naive datetimes; store UTC (naive on SQLite, which has no time zones)."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; use app.core.db.utcnow() or an aware value")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Return an aware UTC datetime."""
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# JSON column type: JSONB on PostgreSQL (indexable, compact), JSON text elsewhere.
JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    """Declarative base of every ORM model; datetime columns are UTCDateTime by default."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime()}


def _enable_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """WAL for concurrent readers, a busy timeout instead of 'database is locked', real FKs."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def build_engine(url: str) -> Engine:
    """Create an engine for url with the settings this project relies on."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _enable_sqlite_pragmas)
        return engine
    # A fixed pool and no overflow: under load, requests wait for a connection instead of
    # opening and closing extra ones (each a forked PostgreSQL backend), which costs more CPU
    # than the queries themselves on a small machine.
    return create_engine(
        url,
        pool_size=get_settings().db_pool_size,
        max_overflow=0,
        pool_timeout=30,
        pool_pre_ping=True,
        pool_recycle=1800,
    )


@lru_cache
def get_engine() -> Engine:
    """The process-wide engine for settings.effective_database_url."""
    return build_engine(get_settings().effective_database_url)


@lru_cache
def session_factory() -> sessionmaker[Session]:
    """The process-wide session maker bound to get_engine()."""
    return sessionmaker(bind=get_engine(), expire_on_commit=False)


def SessionLocal() -> Session:
    """Open a new session (close it, or use it as a context manager)."""
    return session_factory()()


def get_session() -> Iterator[Session]:
    """FastAPI dependency: one session per request; services commit, the rest rolls back."""
    with SessionLocal() as session:
        yield session


def reset_db_caches() -> None:
    """Dispose the cached engine so the next use reads the (changed) settings again."""
    if get_engine.cache_info().currsize:
        get_engine().dispose()
    get_engine.cache_clear()
    session_factory.cache_clear()
