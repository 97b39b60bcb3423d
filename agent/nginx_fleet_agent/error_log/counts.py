"""One interval's error-log counts: lines by level and the few messages alerts explain drops by.

Only numbers are kept: no line, and nothing of one, ever leaves this module.

ngx_log_error_core (src/core/ngx_log.c) starts every line with "YYYY/MM/DD HH:MM:SS [level]
PID#TID: ", then "*CONNECTION " when the log belongs to a connection, then the message, then
" (ERRNO: strerror)" when there is an errno, then the log's context (", client: ..." for http
requests). The messages counted, as nginx 1.22.1 writes them:
- src/core/ngx_connection.c, ngx_get_connection: NGX_LOG_ALERT "%ui worker_connections are
  not enough" when no free connection is left: the accepted socket is closed (a drop).
- src/core/ngx_connection.c, ngx_drain_connections: NGX_LOG_WARN "%ui worker_connections are
  not enough, reusing connections" (at most once a second) when idle keepalive connections are
  closed to make room; nothing is dropped yet.
- src/event/ngx_event_accept.c, ngx_event_accept: NGX_LOG_CRIT "accept4() failed" with errno
  EMFILE, written " (24: Too many open files)"; open() and socket() failures on the fd limit
  carry the same errno text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("emerg", "alert", "crit", "error", "warn", "notice", "info")
MESSAGES = (
    "worker_connections_not_enough",
    "worker_connections_reusing",
    "too_many_open_files",
)
# The line head, then the start of the message: the counted message texts come from nginx's
# own format strings there, so no client-controlled text can imitate them.
_ENTRY = re.compile(
    rb"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[([a-z]+)\] \d+#\d+: (?:\*\d+ )?"
    rb"(\d+ worker_connections are not enough(, reusing connections)?)?",
    re.MULTILINE,
)
_EMFILE = b"(24: Too many open files)"
# Where an http request's context starts: what follows is the client's (URI, Host, Referer),
# so an errno text there was sent by a client, not written by nginx.
_CLIENT_CONTEXT = b", client: "


def _too_many_open_files(chunk: bytes) -> int:
    """Lines of `chunk` with the EMFILE errno text ahead of any client-supplied context."""
    count = 0
    pos = chunk.find(_EMFILE)
    while pos >= 0:
        start = chunk.rfind(b"\n", 0, pos) + 1
        if chunk.find(_CLIENT_CONTEXT, start, pos) < 0:
            count += 1
        end = chunk.find(b"\n", pos)
        if end < 0:
            break
        pos = chunk.find(_EMFILE, end)
    return count


@dataclass
class ErrorCounts:
    """Counts of the lines read in one interval."""

    lines: int = 0
    levels: Counter[str] = field(default_factory=Counter)
    messages: Counter[str] = field(default_factory=Counter)

    def add(self, chunk: bytes) -> None:
        """Count a chunk of whole lines."""
        self.lines += chunk.count(b"\n")
        for match in _ENTRY.finditer(chunk):
            self.levels[match.group(1).decode("ascii")] += 1
            if match.group(2):
                reusing = match.group(3) is not None
                self.messages[
                    "worker_connections_reusing" if reusing else "worker_connections_not_enough"
                ] += 1
        if _EMFILE in chunk:
            self.messages["too_many_open_files"] += _too_many_open_files(chunk)

    def to_json(self) -> dict[str, Any]:
        """`lines`, `levels` and `messages` of the protocol's `error_log` object."""
        return {
            "lines": self.lines,
            "levels": {level: self.levels[level] for level in LEVELS},
            "messages": {message: self.messages[message] for message in MESSAGES},
        }
