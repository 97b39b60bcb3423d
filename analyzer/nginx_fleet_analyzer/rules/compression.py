"""Compression: gzip on for text, a sane level and threshold, types, Vary, proxied and static."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from nginx_fleet_analyzer.effective import (
    Role,
    group,
    labels,
    local_only,
    role,
    serving,
    subject,
    value,
    weak_places,
)
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import (
    file_serving_scopes,
    is_on,
    make_fix,
    parse_size,
    server_of,
    set_or_add,
)

RECOMMENDED_TYPES = [
    "text/plain",
    "text/css",
    "text/xml",
    "application/javascript",
    "application/json",
    "application/xml",
    "image/svg+xml",
]
# Types the catalogue requires, each with the spellings that satisfy it.
REQUIRED_TYPES = {
    "text/css": ("text/css",),
    "application/javascript": ("application/javascript", "text/javascript"),
    "application/json": ("application/json",),
    "image/svg+xml": ("image/svg+xml",),
}
COMPRESSED_TYPES = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "font/woff2", "application/zip"}
)
GZIP_STATIC_MODULE = "http_gzip_static_module"
DEFAULT_MIN_LENGTH = 20
CPU_BOUND_PCT = 70.0


def text_places(ctx: RuleContext) -> list[Directive]:
    """Locations (or location-less servers) that send text: files or an upstream's answers.

    Not `internal` locations (error pages and auth subrequests: small or never sent as they are)
    nor servers only loopback clients reach (local auth and status endpoints): gzip saves
    nothing worth a finding there.
    """
    # Computed once per config: five gzip rules ask for them (the tree does not change).
    places = ctx.config.derived.get("text_places")
    if not isinstance(places, list):
        places = ctx.config.derived["text_places"] = _text_places(ctx)
    return list(places)


def _text_places(ctx: RuleContext) -> list[Directive]:
    # gRPC and memcached answers are not text that gzip_types would match.
    binary = ("grpc_pass", "memcached_pass")
    # Type names of each `types` block, read once: a mime.types block has ~100 entries and a
    # large config has thousands of places under it.
    mapped: dict[int, frozenset[str]] = {}
    return [
        place
        for place in serving(ctx.config, Role.FILES, Role.PASSES)
        if not any(place.children(name) for name in binary)
        and not place.children("internal")
        and not ((server := server_of(place)) is not None and local_only(server))
        and not _media_only(place, mapped)
    ]


def _media_only(place: Directive, mapped_names: dict[int, frozenset[str]]) -> bool:
    """Whether a place serving files maps no file to a type gzip would compress: its own
    `types { }` (an HLS or video location) lists none, nor is its default_type one."""
    if role(place) != Role.FILES:
        return False
    block = next(
        (
            types[-1]
            for scope in (place, *place.ancestors())
            if (types := [t for t in scope.children("types") if t.block is not None])
        ),
        None,
    )
    if block is None:
        # nginx's built-in map (no types block anywhere) has text/html.
        return False
    listed = value("gzip_types", place).args
    if "*" in listed:
        return False
    compressible = {"text/html", *RECOMMENDED_TYPES, *listed}
    mapped = mapped_names.get(id(block))
    if mapped is None:
        mapped = mapped_names[id(block)] = frozenset(d.name.lower() for d in block.block or [])
    default = (value("default_type", place).first or "text/plain").lower()
    return not (mapped & compressible) and default not in compressible


def gzip_scopes(ctx: RuleContext) -> list[tuple[Directive, Directive]]:
    """(place, the `gzip on` in force there) for the places that send text with gzip on."""
    scopes: list[tuple[Directive, Directive]] = []
    for place in text_places(ctx):
        gzip = value("gzip", place)
        if gzip.on and gzip.node is not None:
            scopes.append((place, gzip.node))
    return scopes


def _gzip_setting_findings(
    ctx: RuleContext,
    rule_id: str,
    name: str,
    is_weak: Callable[[Directive | None], bool],
    build: Callable[[Directive, Directive | None, Directive], tuple[str, Fix, dict[str, object]]],
    scopes: list[tuple[Directive, Directive]] | None = None,
) -> Iterator[Finding]:
    """One finding per cause where a gzip companion setting in force is weak where gzip is on.

    A missing setting is added next to the `gzip on` in force (so it covers the same places).
    """
    pairs: list[tuple[Directive, Directive]] = []
    holders: dict[int, tuple[Directive | None, Directive]] = {}
    for place, gzip in gzip_scopes(ctx) if scopes is None else scopes:
        node = value(name, place).node
        holder = gzip.parent
        if holder is None or not is_weak(node):
            continue
        anchor = node if node is not None else holder
        holders.setdefault(id(anchor), (node, holder))
        pairs.append((anchor, place))
    for anchor, places in group(pairs):
        node, holder = holders[id(anchor)]
        message, fix, evidence = build(places[0], node, holder)
        yield get_rule(rule_id).finding(
            at=anchor,
            directive=name,
            message=message,
            evidence={**evidence, "places": labels(places)},
            fix=fix,
        )


@rule("G-off", Category.COMPRESSION, Severity.WARNING)
def check_gzip_off(ctx: RuleContext) -> Iterator[Finding]:
    """Text is served uncompressed."""
    config = ctx.config
    for anchor, found, places in weak_places(config, "gzip", text_places(ctx), lambda f: not f.on):
        holder = found.holder
        if holder is not None and holder.name in ("location", "if"):
            # gzip off in one location is a deliberate choice (BREACH, pre-compressed bodies).
            continue
        note = "with gzip_types " + " ".join(RECOMMENDED_TYPES)
        shown = "gzip off" if found.node is not None else "gzip is not enabled (default off)"
        yield get_rule("G-off").finding(
            at=anchor,
            directive="gzip",
            message=(
                f"{shown} where {subject(places, 'sends', 'send')} text: gzip cuts text bandwidth "
                "by 60-80%"
            ),
            evidence={"gzip": "off", "default_used": found.default_used, "places": labels(places)},
            fix=set_or_add("gzip", ["on"], found.node, anchor, note),
        )


@rule("G-level", Category.COMPRESSION, Severity.WARNING)
def check_gzip_level(ctx: RuleContext) -> Iterator[Finding]:
    """A high gzip_comp_level costs CPU for almost no size gain."""
    metrics = ctx.metrics
    # nginx's own sustained CPU decides, never the whole host's or a single spike.
    figure = metrics.sustained_nginx_cpu() if metrics is not None else None
    cpu_bound = figure is not None and figure[0] > CPU_BOUND_PCT
    host_busy = metrics is not None and (metrics.cpu_pct or 0) > CPU_BOUND_PCT
    evidence = metrics.nginx_cpu_evidence() if metrics is not None else {"nginx_cpu_pct": None}
    for node in ctx.config.find("gzip_comp_level"):
        if node.module_scope != "http" or not node.args or not node.args[0].isdigit():
            continue
        level = int(node.args[0])
        if level > 6:
            target, severity = ("4" if cpu_bound else "5"), Severity.WARNING
            why = "past level 5 the size barely shrinks while throughput halves"
        elif level > 4 and cpu_bound and figure is not None:
            target, severity = "4", Severity.WARNING
            why = ""
        elif level > 4 and figure is None and host_busy and metrics is not None:
            # The host is busy but nginx's share is unknown (agent without process CPU).
            target, severity = "4", Severity.INFO
            why = (
                f"the host ran at {metrics.cpu_pct:.0f}% CPU, but nginx's own share was not "
                "reported; with the nginx workers' CPU this becomes a warning above "
                f"{CPU_BOUND_PCT:.0f}%"
            )
        else:
            continue
        if cpu_bound and figure is not None:
            busy = f"nginx used {figure[0]:.0f}% of the host's CPU ({evidence['nginx_cpu_figure']})"
            why = f"{why}; {busy}" if why else busy
        yield get_rule("G-level").finding(
            at=node,
            severity=severity,
            message=f"gzip_comp_level {level}: {why}; use {target}",
            evidence={
                "gzip_comp_level": level,
                "limit": 4 if cpu_bound else 6,
                "host_cpu_pct": metrics.cpu_pct if metrics is not None else None,
                **evidence,
            },
            fix=make_fix("set", "gzip_comp_level", [target], node),
        )


@rule("G-min-length", Category.COMPRESSION, Severity.INFO)
def check_gzip_min_length(ctx: RuleContext) -> Iterator[Finding]:
    """Tiny bodies are compressed, which grows them and costs CPU."""

    def too_small(node: Directive | None) -> bool:
        size = DEFAULT_MIN_LENGTH if node is None else parse_size(node.args[0] if node.args else "")
        return size is not None and size < 256

    def build(
        scope: Directive, node: Directive | None, holder: Directive
    ) -> tuple[str, Fix, dict[str, object]]:
        value = node.args[0] if node is not None else f"{DEFAULT_MIN_LENGTH} (default)"
        fix = set_or_add("gzip_min_length", ["1024"], node, holder)
        message = (
            f"gzip_min_length {value} bytes: responses that small grow when compressed and "
            "still cost CPU; 1024 skips them"
        )
        return message, fix, {"gzip_min_length": value, "default_used": node is None}

    yield from _gzip_setting_findings(ctx, "G-min-length", "gzip_min_length", too_small, build)


def _types_problems(node: Directive | None) -> tuple[list[str], list[str]]:
    """(required types missing, already-compressed types listed) of a gzip_types setting."""
    listed = node.args if node is not None else ["text/html"]
    if "*" in listed:
        return [], ["*"]
    missing = [t for t, spellings in REQUIRED_TYPES.items() if not set(spellings) & set(listed)]
    compressed = [t for t in listed if t in COMPRESSED_TYPES]
    return missing, compressed


@rule("G-types", Category.COMPRESSION, Severity.INFO)
def check_gzip_types(ctx: RuleContext) -> Iterator[Finding]:
    """gzip_types misses common text types or burns CPU on compressed ones."""

    def weak(node: Directive | None) -> bool:
        missing, compressed = _types_problems(node)
        return bool(missing or compressed)

    def build(
        scope: Directive, node: Directive | None, holder: Directive
    ) -> tuple[str, Fix, dict[str, object]]:
        missing, compressed = _types_problems(node)
        if node is None or "*" in compressed:
            args = list(RECOMMENDED_TYPES)
        else:
            args = [t for t in node.args if t not in compressed] + missing
        fix = set_or_add("gzip_types", args, node, holder)
        parts = []
        if missing:
            parts.append(f"lacks {', '.join(missing)}")
        if compressed:
            parts.append(f"compresses already-compressed {', '.join(compressed)}")
        shown = "gzip_types" if node is not None else "gzip_types (default text/html only)"
        message = f"{shown} {' and '.join(parts)}"
        return (
            message,
            fix,
            {
                "gzip_types": node.args if node else ["text/html"],
                "missing": missing,
                "compressed": compressed,
            },
        )

    yield from _gzip_setting_findings(ctx, "G-types", "gzip_types", weak, build)


@rule("G-vary", Category.COMPRESSION, Severity.INFO)
def check_gzip_vary(ctx: RuleContext) -> Iterator[Finding]:
    """Without Vary: Accept-Encoding caches may hand gzip to clients that cannot read it."""

    def build(
        scope: Directive, node: Directive | None, holder: Directive
    ) -> tuple[str, Fix, dict[str, object]]:
        fix = set_or_add("gzip_vary", ["on"], node, holder)
        message = (
            "gzip is on but gzip_vary is off: shared caches do not know to keep both the "
            "compressed and the plain variant"
        )
        return message, fix, {"gzip_vary": "off", "default_used": node is None}

    yield from _gzip_setting_findings(ctx, "G-vary", "gzip_vary", lambda n: not is_on(n), build)


def _proxies(place: Directive) -> bool:
    return role(place) is Role.PASSES and bool(place.children("proxy_pass"))


@rule("G-proxied", Category.COMPRESSION, Severity.INFO)
def check_gzip_proxied(ctx: RuleContext) -> Iterator[Finding]:
    """Responses to requests that came through a CDN or proxy are sent uncompressed."""

    def off(node: Directive | None) -> bool:
        return node is None or node.args == ["off"]

    def build(
        scope: Directive, node: Directive | None, holder: Directive
    ) -> tuple[str, Fix, dict[str, object]]:
        fix = set_or_add("gzip_proxied", ["any"], node, holder)
        message = (
            f"{scope.label} proxies with gzip on but gzip_proxied off: responses to requests "
            "that arrive through a CDN or proxy (Via header) stay uncompressed"
        )
        return message, fix, {"gzip_proxied": "off", "default_used": node is None}

    scopes = [(scope, gzip) for scope, gzip in gzip_scopes(ctx) if _proxies(scope)]
    yield from _gzip_setting_findings(ctx, "G-proxied", "gzip_proxied", off, build, scopes)


@rule("G-static", Category.COMPRESSION, Severity.INFO)
def check_gzip_static(ctx: RuleContext) -> Iterator[Finding]:
    """Static assets are compressed on every request although precompressed files could be sent."""
    if ctx.facts is None or GZIP_STATIC_MODULE not in ctx.facts.modules:
        return
    config = ctx.config
    places = file_serving_scopes(config)
    for anchor, found, users in weak_places(config, "gzip_static", places, lambda f: not f.on):
        yield get_rule("G-static").finding(
            at=anchor,
            directive="gzip_static",
            message=(
                f"{subject(users, 'serves', 'serve')} static files and the build has gzip_static: "
                "'gzip_static on' sends file.gz when present, at no CPU per request"
            ),
            evidence={"gzip_static": "off", "serves": labels(users)},
            fix=set_or_add("gzip_static", ["on"], found.node, anchor),
        )
