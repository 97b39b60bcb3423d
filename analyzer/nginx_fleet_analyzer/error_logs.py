"""Where a config's error logs go: the files the agent tails to count errors per interval.

nginx facts this follows (src/core/ngx_log.c, 1.22):
- `error_log` may appear in main, http, server, location, stream, mail and their servers, and
  several times in one block (each one adds a log); every one of them receives lines.
- `stderr` writes to nginx's standard error, `syslog:` sends to a syslog server and `memory:`
  (debug builds) to a ring buffer in memory: none of them is a file the agent can read.
- When no main-level error_log writes to a file (stderr counts as one), nginx also opens its
  default log: `-e` when given, else the compiled-in --error-log-path (`logs/error.log` under
  the prefix unless configured otherwise; Debian's is `stderr`) (ngx_log_open_default).
- A relative path is relative to the prefix (`-p`, else the compiled-in one), not to the
  directory of the config file (ngx_conf_open_file).
"""

from __future__ import annotations

import posixpath

from nginx_fleet_analyzer.model import ParsedConfig
from nginx_fleet_analyzer.record import Record

DEFAULT_ERROR_LOG_PATH = "logs/error.log"
STDERR = "stderr"
_CONTEXTS = frozenset({"main", "http", "server", "location", "stream", "mail"})


class ErrorLogTarget(Record):
    """One place error lines go: a file path, or a target that is no file and why."""

    __slots__ = ("is_file", "path", "reason")

    # The resolved file path, or the target as written (`stderr`, `syslog:server=...`).
    path: str
    is_file: bool
    # Why the target is not a file the agent can read; None for files.
    reason: str | None

    def __init__(self, path: str, is_file: bool, reason: str | None) -> None:
        self.path = path
        self.is_file = is_file
        self.reason = reason


def _target(value: str, prefix: str | None) -> ErrorLogTarget:
    """What one error_log value names."""
    if value == STDERR:
        return ErrorLogTarget(value, False, "written to nginx's standard error, not to a file")
    if value.startswith("syslog:"):
        return ErrorLogTarget(value, False, "sent to syslog, not to a file")
    if value.startswith("memory:"):
        return ErrorLogTarget(value, False, "kept in nginx's memory (debug builds), not in a file")
    if posixpath.isabs(value) or prefix is None:
        return ErrorLogTarget(value, True, None)
    return ErrorLogTarget(posixpath.normpath(posixpath.join(prefix, value)), True, None)


def _writes_to_file(value: str) -> bool:
    """Whether nginx counts this main-level target as a file log (stderr is one)."""
    return not value.startswith(("syslog:", "memory:"))


def discover(
    config: ParsedConfig, *, prefix: str | None = None, default_path: str | None = None
) -> list[ErrorLogTarget]:
    """Every error log target of the config, in first-seen order, the default one first.

    `prefix` resolves relative paths; `default_path` is the `-e` argument or the compiled-in
    --error-log-path (`logs/error.log` when not given); `stderr` there means standard error."""
    # By context: a `map` or `types` entry that happens to be named error_log is no directive.
    values = [d.args[0] for d in config.find("error_log") if d.args and d.context in _CONTEXTS]
    main = [d.args[0] for d in config.top("error_log") if d.args]
    # A file read alone (config.partial) has no known main level: no default is assumed.
    if not config.partial and not any(_writes_to_file(value) for value in main):
        values.insert(0, default_path or DEFAULT_ERROR_LOG_PATH)
    targets: dict[str, ErrorLogTarget] = {}
    for value in values:
        target = _target(value, prefix)
        targets.setdefault(target.path, target)
    return list(targets.values())
