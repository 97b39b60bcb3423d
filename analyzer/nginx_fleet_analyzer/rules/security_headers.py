"""Response headers set with add_header: lost by inheritance, folded, duplicated or obsolete."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.record import Record
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._places import once_per_place
from nginx_fleet_analyzer.rules._support import inherited_list, make_fix, place_of, setting

HEADER_BLOCKS = ("server", "location", "if")
# Headers whose loss weakens the browser's protections (or lets caches keep private pages).
PROTECTIVE = frozenset(
    {
        "strict-transport-security",
        "content-security-policy",
        "content-security-policy-report-only",
        "x-frame-options",
        "x-content-type-options",
        "referrer-policy",
        "permissions-policy",
        "cross-origin-opener-policy",
        "cross-origin-embedder-policy",
        "cross-origin-resource-policy",
        "cache-control",
    }
)
# nginx 1.29.3 added `add_header_inherit merge;`: one line at the parent keeps its headers.
_MERGE_SINCE = (1, 29, 3)


class _Drop(Record):
    """One parent list of add_header and the child blocks that stop sending part of it."""

    __slots__ = ("children", "headers", "parent")

    parent: Directive | None
    headers: list[Directive]
    children: list[tuple[Directive, list[Directive]]]

    def __init__(
        self,
        parent: Directive | None,
        headers: list[Directive],
        children: list[tuple[Directive, list[Directive]]] | None = None,
    ) -> None:
        self.parent = parent
        self.headers = headers
        self.children = [] if children is None else children


def _name(header: Directive) -> str:
    return header.args[0].lower() if header.args else ""


def _inherit_mode(ctx: RuleContext, block: Directive) -> str:
    node = setting(ctx.config, "add_header_inherit", block)
    return node.args[0].lower() if node is not None and node.args else "on"


@rule("X-add-header-inherit", Category.SECURITY, Severity.WARNING)
def check_add_header_inheritance(ctx: RuleContext) -> Iterator[Finding]:
    """Blocks with their own add_header stop sending every header their parents add.

    nginx keeps a block's add_header list whole or not at all: a single own line, even
    `add_header X "";` (which sends nothing), drops the parent's list. A header the child
    repeats or blanks is its author's choice; the others are lost. An `if` that returns answers
    with nginx's own short response and is not counted. One finding per parent list, anchored
    where the fix goes: in the one child that drops it, else at the parent, where one shared
    include or `add_header_inherit merge;` (nginx 1.29.3) fixes every child at once.
    """
    # Keyed by place: a headers snippet included in many servers is one list to fix.
    drops: dict[tuple[str, int], _Drop] = {}
    for block in ctx.config.walk():
        if block.name not in HEADER_BLOCKS or block.module_scope != "http" or block.parent is None:
            continue
        own = block.children("add_header")
        if not own or _inherit_mode(ctx, block) in ("merge", "off"):
            continue
        if block.name == "if" and block.children("return"):
            # A short answer of nginx's own (a CORS preflight's 204, a redirect): the page
            # headers the parent sends have nothing to protect there.
            continue
        parent, parent_headers = inherited_list("add_header", block.parent)
        handled = {_name(h) for h in own}
        lost = [h for h in parent_headers if h.args and _name(h) not in handled]
        if not lost:
            continue
        place = (parent_headers[0].file, parent_headers[0].line)
        drop = drops.setdefault(place, _Drop(parent, parent_headers))
        drop.children.append((block, lost))
    for drop in drops.values():
        yield _inherit_finding(ctx, drop)


def _server_of(block: Directive) -> Directive | None:
    """The server block `block` is (or is in)."""
    if block.name == "server":
        return block
    return next((p for p in block.ancestors() if p.name == "server"), None)


class _Shown:
    """A block as the message names it: once per file and line (a snippet included in several
    servers is one block to edit), with the servers it is in and the headers it loses."""

    __slots__ = ("block", "lost", "servers")

    block: Directive
    servers: list[str]
    lost: list[str]

    def __init__(self, block: Directive) -> None:
        self.block = block
        self.servers = []
        self.lost = []

    def text(self) -> str:
        """'location / (line 8) in server a.example.net'; a server names itself."""
        where = f"{self.block.label} (line {self.block.line})"
        if self.block.name == "server" or not self.servers:
            return where
        return f"{where} in {' and '.join(self.servers)}"


def _shown_blocks(drop: _Drop) -> list[_Shown]:
    shown: dict[tuple[str, int], _Shown] = {}
    for block, lost in drop.children:
        entry = shown.setdefault((block.file, block.line), _Shown(block))
        server = _server_of(block)
        if server is not None and server.label not in entry.servers:
            entry.servers.append(server.label)
        entry.lost.extend(h.args[0] for h in lost if h.args[0] not in entry.lost)
    return list(shown.values())


def _inherit_finding(ctx: RuleContext, drop: _Drop) -> Finding:
    lost_names: list[str] = []
    for _, lost in drop.children:
        lost_names.extend(h.args[0] for h in lost if h.args[0] not in lost_names)
    protective = any(name.lower() in PROTECTIVE for name in lost_names)
    first_block, first_lost = drop.children[0]
    shown = _shown_blocks(drop)
    where = place_of(drop.parent)
    if len(shown) == 1:
        message = (
            f"{shown[0].text()} has its own add_header, so it does not send "
            f"{', '.join(shown[0].lost)} set in {where}"
        )
    else:
        listed = "; ".join(f"{entry.text()} loses {', '.join(entry.lost)}" for entry in shown[:5])
        more = f"; and {len(shown) - 5} more blocks" if len(shown) > 5 else ""
        message = (
            f"{len(shown)} blocks have their own add_header, so they do not send headers set "
            f"in {where}: {listed}{more}"
        )
    version = ctx.nginx_version
    fix: Fix
    single = len(drop.children) == 1
    if version is not None and version >= _MERGE_SINCE and drop.parent is not None:
        fix = make_fix(
            "add", "add_header_inherit", ["merge"], first_block if single else drop.parent
        )
    else:
        note = "repeat the lost headers (or include one snippet) in " + ", ".join(
            entry.text() for entry in shown
        )
        fix = make_fix("add", "add_header", first_lost[0].args, first_block, note)
    # Keyed by the block the fix goes into, so reordering its headers keeps a mute; shown at
    # that block's first header line.
    first = first_block.children("add_header")[0] if single else drop.headers[0]
    return get_rule("X-add-header-inherit").finding(
        at=first_block if single else drop.parent or first,
        file=first.file,
        line=first.line,
        directive="add_header",
        severity=None if protective else Severity.INFO,
        message=message,
        evidence={
            "dropped": lost_names,
            "set_in": where,
            "blocks": [
                {
                    "block": b.label,
                    "server": server.label if (server := _server_of(b)) is not None else None,
                    "file": b.file,
                    "line": b.line,
                    "dropped": [h.args[0] for h in lost],
                }
                for b, lost in drop.children
            ],
        },
        fix=fix,
    )


def _header_values(node: Directive) -> list[str]:
    """The header values a directive sets: add_header's value, more_set_headers' 'Name: value's."""
    if node.name == "add_header":
        return node.args[1:2]
    values: list[str] = []
    skip = False
    for arg in node.args:
        if skip:
            skip = False
        elif arg in ("-s", "-t"):
            skip = True
        elif not arg.startswith("-"):
            values.append(arg)
    return values


@rule("X-add-header-multiline", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_add_header_multiline(ctx: RuleContext) -> Iterator[Finding]:
    """A header value written over several lines is sent folded or cut short."""
    for name in ("add_header", "more_set_headers"):
        for node in ctx.config.find(name):
            value = next((v for v in _header_values(node) if "\n" in v), None)
            if value is None:
                continue
            folded = "\n " in value or "\n\t" in value
            joined = " ".join(value.split())
            fix = (
                make_fix("set", name, [node.args[0], joined, *node.args[2:]], node)
                if name == "add_header"
                else make_fix("none", name, node.args, node, "write each value on one line")
            )
            yield get_rule("X-add-header-multiline").finding(
                at=node,
                message=(
                    f"{name} {node.args[0]}: the value spans lines, so nginx sends "
                    + (
                        "an obsolete folded header (RFC 9112) that many clients reject"
                        if folded
                        else "a raw line break inside the header, which ends it early"
                    )
                ),
                evidence={"lines": value.count("\n") + 1, "folded": folded},
                fix=fix,
            )


@rule("X-add-header-content-type", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_add_header_content_type(ctx: RuleContext) -> Iterator[Finding]:
    """`add_header Content-Type` sends a second Content-Type next to nginx's own."""
    for node in ctx.config.find("add_header"):
        if len(node.args) < 2 or node.args[0].lower() != "content-type" or not node.args[1]:
            continue
        block = node.parent
        if block is not None and any(r.args[:1] == ["204"] for r in block.children("return")):
            # nginx sends no Content-Type of its own with a 204 (a CORS preflight's answer).
            continue
        mime = node.args[1].split(";", 1)[0].strip()
        yield get_rule("X-add-header-content-type").finding(
            at=node,
            message=(
                f"add_header Content-Type {node.args[1]}: nginx already sends a Content-Type "
                "(from types/default_type), so the response carries two; browsers may pick "
                "either"
            ),
            evidence={"value": node.args[1]},
            fix=make_fix(
                "replace",
                "default_type",
                [mime],
                node,
                "a charset goes in `charset`" if ";" in node.args[1] else "",
            ),
        )


@rule("X-xss-header", Category.SECURITY, Severity.INFO)
@once_per_place
def check_xss_header(ctx: RuleContext) -> Iterator[Finding]:
    """The obsolete X-XSS-Protection filter header is sent."""
    for node in ctx.config.find("add_header"):
        if len(node.args) < 2 or node.args[0].lower() != "x-xss-protection":
            continue
        if node.args[1].strip() in ("0", ""):
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
