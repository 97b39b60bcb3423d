"""Changes written straight to the database, for the workflow tests that need no engine."""

from __future__ import annotations

import hashlib
from typing import Any

from app.changes.models import Change, ChangeStatus
from app.changes.patches import apply_ops
from app.core.db import SessionLocal, utcnow

from tests.configs.factories import host_with_config, set_facts
from tests.hosts.factories import HostWithToken

CONF = "/etc/nginx/nginx.conf"
# The file of the dump below, as split_dump gives it back.
FILE_TEXT = "events {}\nhttp {\n    gzip off;\n    server { listen 80; }\n}"
DUMP = f"# configuration file {CONF}:\n{FILE_TEXT}\n"
GZIP_ON_OPS = [{"start": 3, "count": 1, "old": ["    gzip off;"], "new": ["    gzip on;"]}]


def sha(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode()).hexdigest()


def gzip_patch() -> list[dict[str, Any]]:
    """The patch turning gzip on in FILE_TEXT."""
    return [
        {
            "path": CONF,
            "base_sha256": sha(FILE_TEXT),
            "new_sha256": sha(apply_ops(FILE_TEXT, GZIP_ON_OPS)),
            "ops": GZIP_ON_OPS,
        }
    ]


def host_allowed_to_apply(hostname: str = "web-1", **kwargs: Any) -> tuple[HostWithToken, int]:
    """A host with DUMP as its current config whose agent allows apply; host and snapshot id."""
    host, snapshot_id = host_with_config(DUMP, hostname=hostname, **kwargs)
    set_facts(host.id, {"nginx_version": "1.22.1", "apply_allowed": True})
    return host, snapshot_id


def make_change(
    host_id: int,
    snapshot_id: int,
    *,
    status: ChangeStatus = ChangeStatus.proposed,
    base_hash: str | None = None,
    **columns: Any,
) -> int:
    """Insert a change turning gzip on; returns its id."""
    with SessionLocal() as session:
        change = Change(
            host_id=host_id,
            status=status,
            finding_keys=["G-off@/etc/nginx/nginx.conf:http/gzip"],
            rules=["G-off"],
            title="G-off: set gzip on",
            base_snapshot_id=snapshot_id,
            base_config_hash=base_hash or sha(DUMP),
            diff="--- a/etc/nginx/nginx.conf\n+++ b/etc/nginx/nginx.conf\n",
            files=gzip_patch(),
            edits=[],
            created_by="tester",
            **{"created_at": utcnow(), **columns},
        )
        session.add(change)
        session.commit()
        return change.id
