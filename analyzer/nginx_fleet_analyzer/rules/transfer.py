"""Transfer and files: zero-copy sends, small-packet latency, file handle cache, asset expiry."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import (
    file_serving_scopes,
    inherited_list,
    is_on,
    locations_in,
    make_fix,
    passes_request,
    set_or_add,
    setting,
    unique_by_anchor,
)

_IMAGE_EXT = r"png|jpe?g|gif|svg|webp|avif|ico|bmp"
_ASSET_EXT = rf"css|m?js|woff2?|ttf|otf|eot|{_IMAGE_EXT}"
_ASSET_IN_REGEX = re.compile(rf"(?<![a-z0-9])({_ASSET_EXT})(?![a-z0-9])", re.IGNORECASE)
_ASSET_PREFIX = re.compile(
    r"^/(static|assets|css|js|fonts|images|img|media|dist|build)(/|$)", re.IGNORECASE
)
OPEN_FILE_CACHE = ["max=10000", "inactive=30s"]
OPEN_FILE_CACHE_COMPANIONS = (
    "also open_file_cache_valid 60s; open_file_cache_min_uses 2; open_file_cache_errors on;"
)


@rule("T-sendfile", Category.TRANSFER, Severity.WARNING)
def check_sendfile(ctx: RuleContext) -> Iterator[Finding]:
    """Files are copied through user space because sendfile is off."""
    config = ctx.config
    http = config.http()
    if http is None:
        return
    pairs: list[tuple[Directive, Finding]] = []
    for scope in file_serving_scopes(config):
        node = setting(config, "sendfile", scope)
        if is_on(node):
            continue
        anchor = node if node is not None else http
        nopush = setting(config, "tcp_nopush", scope)
        note = "" if is_on(nopush) else "also tcp_nopush on; (fills packets with sendfile)"
        fix = set_or_add("sendfile", ["on"], node, http, note)
        shown = "off" if node is not None else "off (the default)"
        pairs.append(
            (
                anchor,
                get_rule("T-sendfile").finding(
                    at=anchor,
                    directive="sendfile",
                    message=(
                        f"{scope.label} serves files from disk with sendfile {shown}: every "
                        "file is copied through user space; sendfile sends it zero-copy"
                    ),
                    evidence={
                        "sendfile": "off",
                        "default_used": node is None,
                        "serves": scope.label,
                    },
                    fix=fix,
                ),
            )
        )
    yield from unique_by_anchor(pairs)


@rule("T-nodelay", Category.TRANSFER, Severity.INFO)
def check_tcp_nodelay(ctx: RuleContext) -> Iterator[Finding]:
    """tcp_nodelay off delays small responses (Nagle's algorithm)."""
    for node in ctx.config.find("tcp_nodelay"):
        if node.module_scope != "http" or is_on(node, default=True):
            continue
        yield get_rule("T-nodelay").finding(
            at=node,
            message=(
                "tcp_nodelay off lets the kernel hold back small packets (Nagle), adding latency "
                "to small responses on keepalive connections; the default is on"
            ),
            evidence={"tcp_nodelay": "off"},
            fix=make_fix("remove", "tcp_nodelay", node.args, node, "the default is on"),
        )


@rule("T-open-file-cache", Category.TRANSFER, Severity.INFO)
def check_open_file_cache(ctx: RuleContext) -> Iterator[Finding]:
    """Static serving without open_file_cache pays open()/stat() on every request."""
    config = ctx.config
    http = config.http()
    if http is None:
        return
    pairs: list[tuple[Directive, Finding]] = []
    for scope in file_serving_scopes(config):
        node = setting(config, "open_file_cache", scope)
        if node is not None and node.args[:1] != ["off"]:
            continue
        anchor = node if node is not None else http
        fix = set_or_add("open_file_cache", OPEN_FILE_CACHE, node, http, OPEN_FILE_CACHE_COMPANIONS)
        pairs.append(
            (
                anchor,
                get_rule("T-open-file-cache").finding(
                    at=anchor,
                    directive="open_file_cache",
                    message=(
                        f"{scope.label} serves files without open_file_cache: every request "
                        "pays open() and stat(); the cache keeps descriptors and metadata"
                    ),
                    evidence={"open_file_cache": "off", "serves": scope.label},
                    fix=fix,
                ),
            )
        )
    yield from unique_by_anchor(pairs)


def asset_extensions(location: Directive) -> list[str] | None:
    """File types a location is meant for, or None when it is not an asset location."""
    if location.name != "location" or not location.args:
        return None
    pattern = location.args[-1]
    if location.args[0] in ("~", "~*"):
        found = [m.lower() for m in _ASSET_IN_REGEX.findall(pattern)]
        return found or None
    return ["static files"] if _ASSET_PREFIX.match(pattern) else None


def _has_cache_headers(ctx: RuleContext, location: Directive) -> bool:
    expires = setting(ctx.config, "expires", location)
    if expires is not None and expires.args[:1] != ["off"]:
        return True
    _, headers = inherited_list("add_header", location)
    return any(h.args and h.args[0].lower() == "cache-control" for h in headers)


@rule("T-static-expiry", Category.TRANSFER, Severity.WARNING)
def check_static_expiry(ctx: RuleContext) -> Iterator[Finding]:
    """Asset locations that send no expiry make browsers re-ask for every file."""
    for server in ctx.config.servers():
        for location in locations_in(server):
            kinds = asset_extensions(location)
            if kinds is None or passes_request(location) or _has_cache_headers(ctx, location):
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
