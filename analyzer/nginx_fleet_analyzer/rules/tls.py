"""TLS: protocols, ciphers, session resumption, tickets, HTTP/2, OCSP stapling, HSTS."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.ciphers import expand
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import (
    inherited_list,
    is_on,
    make_fix,
    parse_seconds,
    set_or_add,
    setting,
    unique_by_anchor,
)

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


def tls_servers(config: ParsedConfig) -> list[Directive]:
    """http servers that speak TLS (`listen … ssl`, QUIC, or the old `ssl on`)."""
    found = []
    for server in config.servers():
        listens = server.children("listen")
        ssl_listen = any("ssl" in d.args or "quic" in d.args for d in listens)
        if ssl_listen or is_on(setting(config, "ssl", server)):
            found.append(server)
    return found


def _version_text(ctx: RuleContext) -> str | None:
    version = ctx.nginx_version
    return ".".join(map(str, version)) if version is not None else None


@rule("S-protocols", Category.TLS, Severity.ERROR)
def check_protocols(ctx: RuleContext) -> Iterator[Finding]:
    """Broken protocol versions are enabled."""
    config = ctx.config
    for node in config.find("ssl_protocols"):
        broken = [p for p in node.args if p in BROKEN_PROTOCOLS]
        if broken:
            yield get_rule("S-protocols").finding(
                at=node,
                message=f"ssl_protocols enables {', '.join(broken)}: broken protocol versions",
                evidence={"ssl_protocols": node.args, "broken": broken},
                fix=make_fix("set", "ssl_protocols", MODERN_PROTOCOLS, node),
            )
    newer = ctx.facts.has_version(MODERN_DEFAULT_SINCE) if ctx.facts is not None else None
    http = config.http()
    if newer is not False or http is None:
        return
    # Before 1.23.4 the default itself enables TLSv1 and TLSv1.1.
    for server in tls_servers(config):
        if setting(config, "ssl_protocols", server) is None:
            yield get_rule("S-protocols").finding(
                at=http,
                directive="ssl_protocols",
                message=(
                    f"nginx {_version_text(ctx)} enables TLSv1 and TLSv1.1 by default "
                    "(ssl_protocols is not set): broken protocol versions"
                ),
                evidence={
                    "ssl_protocols": OLD_DEFAULT_PROTOCOLS,
                    "default_used": True,
                    "nginx_version": _version_text(ctx),
                },
                fix=make_fix("add", "ssl_protocols", MODERN_PROTOCOLS, http),
            )
            return


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


def _session_cache_on(node: Directive | None) -> bool:
    return node is not None and node.args[:1] not in (["none"], ["off"])


@rule("S-session-cache", Category.TLS, Severity.WARNING)
def check_session_cache(ctx: RuleContext) -> Iterator[Finding]:
    """TLS without a session cache makes every returning client do a full handshake."""
    config = ctx.config
    http = config.http()
    if http is None:
        return
    pairs: list[tuple[Directive, Finding]] = []
    for server in tls_servers(config):
        node = setting(config, "ssl_session_cache", server)
        if _session_cache_on(node):
            continue
        anchor = node if node is not None else http
        fix = set_or_add("ssl_session_cache", SESSION_CACHE, node, http)
        shown = (
            f"ssl_session_cache {node.args[0]}" if node else "no ssl_session_cache (default none)"
        )
        pairs.append(
            (
                anchor,
                get_rule("S-session-cache").finding(
                    at=anchor,
                    directive="ssl_session_cache",
                    message=(
                        f"{server.label} speaks TLS with {shown}: every returning client pays a "
                        "full handshake; 10m of shared cache holds about 40,000 sessions"
                    ),
                    evidence={
                        "ssl_session_cache": node.args if node else "none",
                        "server": server.label,
                    },
                    fix=fix,
                ),
            )
        )
    yield from unique_by_anchor(pairs)


@rule("S-session-timeout", Category.TLS, Severity.INFO)
def check_session_timeout(ctx: RuleContext) -> Iterator[Finding]:
    """Cached sessions expire after the 5m default."""
    config = ctx.config
    pairs: list[tuple[Directive, Finding]] = []
    for server in tls_servers(config):
        cache = setting(config, "ssl_session_cache", server)
        if cache is None or not _session_cache_on(cache) or cache.parent is None:
            continue
        node = setting(config, "ssl_session_timeout", server)
        seconds = DEFAULT_SESSION_TIMEOUT if node is None else parse_seconds(" ".join(node.args))
        if seconds != DEFAULT_SESSION_TIMEOUT:
            continue
        anchor = node if node is not None else cache.parent
        fix = set_or_add("ssl_session_timeout", ["1d"], node, cache.parent)
        pairs.append(
            (
                anchor,
                get_rule("S-session-timeout").finding(
                    at=anchor,
                    directive="ssl_session_timeout",
                    message=(
                        "ssl_session_timeout is at the 5m default: cached TLS sessions expire "
                        "after five minutes; 1d lets returning visitors resume"
                    ),
                    evidence={"ssl_session_timeout_s": seconds, "default_used": node is None},
                    fix=fix,
                ),
            )
        )
    yield from unique_by_anchor(pairs)


@rule("S-tickets", Category.TLS, Severity.INFO)
def check_session_tickets(ctx: RuleContext) -> Iterator[Finding]:
    """Session tickets with nginx's never-rotated in-memory key undo forward secrecy."""
    config = ctx.config
    http = config.http()
    if http is None:
        return
    pairs: list[tuple[Directive, Finding]] = []
    for server in tls_servers(config):
        node = setting(config, "ssl_session_tickets", server)
        if not is_on(node, default=True):
            continue
        _, keys = inherited_list("ssl_session_ticket_key", server)
        if keys:
            continue
        anchor = node if node is not None else http
        fix = set_or_add("ssl_session_tickets", ["off"], node, http)
        pairs.append(
            (
                anchor,
                get_rule("S-tickets").finding(
                    at=anchor,
                    directive="ssl_session_tickets",
                    message=(
                        "TLS session tickets are on with no ssl_session_ticket_key: the ticket "
                        "key lives as long as nginx and is never rotated, undoing forward secrecy"
                    ),
                    evidence={"ssl_session_tickets": "on", "default_used": node is None},
                    fix=fix,
                ),
            )
        )
    yield from unique_by_anchor(pairs)


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
    for server in tls_servers(config):
        listens = [d for d in server.children("listen") if "ssl" in d.args]
        if not listens or any(d.args[0] in h2_addresses for d in listens):
            continue
        if is_on(setting(config, "http2", server)):
            continue
        listen = listens[0]
        fix: Fix
        if newer:
            fix = make_fix("add", "http2", ["on"], server)
        elif newer is False:
            fix = make_fix("set", "listen", [*listen.args, "http2"], listen)
        else:
            fix = make_fix(
                "none",
                "http2",
                ["on"],
                server,
                "nginx >= 1.25.1: 'http2 on;' in the server; older: add http2 to the ssl listen",
            )
        yield get_rule("S-http2").finding(
            at=listen,
            directive="http2",
            message=f"{server.label} serves TLS on {listen.args[0]} without HTTP/2 (multiplexing)",
            evidence={"listen": listen.args, "nginx_version": _version_text(ctx)},
            fix=fix,
        )


