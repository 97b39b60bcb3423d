"""One interval's access-log aggregates per site and upstream (protocol: docs/access-log.md).

Lines of a chunk are first counted by the fields the aggregates read (a Counter over tuples, in
C); the Python work then runs once per distinct combination, and a busy site repeats the same
few statuses, cache statuses and millisecond timings over and over. Parsed timings are cached
across intervals for the same reason. Memory is bounded: at most MAX_SITES sites, MAX_UPSTREAMS
upstreams and MAX_PATHS_PER_SITE paths per interval, and the caches are cleared when full.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from nginx_fleet_analyzer.latency_sketch import ALPHA, Sketch, bin_index

MAX_SITES = 200
MAX_UPSTREAMS = 100
MAX_PATHS_PER_SITE = 1000
OTHER = "(other)"
CACHE_STATUSES = ("HIT", "MISS", "EXPIRED", "STALE", "UPDATING", "REVALIDATED", "BYPASS")
NOTED_CODES = (499, 500, 502, 503, 504)
_CACHE_KEYS = {status.encode(): status for status in CACHE_STATUSES}
_MAX_CACHED = 50_000
# Fields that make up a line's counting key, in this order.
KEY_FIELDS = (
    "site",
    "status",
    "cache",
    "request_time",
    "upstream_time",
    "upstream_addr",
    "upstream_status",
    "method",
    "path",
)
_GROUP_SEPARATOR = re.compile(rb", | : ")
_ID_SEGMENT = re.compile(
    r"^(?:\d+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|[0-9a-fA-F]{16,}|(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,})$"
)


class SiteStats:
    """Counters and sketches of one site over one interval."""

    __slots__ = (
        "bytes_sent",
        "cache",
        "get_2xx",
        "request_time",
        "requests",
        "status",
        "upstream_errors",
        "upstream_time",
    )

    def __init__(self) -> None:
        self.requests = 0
        self.status: Counter[str] | None = None
        self.bytes_sent: int | None = None
        self.get_2xx: int | None = None
        self.cache: Counter[str] | None = None
        self.request_time: Sketch | None = None
        self.upstream_time: Sketch | None = None
        self.upstream_errors: int | None = None

    def to_json(self, site: str) -> dict[str, Any]:
        """The protocol's `sites[]` entry; fields the formats lack are left out."""
        out: dict[str, Any] = {"site": site, "requests": self.requests}
        if self.status is not None:
            status = {f"{c}xx": self.status.get(f"{c}xx", 0) for c in range(1, 6)}
            status.update({str(code): self.status.get(str(code), 0) for code in NOTED_CODES})
            out["status"] = status
        if self.bytes_sent is not None:
            out["bytes_sent"] = self.bytes_sent
        if self.get_2xx is not None:
            out["get_2xx"] = self.get_2xx
        if self.cache is not None:
            out["cache"] = {name: self.cache.get(name, 0) for name in CACHE_STATUSES}
        if self.request_time is not None:
            out["request_time"] = self.request_time.to_json()
        if self.upstream_time is not None:
            out["upstream_time"] = self.upstream_time.to_json()
        if self.upstream_errors is not None:
            out["upstream_errors"] = self.upstream_errors
        return out


class UpstreamStats:
    """Attempts, failures and response times of one upstream address for one site."""

    __slots__ = ("attempts", "errors", "response_time")

    def __init__(self) -> None:
        self.attempts = 0
        self.errors = 0
        self.response_time = Sketch()


class PathStats:
    """Requests and request time of one (collapsed) path."""

    __slots__ = ("requests", "time_max", "time_sum")

    def __init__(self) -> None:
        self.requests = 0
        self.time_sum = 0.0
        self.time_max = 0.0


# One upstream attempt: (address, its time's bin or None when "-", 0-time flag, failed).
Attempt = tuple[str, int | None, bool, bool]


