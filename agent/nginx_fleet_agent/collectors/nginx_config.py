"""The nginx configuration as `nginx -T` prints it, redacted, hashed and re-read only on change.

`nginx -T` costs a process start and a full parse (tens of ms of CPU). Instead of running it
every interval, the collector remembers the mtime of every dumped file and of the directories
holding them (a file added to an included directory changes the directory's mtime) and runs it
again only when one of those changed, when nginx restarted, or every `rescan_cycles` calls.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field

from nginx_fleet_agent import defaults
from nginx_fleet_agent.nginx_command import NginxCommand, NginxCommandError
from nginx_fleet_agent.nginx_syntax import Directive, inline_includes, split_dump
from nginx_fleet_agent.redaction import redact_dump

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConfigSnapshot:
    """One redacted dump, its hash, and the parsed tree with includes inlined."""

    dump: str
    hash: str
    files: list[str]
    tree: list[Directive] = field(repr=False)


def snapshot_from_dump(raw_dump: str) -> ConfigSnapshot:
    """Redact, hash and parse raw `nginx -T` stdout."""
    dump = redact_dump(raw_dump)
    sections = split_dump(raw_dump)
    return ConfigSnapshot(
        dump=dump,
        hash=hashlib.sha256(dump.encode()).hexdigest(),
        files=[section.path for section in sections],
        tree=inline_includes(sections),
    )


class NginxConfigCollector:
    """Keeps the latest snapshot; `refresh` re-runs `nginx -T` only when something changed."""

    def __init__(
        self, command: NginxCommand, rescan_cycles: int = defaults.CONFIG_RESCAN_CYCLES
    ) -> None:
        self._command = command
        self._rescan_cycles = rescan_cycles
        self._cycles_since_read = 0
        self._attempted = False
        self._mtimes: dict[str, int | None] = {}
        self.snapshot: ConfigSnapshot | None = None
        self.error: str | None = None

    def refresh(self, force: bool = False) -> bool:
        """Re-read the config when needed; True when a new snapshot (or error) was taken."""
        self._cycles_since_read += 1
        if not force and self._attempted and not self._stale():
            return False
        self._attempted = True
        self._cycles_since_read = 0
        try:
            raw = self._command.run("-T").stdout
        except NginxCommandError as exc:
            if exc.args[0] != self.error:
                log.warning("cannot read the nginx configuration: %s", exc)
            # Keep the last good snapshot; try again when its files change or on the next rescan.
            self.error = str(exc)
            return True
        self.error = None
        self.snapshot = snapshot_from_dump(raw)
        self._mtimes = _mtimes_of(self.snapshot.files)
        return True

    def _stale(self) -> bool:
        if self._cycles_since_read >= self._rescan_cycles:
            return True
        return _mtimes_of_paths(list(self._mtimes)) != self._mtimes


def _mtimes_of(files: list[str]) -> dict[str, int | None]:
    paths = set(files) | {os.path.dirname(path) for path in files}
    return _mtimes_of_paths(sorted(paths))


def _mtimes_of_paths(paths: list[str]) -> dict[str, int | None]:
    mtimes: dict[str, int | None] = {}
    for path in paths:
        try:
            mtimes[path] = os.stat(path).st_mtime_ns
        except OSError:
            mtimes[path] = None
    return mtimes
