"""TLS: protocols, ciphers, session resumption, tickets, HTTP/2, OCSP stapling, HSTS."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from nginx_fleet_analyzer.ciphers import expand
from nginx_fleet_analyzer.effective import (
    Effective,
    common_block,
    describe,
    entries,
    group,
    headers,
    labels,
    nearest_common,
    subject,
    tls_servers,
    value,
    weak_places,
)
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import replace
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import make_fix, parse_seconds, set_or_add, setting

MODERN_PROTOCOLS = ["TLSv1.2", "TLSv1.3"]
BROKEN_PROTOCOLS = ("SSLv2", "SSLv3", "TLSv1", "TLSv1.1")
# nginx enables TLSv1.3 and drops TLSv1/TLSv1.1 by default since 1.23.4.
MODERN_DEFAULT_SINCE = (1, 23, 4)
OLD_DEFAULT_PROTOCOLS = ["TLSv1", "TLSv1.1", "TLSv1.2"]
HTTP2_DIRECTIVE_SINCE = (1, 25, 1)
HTTP2_MODULE = "http_v2_module"
MODERN_CIPHERS = (
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
)
SESSION_CACHE = ["shared:SSL:10m"]
DEFAULT_SESSION_TIMEOUT = 300.0
HSTS_ARGS = ["Strict-Transport-Security", "max-age=31536000", "always"]

# OpenSSL 3 builds no RC4, 3DES, DES or EXPORT suites: legacy ones matter on older hosts only.
OPENSSL_WITHOUT_LEGACY = (3, 0, 0)
# Suites a finding names in its message (the evidence lists them all).
SHOWN_SUITES = 3


def _version_text(ctx: RuleContext) -> str | None:
    version = ctx.nginx_version
    return ".".join(map(str, version)) if version is not None else None


def weak_tls_spots(
    config: ParsedConfig,
    name: str,
    is_weak: Callable[[Effective], bool],
    servers: list[Directive] | None = None,
) -> list[tuple[Directive, Effective, list[Directive]]]:
    """(anchor, effective value, TLS servers) where `name` in force at TLS servers is weak."""
    chosen = tls_servers(config) if servers is None else servers
    return weak_places(config, name, chosen, is_weak)


def tls_users(config: ParsedConfig, name: str) -> dict[int, list[Directive]]:
    """TLS servers by the id of the `name` directive in force there (absent: the default)."""
    users: dict[int, list[Directive]] = {}
    for server in tls_servers(config):
        node = value(name, server).node
        if node is not None:
            users.setdefault(id(node), []).append(server)
    return users


@rule("S-protocols", Category.TLS, Severity.ERROR)
def check_protocols(ctx: RuleContext) -> Iterator[Finding]:
    """Broken protocol versions are enabled where a TLS server runs with them."""
    config = ctx.config
    users = tls_users(config, "ssl_protocols")
    for node in config.find("ssl_protocols"):
        broken = [p for p in node.args if p in BROKEN_PROTOCOLS]
        if not broken:
            continue
        fix = make_fix("set", "ssl_protocols", MODERN_PROTOCOLS, node)
        evidence: dict[str, object] = {"ssl_protocols": node.args, "broken": broken}
        if node.module_scope != "http":
            # stream and mail servers: judged by the line.
            yield get_rule("S-protocols").finding(
                at=node,
                message=f"ssl_protocols enables {', '.join(broken)}: broken protocol versions",
                evidence=evidence,
                fix=fix,
            )
            continue
        inheriting = users.get(id(node), [])
        if inheriting:
            yield get_rule("S-protocols").finding(
                at=node,
                message=(
                    f"ssl_protocols enables {', '.join(broken)} for {describe(inheriting)}: "
                    "broken protocol versions"
                ),
                evidence={**evidence, "servers": labels(inheriting)},
                fix=fix,
            )
            continue
        yield get_rule("S-protocols").finding(
            at=node,
            severity=Severity.INFO,
            message=(
                f"ssl_protocols lists {', '.join(broken)} but no TLS server runs with this line "
                "(each sets its own or none speaks TLS): harmless today, a trap for the next server"
            ),
            evidence={**evidence, "servers": [], "unused": True},
            fix=fix,
        )
    yield from _old_default_protocols(ctx)


def _old_default_protocols(ctx: RuleContext) -> Iterator[Finding]:
    """Before 1.23.4 nginx's own default enables TLSv1 and TLSv1.1."""
    newer = ctx.facts.has_version(MODERN_DEFAULT_SINCE) if ctx.facts is not None else None
    if newer is not False:
        return
    spots = weak_tls_spots(ctx.config, "ssl_protocols", lambda found: found.default_used)
    for anchor, _, servers in spots:
        yield get_rule("S-protocols").finding(
            at=anchor,
            directive="ssl_protocols",
            message=(
                f"nginx {_version_text(ctx)} enables TLSv1 and TLSv1.1 by default and "
                f"{subject(servers, 'sets', 'set')} no ssl_protocols: broken protocol versions"
            ),
            evidence={
                "ssl_protocols": OLD_DEFAULT_PROTOCOLS,
                "default_used": True,
                "nginx_version": _version_text(ctx),
                "servers": labels(servers),
            },
            fix=make_fix("add", "ssl_protocols", MODERN_PROTOCOLS, anchor),
        )


