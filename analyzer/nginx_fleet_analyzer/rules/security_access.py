"""Access control and request routing that do less than they seem to: allow lists, if, resolver."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.effective import entries
from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._places import once_per_place
from nginx_fleet_analyzer.rules._support import (
    PASS_DIRECTIVES,
    ip_literal,
    make_fix,
    own,
    setting,
)

# Directives inside an if whose effect the switch of configuration changes (the wiki's cases).
_RISKY_IN_IF = ("add_header", "more_set_headers", "try_files", "root", "alias", *PASS_DIRECTIVES)
_LEAVING_FLAGS = ("last", "redirect", "permanent")


def _auth_in_force(ctx: RuleContext, block: Directive) -> bool:
    """Whether a client-authentication module guards the block."""
    basic = setting(ctx.config, "auth_basic", block)
    if basic is not None and basic.args[:1] != ["off"]:
        return True
    for name in ("auth_request", "auth_jwt"):
        node = setting(ctx.config, name, block)
        if node is not None and node.args[:1] != ["off"]:
            return True
    return False


@rule("X-allow-without-deny", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_allow_without_deny(ctx: RuleContext) -> Iterator[Finding]:
    """`allow` lines with no `deny` let everyone in.

    nginx keeps a block's allow/deny list whole or not at all (ngx_http_access_module merges
    only when the child has no rule), so a parent's `deny all;` does not apply to a block that
    has its own `allow`: nothing matches the other addresses and they are let through. Under
    `satisfy any` with an authentication module the allow lines are a bypass for trusted
    addresses, everyone else still has to sign in: that is intended.
    """
    for block in ctx.config.walk():
        allows = [a for a in own(block, "allow") if a.args]
        if not allows or own(block, "deny") or own(block, "include"):
            continue
        if any(_address(a) == "all" for a in allows):
            continue
        satisfy = setting(ctx.config, "satisfy", block)
        if satisfy is not None and satisfy.args[:1] == ["any"] and _auth_in_force(ctx, block):
            continue
        parent_deny: Directive | None = next(
            (d for scope in block.ancestors() for d in own(scope, "deny") if _address(d) == "all"),
            None,
        )
        # Keyed by the block, where `deny all;` goes; shown at the first allow.
        yield get_rule("X-allow-without-deny").finding(
            at=block,
            file=allows[0].file,
            line=allows[0].line,
            directive="allow",
            message=(
                f"{block.label} allows {', '.join(_address(a) for a in allows)} but "
                "denies nobody, so every other address is let in too"
                + (
                    f" (the deny all on line {parent_deny.line} is not inherited by a block "
                    "with rules of its own)"
                    if parent_deny is not None
                    else ""
                )
            ),
            evidence={
                "allow": [" ".join(a.args) for a in allows],
                "parent_deny_all": parent_deny.line if parent_deny is not None else None,
            },
            fix=make_fix("add", "deny", _deny_all(allows[0]), block, "after the allow lines"),
        )


# nginx-rtmp's access lists name the action first: `allow play 10.0.0.0/8;`.
_RTMP_ACTIONS = ("play", "publish")


def _address(node: Directive) -> str:
    """The address an allow/deny line names (after nginx-rtmp's play/publish word)."""
    if len(node.args) > 1 and node.args[0] in _RTMP_ACTIONS:
        return node.args[1]
    return node.args[0] if node.args else ""


def _deny_all(allow: Directive) -> list[str]:
    """`deny all` in the allow line's form (`deny play all` for nginx-rtmp)."""
    return [allow.args[0], "all"] if _address(allow) != allow.args[0] else ["all"]


def _loses(name: str, node: Directive, location: Directive) -> bool:
    """Whether `name` inside the if block `node` takes something away when the if matches.

    An add_header inside an if replaces the add_header lines in force in the location (its own
    or inherited) and those of another if that matches too (one that returns has left by
    then); with neither, it only adds headers on a condition, which is what the if is for.
    """
    if name != "add_header":
        return True
    if entries("add_header", location)[1]:
        return True
    return any(
        other is not node
        and bool(other.children("add_header"))
        and not any(_leaves(d) for d in other.block or ())
        for other in own(location, "if")
    )


def _leaves(node: Directive) -> bool:
    """Whether the directive ends the request's stay in this location (return or a redirect)."""
    if node.name == "return":
        return True
    if node.name != "rewrite" or len(node.args) < 2:
        return False
    if node.args[2:3] and node.args[2] in _LEAVING_FLAGS:
        return True
    return node.args[1].startswith(("http://", "https://", "$scheme"))


@rule("X-if-is-evil", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_if_is_evil(ctx: RuleContext) -> Iterator[Finding]:
    """An `if` in a location that does more than return or rewrite ... last.

    When its condition holds, nginx serves the request with the if block's own configuration:
    try_files, the location's other add_header lines and content settings do not apply. An if
    that returns or rewrites with last/redirect leaves before any of that matters; one that only
    sets variables or expiry is reported as info.
    """
    for node in ctx.config.find("if"):
        location = node.parent
        if location is None or location.name != "location" or node.block is None:
            continue
        body = node.block
        if any(_leaves(d) for d in body):
            continue
        risky = sorted(
            {d.name for d in body if d.name in _RISKY_IN_IF and _loses(d.name, node, location)}
        )
        try_files = own(location, "try_files")
        if not risky and not try_files:
            severity = Severity.INFO
            why = (
                "nginx switches to the if block's configuration when it matches (harmless "
                "here, but try_files or content settings added later will not apply)"
            )
        else:
            severity = Severity.WARNING
            lost = f"try_files (line {try_files[-1].line})" if try_files else ""
            why = (
                "when it matches, nginx serves the request with the if block's configuration: "
                + (f"{', '.join(risky)} inside it replace what the location has; " if risky else "")
                + (f"{lost} does not run" if lost else "of several matching ifs, the last wins")
            )
        yield get_rule("X-if-is-evil").finding(
            at=node,
            severity=severity,
            message=f"if {' '.join(node.args)} in {location.label}: {why}",
            evidence={"directives": [d.name for d in body], "location": location.label},
            fix=make_fix(
                "none",
                "if",
                node.args,
                node,
                "keep only return / rewrite ... last inside it, or compute a value with map",
            ),
        )


def _resolver_host(address: str) -> str:
    if address.startswith("["):
        return address[1:].split("]", 1)[0]
    if address.count(":") == 1:
        return address.split(":", 1)[0]
    return address


def _is_public(host: str) -> bool:
    # A name is resolved by the system's resolver at start-up: nothing to judge.
    address = ip_literal(host)
    return address is not None and address.is_global


# Variables that hold the request's path or query: text from them on is no longer the address.
_PATH_VARIABLES = ("$request_uri", "$uri", "$document_uri", "$is_args", "$args", "$query_string")


def _looks_up_at_run_time(node: Directive) -> bool:
    """Whether a `*_pass` line names its host through a variable, so nginx resolves it while
    serving (`proxy_pass http://$host$request_uri`); an address written out
    (`http://127.0.0.1:3128$request_uri`) or an upstream block's name needs no resolver."""
    if not node.args or "$" not in node.args[0]:
        return False
    rest = node.args[0].split("://", 1)[-1]
    ends = [i for i in (rest.find("/"), *(rest.find(v) for v in _PATH_VARIABLES)) if i >= 0]
    return "$" in rest[: min(ends, default=len(rest))]


def _routes_by_name(ctx: RuleContext, resolver: Directive) -> bool:
    """Whether this resolver looks up upstream names at run time: a `*_pass` it serves names
    its host through a variable, or an upstream server line asks to `resolve`."""
    config = ctx.config
    for name in PASS_DIRECTIVES:
        for node in config.find(name):
            if _looks_up_at_run_time(node) and setting(config, "resolver", node) is resolver:
                return True
    return any("resolve" in node.args for node in config.find("server") if node.block is None)


def _staples(ctx: RuleContext, resolver: Directive) -> bool:
    """Whether a server that staples OCSP responses fetches them through this resolver."""
    return any(
        node.args[:1] == ["on"] and setting(ctx.config, "resolver", node) is resolver
        for node in ctx.config.find("ssl_stapling")
    )


@rule("X-resolver-external", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_resolver_external(ctx: RuleContext) -> Iterator[Finding]:
    """nginx's own DNS resolver queries a server across the internet.

    Forged answers matter where nginx picks an upstream by name at run time; a resolver used
    only for OCSP stapling fetches responses the CA signs, so a forged address gains nothing.
    """
    for node in ctx.config.find("resolver"):
        addresses = [a for a in node.args if "=" not in a]
        public = [a for a in addresses if _is_public(_resolver_host(a))]
        if not public:
            continue
        routes = _routes_by_name(ctx, node)
        if routes:
            use = ", redirecting requests proxied to upstreams chosen by name"
        elif _staples(ctx, node):
            use = " (here it only serves OCSP stapling, whose answers the CA signs)"
        else:
            use = " (nothing it serves looks a name up at run time: it is unused today)"
        yield get_rule("X-resolver-external").finding(
            at=node,
            severity=None if routes else Severity.INFO,
            message=(
                f"resolver {' '.join(public)}: nginx's resolver asks a public DNS server over "
                "UDP, whose answers an attacker on the path (or one guessing query ids) can "
                "forge" + use
            ),
            evidence={"public": public, "all": addresses, "runtime_names": routes},
            fix=make_fix(
                "none",
                "resolver",
                node.args,
                node,
                "use a local caching resolver (127.0.0.1, 127.0.0.53, the VPC's resolver)",
            ),
        )


def _passes_on(block: Directive) -> bool:
    if any(own(block, name) for name in PASS_DIRECTIVES):
        return True
    return any(d.name in PASS_DIRECTIVES for d in block.walk())


@rule("X-valid-referers", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_valid_referers(ctx: RuleContext) -> Iterator[Finding]:
    """`valid_referers none` accepts requests without a Referer, which anyone can send."""
    for node in ctx.config.find("valid_referers"):
        if "none" not in node.args:
            continue
        block = node.parent
        guards_app = block is not None and _passes_on(block)
        kept = [a for a in node.args if a != "none"]
        yield get_rule("X-valid-referers").finding(
            at=node,
            severity=None if guards_app else Severity.INFO,
            message=(
                "valid_referers none: a request without Referer counts as valid, and any client "
                "can leave it out"
                + (
                    "; this check guards an application, where it gives no protection"
                    if guards_app
                    else " (acceptable for hotlink protection of static files)"
                )
            ),
            evidence={"valid_referers": node.args, "guards_application": guards_app},
            fix=make_fix("set", "valid_referers", kept, node) if kept else None,
        )
