"""Helpers shared by the tuning rules: nginx value units, inheritance of lists, fix placement."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from nginx_fleet_analyzer.effective import PASS_DIRECTIVES as PASS_DIRECTIVES
from nginx_fleet_analyzer.effective import (
    Role,
    has_docroot,
    role,
    scopes,
    serving,
)
from nginx_fleet_analyzer.findings import Finding, Fix
from nginx_fleet_analyzer.model import Directive, ParsedConfig

TYPE_CHECKING = False  # not typing's: see record.py
if TYPE_CHECKING:
    from ipaddress import IPv4Address, IPv6Address

    from nginx_fleet_analyzer.findings import FixAction

_SIZE = re.compile(r"^(\d+)([kKmMgG]?)$")
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_TIME_PART = re.compile(r"(\d+)(ms|[smhdwMy]?)")
_TIME_UNITS = {
    "ms": 0.001,
    "": 1,
    "s": 1,
    "m": 60,
    "h": 3600,
    "d": 86400,
    "w": 7 * 86400,
    "M": 30 * 86400,
    "y": 365 * 86400,
}


def ip_literal(host: str) -> IPv4Address | IPv6Address | None:
    """The address `host` spells (IPv4 dotted quad or IPv6), or None: a name, a port, '*'.

    ipaddress (~1.5 ms of a CLI run with its first IPv6 address) is imported only for text
    that could be an address: an IPv4 address has dots and digits only, an IPv6 one a colon.
    """
    if ":" not in host and ("." not in host or not host.replace(".", "").isdigit()):
        return None
    import ipaddress

    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


@lru_cache(maxsize=8192)
def children_by_name(block: Directive) -> dict[str, list[Directive]]:
    """A block's direct children grouped by name, built once per block.

    Rules ask the same blocks (http above all, with hundreds of servers) the same questions
    many times; this keeps each question O(1). Parsed trees are never changed after parsing.
    """
    index: dict[str, list[Directive]] = {}
    for node in block.block or ():
        index.setdefault(node.name, []).append(node)
    return index


def own(block: Directive, name: str) -> list[Directive]:
    """Direct children of a block with this name (like `Directive.children`, indexed)."""
    return children_by_name(block).get(name, [])


def setting(config: ParsedConfig, name: str, at: Directive) -> Directive | None:
    """The directive in force at `at`, exactly as `ParsedConfig.effective`, but indexed."""
    block: Directive | None = at if at.block is not None else at.parent
    while block is not None:
        found = children_by_name(block).get(name)
        if found:
            return found[-1]
        block = block.parent
    for node in reversed(config.root):
        if node.name == name:
            return node
    return None


@lru_cache(maxsize=4096)
def locations_in(server: Directive) -> list[Directive]:
    """Every location block of a server, nested ones included, in document order (cached)."""
    return [d for d in server.walk() if d.name == "location" and d.block is not None]


def parse_size(text: str) -> int | None:
    """nginx size ('8k', '10m', '4096') in bytes; None when not a size."""
    match = _SIZE.match(text.strip())
    if match is None:
        return None
    return int(match[1]) * _SIZE_UNITS[match[2].lower()]


def parse_seconds(text: str) -> float | None:
    """nginx time ('75s', '1m30s', '60', '500ms', '1d') in seconds; None when not a time."""
    # nginx accepts spaces between the parts ('1h 30m').
    value = "".join(text.split())
    if not value:
        return None
    total = 0.0
    position = 0
    for match in _TIME_PART.finditer(value):
        if match.start() != position:
            return None
        total += int(match[1]) * _TIME_UNITS[match[2]]
        position = match.end()
    return total if position == len(value) else None


def format_bytes(size: int) -> str:
    """Bytes as nginx writes sizes, rounded to the largest whole unit ('64k', '10m')."""
    for unit, factor in (("g", 1024**3), ("m", 1024**2), ("k", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def place_of(block: Directive | None) -> str:
    """A block's name for people ('http', 'server example.com', 'location /x'); 'main' at top."""
    return block.label if block is not None else "main"


def make_fix(
    action: FixAction,
    directive: str,
    args: Iterable[str],
    anchor: Directive,
    note: str = "",
) -> Fix:
    """A fix anchored at `anchor`: the block to add into ('add'), else the directive to change."""
    context = place_of(anchor) if action == "add" else place_of(anchor.parent)
    return Fix(
        action=action,
        directive=directive,
        args=list(args),
        file=anchor.file,
        line=anchor.line,
        context=context,
        note=note,
    )