def weak_cipher_families(spec: str, *, legacy: bool = True) -> list[str]:
    """Weak families whose suites an OpenSSL cipher string enables (legacy suites if asked)."""
    expansion = expand(spec)
    if not legacy:
        return sorted({f for suite in expansion.suites for f in suite.weaknesses})
    return sorted(expansion.weak())


def _cipher_users(config: ParsedConfig, node: Directive) -> list[Directive]:
    """Servers with a certificate that run with this ssl_ciphers (nginx applies it only there)."""
    return [
        server
        for server in config.servers()
        if setting(config, "ssl_ciphers", server) is node
        and setting(config, "ssl_certificate", server) is not None
    ]


def _unused_at_http(config: ParsedConfig, node: Directive) -> bool:
    """An http-level ssl_ciphers that no TLS server runs with (each sets its own, or none)."""
    if node.parent is None or node.parent.name != "http":
        return False
    for server in config.servers():
        if setting(config, "ssl_ciphers", server) is not node:
            continue
        tls = any("ssl" in d.args or "quic" in d.args for d in server.children("listen"))
        if tls or setting(config, "ssl_certificate", server) is not None:
            return False
    return True


def _named(suites: list[str]) -> str:
    shown = ", ".join(suites[:SHOWN_SUITES])
    more = len(suites) - SHOWN_SUITES
    return shown + (f" and {more} more" if more > 0 else "")


