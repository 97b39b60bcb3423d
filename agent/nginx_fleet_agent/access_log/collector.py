"""The access-log collector: finds the config's logs, tails them, aggregates each interval.

Positions are handed to the caller (`positions()`) to be stored in the same transaction as the
sample that counted the lines, so a restart neither re-reads nor skips a line.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from nginx_fleet_analyzer.access_logs import LogTarget, discover
from nginx_fleet_analyzer.loader import parse_dump

from nginx_fleet_agent.access_log.aggregate import IntervalStats, Memo
from nginx_fleet_agent.access_log.line_format import LineParser
from nginx_fleet_agent.access_log.tail import FileTail, TailState

log = logging.getLogger(__name__)

MAX_FILES = 50
SAMPLE_LINE_CHARS = 300
# Variables that name the site, in the protocol's words.
_SITE_FIELD = {"host": "host", "server_name": "server_name", "http_host": "http_host"}
_REDACTIONS = (
    # Query strings: tokens, e-mail addresses and search terms live there.
    (re.compile(r"\?[^\s\"]*"), "?…"),
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "<email>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"), "<ip>"),
    # IPv6: eight groups, or fewer around a "::" (a time such as 10:00:00 is neither).
    (re.compile(r"\b(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}\b"), "<ip>"),
    (
        re.compile(
            r"(?:[0-9a-fA-F]{1,4}:)*[0-9a-fA-F]{0,4}::(?:[0-9a-fA-F]{1,4}:)*[0-9a-fA-F]{0,4}"
        ),
        "<ip>",
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+\S+"), r"\1 …"),
    # Session ids, API keys, hashes: long runs of token characters with a digit in them.
    (re.compile(r"(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{20,}"), "…"),
)


def redact_line(line: bytes) -> str:
    """A log line fit to leave the host: addresses, queries, tokens hidden; shortened."""
    text = line.decode("utf-8", "replace")
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    return text[:SAMPLE_LINE_CHARS]


@dataclass
class _File:
    """One access-log target: its parsers, its tail and this interval's counts."""

    target: LogTarget
    parsers: list[LineParser]
    tail: FileTail | None
    lines: int = 0
    unparsed: int = 0
    unparsed_sample: str | None = None
    unparsed_format: str | None = None
    missing: list[str] = field(default_factory=list)
    site_field: str | None = None


class AccessLogCollector:
    """Tails every access log of the config; `collect` returns one interval's aggregates."""

    def __init__(
        self,
        *,
        top_paths: int = 0,
        rotate_wait_s: float = 5.0,
    ) -> None:
        self._saved: dict[str, Any] = {}
        self._top_paths = top_paths
        self._rotate_wait_s = rotate_wait_s
        self._files: dict[str, _File] = {}
        self._memo = Memo()

    def use_config(
        self, dump: str, *, prefix: str | None = None, default_path: str | None = None
    ) -> None:
        """Find the access logs of a new `nginx -T` dump; tails of unchanged paths go on."""
        try:
            targets = discover(parse_dump(dump), prefix=prefix, default_path=default_path)
        except Exception:  # the config engine reports, never crashes; belt and braces
            log.exception("cannot find the access logs in the nginx config")
            return
        kept: dict[str, _File] = {}
        for target in targets[:MAX_FILES]:
            old = self._files.pop(target.path, None)
            kept[target.path] = self._file(target, old)
        for gone in self._files.values():
            self._saved.pop(gone.target.path, None)
            if gone.tail is not None:
                gone.tail.close()
        self._files = kept

    def restore(self, positions: dict[str, Any]) -> None:
        """Positions stored with the last spooled sample, for tails not yet opened."""
        self._saved.update(positions)

    def _file(self, target: LogTarget, old: _File | None) -> _File:
        parsers = [LineParser(f, with_paths=self._top_paths > 0) for f in target.formats]
        tail = old.tail if old is not None else None
        if tail is not None and target.state != "file":
            # The same path is now a target the agent cannot read (gzip=, say): let it go.
            tail.close()
            tail = None
        site_variable = next(
            (p.fields.variable["site"] for p in parsers if p.fields.variable["site"]), None
        )
        return _File(
            target=target,
            parsers=parsers,
            tail=tail,
            missing=_missing_fields(parsers),
            site_field=_SITE_FIELD.get(site_variable or ""),
        )

    def collect(self) -> dict[str, Any] | None:
        """Read what each log gained since the last call; the protocol's `access_log` object."""
        if not self._files:
            return None
        stats = IntervalStats(self._memo, top_paths=self._top_paths)
        for entry in self._files.values():
            entry.lines = entry.unparsed = 0
            entry.unparsed_sample = entry.unparsed_format = None
            if entry.tail is None and entry.target.state == "file":
                state = TailState.from_json(self._saved.get(entry.target.path) or {})
                entry.tail = FileTail(
                    entry.target.path,
                    state,
                    start_at_end=True,
                    rotate_wait_s=self._rotate_wait_s,
                )
            if entry.tail is None:
                continue
            for chunk in entry.tail.read():
                self._count(entry, chunk, stats)
        out = stats.to_json()
        out["files"] = [self._report(entry) for entry in self._files.values()]
        return out

    def positions(self) -> dict[str, Any]:
        """Every tail's position after the last `collect`, to store with its sample."""
        saved = {}
        for path, entry in self._files.items():
            if entry.tail is not None and entry.tail.state is not None:
                saved[path] = entry.tail.state.to_json()
        return saved

    def close(self) -> None:
        """Close every open file."""
        for entry in self._files.values():
            if entry.tail is not None:
                entry.tail.close()
        self._files = {}

    def _count(self, entry: _File, chunk: bytes, stats: IntervalStats) -> None:
        """Parse one chunk of whole lines with the file's formats, first match wins."""
        lines = chunk.count(b"\n")
        entry.lines += lines
        if not entry.parsers:
            entry.unparsed += lines
            return
        rest = chunk
        for number, parser in enumerate(entry.parsers):
            rows = parser.parse(rest)
            stats.add_rows(rows, parser.positions, entry.target.path)
            left = rest.count(b"\n") - len(rows)
            if not left:
                return
            unmatched = [line for line in rest.split(b"\n")[:-1] if not parser.matches(line)]
            if number == len(entry.parsers) - 1:
                entry.unparsed += left
                if entry.unparsed_sample is None and unmatched:
                    entry.unparsed_sample = redact_line(unmatched[0])
                    entry.unparsed_format = entry.parsers[0].format.name
                return
            rest = b"\n".join(unmatched) + b"\n"

    def _report(self, entry: _File) -> dict[str, Any]:
        target = entry.target
        if target.state != "file" or entry.tail is None:
            state, reason = "unsupported", target.reason
        else:
            state, reason = entry.tail.status, entry.tail.reason
        return {
            "path": target.path,
            "formats": [f.name for f in target.formats],
            "state": state,
            "reason": reason,
            "lines": entry.lines,
            "unparsed": entry.unparsed,
            "unparsed_sample": entry.unparsed_sample,
            "unparsed_format": entry.unparsed_format,
            "missing_fields": entry.missing,
            "site_field": entry.site_field,
            "conditional": target.conditional,
        }


def _missing_fields(parsers: list[LineParser]) -> list[str]:
    """Reported variables none of the file's formats write."""
    if not parsers:
        return []
    missing = set(parsers[0].fields.missing)
    for parser in parsers[1:]:
        missing &= set(parser.fields.missing)
    return sorted(missing)
