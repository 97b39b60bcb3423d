"""Proxy cache: cache keys, validity, stampede lock, stale serving, zone size, observability."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator

from nginx_fleet_analyzer.access_logs import (
    COMBINED_FORMAT,
    formats_at,
    formats_in_use,
    log_formats,
)
from nginx_fleet_analyzer.effective import (
    Role,
    entries,
    group,
    labels,
    nearest_common,
    serving,
    subject,
    value,
)
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import replace
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import (
    enclosing,
    format_bytes,
    is_on,
    make_fix,
    parse_size,
    server_of,
    set_or_add,
    upstream_name,
)

HOST_KEY = ["$scheme$request_method$host$request_uri"]
_HOST_VARIABLE = re.compile(r"\$\{?(host|http_host|server_name)\b")
CACHING_PREFIXES = ("proxy", "fastcgi")
CACHE_PATHS = ("proxy_cache_path", "fastcgi_cache_path", "uwsgi_cache_path", "scgi_cache_path")
USE_STALE = ["error", "timeout", "updating", "http_500", "http_502", "http_503", "http_504"]
# nginx's documented density of a keys zone; the mean object size is our assumption.
KEYS_PER_MB = 8000
ASSUMED_MEAN_OBJECT = 32 * 1024
# Objects this large on average are rare: a zone too small even for them is surely too small.
LARGE_MEAN_OBJECT = 128 * 1024
CACHE_LOG_FIELDS = " ucs=$upstream_cache_status rt=$request_time urt=$upstream_response_time"
MOSTLY_GET_200 = 0.8
HIT_RATIO_FLOOR = 0.5


def cache_uses(config: ParsedConfig, prefix: str = "proxy") -> list[tuple[Directive, Directive]]:
    """(place, the `*_cache` in force there) for locations (and `if`s) that pass and cache.

    `proxy_cache off` in a location (or nothing set anywhere above it) means no cache there.
    """
    uses = []
    seen: set[int] = set()
    for node in config.find(f"{prefix}_pass"):
        place = node.parent
        if place is None or id(place) in seen or enclosing(node, "server") is None:
            continue
        seen.add(id(place))
        cache = value(f"{prefix}_cache", place)
        if cache.on and cache.node is not None and cache.holder is not None:
            uses.append((place, cache.node))
    return uses


def _forwards_host(location: Directive) -> bool:
    _, headers = entries("proxy_set_header", location)
    return any(h.args[:1] and h.args[0].lower() == "host" for h in headers)


def _several_servers(uses: list[tuple[Directive, Directive]]) -> bool:
    """Whether these cache uses sit in more than one server block (sites, not aliases)."""
    return len({id(s) for loc, _ in uses if (s := server_of(loc)) is not None}) > 1


def _shares_sites(uses: list[tuple[Directive, Directive]]) -> list[str]:
    """Server names that share these cache entries, when more than one site does; else []."""
    servers = {id(s): s for loc, _ in uses if (s := server_of(loc)) is not None}
    names = [
        name
        for server in servers.values()
        for node in server.children("server_name")
        for name in node.args
        if name not in ("", "_")
    ]
    several_names = len(set(names)) > 1 and any(_forwards_host(loc) for loc, _ in uses)
    return sorted(set(names)) if len(servers) > 1 or several_names else []


@rule("C-key-host", Category.CACHE, Severity.ERROR)
def check_cache_key_host(ctx: RuleContext) -> Iterator[Finding]:
    """One cache zone serves several sites with a key that ignores the host."""
    config = ctx.config
    zones: dict[str, list[tuple[Directive, Directive]]] = {}
    for location, cache in cache_uses(config):
        zones.setdefault(cache.args[0], []).append((location, cache))
    for zone, uses in zones.items():
        explicit = [
            (loc, key)
            for loc, _ in uses
            if (key := value("proxy_cache_key", loc).node) is not None
            and not _HOST_VARIABLE.search(" ".join(key.args))
        ]
        defaulted = [(loc, c) for loc, c in uses if value("proxy_cache_key", loc).default_used]
        sites = _shares_sites(uses)
        if explicit and sites:
            key = explicit[0][1]
            # Every key line without $host is changed: fixing one leaves the others sharing.
            edits = [
                make_fix("set", "proxy_cache_key", HOST_KEY, node)
                for node in {id(node): node for _, node in explicit}.values()
            ]
            yield _key_finding(
                zone,
                sites,
                key,
                " ".join(key.args),
                replace(edits[0], also=tuple(edits[1:])),
                _several_servers(uses),
            )
            continue
        by_upstream: dict[str, list[tuple[Directive, Directive]]] = {}
        for loc, cache in defaulted:
            target = loc.child("proxy_pass")
            if target is not None and target.args:
                # The default key holds $proxy_host: sites behind one upstream share keys.
                host = upstream_name(target.args[0]) or target.args[0]
                by_upstream.setdefault(host, []).append((loc, cache))
        for same_upstream in by_upstream.values():
            sites = _shares_sites(same_upstream)
            if sites:
                cache = same_upstream[0][1]
                # One key line where every sharing location inherits it (http for several
                # servers), or the block of the one cache line.
                block = nearest_common([loc for loc, _ in same_upstream]) or cache.parent
                fix = make_fix("add", "proxy_cache_key", HOST_KEY, block or cache)
                yield _key_finding(
                    zone,
                    sites,
                    cache,
                    "$scheme$proxy_host$request_uri (default)",
                    fix,
                    _several_servers(same_upstream),
                )
                break


def _key_finding(
    zone: str, sites: list[str], at: Directive, key: str, fix: Fix, several_servers: bool
) -> Finding:
    # Names of one server block are usually aliases of one site: a shared entry leaks only when
    # the upstream answers differently per forwarded Host, so that is a warning, not an error.
    aliases = (
        ""
        if several_servers
        else (
            " (names of one server, often aliases of one site: a leak only if the upstream answers "
            "differently per Host)"
        )
    )
    return get_rule("C-key-host").finding(
        at=at,
        directive="proxy_cache_key",
        severity=None if several_servers else Severity.WARNING,
        message=(
            f"cache zone {zone} serves {', '.join(sites)} with proxy_cache_key {key}, which "
            f"has no $host: one site's cached pages can be served for another{aliases}"
        ),
        evidence={"zone": zone, "server_names": sites, "proxy_cache_key": key},
        fix=fix,
    )


def _cache_companion(
    ctx: RuleContext,
    rule_id: str,
    suffix: str,
    is_weak: Callable[[Directive | None], bool],
    args: list[str],
    message: str,
    note: str = "",
) -> Iterator[Finding]:
    """One finding per cause where caching places lack a companion `*_cache<suffix>` setting.

    A missing setting is added next to the `*_cache` line in force (it covers the same places);
    proxy and FastCGI caches are judged alike.
    """
    for prefix in CACHING_PREFIXES:
        name = f"{prefix}_cache{suffix}"
        pairs: list[tuple[Directive, Directive]] = []
        defaulted: list[tuple[Directive, Directive]] = []
        for place, cache in cache_uses(ctx.config, prefix):
            node = value(name, place).node
            if not is_weak(node):
                continue
            if node is not None:
                pairs.append((node, place))
            else:
                defaulted.append((place, cache))
        if defaulted:
            # Unset everywhere: one line next to the one cache line, or in the innermost block
            # around every caching place (http for several servers), covers them all.
            places = [place for place, _ in defaulted]
            caches = {id(cache): cache for _, cache in defaulted}
            shared = next(iter(caches.values())) if len(caches) == 1 else None
            block = shared.parent if shared is not None else nearest_common(places)
            if block is not None:
                pairs.extend((shared or block, place) for place in places)
        for anchor, places in group(pairs):
            node = anchor if anchor.name == name else None
            cache = value(f"{prefix}_cache", places[0]).node or anchor
            into = anchor if anchor.block is not None else cache.parent or anchor
            where = labels(places)
            yield get_rule(rule_id).finding(
                at=anchor,
                directive=name,
                message=f"{subject(places, 'caches', 'cache')} in zone {' '.join(cache.args[:1])} "
                f"{message.format(name=name)}",
                evidence={
                    "zone": cache.args[0] if cache.args else None,
                    name: node.args if node is not None else None,
                    "location": where[0],
                    "places": where,
                },
                fix=set_or_add(name, args, node, into, note.format(prefix=prefix)),
            )


@rule("C-no-valid", Category.CACHE, Severity.WARNING)
def check_cache_valid(ctx: RuleContext) -> Iterator[Finding]:
    """Without proxy_cache_valid nothing is cached when the upstream sends no caching headers."""
    yield from _cache_companion(
        ctx,
        "C-no-valid",
        "_valid",
        lambda node: node is None,
        ["200", "301", "10m"],
        "with no {name}: responses without caching headers are never cached",
        "also {prefix}_cache_valid 404 1m;",
    )


@rule("C-lock", Category.CACHE, Severity.INFO)
def check_cache_lock(ctx: RuleContext) -> Iterator[Finding]:
    """A cold key sends every concurrent request upstream."""
    yield from _cache_companion(
        ctx,
        "C-lock",
        "_lock",
        lambda node: not is_on(node),
        ["on"],
        "without {name} on: a cold key sends every concurrent request upstream",
    )


@rule("C-stale", Category.CACHE, Severity.INFO)
def check_cache_stale(ctx: RuleContext) -> Iterator[Finding]:
    """Errors and refreshes reach clients although a stale copy is at hand."""
    yield from _cache_companion(
        ctx,
        "C-stale",
        "_use_stale",
        lambda node: node is None or node.args == ["off"],
        USE_STALE,
        "without {name}: clients get errors while the upstream is down "
        "or wait while an entry is refreshed",
        "also {prefix}_cache_background_update on;",
    )


@rule("C-temp-path", Category.CACHE, Severity.INFO)
def check_cache_temp_path(ctx: RuleContext) -> Iterator[Finding]:
    """Responses are written to a temp path and copied into the cache."""
    for name in CACHE_PATHS:
        for node in ctx.config.find(name):
            if "use_temp_path=off" in node.args:
                continue
            args = [a for a in node.args if not a.startswith("use_temp_path=")]
            yield get_rule("C-temp-path").finding(
                at=node,
                message=(
                    f"{name} {node.args[0] if node.args else ''} without use_temp_path=off: each "
                    "response is written to a temp file first and then copied into the cache"
                ),
                evidence={"path": node.args[0] if node.args else None, "use_temp_path": "on"},
                fix=make_fix("set", name, [*args, "use_temp_path=off"], node),
            )


def _parameter(node: Directive, name: str) -> str | None:
    prefix = f"{name}="
    return next((a[len(prefix) :] for a in node.args if a.startswith(prefix)), None)


def _slice_size(config: ParsedConfig, zone: str) -> int | None:
    """The `slice` size every location caching in this zone uses, if they all slice."""
    sizes: list[int] = []
    for prefix in CACHING_PREFIXES:
        for place, cache in cache_uses(config, prefix):
            if cache.args[:1] != [zone]:
                continue
            found = value("slice", place)
            size = parse_size(found.first) if found.node is not None and found.first else None
            if not size:
                return None
            sizes.append(size)
    return min(sizes) if sizes else None


@rule("C-zone-size", Category.CACHE, Severity.WARNING)
def check_cache_zone_size(ctx: RuleContext) -> Iterator[Finding]:
    """The keys zone fills up long before the cache does."""
    for name in CACHE_PATHS:
        for node in ctx.config.find(name):
            zone = _parameter(node, "keys_zone")
            max_text = _parameter(node, "max_size")
            if zone is None or max_text is None or ":" not in zone:
                continue
            zone_name, zone_text = zone.split(":", 1)
            zone_bytes = parse_size(zone_text)
            max_bytes = parse_size(max_text)
            if not zone_bytes or not max_bytes:
                continue
            keys = zone_bytes / 1024**2 * KEYS_PER_MB
            objects = max_bytes / ASSUMED_MEAN_OBJECT
            if keys >= objects:
                continue
            needed_mb = math.ceil(objects / KEYS_PER_MB)
            # The mean object size is assumed, not measured: only a zone too small even for
            # large objects is surely too small; otherwise the real mean size decides. Where
            # every user of the zone slices (`slice 1m`), large files are cached as pieces of
            # that size: that is the large object to measure against.
            large = max(LARGE_MEAN_OBJECT, _slice_size(ctx.config, zone_name) or 0)
            sure = keys < max_bytes / large
            breakeven = max_bytes / keys
            args = [
                f"keys_zone={zone_name}:{needed_mb}m" if a.startswith("keys_zone=") else a
                for a in node.args
            ]
            yield get_rule("C-zone-size").finding(
                at=node,
                message=(
                    f"keys_zone {zone_name}:{zone_text} holds about {keys:,.0f} keys but "
                    f"max_size={max_text} fits about {objects:,.0f} objects of "
                    f"{format_bytes(ASSUMED_MEAN_OBJECT)}: entries are evicted before they expire"
                    + (
                        ""
                        if sure
                        else " (undecided: only if the cached objects average under "
                        f"{format_bytes(int(breakeven) // 1024 * 1024)}; their real mean size "
                        "decides)"
                    )
                ),
                severity=None if sure else Severity.INFO,
                evidence={
                    "keys_zone_bytes": zone_bytes,
                    "max_size_bytes": max_bytes,
                    "keys_capacity": round(keys),
                    "assumed_mean_object_bytes": ASSUMED_MEAN_OBJECT,
                    "overflows_below_mean_object_bytes": round(breakeven),
                },
                fix=make_fix(
                    "set",
                    name,
                    args,
                    node,
                    "sized for 32k objects: max_size / mean object size / 8000 keys per MB",
                ),
            )


@rule("C-observable", Category.CACHE, Severity.WARNING)
def check_cache_observable(ctx: RuleContext) -> Iterator[Finding]:
    """A cache is configured but no access log records whether requests hit it."""
    config = ctx.config
    paths = [d for name in CACHE_PATHS for d in config.find(name)]
    http = config.http()
    if not paths or http is None:
        return
    formats = log_formats(config)
    places = [place for prefix in CACHING_PREFIXES for place, _ in cache_uses(config, prefix)]
    if not places and not config.partial:
        # A zone no location caches with has no hit ratio to measure.
        return
    # The logs that matter are the ones written where the cache is used.
    used = (
        list(dict.fromkeys(name for place in places for name in formats_at(place)))
        if places
        else formats_in_use(config)
    )
    texts = {name: " ".join(formats[name].args[1:]) if name in formats else "" for name in used}
    if any("$upstream_cache_status" in text for text in texts.values()):
        return
    custom = next((formats[name] for name in used if name in formats), None)
    if custom is not None:
        fix = make_fix("set", "log_format", [*custom.args, CACHE_LOG_FIELDS], custom)
    else:
        fix = make_fix(
            "add",
            "log_format",
            ["cache", COMBINED_FORMAT + CACHE_LOG_FIELDS],
            http,
            "then name it in the access_log: access_log PATH cache;",
        )
    yield get_rule("C-observable").finding(
        at=paths[0],
        directive="log_format",
        message=(
            f"a cache is configured ({paths[0].name}) but the log formats in use "
            f"({', '.join(sorted(set(used))) or 'none'}) do not record $upstream_cache_status: "
            "the hit ratio cannot be measured"
        ),
        evidence={
            "formats_in_use": sorted(set(used)),
            "cache_paths": [" ".join(p.args[:1]) for p in paths],
        },
        fix=fix,
    )


@rule("C-microcache", Category.CACHE, Severity.INFO)
def check_microcache(ctx: RuleContext) -> Iterator[Finding]:
    """A dynamic app answers mostly cacheable GET 200s with no cache in front."""
    ratio = ctx.metrics.status_2xx_get_ratio if ctx.metrics is not None else None
    if ratio is None or ratio < MOSTLY_GET_200:
        return
    config = ctx.config
    for location in serving(config, Role.PASSES):
        for prefix in ("proxy", "fastcgi"):
            if not location.children(f"{prefix}_pass"):
                continue
            if value(f"{prefix}_cache", location).on:
                continue
            yield get_rule("C-microcache").finding(
                at=location,
                directive=f"{prefix}_cache",
                message=(
                    f"{location.label} passes to an app with no cache while {ratio:.0%} of "
                    "responses over the last hour were GET 200s: a 1s to 30s microcache "
                    "absorbs bursts"
                ),
                evidence={
                    **(ctx.metrics.traffic_evidence() if ctx.metrics else {}),
                    "status_2xx_get_ratio": ratio,
                    "pass": f"{prefix}_pass",
                },
                fix=make_fix(
                    "none",
                    f"{prefix}_cache",
                    [],
                    location,
                    f"needs a {prefix}_cache_path zone, {prefix}_cache_valid 200 301 302 30s, "
                    f"{prefix}_cache_use_stale updating and a bypass for logged-in cookies",
                ),
            )


@rule("C-hit-ratio", Category.CACHE, Severity.WARNING)
def check_cache_hit_ratio(ctx: RuleContext) -> Iterator[Finding]:
    """The cache answers less than half of the requests it sees."""
    ratio = ctx.metrics.cache_hit_ratio if ctx.metrics is not None else None
    if ratio is None or ratio >= HIT_RATIO_FLOOR:
        return
    uses = cache_uses(ctx.config) + cache_uses(ctx.config, "fastcgi")
    if not uses:
        return
    _, cache = uses[0]
    yield get_rule("C-hit-ratio").finding(
        at=cache,
        message=(
            f"the cache hit ratio was {ratio:.0%} over the last hour: check the cache key, "
            "*_ignore_headers (Cache-Control, Set-Cookie), responses with Set-Cookie and inactive="
        ),
        evidence={
            **(ctx.metrics.traffic_evidence() if ctx.metrics else {}),
            "cache_hit_ratio": ratio,
            "zones": sorted({c.args[0] for _, c in uses}),
        },
        fix=make_fix(
            "none",
            cache.name,
            cache.args,
            cache,
            "no single line fixes it: see the key, *_ignore_headers, Set-Cookie and inactive=",
        ),
    )