@rule("S-ciphers", Category.TLS, Severity.ERROR)
def check_ciphers(ctx: RuleContext) -> Iterator[Finding]:
    """The cipher list allows broken or unauthenticated ciphers, or matches none at all."""
    host_openssl = ctx.facts.openssl_version if ctx.facts is not None else None
    legacy_possible = host_openssl is None or host_openssl < OPENSSL_WITHOUT_LEGACY
    for node in ctx.config.find("ssl_ciphers"):
        if not node.args:
            continue
        spec = node.args[0]
        expansion = expand(spec)
        fix = make_fix(
            "set", "ssl_ciphers", [MODERN_CIPHERS], node, "ECDHE key exchange, AEAD only"
        )
        evidence: dict[str, object] = {
            "ssl_ciphers": spec,
            "expanded_by": expansion.openssl,
            "host_openssl": ".".join(map(str, host_openssl)) if host_openssl else None,
        }
        current: dict[str, list[str]] = {}
        for suite in expansion.suites:
            for family in suite.weaknesses:
                current.setdefault(family, []).append(suite.name)
        legacy: dict[str, list[str]] = {}
        if legacy_possible:
            for family, names in expansion.weak().items():
                old = [n for n in names if n in expansion.legacy]
                if old:
                    legacy[family] = old
        if not expansion.accepted and not legacy:
            users = _cipher_users(ctx.config, node)
            in_http = node.module_scope == "http"
            yield get_rule("S-ciphers").finding(
                at=node,
                severity=Severity.ERROR if users or not in_http else Severity.WARNING,
                message=(
                    f"ssl_ciphers {spec!r} matches no TLS 1.2 cipher suite in OpenSSL: "
                    "nginx -t fails with 'SSL_CTX_set_cipher_list() failed (no cipher match)'"
                    + (
                        ""
                        if users or not in_http
                        else " as soon as a server with a certificate uses it"
                    )
                ),
                evidence={
                    **evidence,
                    "accepted": False,
                    "weak": [],
                    "servers": [s.label for s in users],
                },
                fix=fix,
            )
            continue
        if not current and not legacy:
            continue
        # Legacy suites exist only in older OpenSSL: certain when the host's version says so.
        known_old = host_openssl is not None
        parts = [f"{f} ({_named(n)})" for f, n in current.items()]
        if legacy:
            where = "this host's OpenSSL" if known_old else "OpenSSL 1.1.1 and older"
            parts.append(
                f"on {where}{' also' if current else ''} "
                + ", ".join(f"{f} ({_named(n)})" for f, n in legacy.items())
            )
        notes = []
        if legacy and not known_old:
            if not expansion.accepted:
                notes.append("OpenSSL 3 selects no suite from it, so nginx -t fails there")
            if not current:
                notes.append("the host's OpenSSL version (nginx -V) decides how bad it is")
        severity = Severity.ERROR if current or known_old else Severity.WARNING
        if _unused_at_http(ctx.config, node):
            # Where nothing inherits the list, it is a trap for the next server, not a hole.
            severity = Severity.INFO
            notes.append("no TLS server uses it now (each sets its own): a trap for new servers")
        yield get_rule("S-ciphers").finding(
            at=node,
            severity=severity,
            message="; ".join(
                [
                    "ssl_ciphers enables broken or unauthenticated suites: " + "; ".join(parts),
                    *notes,
                ]
            ),
            evidence={
                **evidence,
                "accepted": expansion.accepted,
                "weak": list(dict.fromkeys([*current, *legacy])),
                "suites": current,
                "legacy_suites": legacy,
            },
            fix=fix,
        )


def _session_cache_on(found: Effective) -> bool:
    return found.first not in ("none", "off", "")


@rule("S-session-cache", Category.TLS, Severity.WARNING)
def check_session_cache(ctx: RuleContext) -> Iterator[Finding]:
    """TLS without a session cache makes every returning client do a full handshake."""
    spots = weak_tls_spots(
        ctx.config, "ssl_session_cache", lambda found: not _session_cache_on(found)
    )
    for anchor, found, servers in spots:
        node = found.node
        shown = (
            f"ssl_session_cache {found.first}" if node else "no ssl_session_cache (default none)"
        )
        yield get_rule("S-session-cache").finding(
            at=anchor,
            directive="ssl_session_cache",
            message=(
                f"{subject(servers, 'speaks', 'speak')} TLS with {shown}: "
                "every returning client pays a full handshake; "
                "10m of shared cache holds about 40,000 sessions"
            ),
            evidence={
                "ssl_session_cache": list(found.args) if node else "none",
                "default_used": node is None,
                "servers": labels(servers),
            },
            fix=set_or_add("ssl_session_cache", SESSION_CACHE, node, anchor),
        )


