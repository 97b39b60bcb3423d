"""Hosts with a current config snapshot, facts and samples, written straight to the database."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from app.configs import service
from app.core.db import SessionLocal, utcnow
from app.hosts.models import Host, HostFacts
from sqlalchemy import update
from sqlalchemy.orm import Session

from tests.hosts.factories import HostWithToken, insert_samples, make_host, sample_values

NEAR_DEFAULT_DUMP = (
    "# configuration file /etc/nginx/nginx.conf:\n"
    "worker_processes auto;\n"
    "events {\n"
    "    worker_connections 512;\n"
    "}\n"
    "http {\n"
    "    sendfile on;\n"
    "    server {\n"
    "        listen 80;\n"
    "        location / {\n"
    "            root /var/www;\n"
    "        }\n"
    "    }\n"
    "}\n"
)
# Line of `worker_connections` inside /etc/nginx/nginx.conf (the header is not part of the file).
WORKER_CONNECTIONS_LINE = 3

BROKEN_DUMP = (
    "# configuration file /etc/nginx/nginx.conf:\nevents {\nhttp {\n    server { listen 80 }\n"
)


def host_with_config(
    dump: str = NEAR_DEFAULT_DUMP, **host_columns: Any
) -> tuple[HostWithToken, int]:
    """A host whose current config is `dump`; returns the host and the snapshot id."""
    host = make_host(**host_columns)
    with SessionLocal() as session:
        return host, run_config(session, host.id, dump)


def run_config(session: Session, host_id: int, dump: str) -> int:
    """The host now runs `dump`, as when its agent reports it: its snapshot is stored and the
    host's config hash set; commits and returns the snapshot id."""
    config_hash = hashlib.sha256(dump.encode()).hexdigest()
    snapshot_id = service.store_snapshot(
        session=session, host_id=host_id, config_hash=config_hash, dump=dump, now=utcnow()
    )
    session.execute(update(Host).where(Host.id == host_id).values(config_hash=config_hash))
    session.commit()
    assert snapshot_id is not None
    return snapshot_id


def set_facts(host_id: int, facts: dict[str, Any]) -> None:
    """Store the agent's facts object for a host."""
    with SessionLocal() as session:
        session.merge(
            HostFacts(
                host_id=host_id,
                facts=facts,
                nginx_version=facts.get("nginx_version"),
                cpu_count=facts.get("cpu_count"),
                updated_at=utcnow(),
            )
        )
        session.commit()


def add_counter_samples(
    host_id: int, counters: list[tuple[int, int]], *, end: datetime | None = None, **figures: Any
) -> None:
    """Samples 10 s apart ending at `end` (default now) with these (accepts, handled) pairs."""
    end = end or utcnow()
    rows = [
        sample_values(
            host_id,
            seq,
            end - timedelta(seconds=10 * (len(counters) - seq)),
            accepts=accepts,
            handled=handled,
            requests=accepts * 3,
            **figures,
        )
        for seq, (accepts, handled) in enumerate(counters, start=1)
    ]
    with SessionLocal() as session:
        insert_samples(session, rows)
        session.execute(
            update(Host).where(Host.id == host_id).values(last_seq=len(counters), last_seen_at=end)
        )
        session.commit()
