"""Client data where it must not go: into an upstream's address (SSRF) or into a header (CR/LF)."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._places import once_per_place
from nginx_fleet_analyzer.rules._support import PASS_DIRECTIVES, make_fix
from nginx_fleet_analyzer.rules._variables import Part, Source, Variables

# Headers and redirects nginx writes to the client: a lone CR already breaks some clients.
_CLIENT_SIDE = ("add_header", "return", "rewrite")
# Requests nginx writes to an upstream: only LF ends a line there.
_SERVER_SIDE = ("proxy_pass", "proxy_set_header", "grpc_set_header")
_REDIRECT_CODES = ("301", "302", "303", "307", "308")


def _where(culprits: list[Source]) -> str:
    """Where the culprits' values are decided: every place (a variable set in several
    locations that rewrite to the same one), not only the first found; at most three."""
    places: list[Directive] = []
    for culprit in culprits:
        for place in culprit.origins or ((culprit.defined_at,) if culprit.defined_at else ()):
            if all(place is not seen for seen in places):
                places.append(place)
    return "; ".join(f"{p.label}, line {p.line}" for p in places[:3])


def _internal(node: Directive) -> bool:
    """Whether the directive sits in an `internal;` location (clients cannot request it)."""
    return any(
        block.name == "location" and block.child("internal") is not None
        for block in node.ancestors()
    )


def _host_taint(parts: list[Part]) -> Source | None:
    """The client-controlled variable that decides the scheme or host of an upstream address."""
    text_before = "".join(p for p in parts if isinstance(p, str))
    in_scheme = "://" in text_before
    for part in parts:
        if isinstance(part, str):
            if in_scheme and "://" in part:
                in_scheme = False
                part = part.split("://", 1)[1]
            if not in_scheme and any(stop in part for stop in "/?#"):
                return None
            continue
        if part.slash_first and not in_scheme:
            return None
        if part.user and part.dot:
            return part
    return None


@rule("X-ssrf", Category.SECURITY, Severity.ERROR)
@once_per_place
def check_ssrf(ctx: RuleContext) -> Iterator[Finding]:
    """A `*_pass` target whose scheme or host the client chooses."""
    variables = Variables(ctx.config)
    for name in PASS_DIRECTIVES:
        for node in ctx.config.find(name):
            if not node.args or "$" not in node.args[0] or _internal(node):
                continue
            for parts in variables.expand(node.args[0], node):
                culprit = _host_taint(parts)
                if culprit is None:
                    continue
                where = _where([culprit])
                yield get_rule("X-ssrf").finding(
                    at=node,
                    message=(
                        f"{name} {node.args[0]}: the client chooses the upstream's address "
                        f"through {culprit.name}"
                        + (f" (from {where})" if where else "")
                        + ", so nginx can be made to request any host, internal ones included"
                    ),
                    evidence={"target": node.args[0], "variable": culprit.name},
                    fix=make_fix(
                        "none",
                        name,
                        node.args,
                        node,
                        "use a fixed upstream, or choose it through a map with an allow-list",
                    ),
                )
                break


def _checked_value(node: Directive) -> str | None:
    """The argument of a directive that ends up in a header line, or None."""
    args = node.args
    if node.name == "proxy_pass":
        return args[0] if args else None
    if node.name == "return":
        if len(args) == 1 and not args[0].isdigit():
            return args[0]
        if len(args) >= 2 and args[0] in _REDIRECT_CODES:
            return args[1]
        return None
    if node.name == "rewrite":
        if len(args) < 2:
            return None
        redirect = args[1].startswith(("http://", "https://", "$scheme"))
        return args[1] if redirect or args[2:3] in (["redirect"], ["permanent"]) else None
    return args[1] if len(args) >= 2 else None


@rule("X-http-splitting", Category.SECURITY, Severity.ERROR)
@once_per_place
def check_http_splitting(ctx: RuleContext) -> Iterator[Finding]:
    """A header, redirect or upstream request line built from a variable that can hold CR/LF."""
    variables = Variables(ctx.config)
    for name in (*_CLIENT_SIDE, *_SERVER_SIDE):
        for node in ctx.config.find(name):
            value = _checked_value(node)
            if value is None or "$" not in value:
                continue
            leaves = [
                p
                for parts in variables.expand(value, node)
                for p in parts
                if isinstance(p, Source) and p.user
            ]
            culprit = next((p for p in leaves if p.newline), None)
            if culprit is None and name in _CLIENT_SIDE:
                culprit = next((p for p in leaves if p.carriage), None)
            if culprit is None:
                continue
            char = "a newline" if culprit.newline else "a carriage return"
            uri_variable = culprit.name in ("$uri", "$document_uri")
            # Every place the value can come from (a variable set in several locations that
            # rewrite here), not only the first one found.
            where = _where([p for p in leaves if (p.newline if culprit.newline else p.carriage)])
            yield get_rule("X-http-splitting").finding(
                at=node,
                severity=None if culprit.newline else Severity.WARNING,
                message=(
                    f"{name} {' '.join(node.args)}: {culprit.name}"
                    + (f" (from {where})" if where else "")
                    + f" can hold {char} decoded from the request, which splits the "
                    + ("request sent upstream" if name in _SERVER_SIDE else "response headers")
                ),
                evidence={"variable": culprit.name, "char": "\\n" if culprit.newline else "\\r"},
                fix=make_fix(
                    "none",
                    name,
                    node.args,
                    node,
                    "use $request_uri (raw, never decoded) instead"
                    if uri_variable
                    else "exclude \\r and \\n from the capture, e.g. [^/\\r\\n]+",
                ),
            )
