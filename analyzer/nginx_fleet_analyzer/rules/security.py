"""Security hygiene: version disclosure, open status pages, lost headers, alias traversal, more."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import (
    enclosing,
    inherited_list,
    is_on,
    make_fix,
    place_of,
    set_or_add,
    weak_spots,
)

HEADER_BLOCKS = ("server", "location", "if")


@rule("X-tokens", Category.SECURITY, Severity.INFO)
def check_server_tokens(ctx: RuleContext) -> Iterator[Finding]:
    """nginx tells every client its exact version."""

    def not_off(node: Directive | None) -> bool:
        return node is None or node.args[:1] != ["off"]

    for anchor, node in weak_spots(ctx.config, "server_tokens", not_off):
        fix = set_or_add("server_tokens", ["off"], node, anchor)
        shown = (
            f"server_tokens {' '.join(node.args)}"
            if node is not None
            else "server_tokens on (default)"
        )
        yield get_rule("X-tokens").finding(
            at=anchor,
            directive="server_tokens",
            message=f"{shown}: error pages and the Server header reveal the nginx version",
            evidence={
                "server_tokens": " ".join(node.args) if node else "on",
                "default_used": node is None,
            },
            fix=fix,
        )


def _access_rules(block: Directive) -> list[Directive]:
    """The allow/deny rules in force in a block (inherited all or nothing, like nginx does)."""
    for scope in [block, *block.ancestors()]:
        found = [d for d in scope.block or [] if d.name in ("allow", "deny")]
        if found:
            return found
    return []


def _loopback_only(server: Directive) -> bool:
    listens = server.children("listen")
    if not listens:
        return False
    return all(_is_loopback(d.args[0]) for d in listens if d.args)


def _is_loopback(address: str) -> bool:
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0] if not address.startswith("[") else address[1:].split("]")[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        # A bare port ('8080') or '*:80' listens on every address.
        return False


@rule("X-status-open", Category.SECURITY, Severity.WARNING)
def check_status_open(ctx: RuleContext) -> Iterator[Finding]:
    """The stub_status page answers anyone who can reach the server."""
    for node in ctx.config.find("stub_status"):
        block = node.parent
        server = enclosing(node, "server")
        if block is None or server is None or node.module_scope != "http":
            continue
        rules = _access_rules(block)
        if any(d.name == "deny" for d in rules) or (not rules and _loopback_only(server)):
            continue
        fix: Fix
        if rules:
            fix = make_fix("add", "deny", ["all"], block, "after the allow lines")
        else:
            fix = make_fix("add", "allow", ["127.0.0.1"], block, "then deny all; after it")
        yield get_rule("X-status-open").finding(
            at=block,
            directive="stub_status",
            message=(
                f"{block.label} exposes stub_status to "
                f"{'every address' if not rules else 'addresses not denied'}: "
                "connection counts and load are readable from outside"
            ),
            evidence={"allow": [" ".join(d.args) for d in rules if d.name == "allow"], "deny": []},
            fix=fix,
        )


def _header_names(headers: list[Directive]) -> dict[str, Directive]:
    return {h.args[0].lower(): h for h in headers if h.args}


@rule("X-add-header-inherit", Category.SECURITY, Severity.WARNING)
def check_add_header_inheritance(ctx: RuleContext) -> Iterator[Finding]:
    """A block's own add_header silently drops every header its parents add."""
    for block in ctx.config.walk():
        if block.name not in HEADER_BLOCKS or block.module_scope != "http" or block.parent is None:
            continue
        own = block.children("add_header")
        if not own:
            continue
        _, parent_headers = inherited_list("add_header", block.parent)
        mine = _header_names(own)
        lost = [h for name, h in _header_names(parent_headers).items() if name not in mine]
        if not lost:
            continue
        first = lost[0]
        others = ", ".join(h.args[0] for h in lost[1:])
        yield get_rule("X-add-header-inherit").finding(
            at=own[0],
            directive="add_header",
            message=(
                f"{block.label} has its own add_header, so it drops "
                f"{', '.join(h.args[0] for h in lost)} set in {place_of(first.parent)}"
            ),
            evidence={"dropped": [h.args[0] for h in lost], "own": list(mine)},
            fix=make_fix(
                "add", "add_header", first.args, block, f"also repeat: {others}" if others else ""
            ),
        )


@rule("X-alias-traversal", Category.SECURITY, Severity.ERROR)
def check_alias_traversal(ctx: RuleContext) -> Iterator[Finding]:
    """`location /x { alias /path/; }` lets /x../ reach the parent of /path/."""
    for node in ctx.config.find("alias"):
        location = node.parent
        if location is None or location.name != "location" or not node.args:
            continue
        args = location.args
        if not args or args[0] in ("~", "~*") or args[-1].startswith("@"):
            continue
        path = args[-1]
        if path.endswith("/") or not node.args[0].endswith("/"):
            continue
        yield get_rule("X-alias-traversal").finding(
            at=location,
            directive="alias",
            message=(
                f"location {path} (no trailing slash) with alias {node.args[0]}: a request for "
                f"{path}../ reads files outside {node.args[0]}"
            ),
            evidence={"location": path, "alias": node.args[0]},
            fix=make_fix("set", "location", [*args[:-1], f"{path}/"], location),
        )


@rule("X-host-spoof", Category.SECURITY, Severity.WARNING)
def check_host_spoof(ctx: RuleContext) -> Iterator[Finding]:
    """The client's raw Host header is forwarded upstream."""
    for node in ctx.config.find("proxy_set_header"):
        if len(node.args) == 2 and node.args[0].lower() == "host" and node.args[1] == "$http_host":
            yield get_rule("X-host-spoof").finding(
                at=node,
                message=(
                    "proxy_set_header Host $http_host forwards whatever Host the client sent "
                    "(or none); $host is normalised and falls back to the server name"
                ),
                evidence={"proxy_set_header": node.args},
                fix=make_fix("set", "proxy_set_header", ["Host", "$host"], node),
            )


@rule("X-xss-header", Category.SECURITY, Severity.INFO)
def check_xss_header(ctx: RuleContext) -> Iterator[Finding]:
    """The obsolete X-XSS-Protection filter header is sent."""
    for node in ctx.config.find("add_header"):
        if len(node.args) < 2 or node.args[0].lower() != "x-xss-protection":
            continue
        if node.args[1].strip() == "0":
            continue
        yield get_rule("X-xss-header").finding(
            at=node,
            message=(
                f'add_header X-XSS-Protection "{node.args[1]}": browsers dropped the filter and '
                "it could be abused to leak data; rely on Content-Security-Policy"
            ),
            evidence={"value": node.args[1]},
            fix=make_fix("remove", "add_header", node.args, node),
        )


@rule("X-autoindex", Category.SECURITY, Severity.INFO)
def check_autoindex(ctx: RuleContext) -> Iterator[Finding]:
    """Directory listings are public."""
    for node in ctx.config.find("autoindex"):
        if not is_on(node):
            continue
        place = place_of(node.parent)
        yield get_rule("X-autoindex").finding(
            at=node,
            message=f"autoindex on in {place}: anyone can list the files of these directories",
            evidence={"autoindex": "on", "place": place},
            fix=make_fix(
                "none", "autoindex", ["off"], node, "set it off unless the listing is meant public"
            ),
        )