def set_or_add(
    directive: str,
    args: Iterable[str],
    node: Directive | None,
    block: Directive,
    note: str = "",
) -> Fix:
    """Change `node` when the directive is written, else add it into `block`."""
    if node is not None:
        return make_fix("set", directive, args, node, note)
    return make_fix("add", directive, args, block, note)


def main_anchor(config: ParsedConfig) -> Directive | None:
    """The first top-level directive of the main file: where main-context additions are anchored."""
    main_file = config.main_file
    for node in config.root:
        if node.file == main_file:
            return node
    return config.root[0] if config.root else None


def add_to_main(config: ParsedConfig, directive: str, args: Iterable[str], note: str = "") -> Fix:
    """A fix adding a directive at the main (top) level of the main file."""
    anchor = main_anchor(config)
    return Fix(
        action="add",
        directive=directive,
        args=list(args),
        file=anchor.file if anchor is not None else (config.main_file or ""),
        line=anchor.line if anchor is not None else 1,
        context="main",
        note=note,
    )


def inherited_list(name: str, at: Directive) -> tuple[Directive | None, list[Directive]]:
    """The list directives (add_header, proxy_set_header, allow/deny …) in force at `at`.

    nginx inherits such lists all or nothing: a block that has one of them drops every one of
    its parents'. Returns the block that holds the list in force (None at main) and its entries.
    """
    chain = [at] if at.block is not None else []
    chain.extend(at.ancestors())
    for block in chain:
        found = own(block, name)
        if found:
            return block, found
    return None, []


def enclosing(node: Directive, name: str) -> Directive | None:
    """The nearest enclosing block with this name."""
    return next((p for p in node.ancestors() if p.name == name), None)


def unique_by_anchor(pairs: Iterable[tuple[Directive, Finding]]) -> Iterator[Finding]:
    """The findings of distinct anchors, first one wins (many scopes share one http setting)."""
    seen: set[int] = set()
    for anchor, finding in pairs:
        if id(anchor) in seen:
            continue
        seen.add(id(anchor))
        yield finding


def is_on(node: Directive | None, default: bool = False) -> bool:
    """Whether a flag directive is 'on' (the default when absent)."""
    if node is None or not node.args:
        return default
    return node.args[0].lower() == "on"


def passes_request(block: Directive) -> bool:
    """Whether a location (or server) hands requests on, answers, refuses or only redirects."""
    return role(block) is not Role.FILES


def content_servers(config: ParsedConfig) -> list[Directive]:
    """http servers that answer with content (not those that only `return`, e.g. redirects)."""
    return [s for s in config.servers() if scopes(s)]


def file_serving_scopes(config: ParsedConfig) -> list[Directive]:
    """Locations (or location-less servers) that serve files from `root`/`alias`.

    Locations that pass, answer, only deny or only redirect serve no files, whatever root says.
    """
    return [scope for scope in serving(config, Role.FILES) if has_docroot(scope)]


def server_of(node: Directive) -> Directive | None:
    """The http server block a directive belongs to (itself when it is one)."""
    return node if node.name == "server" else enclosing(node, "server")


def weak_spots(
    config: ParsedConfig,
    name: str,
    is_weak: Callable[[Directive | None], bool],
    servers: Iterable[Directive] | None = None,
) -> list[tuple[Directive, Directive | None]]:
    """Where an inherited http setting is weak: (anchor, the directive or None when defaulted).

    Every http server is checked through inheritance; a defaulted value is anchored at the http
    block (where one added line fixes every server), an explicit one at itself. Locations that
    set the directive themselves are checked too. `servers` narrows the servers looked at.
    """
    http = config.http()
    if http is None:
        return []
    spots: list[tuple[Directive, Directive | None]] = []
    seen: set[int] = set()

    def note(anchor: Directive, node: Directive | None) -> None:
        if id(anchor) not in seen:
            seen.add(id(anchor))
            spots.append((anchor, node))

    for server in config.servers() if servers is None else servers:
        node = setting(config, name, server)
        if node is not None and node.module_scope != "http":
            node = None
        if is_weak(node):
            note(node if node is not None else http, node)
        for location in locations_in(server):
            mine = own(location, name)
            if mine and is_weak(mine[-1]):
                note(mine[-1], mine[-1])
    return spots


def upstream_name(target: str) -> str | None:
    """The host part of a `*_pass` URL ('http://backend/x' -> 'backend'); None with variables."""
    if "$" in target:
        return None
    host = target.split("://", 1)[1] if "://" in target else target
    host = host.split("/", 1)[0]
    if host.startswith("unix:"):
        return None
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