class IntervalStats:
    """Aggregates of every line read in one interval, across files."""

    def __init__(self, memo: Memo, *, top_paths: int = 0) -> None:
        self.memo = memo
        self.top_paths = top_paths
        self.sites: dict[str, SiteStats] = {}
        self.upstreams: dict[tuple[str, str], UpstreamStats] = {}
        self.paths: dict[str, dict[str, PathStats]] = {}

    def add_rows(
        self, rows: Sequence[tuple[bytes, ...]], positions: dict[str, int], default_site: str
    ) -> None:
        """Count parsed lines (tuples placed as `positions` says) of one file."""
        present = [name for name in KEY_FIELDS if name in positions]
        if not present or not rows:
            self._site(default_site).requests += len(rows)
            return
        counts = Counter(map(_getter([positions[name] for name in present]), rows))
        index = {name: i for i, name in enumerate(present)}
        for key, count in counts.items():
            self._add(key, count, index, default_site)
        if "bytes" in positions:
            self._add_bytes(rows, positions, default_site)

    def _add_bytes(
        self, rows: Sequence[tuple[bytes, ...]], positions: dict[str, int], default_site: str
    ) -> None:
        """Sum the bytes sent per site (kept out of the counting key: they rarely repeat)."""
        at = positions["bytes"]
        if "site" not in positions:
            stats = self._site(default_site)
            try:
                total = sum(map(int, map(itemgetter(at), rows)))
            except ValueError:  # a "-": rare, so only then the slower way
                total = sum(int(row[at]) for row in rows if row[at] != b"-")
            stats.bytes_sent = (stats.bytes_sent or 0) + total
            return
        per_site = Counter(map(itemgetter(positions["site"], at), rows))
        for (site, sent), count in per_site.items():
            stats = self._site(_site_name(site, default_site))
            stats.bytes_sent = (stats.bytes_sent or 0) + (int(sent) * count if sent != b"-" else 0)

    def _site(self, name: str) -> SiteStats:
        stats = self.sites.get(name)
        if stats is None:
            if len(self.sites) >= MAX_SITES:
                name = OTHER
                stats = self.sites.get(name)
            if stats is None:
                stats = self.sites[name] = SiteStats()
        return stats

    def _add(
        self, key: tuple[bytes, ...], n: int, index: dict[str, int], default_site: str
    ) -> None:
        site_at = index.get("site")
        site = default_site if site_at is None else _site_name(key[site_at], default_site)
        stats = self._site(site)
        stats.requests += n
        code = 0
        if (at := index.get("status")) is not None:
            stats.status = stats.status if stats.status is not None else Counter()
            if key[at] != b"-":
                code = int(key[at])
                stats.status[_CLASSES.get(code // 100, "5xx")] += n
                if code in NOTED_CODES:
                    stats.status[str(code)] += n
        if (at := index.get("method")) is not None and code:
            get = key[at] in (b"GET", b"HEAD") and 200 <= code < 300
            stats.get_2xx = (stats.get_2xx or 0) + (n if get else 0)
        if (at := index.get("cache")) is not None:
            stats.cache = stats.cache if stats.cache is not None else Counter()
            if (name := _CACHE_KEYS.get(key[at])) is not None:
                stats.cache[name] += n
        if (at := index.get("request_time")) is not None:
            stats.request_time = stats.request_time or Sketch()
            self.memo.add_time(stats.request_time, key[at], n)
        if (at := index.get("upstream_time")) is not None:
            stats.upstream_time = stats.upstream_time or Sketch()
            stats.upstream_errors = stats.upstream_errors or 0
            self._add_upstream(stats, site, key, n, index, code)
        if self.top_paths and (at := index.get("path")) is not None and key[at]:
            elapsed = _seconds(key[index["request_time"]]) if "request_time" in index else 0.0
            self._add_path(site, key[at], n, elapsed)

    def _add_upstream(
        self,
        stats: SiteStats,
        site: str,
        key: tuple[bytes, ...],
        n: int,
        index: dict[str, int],
        code: int,
    ) -> None:
        times = key[index["upstream_time"]]
        addrs = key[index["upstream_addr"]] if "upstream_addr" in index else b""
        statuses = key[index["upstream_status"]] if "upstream_status" in index else b""
        total, attempts = self.memo.upstream_attempts(times, addrs, statuses, code)
        if total is not None:
            assert stats.upstream_time is not None
            self.memo.add_time(stats.upstream_time, total, n)
        for addr, time_bin, zero, failed in attempts:
            if failed:
                stats.upstream_errors = (stats.upstream_errors or 0) + n
            if not addr:
                continue
            upstream = self._upstream(site, addr)
            upstream.attempts += n
            upstream.errors += n if failed else 0
            if zero:
                upstream.response_time.zero += n
            elif time_bin is not None:
                upstream.response_time.add_bin(time_bin, n)

    def _upstream(self, site: str, addr: str) -> UpstreamStats:
        key = (site, addr)
        found = self.upstreams.get(key)
        if found is None:
            if len(self.upstreams) >= MAX_UPSTREAMS:
                key = (site, OTHER)
                found = self.upstreams.get(key)
            if found is None:
                found = self.upstreams[key] = UpstreamStats()
        return found

    def _add_path(self, site: str, raw: bytes, n: int, elapsed: float) -> None:
        paths = self.paths.setdefault(site, {})
        path = self.memo.path(raw)
        stats = paths.get(path)
        if stats is None:
            if len(paths) >= MAX_PATHS_PER_SITE:
                path = OTHER
                stats = paths.get(path)
            if stats is None:
                stats = paths[path] = PathStats()
        stats.requests += n
        stats.time_sum += elapsed * n
        stats.time_max = max(stats.time_max, elapsed)

    def to_json(self) -> dict[str, Any]:
        """The protocol's `access_log` object without `files` (the collector adds them)."""
        out: dict[str, Any] = {
            "alpha": ALPHA,
            "sites": [stats.to_json(site) for site, stats in self.sites.items()],
            "upstreams": [
                {
                    "site": site,
                    "upstream": addr,
                    "attempts": stats.attempts,
                    "errors": stats.errors,
                    "response_time": stats.response_time.to_json(),
                }
                for (site, addr), stats in self.upstreams.items()
            ],
        }
        if self.top_paths:
            out["top_paths"] = self._top_paths()
        return out

    def _top_paths(self) -> list[dict[str, Any]]:
        """Per site, the `top_paths` most frequent and the `top_paths` slowest (by mean)."""
        chosen: list[dict[str, Any]] = []
        for site, paths in self.paths.items():
            ranked = sorted(paths.items(), key=lambda item: -item[1].requests)
            slowest = sorted(paths.items(), key=lambda item: -item[1].time_sum / item[1].requests)
            names = dict.fromkeys(
                [p for p, _ in ranked[: self.top_paths]] + [p for p, _ in slowest[: self.top_paths]]
            )
            chosen.extend(
                {
                    "site": site,
                    "path": path,
                    "requests": paths[path].requests,
                    "time_sum": round(paths[path].time_sum, 3),
                    "time_max": round(paths[path].time_max, 3),
                }
                for path in names
            )
        return chosen


_CLASSES = {1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}
_UNSEEN = -(1 << 30)


class Memo:
    """Parsed timings, upstream strings and paths, kept across intervals (bounded)."""

    def __init__(self) -> None:
        self.time_bins: dict[bytes, int | None] = {}
        self.attempts: dict[tuple[bytes, bytes, bytes, int], tuple[bytes | None, list[Attempt]]]
        self.attempts = {}
        self.paths: dict[bytes, str] = {}

    def time_bin(self, text: bytes) -> int | None:
        """The sketch bin of a logged time in seconds; None for zero."""
        found = self.time_bins.get(text, _UNSEEN)
        if found != _UNSEEN:
            return found
        if len(self.time_bins) > _MAX_CACHED:
            self.time_bins.clear()
        value = float(text)
        found = None if value <= 0 else bin_index(value)
        self.time_bins[text] = found
        return found

    def add_time(self, sketch: Sketch, text: bytes, n: int) -> None:
        """Add `n` copies of a logged time (`-` means no value and is skipped)."""
        if text in (b"-", b""):
            return
        found = self.time_bin(text)
        if found is None:
            sketch.zero += n
        else:
            sketch.add_bin(found, n)

    def upstream_attempts(
        self, times: bytes, addrs: bytes, statuses: bytes, code: int
    ) -> tuple[bytes | None, list[Attempt]]:
        """`upstream_attempts` of these strings, remembered."""
        key = (times, addrs, statuses, code if not statuses else 0)
        found = self.attempts.get(key)
        if found is None:
            if len(self.attempts) > _MAX_CACHED:
                self.attempts.clear()
            found = self.attempts[key] = upstream_attempts(times, addrs, statuses, code)
        return found

    def path(self, raw: bytes) -> str:
        """`collapse_path`, remembered."""
        found = self.paths.get(raw)
        if found is None:
            if len(self.paths) > _MAX_CACHED:
                self.paths.clear()
            found = self.paths[raw] = collapse_path(raw)
        return found


def _site_name(value: bytes, default_site: str) -> str:
    """The site a line belongs to: its host field, else the file."""
    if value in (b"", b"-"):
        return default_site
    return value.decode("utf-8", "replace").lower()


def _getter(indexes: list[int]) -> Callable[[tuple[bytes, ...]], tuple[bytes, ...]]:
    """Picks the key fields of a row as a tuple (itemgetter gives a bare value for one)."""
    if len(indexes) == 1:
        only = indexes[0]
        return lambda row: (row[only],)
    return itemgetter(*indexes)


def _seconds(text: bytes) -> float:
    return 0.0 if text in (b"-", b"") else float(text)


def upstream_attempts(
    times: bytes, addrs: bytes, statuses: bytes, code: int
) -> tuple[bytes | None, list[Attempt]]:
    """The request's total upstream time (as text, None when unknown) and its attempts.

    nginx separates the attempts of one pass with `, ` and internal-redirect groups with ` : `;
    the three variables list the same attempts in the same order. Without $upstream_status an
    attempt failed when nginx moved on from it within its group, or when it was the request's
    last one and the request ended 502 or 504."""
    time_groups = [group.split(b", ") for group in times.split(b" : ")] if times else []
    addr_list = _GROUP_SEPARATOR.split(addrs) if addrs and addrs != b"-" else []
    status_list = _GROUP_SEPARATOR.split(statuses) if statuses and statuses != b"-" else []
    attempts: list[Attempt] = []
    total = 0.0
    known = False
    position = 0
    last_group = len(time_groups) - 1
    for group_number, group in enumerate(time_groups):
        for place, text in enumerate(group):
            addr = (
                addr_list[position].decode("utf-8", "replace") if position < len(addr_list) else ""
            )
            status = status_list[position] if position < len(status_list) else b""
            position += 1
            value = None if text in (b"-", b"") else float(text)
            if value is not None:
                total += value
                known = True
            if status and status != b"-":
                failed = int(status) >= 500
            else:
                retried = place < len(group) - 1
                final = group_number == last_group and place == len(group) - 1
                failed = retried or (final and code in (502, 504))
            time_bin = None if value is None or value <= 0 else bin_index(value)
            attempts.append((addr, time_bin, value is not None and value <= 0, failed))
    return (f"{total:.3f}".encode() if known else None, attempts)


def collapse_path(raw: bytes) -> str:
    """The path without its query string, numbers, UUIDs and long tokens as `:id`."""
    path = raw.split(b"?", 1)[0].decode("utf-8", "replace")[:200]
    return "/".join(
        ":id" if segment and _ID_SEGMENT.match(segment) else segment for segment in path.split("/")
    )