@rule("S-session-timeout", Category.TLS, Severity.INFO)
def check_session_timeout(ctx: RuleContext) -> Iterator[Finding]:
    """Cached sessions expire after the 5m default."""
    config = ctx.config
    pairs: list[tuple[Directive, Directive]] = []
    for server in tls_servers(config):
        cache = value("ssl_session_cache", server)
        if not _session_cache_on(cache) or cache.holder is None:
            continue
        found = value("ssl_session_timeout", server)
        if parse_seconds(" ".join(found.args)) != DEFAULT_SESSION_TIMEOUT:
            continue
        # A missing timeout belongs next to the cache it goes with.
        pairs.append((found.node if found.node is not None else cache.holder, server))
    for anchor, servers in group(pairs):
        node = anchor if anchor.name == "ssl_session_timeout" else None
        yield get_rule("S-session-timeout").finding(
            at=anchor,
            directive="ssl_session_timeout",
            message=(
                "ssl_session_timeout is at the 5m default: cached TLS sessions expire "
                "after five minutes; 1d lets returning visitors resume"
            ),
            evidence={
                "ssl_session_timeout_s": DEFAULT_SESSION_TIMEOUT,
                "default_used": node is None,
                "servers": labels(servers),
            },
            fix=set_or_add("ssl_session_timeout", ["1d"], node, anchor),
        )


@rule("S-tickets", Category.TLS, Severity.INFO)
def check_session_tickets(ctx: RuleContext) -> Iterator[Finding]:
    """Session tickets with nginx's never-rotated in-memory key undo forward secrecy."""
    config = ctx.config
    keyless = [s for s in tls_servers(config) if not entries("ssl_session_ticket_key", s)[1]]
    spots = weak_tls_spots(config, "ssl_session_tickets", lambda found: found.on, keyless)
    for anchor, found, servers in spots:
        yield get_rule("S-tickets").finding(
            at=anchor,
            directive="ssl_session_tickets",
            message=(
                "TLS session tickets are on with no ssl_session_ticket_key: the ticket "
                "key lives as long as nginx and is never rotated, undoing forward secrecy"
            ),
            evidence={
                "ssl_session_tickets": "on",
                "default_used": found.default_used,
                "servers": labels(servers),
            },
            fix=set_or_add("ssl_session_tickets", ["off"], found.node, anchor),
        )


def _http2_fix(newer: bool | None, anchor: Directive, listen: Directive | None) -> Fix:
    if newer and anchor.block is not None:
        return make_fix("add", "http2", ["on"], anchor)
    if newer is False and listen is not None:
        return make_fix("set", "listen", [*listen.args, "http2"], listen)
    return make_fix(
        "none",
        "http2",
        ["on"],
        anchor,
        "nginx >= 1.25.1: 'http2 on;' in the server; older: add http2 to the ssl listen",
    )


@rule("S-http2", Category.TLS, Severity.INFO)
def check_http2(ctx: RuleContext) -> Iterator[Finding]:
    """A TLS listener serves HTTP/1.1 only."""
    config = ctx.config
    facts = ctx.facts
    if facts is not None and facts.modules_known and HTTP2_MODULE not in facts.modules:
        return
    # The http2 listen parameter applies to every server on that address:port.
    h2_addresses = {
        d.args[0] for s in config.servers() for d in s.children("listen") if "http2" in d.args
    }
    newer = facts.has_version(HTTP2_DIRECTIVE_SINCE) if facts is not None else None
    lacking: list[tuple[Directive, Directive]] = []
    for server in tls_servers(config):
        listens = [d for d in server.children("listen") if "ssl" in d.args and d.args]
        if not listens or any(d.args[0] in h2_addresses for d in listens):
            continue
        if value("http2", server).on:
            continue
        lacking.append((server, listens[0]))
    if newer is False or len(lacking) == 1:
        # One listen line per server before 1.25.1 (and a lone server is fixed in itself).
        for server, listen in lacking:
            explicit = value("http2", server).node
            fix = (
                make_fix("set", "http2", ["on"], explicit)
                if explicit is not None and newer
                else _http2_fix(newer, server, listen)
            )
            yield _http2_finding(ctx, listen, [server], fix)
        return
    by_anchor = [(value("http2", s).node or common_block(config, [s]) or s, s) for s, _ in lacking]
    for anchor, servers in group(by_anchor):
        fix = (
            make_fix("set", "http2", ["on"], anchor)
            if anchor.name == "http2"
            else _http2_fix(newer, anchor, None)
        )
        yield _http2_finding(ctx, anchor, servers, fix)


