"""Security hygiene: version disclosure, open status pages, alias traversal, Host, listings."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._places import once_per_place
from nginx_fleet_analyzer.rules._regex import can_start_with, preceding_literal
from nginx_fleet_analyzer.rules._support import (
    enclosing,
    ip_literal,
    is_on,
    make_fix,
    place_of,
    set_or_add,
    setting,
    weak_spots,
)
from nginx_fleet_analyzer.rules._variables import location_regex, split_script


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
    # A bare port ('8080') or '*:80' listens on every address.
    ip = ip_literal(host)
    return ip is not None and ip.is_loopback


def _guarded(ctx: RuleContext, block: Directive) -> bool:
    """Whether clients must sign in (auth_basic/auth_request) or cannot reach it (internal)."""
    if block.child("internal") is not None:
        return True
    basic = setting(ctx.config, "auth_basic", block)
    if basic is not None and basic.args[:1] != ["off"]:
        return True
    request = setting(ctx.config, "auth_request", block)
    return request is not None and request.args[:1] != ["off"]


@rule("X-status-open", Category.SECURITY, Severity.WARNING)
@once_per_place
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
        if _guarded(ctx, block):
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


def _prefix_traversal(location: Directive, alias: str) -> tuple[Severity, str] | None:
    path = location.args[-1]
    # A request path always starts with '/': a prefix without one matches nothing (a regex
    # written without its '~'), so nothing is read through its alias.
    if path.endswith("/") or not path.startswith("/"):
        return None
    if alias.endswith("/"):
        return Severity.ERROR, f"a request for {path}../ reads the parent of {alias}"
    return Severity.WARNING, f"a request for {path}_x/ reads {alias}_x/ (siblings named {alias}*)"


def _regex_traversal(location: Directive, alias: str) -> tuple[Severity, str] | None:
    """A capture that can start with '..' right after a path without '/' (`^/img(.*)$`)."""
    regex = location_regex(location)
    if regex is None:
        return None
    before = ""
    for literal, name in split_script(alias):
        if name is None:
            before += literal
            continue
        key: int | str = int(name) if name.isdigit() else name
        group = regex.group(key)
        index = key if isinstance(key, int) else regex.names.get(key, 0)
        if group is None or preceding_literal(regex, index) == "/":
            before = ""
            continue
        if can_start_with(group, ".", regex.ignore_case):
            if before.endswith("/"):
                return Severity.ERROR, (
                    f"${name} may start with '..' (no '/' before it in the regex), so a request "
                    f"reads the parent of {before}"
                )
            return Severity.WARNING, (
                f"${name} may start with any name character (no '/' before it in the regex), "
                f"so a request reads siblings named {before}*"
            )
        before = ""
    return None


@rule("X-alias-traversal", Category.SECURITY, Severity.ERROR)
@once_per_place
def check_alias_traversal(ctx: RuleContext) -> Iterator[Finding]:
    """A location path without trailing slash mapped by alias reaches outside the alias.

    `location /x { alias /path/; }` serves /x../secret from /path/../secret (checked against
    nginx 1.22); a regex location whose capture follows no '/' does the same. Exact (`=`)
    locations cannot, and a nested location that inherits the alias does not (nginx keeps the
    outer location's prefix length).
    """
    for node in ctx.config.find("alias"):
        location = node.parent
        if location is None or location.name != "location" or not node.args:
            continue
        args = location.args
        if not args or args[0] == "=" or args[-1].startswith("@"):
            continue
        alias = node.args[0]
        regex = args[0] in ("~", "~*")
        found = _regex_traversal(location, alias) if regex else _prefix_traversal(location, alias)
        if found is None:
            continue
        severity, how = found
        fix = (
            make_fix("none", "location", args, location, "make the capture start after a '/'")
            if regex
            else make_fix("set", "location", [*args[:-1], f"{args[-1]}/"], location)
        )
        yield get_rule("X-alias-traversal").finding(
            at=location,
            directive="alias",
            severity=severity,
            message=f"{location.label} with alias {alias}: {how}",
            evidence={"location": " ".join(args), "alias": alias},
            fix=fix,
        )


_CLIENT_HOST = ("$http_", "$arg_", "$cookie_")


@rule("X-host-spoof", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_host_spoof(ctx: RuleContext) -> Iterator[Finding]:
    """The Host sent upstream comes from client data instead of the name nginx routed by.

    $http_host is the Host header as sent: a request with an absolute URI (GET http://a/ with
    Host: b) is routed by its URI, yet $http_host is b; query arguments, cookies and other
    headers are the client's to choose outright.
    """
    for name in ("proxy_set_header", "grpc_set_header"):
        for node in ctx.config.find(name):
            if len(node.args) != 2 or node.args[0].lower() != "host":
                continue
            value = node.args[1]
            variables = [f"${v}" for _, v in split_script(value) if v is not None]
            # nginx looks variables up case-insensitively.
            client = [v for v in variables if v.lower().startswith(_CLIENT_HOST)]
            if not client:
                continue
            yield get_rule("X-host-spoof").finding(
                at=node,
                message=(
                    f"{name} Host {value}: the upstream gets a Host the client chose "
                    f"({', '.join(client)}), even one other than the host the request was routed "
                    "by; $host is that name"
                ),
                evidence={name: node.args, "variables": client},
                fix=make_fix("set", name, [node.args[0], "$host"], node),
            )


@rule("X-autoindex", Category.SECURITY, Severity.INFO)
@once_per_place
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
