"""Transfer and files: zero-copy sends, small-packet latency, file handle cache, asset expiry."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nginx_fleet_analyzer.effective import (
    Effective,
    Role,
    chain,
    entries,
    headers,
    labels,
    role,
    serving,
    subject,
    value,
    weak_places,
)
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.record import replace
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import file_serving_scopes, make_fix, set_or_add

_IMAGE_EXT = r"png|jpe?g|gif|svg|webp|avif|ico|bmp"
_ASSET_EXT = rf"css|m?js|woff2?|ttf|otf|eot|{_IMAGE_EXT}"
# Matched against the lowercased pattern: re.IGNORECASE makes the first one's compilation cost
# every CLI run ~0.5 ms more.
_ASSET_IN_REGEX = re.compile(rf"(?<![a-z0-9])({_ASSET_EXT})(?![a-z0-9])")
_ASSET_PREFIX = re.compile(r"^/(static|assets|css|js|fonts|images|img|media|dist|build)(/|$)")
OPEN_FILE_CACHE = ["max=10000", "inactive=30s"]
# Set with open_file_cache where none of them is written: revalidate a minute, cache only
# files asked for twice, and cache "not found" too (static sites get many probes).
OPEN_FILE_CACHE_COMPANIONS = (
    ("open_file_cache_valid", ["60s"]),
    ("open_file_cache_min_uses", ["2"]),
    ("open_file_cache_errors", ["on"]),
)


def _open_file_cache_fix(found: Effective, anchor: Directive) -> Fix:
    """open_file_cache set or added, with the companions not yet written where it goes."""
    block = found.node.parent if found.node is not None else anchor
    companions = tuple(
        make_fix("add", name, args, block)
        for name, args in OPEN_FILE_CACHE_COMPANIONS
        if block is not None and not block.children(name)
    )
    fix = set_or_add("open_file_cache", OPEN_FILE_CACHE, found.node, anchor)
    return replace(fix, also=companions)


@rule("T-sendfile", Category.TRANSFER, Severity.WARNING)
def check_sendfile(ctx: RuleContext) -> Iterator[Finding]:
    """Files are copied through user space because sendfile is off."""
    config = ctx.config
    spots = weak_places(config, "sendfile", file_serving_scopes(config), lambda f: not f.on)
    for anchor, found, places in spots:
        nopush = value("tcp_nopush", places[0])
        note = "" if nopush.on else "with tcp_nopush on; (fills packets with sendfile)"
        # tcp_nopush goes where sendfile is set, unless a line of its own already says off.
        block = found.node.parent if found.node is not None else anchor
        companions = (
            ()
            if nopush.on or block is None
            else (set_or_add("tcp_nopush", ["on"], nopush.node, block),)
        )
        shown = "off" if not found.default_used else "off (the default)"
        yield get_rule("T-sendfile").finding(
            at=anchor,
            directive="sendfile",
            message=(
                f"{subject(places, 'serves', 'serve')} files from disk with sendfile {shown}: "
                "every file is copied through user space; sendfile sends it zero-copy"
            ),
            evidence={
                "sendfile": "off",
                "default_used": found.default_used,
                "serves": labels(places),
            },
            fix=replace(set_or_add("sendfile", ["on"], found.node, anchor, note), also=companions),
        )


@rule("T-nodelay", Category.TRANSFER, Severity.INFO)
def check_tcp_nodelay(ctx: RuleContext) -> Iterator[Finding]:
    """tcp_nodelay off delays small responses (Nagle's algorithm)."""
    config = ctx.config
    places = serving(config, Role.FILES, Role.PASSES, Role.ANSWERS)
    for anchor, _, users in weak_places(config, "tcp_nodelay", places, lambda f: not f.on):
        yield get_rule("T-nodelay").finding(
            at=anchor,
            message=(
                "tcp_nodelay off lets the kernel hold back small packets (Nagle), adding latency "
                "to small responses on keepalive connections; the default is on"
            ),
            evidence={"tcp_nodelay": "off", "used_by": labels(users)},
            fix=make_fix("remove", "tcp_nodelay", anchor.args, anchor, "the default is on"),
        )


@rule("T-open-file-cache", Category.TRANSFER, Severity.INFO)
def check_open_file_cache(ctx: RuleContext) -> Iterator[Finding]:
    """Static serving without open_file_cache pays open()/stat() on every request."""
    config = ctx.config
    places = file_serving_scopes(config)
    for anchor, found, users in weak_places(config, "open_file_cache", places, lambda f: not f.on):
        yield get_rule("T-open-file-cache").finding(
            at=anchor,
            directive="open_file_cache",
            message=(
                f"{subject(users, 'serves', 'serve')} files without open_file_cache: every request "
                "pays open() and stat(); the cache keeps descriptors and metadata"
            ),
            evidence={"open_file_cache": "off", "serves": labels(users)},
            fix=_open_file_cache_fix(found, anchor),
        )


def asset_extensions(location: Directive) -> list[str] | None:
    """File types a location is meant for, or None when it is not an asset location."""
    if location.name != "location" or not location.args:
        return None
    pattern = location.args[-1].lower()
    if location.args[0] in ("~", "~*"):
        return _ASSET_IN_REGEX.findall(pattern) or None
    return ["static files"] if _ASSET_PREFIX.match(pattern) else None


def sends_expiry(place: Directive) -> bool:
    """Whether responses from this place carry expires or a Cache-Control header."""
    if value("expires", place).on or "cache-control" in headers(place):
        return True
    # headers-more (a common dynamic module) sets headers its own way.
    _, more = entries("more_set_headers", place)
    return any(a.lower().startswith("cache-control:") for d in more for a in d.args)


def _is_regex(location: Directive) -> bool:
    return location.args[:1] in (["~"], ["~*"])


def _regex_rivals(location: Directive) -> list[Directive]:
    """Regex locations that nginx may pick instead of this location for its requests.

    nginx tries the regex locations nested in the matched location first; for a prefix match,
    then those of each enclosing level (unless a prefix on the way is `^~` or `=`); a regex
    location loses to the regex siblings written before it.
    """
    rivals = [d for d in location.children("location") if _is_regex(d)]
    parent = location.parent
    if _is_regex(location):
        if parent is not None:
            siblings = parent.children("location")
            rivals.extend(d for d in siblings[: siblings.index(location)] if _is_regex(d))
        return rivals
    node = location
    for block in chain(location)[1:]:
        if node.args[:1] in (["^~"], ["="]):
            break
        rivals.extend(d for d in block.children("location") if d is not node and _is_regex(d))
        if block.name != "location":
            break
        node = block
    return rivals


def _covered(location: Directive) -> bool:
    """Asset requests of this location get an expiry here or in a location that takes them."""
    if sends_expiry(location):
        return True
    rivals = [
        r
        for r in _regex_rivals(location)
        if asset_extensions(r) and role(r) is Role.FILES and sends_expiry(r)
    ]
    if not rivals:
        return False
    kinds = asset_extensions(location) or []
    taken = {kind for r in rivals for kind in asset_extensions(r) or []}
    # A prefix location of any static file counts as covered when assets are caught elsewhere.
    return kinds == ["static files"] or set(kinds) <= taken


@rule("T-static-expiry", Category.TRANSFER, Severity.WARNING)
def check_static_expiry(ctx: RuleContext) -> Iterator[Finding]:
    """Asset locations that send no expiry make browsers re-ask for every file."""
    for location in serving(ctx.config, Role.FILES):
        kinds = asset_extensions(location)
        if kinds is None or _covered(location):
            continue
        note = (
            "fingerprinted names (app.3f2a1c.js) can take expires 1y with add_header "
            'Cache-Control "public, immutable"; also access_log off here'
        )
        yield get_rule("T-static-expiry").finding(
            at=location,
            directive="expires",
            message=(
                f"{location.label} serves {', '.join(kinds)} without expires or "
                "Cache-Control: browsers ask again for every asset on every page"
            ),
            evidence={"location": location.label, "types": kinds},
            fix=make_fix("add", "expires", ["30d"], location, note),
        )