def _http2_finding(ctx: RuleContext, at: Directive, servers: list[Directive], fix: Fix) -> Finding:
    listen = at.args[0] if at.name == "listen" and at.args else None
    where = f" on {listen}" if listen else ""
    return get_rule("S-http2").finding(
        at=at,
        directive="http2",
        message=f"{subject(servers, 'serves', 'serve')} TLS{where} without HTTP/2 (multiplexing)",
        evidence={
            "listen": at.args if at.name == "listen" else None,
            "servers": labels(servers),
            "nginx_version": _version_text(ctx),
        },
        fix=fix,
    )


@rule("S-stapling", Category.TLS, Severity.INFO)
def check_stapling(ctx: RuleContext) -> Iterator[Finding]:
    """OCSP stapling is on but nginx has no resolver to follow the responder's address.

    Without a resolver nginx still staples: it resolves the responder's name once while it
    reads the configuration (with the system resolver) and keeps that address, logging "no
    resolver defined" at every refresh. Stapling stops only if the responder moves or the name
    did not resolve at startup, which the configuration cannot tell: info, not a warning. A
    server that staples from ssl_stapling_file never contacts a responder.
    """
    config = ctx.config
    stapled = [
        s
        for s in tls_servers(config)
        if value("resolver", s).node is None and value("ssl_stapling_file", s).node is None
    ]
    spots = weak_tls_spots(config, "ssl_stapling", lambda found: found.first == "on", stapled)
    for anchor, found, servers in spots:
        yield get_rule("S-stapling").finding(
            at=anchor,
            message=(
                "ssl_stapling on without a resolver: nginx uses the OCSP responder's address "
                "looked up at startup and logs a warning at every refresh; stapling stops if "
                "the responder's address changes (or did not resolve at startup)"
            ),
            evidence={"ssl_stapling": "on", "resolver": None, "servers": labels(servers)},
            fix=make_fix(
                "remove",
                "ssl_stapling",
                list(found.args),
                anchor,
                "or add a resolver so the responder's address follows DNS; many CAs have ended "
                "OCSP, so stapling is optional",
            ),
        )


@rule("S-hsts", Category.TLS, Severity.INFO)
def check_hsts(ctx: RuleContext) -> Iterator[Finding]:
    """A TLS server does not tell browsers to stay on HTTPS."""
    config = ctx.config
    lacking = [s for s in tls_servers(config) if "strict-transport-security" not in headers(s)]
    # add_header lists inherit all or nothing, so the header goes into the list in force: one
    # finding for servers sharing http's list (or none at all), one for servers with their own.
    shared = [s for s in lacking if entries("add_header", s)[0] is not s]
    own = [s for s in lacking if s not in shared]
    for servers in (shared, own):
        if not servers:
            continue
        holder = entries("add_header", servers[0])[0]
        target = holder or (servers[0] if len(servers) == 1 else common_block(config, servers))
        if target is None:
            continue
        at = servers[0] if len(servers) == 1 else nearest_common(servers) or target
        # Servers with lists of their own each get the line: one edit per list.
        also = (
            tuple(make_fix("add", "add_header", HSTS_ARGS, s) for s in servers[1:])
            if servers is own
            else ()
        )
        yield get_rule("S-hsts").finding(
            at=at,
            directive="add_header",
            message=(
                f"{subject(servers, 'speaks', 'speak')} TLS without Strict-Transport-Security: "
                "browsers may still try plain HTTP first"
            ),
            evidence={
                "servers": labels(servers),
                "add_header": sorted(headers(servers[0])),
                "own_header_lists": servers is own,
            },
            fix=replace(
                make_fix("add", "add_header", HSTS_ARGS, target),
                also=also if servers is own else (),
            ),
        )