@rule("S-stapling", Category.TLS, Severity.WARNING)
def check_stapling(ctx: RuleContext) -> Iterator[Finding]:
    """OCSP stapling is on but nginx has no resolver to reach the responder."""
    config = ctx.config
    pairs: list[tuple[Directive, Finding]] = []
    for server in tls_servers(config):
        node = setting(config, "ssl_stapling", server)
        if node is None or not is_on(node) or setting(config, "resolver", server) is not None:
            continue
        pairs.append(
            (
                node,
                get_rule("S-stapling").finding(
                    at=node,
                    message=(
                        "ssl_stapling on without a resolver: nginx cannot look up the OCSP "
                        "responder, so nothing is stapled"
                    ),
                    evidence={"ssl_stapling": "on", "resolver": None},
                    fix=make_fix(
                        "remove",
                        "ssl_stapling",
                        node.args,
                        node,
                        "or add a resolver; many CAs have ended OCSP, so stapling is optional",
                    ),
                ),
            )
        )
    yield from unique_by_anchor(pairs)


@rule("S-hsts", Category.TLS, Severity.INFO)
def check_hsts(ctx: RuleContext) -> Iterator[Finding]:
    """A TLS server does not tell browsers to stay on HTTPS."""
    for server in tls_servers(ctx.config):
        holder, headers = inherited_list("add_header", server)
        if any(h.args and h.args[0].lower() == "strict-transport-security" for h in headers):
            continue
        # add_header lists inherit all or nothing: add to the block whose list applies.
        target = holder if holder is not None else server
        yield get_rule("S-hsts").finding(
            at=server,
            directive="add_header",
            message=(
                f"{server.label} speaks TLS without Strict-Transport-Security: browsers may "
                "still try plain HTTP first"
            ),
            evidence={"server": server.label, "add_header": [h.args[0] for h in headers if h.args]},
            fix=make_fix("add", "add_header", HSTS_ARGS, target),
        )
