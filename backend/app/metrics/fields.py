"""The figures a series point carries, and which of them a bucket reports as a maximum."""

from __future__ import annotations

CHARTED_FIELDS = (
    "active",
    "reading",
    "writing",
    "waiting",
    "req_per_s",
    "accepts_per_s",
    "drops_per_s",
    "cpu_pct",
    "mem_used_bytes",
    "mem_total_bytes",
    "load1",
    "fds_open",
    "fds_limit",
    "workers",
)
# An average hides a burst of drops or a connection peak; the bucket's maximum shows it.
MAX_FIELDS = frozenset({"active", "drops_per_s"})
