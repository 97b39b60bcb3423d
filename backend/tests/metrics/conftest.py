"""Fixtures of the metrics tests: partitions a test makes are dropped after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from app.core.db import get_engine, utcnow
from app.metrics import partitioning
from sqlalchemy import Connection, text
from sqlalchemy.orm import Session


def partitions_of(session: Session | Connection, parent: str) -> set[str]:
    """Names of the partitions directly under parent."""
    rows = session.scalars(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(:parent)"
        ),
        {"parent": parent},
    )
    return set(rows)


@pytest.fixture
def extra_partitions(db_session: Session) -> Iterator[None]:
    """Drops the partitions a test made beyond the migration's, so the next test starts as
    the migration left the database."""
    made_before = {spec: partitions_of(db_session, spec.range_parent) for spec in partitioning.ALL}
    db_session.rollback()
    yield
    db_session.rollback()
    with get_engine().begin() as connection:
        for spec, kept in made_before.items():
            for name in partitions_of(connection, spec.range_parent) - kept:
                connection.execute(text(f'DROP TABLE "{name}"'))
            # Retention may rightly drop partitions that have ended (the clock moves on during
            # a session); the current and future ones, and DEFAULT, must all still be there.
            current = spec.partition_name(spec.period.floor(utcnow()))
            missing = {
                name
                for name in kept - partitions_of(connection, spec.range_parent)
                if name == spec.default_partition or name >= current
            }
            assert not missing, f"a test dropped a current partition: {missing}"
