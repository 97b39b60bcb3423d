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
from collections.abc import Callable, Iterator, Sequence
from itertools import compress
from operator import itemgetter
from typing import Any

from nginx_fleet_analyzer.latency_sketch import ALPHA, Sketch, bin_index

MAX_SITES = 200
MAX_UPSTREAMS = 100
MAX_PATHS_PER_SITE = 1000
FEW_SITES = 8
# The control plane's bounds on a site or upstream name and on a path.
MAX_NAME_CHARS = 255
MAX_PATH_CHARS = 200
OTHER = "(other)"
# How nginx writes a value it does not have: "-", or nothing with escape=json or none.
BLANK = (b"-", b"")
CACHE_STATUSES = ("HIT", "MISS", "EXPIRED", "STALE", "UPDATING", "REVALIDATED", "BYPASS")
NOTED_CODES = (499, 500, 502, 503, 504)
_CACHE_KEYS = {status.encode(): status for status in CACHE_STATUSES}
_MAX_CACHED = 50_000
# Each figure is counted over the few fields it needs, so that a busy site's lines repeat the
# same combinations (a status with a cache status; a site with a millisecond timing) and the
# Python work runs once per combination, not per line.
_REQUEST_FIELDS = ("site", "status", "method", "cache")
_UPSTREAM_FIELDS = ("site", "status", "upstream_time", "upstream_addr", "upstream_status")
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
        if not rows:
            return
        for key, n, at in _counted(rows, positions, _REQUEST_FIELDS):
            self._add_requests(key, n, at, default_site)
        if "request_time" in positions:
            for key, n, at in _counted(rows, positions, ("site", "request_time")):
                stats = self._site(_site_of(key, at, default_site))
                stats.request_time = stats.request_time or Sketch()
                self.memo.add_time(stats.request_time, key[at["request_time"]], n)
        if "upstream_time" in positions:
            for key, n, at in _counted(rows, positions, _UPSTREAM_FIELDS):
                self._add_upstream(key, n, at, default_site)
        if self.top_paths and "path" in positions:
            for key, n, at in _counted(rows, positions, ("site", "path", "request_time")):
                self._add_path(key, n, at, default_site)
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
            except ValueError:  # a "-" or an empty value: rare, so only then the slower way
                total = sum(int(row[at]) for row in rows if row[at] not in BLANK)
            stats.bytes_sent = (stats.bytes_sent or 0) + total
            return
        sites = list(map(itemgetter(positions["site"]), rows))
        sent = list(map(itemgetter(at), rows))
        names = set(sites)
        if len(names) <= FEW_SITES:
            # One pass in C per site beats a Python loop over the lines when sites are few.
            for name in names:
                chosen = [v for v in compress(sent, map(name.__eq__, sites)) if v not in BLANK]
                stats = self._site(_site_name(name, default_site))
                stats.bytes_sent = (stats.bytes_sent or 0) + sum(map(int, chosen))
            return
        totals: Counter[bytes] = Counter()
        for name, value in zip(sites, sent, strict=True):
            if value not in BLANK:
                totals[name] += int(value)
        for name, total in totals.items():
            stats = self._site(_site_name(name, default_site))
            stats.bytes_sent = (stats.bytes_sent or 0) + total

    def _site(self, name: str) -> SiteStats:
        stats = self.sites.get(name)
        if stats is None:
            if len(self.sites) >= MAX_SITES:
                name = OTHER
                stats = self.sites.get(name)
            if stats is None:
                stats = self.sites[name] = SiteStats()
        return stats

    def _add_requests(
        self, key: tuple[bytes, ...], n: int, at: dict[str, int], default_site: str
    ) -> None:
        """Requests, status classes, GET/HEAD 2xx and cache statuses of one combination."""
        stats = self._site(_site_of(key, at, default_site))
        stats.requests += n
        code = 0
        if (where := at.get("status")) is not None:
            stats.status = stats.status if stats.status is not None else Counter()
            if key[where] not in BLANK:
                code = int(key[where])
                stats.status[_CLASSES.get(code // 100, "5xx")] += n
                if code in NOTED_CODES:
                    stats.status[str(code)] += n
        if (where := at.get("method")) is not None and code:
            get = key[where] in (b"GET", b"HEAD") and 200 <= code < 300
            stats.get_2xx = (stats.get_2xx or 0) + (n if get else 0)
        if (where := at.get("cache")) is not None:
            stats.cache = stats.cache if stats.cache is not None else Counter()
            if (name := _CACHE_KEYS.get(key[where])) is not None:
                stats.cache[name] += n

    def _add_upstream(
        self, key: tuple[bytes, ...], n: int, at: dict[str, int], default_site: str
    ) -> None:
        """The upstream time and the attempts of one combination of upstream fields."""
        site = _site_of(key, at, default_site)
        stats = self._site(site)
        stats.upstream_time = upstream_time = stats.upstream_time or Sketch()
        errors = 0
        code = key[at["status"]] if "status" in at else b""
        total, attempts = self.memo.upstream_attempts(
            key[at["upstream_time"]],
            key[at["upstream_addr"]] if "upstream_addr" in at else b"",
            key[at["upstream_status"]] if "upstream_status" in at else b"",
            int(code) if code not in BLANK else 0,
        )
        if total is not None:
            self.memo.add_time(upstream_time, total, n)
        for addr, time_bin, zero, failed in attempts:
            errors += n if failed else 0
            if not addr:
                continue
            upstream = self._upstream(site, addr)
            upstream.attempts += n
            upstream.errors += n if failed else 0
            if zero:
                upstream.response_time.zero += n
            elif time_bin is not None:
                upstream.response_time.add_bin(time_bin, n)
        stats.upstream_errors = (stats.upstream_errors or 0) + errors

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

    def _add_path(
        self, key: tuple[bytes, ...], n: int, at: dict[str, int], default_site: str
    ) -> None:
        """Requests and request time of one path (ids collapsed) of one site."""
        raw = key[at["path"]]
        if not raw:
            return
        site = _site_of(key, at, default_site)
        elapsed = _seconds(key[at["request_time"]]) if "request_time" in at else 0.0
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
        if text in BLANK:
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


def _counted(
    rows: Sequence[tuple[bytes, ...]], positions: dict[str, int], fields: Sequence[str]
) -> Iterator[tuple[tuple[bytes, ...], int, dict[str, int]]]:
    """(combination, lines, where each field is in it) of the `fields` the format has."""
    present = [name for name in fields if name in positions]
    if not present:
        yield (), len(rows), {}
        return
    at = {name: index for index, name in enumerate(present)}
    for key, n in Counter(map(_getter([positions[name] for name in present]), rows)).items():
        yield key, n, at


def _site_of(key: tuple[bytes, ...], at: dict[str, int], default_site: str) -> str:
    """The site of a combination: its host field, else the file."""
    return _site_name(key[at["site"]], default_site) if "site" in at else default_site


def as_name(value: bytes, limit: int = MAX_NAME_CHARS) -> str:
    """A logged value fit to be a name on the wire: text, no control characters, bounded.

    $host and $http_host come from the request: with escape=none a client can put anything
    in them, and the control plane refuses a sample with a name it cannot store."""
    text = value.decode("utf-8", "replace")
    if not text.isprintable():
        text = "".join(c if c.isprintable() else "?" for c in text)
    return text[:limit]


def _site_name(value: bytes, default_site: str) -> str:
    """The site a line belongs to: its host field, else the file."""
    if value in BLANK:
        return default_site
    return as_name(value).lower()


def _getter(indexes: list[int]) -> Callable[[tuple[bytes, ...]], tuple[bytes, ...]]:
    """Picks the key fields of a row as a tuple (itemgetter gives a bare value for one)."""
    if len(indexes) == 1:
        only = indexes[0]
        return lambda row: (row[only],)
    return itemgetter(*indexes)


def _seconds(text: bytes) -> float:
    return 0.0 if text in BLANK else float(text)


def upstream_attempts(
    times: bytes, addrs: bytes, statuses: bytes, code: int
) -> tuple[bytes | None, list[Attempt]]:
    """The request's total upstream time (as text, None when unknown) and its attempts.

    nginx separates the attempts of one pass with `, ` and internal-redirect groups with ` : `;
    the three variables list the same attempts in the same order. Without $upstream_status an
    attempt failed when nginx moved on from it within its group, or when it was the request's
    last one and the request ended 502 or 504."""
    if times in BLANK and addrs in BLANK:
        return None, []  # the request never went upstream (a cache hit, a static file)
    time_groups = [group.split(b", ") for group in times.split(b" : ")] if times else []
    addr_list = _GROUP_SEPARATOR.split(addrs) if addrs not in BLANK else []
    status_list = _GROUP_SEPARATOR.split(statuses) if statuses not in BLANK else []
    attempts: list[Attempt] = []
    total = 0.0
    known = False
    position = 0
    last_group = len(time_groups) - 1
    for group_number, group in enumerate(time_groups):
        for place, text in enumerate(group):
            addr = as_name(addr_list[position]) if position < len(addr_list) else ""
            status = status_list[position] if position < len(status_list) else b""
            position += 1
            value = None if text in BLANK else float(text)
            if value is not None:
                total += value
                known = True
            if status not in BLANK:
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
    path = as_name(raw.split(b"?", 1)[0], MAX_PATH_CHARS)
    return "/".join(
        ":id" if segment and _ID_SEGMENT.match(segment) else segment for segment in path.split("/")
    )
