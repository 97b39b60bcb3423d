"""The error-log collector: finds the config's error logs, tails them, counts each interval.

The tails are the access log's (rotation by rename, copytruncate, restarts). As there, the
positions are handed to the caller (`positions()`) to be stored in the same transaction as the
sample that counted the lines, so a restart neither counts a line twice nor skips one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from nginx_fleet_analyzer.error_logs import ErrorLogTarget, discover
from nginx_fleet_analyzer.model import ParsedConfig

from nginx_fleet_agent import defaults
from nginx_fleet_agent.access_log.tail import FileTail, TailState
from nginx_fleet_agent.error_log.counts import ErrorCounts

log = logging.getLogger(__name__)

MAX_FILES = 50


@dataclass
class _File:
    """One error-log target and its tail (None until first read, or when it is no file)."""

    target: ErrorLogTarget
    tail: FileTail | None = None


class ErrorLogCollector:
    """Tails every error log of the config; `collect` returns one interval's counts."""

    def __init__(
        self,
        *,
        rotate_wait_s: float = defaults.ACCESS_LOG_ROTATE_WAIT_S,
        max_read_bytes: int = defaults.ERROR_LOG_MAX_READ_BYTES,
    ) -> None:
        self._saved: dict[str, Any] = {}
        self._rotate_wait_s = rotate_wait_s
        self._max_read_bytes = max_read_bytes
        # None until a config was seen: without one, nothing is known about the error logs.
        self._files: dict[str, _File] | None = None

    def use_config(
        self, config: ParsedConfig, *, prefix: str | None = None, default_path: str | None = None
    ) -> None:
        """Find the error logs of a new config; tails of unchanged paths go on."""
        targets = discover(config, prefix=prefix, default_path=default_path)
        if len(targets) > MAX_FILES:
            log.warning(
                "the config names %d error logs; counting the first %d", len(targets), MAX_FILES
            )
        old = self._files or {}
        kept: dict[str, _File] = {}
        for target in targets[:MAX_FILES]:
            # A path says what it is (a file, stderr, syslog:...): a kept one keeps its tail.
            kept[target.path] = old.pop(target.path) if target.path in old else _File(target)
        for gone in old.values():
            self._saved.pop(gone.target.path, None)
            if gone.tail is not None:
                gone.tail.close()
        self._files = kept

    def restore(self, positions: dict[str, Any]) -> None:
        """Positions stored with the last spooled sample, for tails not yet opened."""
        self._saved.update(positions)

    def collect(self) -> dict[str, Any] | None:
        """Count what each log gained since the last call; the protocol's `error_log` object."""
        if self._files is None:
            return None
        counts = ErrorCounts()
        for entry in self._files.values():
            if entry.tail is None and entry.target.is_file:
                entry.tail = FileTail(
                    entry.target.path,
                    TailState.from_json(self._saved.get(entry.target.path) or {}),
                    # Like the access log: a log met for the first time is counted from now on.
                    start_at_end=True,
                    rotate_wait_s=self._rotate_wait_s,
                    max_read_bytes=self._max_read_bytes,
                    kind="error log",
                )
            if entry.tail is not None:
                for chunk in entry.tail.read():
                    counts.add(chunk)
        return {"files": [_report(entry) for entry in self._files.values()], **counts.to_json()}

    def positions(self) -> dict[str, Any]:
        """Every tail's position after the last `collect`, to store with its sample."""
        saved = {}
        for path, entry in (self._files or {}).items():
            if entry.tail is not None and entry.tail.state is not None:
                saved[path] = entry.tail.state.to_json()
        return saved

    def close(self) -> None:
        """Close every open file."""
        for entry in (self._files or {}).values():
            if entry.tail is not None:
                entry.tail.close()
        self._files = None


def _report(entry: _File) -> dict[str, Any]:
    """One `files` item: whether the path could be read and, if not, why."""
    if not entry.target.is_file or entry.tail is None:
        return {"path": entry.target.path, "readable": False, "error": entry.target.reason}
    readable = entry.tail.status == "ok"
    return {
        "path": entry.target.path,
        "readable": readable,
        "error": None if readable else entry.tail.reason,
    }
