"""Alembic environment: the app's models and database URL, batch mode for SQLite."""

from __future__ import annotations

from logging.config import fileConfig
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from app.core.config import get_settings
from app.core.db import UTCDateTime, build_engine
from app.models import Base
from sqlalchemy import DateTime, text
from sqlalchemy.engine import Connection

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logging", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Write UTCDateTime as a plain timezone-aware DateTime: the decoration lives in Python only."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return repr(DateTime(timezone=True)).replace("DateTime", "sa.DateTime", 1)
    return False


def database_url() -> str:
    """The URL passed by a caller (tests, CLI) or the one from the settings."""
    url = config.attributes.get("database_url") or get_settings().effective_database_url
    return str(url)


def partition_names(connection: Connection | None) -> frozenset[str]:
    """Tables that are partitions of another (app.core.partitions makes them): not models."""
    if connection is None or connection.dialect.name != "postgresql":
        return frozenset()
    rows = connection.execute(text("SELECT relname FROM pg_class WHERE relispartition"))
    return frozenset(rows.scalars())


def _configure(connection: Connection | None, url: str | None = None) -> None:
    # Looked up on first use (by autogenerate / check), inside the migration's transaction:
    # a query before it would begin a transaction that alembic then never commits.
    partitions: list[frozenset[str]] = []

    def include_name(name: str | None, type_: str, _parent_names: Any) -> bool:
        if type_ != "table":
            return True
        if not partitions:
            partitions.append(partition_names(connection))
        return name not in partitions[0]

    context.configure(
        connection=connection,
        url=url,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        render_item=render_item,
        include_name=include_name,
        literal_binds=connection is None,
    )


def run_migrations_offline() -> None:
    """Emit SQL without a database connection."""
    _configure(None, url=database_url())
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on a live connection."""
    engine = build_engine(database_url())
    try:
        with engine.connect() as connection:
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
