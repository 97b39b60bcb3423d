"""Keepalive and timeouts: idle clients, reconnects, upstream connection pools, slow clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from nginx_fleet_analyzer.effective import (
    entries,
    labels,
    locations_of,
    nearest_common,
    subject,
    value,
    weak_places,
)
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import replace
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import (
    enclosing,
    is_on,
    make_fix,
    parse_seconds,
    set_or_add,
    upstream_name,
)

DEFAULT_KEEPALIVE_TIMEOUT = 75.0
KEEPALIVE_REQUESTS_1000_SINCE = (1, 19, 10)
DEFAULT_CLIENT_TIMEOUT = 60.0
CLIENT_TIMEOUTS = ("client_header_timeout", "client_body_timeout", "send_timeout")
WAITING_RATIO_LIMIT = 0.7
UPSTREAM_POOL_RPS = 200.0


def _seconds(node: Directive | None, default: float) -> float | None:
    if node is None:
        return default
    return parse_seconds(node.args[0]) if node.args else None


def client_spots(
    config: ParsedConfig, name: str, is_weak: Callable[[Directive | None], bool]
) -> list[tuple[Directive, Directive | None, list[Directive]]]:
    """(anchor, directive in force or None, places) where a client setting in force is weak.

    Every http server is judged by its effective value, and every location that sets its own;
    one entry per cause (the directive in force, or http for the default).
    """
    places = [
        place
        for server in config.servers()
        for place in (server, *locations_of(server))
        if place is server or place.children(name)
    ]
    spots = weak_places(config, name, places, lambda found: is_weak(found.node))
    return [(anchor, found.node, users) for anchor, found, users in spots]


def _waiting_ratio(ctx: RuleContext) -> float | None:
    metrics = ctx.metrics
    if metrics is None:
        return None
    if metrics.waiting_ratio is not None:
        return metrics.waiting_ratio
    if metrics.avg_waiting is not None and metrics.avg_active:
        return metrics.avg_waiting / metrics.avg_active
    return None


@rule("K-timeout", Category.KEEPALIVE, Severity.WARNING)
def check_keepalive_timeout(ctx: RuleContext) -> Iterator[Finding]:
    """A long keepalive_timeout while most connections sit idle."""
    ratio = _waiting_ratio(ctx)
    if ratio is None or ratio <= WAITING_RATIO_LIMIT:
        return

    def too_long(node: Directive | None) -> bool:
        seconds = _seconds(node, DEFAULT_KEEPALIVE_TIMEOUT)
        return seconds is not None and seconds > 30

    for anchor, node, places in client_spots(ctx.config, "keepalive_timeout", too_long):
        seconds = _seconds(node, DEFAULT_KEEPALIVE_TIMEOUT)
        shown = f"keepalive_timeout {node.args[0]}" if node else "keepalive_timeout (default 75s)"
        # A second argument sets the Keep-Alive header: keep it in step with the real timeout.
        args = ["15s", "15s"] if node is not None and len(node.args) > 1 else ["15s"]
        fix = set_or_add("keepalive_timeout", args, node, anchor)
        yield get_rule("K-timeout").finding(
            at=anchor,
            directive="keepalive_timeout",
            message=(
                f"{shown} keeps idle clients for {seconds:.0f}s while {ratio:.0%} of active "
                "connections were idle (Waiting) over the last hour; 15s to 30s frees worker slots"
            ),
            evidence={
                "keepalive_timeout_s": seconds,
                "default_used": node is None,
                "waiting_ratio": round(ratio, 3),
                "places": labels(places),
            },
            fix=fix,
        )


@rule("K-requests", Category.KEEPALIVE, Severity.INFO)
def check_keepalive_requests(ctx: RuleContext) -> Iterator[Finding]:
    """Few requests per keepalive connection force clients to reconnect."""
    newer = ctx.facts.has_version(KEEPALIVE_REQUESTS_1000_SINCE) if ctx.facts else None
    # The default is 1000 since 1.19.10 and 100 before; unknown version: judge set values only.
    default = {True: 1000, False: 100, None: None}[newer]

    def too_few(node: Directive | None) -> bool:
        if node is None:
            return default is not None and default < 1000
        return bool(node.args) and node.args[0].isdigit() and int(node.args[0]) < 1000

    for anchor, node, places in client_spots(ctx.config, "keepalive_requests", too_few):
        value = node.args[0] if node is not None else str(default)
        shown = f"keepalive_requests {value}" + (
            "" if node is not None else " (the default of this nginx version)"
        )
        fix = set_or_add("keepalive_requests", ["1000"], node, anchor)
        yield get_rule("K-requests").finding(
            at=anchor,
            directive="keepalive_requests",
            message=(
                f"{shown} closes a client connection after {value} requests (HTTP/2 streams "
                "count too); 1000 saves reconnects"
            ),
            evidence={
                "keepalive_requests": int(value),
                "default_used": node is None,
                "nginx_version": ctx.nginx_version,
                "places": labels(places),
            },
            fix=fix,
        )


def _connection_header_ok(header: Directive) -> bool:
    value = header.args[1] if len(header.args) > 1 else ""
    # A literal "upgrade" marks a websocket-only location: upgraded connections never return to
    # the pool, so the pool's rules do not apply there.
    if value == "" or value.lower() in ("upgrade", "keep-alive"):
        return True
    # A websocket map whose plain-request value is "close" defeats the pool for every plain
    # request; any other variable is the operator's explicit choice.
    return "$" in value and _closing_map_entry(header) is None


def _closing_map_entry(header: Directive) -> Directive | None:
    """The `map` entry that makes this Connection header `close` (the docs' `'' close;`)."""
    value = header.args[1] if len(header.args) > 1 else ""
    if not value.startswith("$") or not value[1:].replace("_", "").isalnum():
        return None
    http = next((block for block in header.ancestors() if block.name == "http"), None)
    for block in http.children("map") if http is not None else []:
        if len(block.args) >= 2 and block.args[1] == value:
            for entry in block.block or []:
                if entry.args and entry.args[-1].lower() == "close":
                    return entry
    return None


@rule("K-upstream-http11", Category.KEEPALIVE, Severity.WARNING)
def check_upstream_http11(ctx: RuleContext) -> Iterator[Finding]:
    """An upstream keepalive pool that proxying locations never use."""
    config = ctx.config
    pooled = {
        u.args[0]: u for u in config.upstreams() if u.args and u.child("keepalive") is not None
    }
    if not pooled:
        return
    # Places (locations, `if` blocks) that proxy to a pooled upstream without HTTP/1.1 keepalive,
    # grouped by cause: the version in force (one line or nginx's default) and the header list
    # (one shared list of a server or http, or each place's own list).
    causes: dict[tuple[str, object, object], list[Directive]] = {}
    for proxy_pass in config.find("proxy_pass"):
        place = proxy_pass.parent
        name = upstream_name(proxy_pass.args[0]) if proxy_pass.args else None
        if name not in pooled or place is None or enclosing(proxy_pass, "server") is None:
            continue
        version, header = _version_cause(place), _header_cause(place)
        if version is not None or header is not None:
            causes.setdefault((name or "", version, header), []).append(place)
    for (name, _, _), places in causes.items():
        yield _http11_finding(places, pooled[name])


def _connection(place: Directive) -> Directive | None:
    _, headers = entries("proxy_set_header", place)
    found = [h for h in headers if h.args and h.args[0].lower() == "connection"]
    return found[-1] if found else None


def _version_cause(place: Directive) -> object:
    """None when HTTP/1.1 is in force, else the line in force or 'default'."""
    version = value("proxy_http_version", place)
    if version.first == "1.1":
        return None
    return id(version.node) if version.node is not None else "default"


def _header_cause(place: Directive) -> object:
    """None when `Connection ""` (or a variable) is in force, else which list lacks it."""
    connection = _connection(place)
    if connection is not None and _connection_header_ok(connection):
        return None
    holder, _ = entries("proxy_set_header", place)
    if holder is None or holder.name in ("http", "server"):
        return ("shared", id(holder))
    return "own lists"


def _http11_finding(places: list[Directive], upstream: Directive) -> Finding:
    place = places[0]
    version = value("proxy_http_version", place)
    connection = _connection(place)
    version_ok = _version_cause(place) is None
    header_ok = _header_cause(place) is None
    common = place if len(places) == 1 else nearest_common(places) or place
    holders = list({id(h): h for p in places if (h := entries("proxy_set_header", p)[0])}.values())
    missing: list[str] = []
    if not version_ok:
        missing.append("proxy_http_version 1.1")
    closing = _closing_map_entry(connection) if connection is not None else None
    if not header_ok:
        missing.append(
            f'an empty Connection header on plain requests (map {connection.args[1]} sends "close")'
            if closing is not None and connection is not None
            else 'proxy_set_header Connection ""'
        )
    # The finding sits where its fix goes: the wrong version line, the one place, the one
    # shared header list, else the innermost block around every place.
    if not version_ok and version.node is not None:
        anchor = version.node
    elif len(places) == 1:
        anchor = place
    elif version_ok and len(holders) == 1:
        anchor = holders[0]
    else:
        anchor = common
    edits = []
    if not version_ok:
        edits.append(set_or_add("proxy_http_version", ["1.1"], version.node, common))
    if not header_ok:
        edits.extend(_header_edits(places, closing, common))
    fix = replace(edits[0], also=tuple(edits[1:]))
    keepalive = upstream.child("keepalive")
    pool = keepalive.args[0] if keepalive is not None and keepalive.args else "?"
    return get_rule("K-upstream-http11").finding(
        at=anchor,
        directive="proxy_http_version" if not version_ok else "proxy_set_header",
        message=(
            f"{subject(places, 'proxies', 'proxy')} to upstream {upstream.args[0]} "
            f"(keepalive {pool}) without {' and '.join(missing)}: nginx speaks HTTP/1.0 and "
            "closes every upstream connection, so the pool is never used"
        ),
        evidence={
            "upstream": upstream.args[0],
            "keepalive": pool,
            "proxy_http_version": version.first if version.node else "1.0 (default)",
            "connection_header": connection.args[1:2] if connection is not None else None,
            "missing": missing,
            "places": labels(places),
            "header_lists": labels(holders),
        },
        fix=fix,
    )


def _header_edits(
    places: list[Directive], closing: Directive | None, common: Directive
) -> list[Fix]:
    """Edits that give every place an empty Connection header, each in the list in force there.

    A websocket map that sends "close" is mended in its one entry; otherwise a wrong
    `proxy_set_header Connection` line is changed, and a list without one gets one (lists
    inherit all or nothing, so the line goes into the block whose list applies).
    """
    if closing is not None:
        return [
            make_fix(
                "set",
                closing.name,
                [""],
                closing,
                "plain requests then send an empty Connection header and reuse the pool; upgrades "
                'still send "upgrade"',
            )
        ]
    edits: dict[int, Fix] = {}
    for place in places:
        connection = _connection(place)
        if connection is not None:
            edits.setdefault(
                id(connection), make_fix("set", "proxy_set_header", ["Connection", ""], connection)
            )
        else:
            holder, _ = entries("proxy_set_header", place)
            target = holder or common
            edits.setdefault(
                id(target), make_fix("add", "proxy_set_header", ["Connection", ""], target)
            )
    return list(edits.values())


@rule("K-upstream-pool", Category.KEEPALIVE, Severity.INFO)
def check_upstream_pool(ctx: RuleContext) -> Iterator[Finding]:
    """A busy upstream without a keepalive pool pays a TCP handshake per request."""
    if ctx.metrics is None or not ctx.metrics.upstream_req_per_s:
        return
    upstreams = {u.args[0]: u for u in ctx.config.upstreams() if u.args}
    for name, rate in sorted(ctx.metrics.upstream_req_per_s.items()):
        upstream = upstreams.get(name)
        if upstream is None or rate <= UPSTREAM_POOL_RPS or upstream.child("keepalive"):
            continue
        yield get_rule("K-upstream-pool").finding(
            at=upstream,
            directive="keepalive",
            message=(
                f"upstream {name} takes {rate:.0f} req/s with no keepalive pool: every proxied "
                "request opens a new TCP connection"
            ),
            evidence={
                "upstream": name,
                "req_per_s": rate,
                "keepalive": None,
                **ctx.metrics.traffic_evidence(),
            },
            fix=make_fix(
                "add",
                "keepalive",
                ["32"],
                upstream,
                'with proxy_http_version 1.1 and proxy_set_header Connection "" where proxied',
            ),
        )


@rule("K-reset", Category.KEEPALIVE, Severity.INFO)
def check_reset_timedout(ctx: RuleContext) -> Iterator[Finding]:
    """Timed-out connections keep their memory until the close handshake ends."""
    for anchor, node, places in client_spots(
        ctx.config, "reset_timedout_connection", lambda node: not is_on(node)
    ):
        fix = set_or_add("reset_timedout_connection", ["on"], node, anchor)
        shown = "off" if node is not None else "off (the default)"
        yield get_rule("K-reset").finding(
            at=anchor,
            directive="reset_timedout_connection",
            message=(
                f"reset_timedout_connection is {shown}: memory of timed-out clients is freed only "
                "after a slow close; 'on' resets them at once"
            ),
            evidence={
                "reset_timedout_connection": "off",
                "default_used": node is None,
                "places": labels(places),
            },
            fix=fix,
        )


@rule("K-client-timeouts", Category.KEEPALIVE, Severity.INFO)
def check_client_timeouts(ctx: RuleContext) -> Iterator[Finding]:
    """Client timeouts at the 60s default let slow clients hold connections."""

    def at_default(node: Directive | None) -> bool:
        return _seconds(node, DEFAULT_CLIENT_TIMEOUT) == DEFAULT_CLIENT_TIMEOUT

    by_anchor: dict[int, tuple[Directive, list[tuple[str, Directive | None]]]] = {}
    for name in CLIENT_TIMEOUTS:
        for anchor, node, _ in client_spots(ctx.config, name, at_default):
            by_anchor.setdefault(id(anchor), (anchor, []))[1].append((name, node))
    for anchor, spot in by_anchor.values():
        first_name = spot[0][0]
        edits = [set_or_add(name, ["15s"], node, anchor) for name, node in spot]
        fix = replace(edits[0], also=tuple(edits[1:]))
        names = ", ".join(name for name, _ in spot)
        yield get_rule("K-client-timeouts").finding(
            at=anchor,
            directive=first_name,
            message=(
                f"{names} at the 60s default: a slow client holds its connection for up to a "
                "minute per step; 10s to 15s is enough"
            ),
            evidence={
                name: (node.args[0] if node is not None else "60s (default)") for name, node in spot
            },
            fix=fix,
        )


@rule("K-too-aggressive", Category.KEEPALIVE, Severity.WARNING)
def check_send_timeout_too_short(ctx: RuleContext) -> Iterator[Finding]:
    """A send_timeout under 5s cuts off slow clients mid-response."""
    for node in ctx.config.find("send_timeout"):
        seconds = _seconds(node, DEFAULT_CLIENT_TIMEOUT)
        if node.module_scope != "http" or seconds is None or seconds >= 5:
            continue
        yield get_rule("K-too-aggressive").finding(
            at=node,
            message=(
                f"send_timeout {node.args[0]} closes the connection when a client reads nothing "
                f"for {seconds:g}s: clients on slow mobile links are cut off mid-response"
            ),
            evidence={"send_timeout_s": seconds},
            fix=make_fix("set", "send_timeout", ["10s"], node),
        )
