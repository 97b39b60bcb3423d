"""Parsing a stored snapshot records its file count, line count and parse problems."""

from __future__ import annotations

from app.configs import service
from app.configs.models import ConfigSnapshot, ParseStatus
from app.core.db import utcnow
from sqlalchemy.orm import Session

from tests.hosts.factories import make_host

TWO_FILE_DUMP = (
    "# configuration file /etc/nginx/nginx.conf:\n"
    "events {}\n"
    "http {\n"
    "    include /etc/nginx/conf.d/*.conf;\n"
    "}\n"
    "\n"
    "# configuration file /etc/nginx/conf.d/site.conf:\n"
    "server {\n"
    "    listen 80;\n"
    "}\n"
)


def stored_snapshot(session: Session, dump: str) -> int:
    """Store a snapshot for a new host and return its id."""
    host = make_host()
    snapshot_id = service.store_snapshot(
        session=session, host_id=host.id, config_hash="b" * 64, dump=dump, now=utcnow()
    )
    session.commit()
    assert snapshot_id is not None
    return snapshot_id


def test_store_snapshot_once_per_hash(db_session: Session) -> None:
    host = make_host()
    first = service.store_snapshot(
        session=db_session, host_id=host.id, config_hash="c" * 64, dump="x", now=utcnow()
    )
    second = service.store_snapshot(
        session=db_session, host_id=host.id, config_hash="c" * 64, dump="x", now=utcnow()
    )
    assert first is not None
    assert second is None


def test_summary_of_a_valid_dump(db_session: Session) -> None:
    snapshot_id = stored_snapshot(db_session, TWO_FILE_DUMP)
    snapshot = service.summarize_snapshot(session=db_session, snapshot_id=snapshot_id)
    assert snapshot is not None
    assert snapshot.parse_status is ParseStatus.parsed
    assert snapshot.file_count == 2
    assert snapshot.line_count == 10
    assert snapshot.parse_errors is None
    assert snapshot.analyzed_at is not None


def test_summary_of_a_broken_dump_names_file_and_line(db_session: Session) -> None:
    dump = "# configuration file /etc/nginx/nginx.conf:\nevents {\nhttp {\n"
    snapshot_id = stored_snapshot(db_session, dump)
    snapshot = service.summarize_snapshot(session=db_session, snapshot_id=snapshot_id)
    assert snapshot is not None
    assert snapshot.parse_status is ParseStatus.error
    assert snapshot.parse_errors is not None
    assert snapshot.parse_errors.startswith("/etc/nginx/nginx.conf:")


def test_summary_of_a_vanished_snapshot_is_none(db_session: Session) -> None:
    assert service.summarize_snapshot(session=db_session, snapshot_id=424242) is None
    assert db_session.get(ConfigSnapshot, 424242) is None
