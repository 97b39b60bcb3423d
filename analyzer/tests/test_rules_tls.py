"""TLS rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

import pytest
from nginx_fleet_analyzer.facts import HostFacts
from nginx_fleet_analyzer.findings import Category
from nginx_fleet_analyzer.rules.tls import weak_cipher_families

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

TLS = """events {}
http {
%s
    server {
        listen 443 ssl;
        server_name example.com;
%s
    }
}
"""

PLAIN = """events {}
http {
%s
    server {
        listen 80;
        server_name example.com;
%s
    }
}
"""

OLD = HostFacts(nginx_version=(1, 22, 1))
NEW = HostFacts(nginx_version=(1, 25, 3))


def test_s_protocols_fires_on_broken_versions() -> None:
    [finding] = run("S-protocols", TLS % ("    ssl_protocols TLSv1 TLSv1.1 TLSv1.2;", ""))
    assert (finding.severity, finding.line) == ("error", 3)
    assert finding.evidence["broken"] == ["TLSv1", "TLSv1.1"]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("set", ["TLSv1.2", "TLSv1.3"])


def test_s_protocols_default_is_broken_only_before_1_23_4() -> None:
    [finding] = run("S-protocols", TLS % ("", ""), OLD)
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.context) == (2, "add", "http")
    assert run("S-protocols", TLS % ("", ""), HostFacts(nginx_version=(1, 23, 4))) == []
    assert run("S-protocols", TLS % ("", "")) == []


def test_s_protocols_silent_on_modern_list() -> None:
    assert run("S-protocols", TLS % ("    ssl_protocols TLSv1.2 TLSv1.3;", ""), OLD) == []


@pytest.mark.parametrize(
    ("spec", "weak"),
    [
        ("HIGH:!aNULL:!MD5", []),
        ("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305", []),
        ("HIGH:!aNULL:!MD5:RC4-SHA", ["RC4"]),
        ("HIGH", ["aNULL"]),
        ("ECDHE-RSA-DES-CBC3-SHA:HIGH:!aNULL", ["3DES"]),
        # Single DES and EXPORT-DES suites of OpenSSL 1.0.2 are not named, so they stay.
        ("ALL:!aNULL:!RC4:!3DES:!MD5", ["DES", "EXPORT"]),
        ("EXP-RC4-MD5", ["EXPORT", "MD5", "RC4"]),
        # DEFAULT ends in !eNULL, and a killed suite never comes back.
        ("DEFAULT:eNULL", []),
    ],
)
def test_weak_cipher_families(spec: str, weak: list[str]) -> None:
    assert weak_cipher_families(spec) == weak


def test_s_ciphers_fires_on_weak_list() -> None:
    [finding] = run("S-ciphers", TLS % ("    ssl_ciphers HIGH:RC4:!MD5;", ""))
    assert (finding.severity, finding.line) == ("error", 3)
    assert finding.fix is not None
    assert finding.fix.action == "set"
    assert "ECDHE-RSA-AES128-GCM-SHA256" in finding.fix.args[0]


def test_s_ciphers_silent_on_nginx_default_list() -> None:
    assert run("S-ciphers", TLS % ("    ssl_ciphers HIGH:!aNULL:!MD5;", "")) == []


def test_s_session_cache_fires_on_tls_server_without_cache() -> None:
    [finding] = run("S-session-cache", TLS % ("", ""))
    assert (finding.severity, finding.line) == ("warning", 2)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("add", ["shared:SSL:10m"])
    [finding] = run("S-session-cache", TLS % ("", "        ssl_session_cache none;"))
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (7, "set")


def test_s_session_cache_silent_with_cache_or_without_tls() -> None:
    assert run("S-session-cache", TLS % ("    ssl_session_cache shared:SSL:10m;", "")) == []
    assert run("S-session-cache", PLAIN % ("", "")) == []


def test_s_session_timeout_fires_at_5m_default() -> None:
    [finding] = run("S-session-timeout", TLS % ("    ssl_session_cache shared:SSL:10m;", ""))
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.args) == (2, "add", ["1d"])
    text = TLS % ("    ssl_session_cache shared:SSL:10m;\n    ssl_session_timeout 5m;", "")
    [finding] = run("S-session-timeout", text)
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (4, "set")


def test_s_session_timeout_silent_without_cache_or_with_longer_timeout() -> None:
    assert run("S-session-timeout", TLS % ("", "")) == []
    text = TLS % ("    ssl_session_cache shared:SSL:10m;\n    ssl_session_timeout 1d;", "")
    assert run("S-session-timeout", text) == []


def test_s_tickets_fires_on_default_tickets_without_key() -> None:
    [finding] = run("S-tickets", TLS % ("", ""))
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.args) == (2, "add", ["off"])


def test_s_tickets_silent_when_off_or_keyed() -> None:
    assert run("S-tickets", TLS % ("    ssl_session_tickets off;", "")) == []
    keyed = "        ssl_session_ticket_key /etc/nginx/ticket.key;"
    assert run("S-tickets", TLS % ("", keyed)) == []


def test_s_http2_uses_the_listen_parameter_before_1_25_1() -> None:
    [finding] = run("S-http2", TLS % ("", ""), OLD)
    assert (finding.severity, finding.line) == ("info", 5)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args) == (
        "set",
        "listen",
        ["443", "ssl", "http2"],
    )


def test_s_http2_uses_the_http2_directive_from_1_25_1() -> None:
    [finding] = run("S-http2", TLS % ("", ""), NEW)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args, finding.fix.line) == (
        "add",
        "http2",
        ["on"],
        4,
    )
    [finding] = run("S-http2", TLS % ("", ""))
    assert finding.fix is not None
    assert finding.fix.action == "none"


def test_s_http2_silent_when_enabled_or_unavailable() -> None:
    assert run("S-http2", (TLS % ("", "")).replace("443 ssl", "443 ssl http2"), OLD) == []
    assert run("S-http2", TLS % ("", "        http2 on;"), NEW) == []
    assert run("S-http2", PLAIN % ("", ""), NEW) == []
    no_h2 = HostFacts(nginx_version=(1, 22, 1), modules_known=True)
    assert run("S-http2", TLS % ("", ""), no_h2) == []


def test_s_http2_listen_parameter_covers_every_server_on_the_socket() -> None:
    text = TLS % ("    server {\n        listen 443 ssl http2;\n    }", "")
    assert run("S-http2", text, OLD) == []


def test_s_stapling_fires_without_resolver() -> None:
    # nginx still staples from the address resolved at startup: info, not a warning.
    [finding] = run("S-stapling", TLS % ("", "        ssl_stapling on;"))
    assert (finding.severity, finding.line) == ("info", 7)
    assert "looked up at startup" in finding.message
    assert finding.fix is not None
    assert finding.fix.action == "remove"


def test_s_stapling_silent_with_resolver_or_off() -> None:
    assert run("S-stapling", TLS % ("    resolver 127.0.0.53;", "        ssl_stapling on;")) == []
    assert run("S-stapling", TLS % ("", "        ssl_stapling off;")) == []


def test_s_stapling_silent_when_stapling_from_a_file() -> None:
    stapled = "        ssl_stapling on;\n        ssl_stapling_file /etc/ssl/ocsp.der;"
    assert run("S-stapling", TLS % ("", stapled)) == []


def test_s_hsts_fires_and_adds_where_the_header_list_lives() -> None:
    [finding] = run("S-hsts", TLS % ("", ""))
    assert finding.fix is not None
    assert (finding.line, finding.fix.line, finding.fix.context) == (4, 4, "server example.com")
    [finding] = run("S-hsts", TLS % ("    add_header X-Frame-Options DENY;", ""))
    assert finding.fix is not None
    # The server inherits http's add_header list: a header added in the server would drop it.
    assert (finding.fix.line, finding.fix.context) == (2, "http")
    assert finding.fix.args[0] == "Strict-Transport-Security"


def test_s_hsts_silent_when_sent_or_plain_http() -> None:
    hsts = '        add_header Strict-Transport-Security "max-age=63072000" always;'
    assert run("S-hsts", TLS % ("", hsts)) == []
    assert run("S-hsts", PLAIN % ("", "")) == []


def test_tls_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.TLS, TLS % ("    ssl_session_cache shared:SSL:1m;", "        ssl_stapling on;")
    )


OVERRIDDEN = """events {}
http {
    ssl_protocols TLSv1 TLSv1.1 TLSv1.2;
    server {
        listen 443 ssl;
        server_name a.example;
        ssl_protocols TLSv1.2 TLSv1.3;
    }
    server {
        listen 443 ssl;
        server_name b.example;
%s
    }
    server {
        listen 80;
        server_name plain.example;
    }
}
"""


def test_s_protocols_overridden_in_every_tls_server_is_info_at_http() -> None:
    text = OVERRIDDEN % "        ssl_protocols TLSv1.3;"
    [finding] = run("S-protocols", text)
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.evidence["servers"] == []


def test_s_protocols_inherited_by_one_tls_server_is_an_error_naming_it() -> None:
    [finding] = run("S-protocols", OVERRIDDEN % "")
    assert (finding.severity, finding.line) == ("error", 3)
    # The plain-HTTP server inherits the line too, but speaks no TLS.
    assert finding.evidence["servers"] == ["server b.example"]
    assert "server b.example" in finding.message


def test_s_protocols_old_default_is_one_finding_for_every_server() -> None:
    single = (
        "events {}\nhttp {\n"
        + "".join(
            f"    server {{\n        listen 443 ssl;\n        server_name s{i}.example;\n    }}\n"
            for i in range(30)
        )
        + "}\n"
    )
    [finding] = run("S-protocols", single, OLD)
    assert (finding.line, len(finding.evidence["servers"])) == (2, 30)  # type: ignore[arg-type]
    assert "and 27 more" in finding.message
    overridden = single.replace("s0.example;", "s0.example;\n        ssl_protocols TLSv1.3;")
    [finding] = run("S-protocols", overridden, OLD)
    assert "server s0.example" not in finding.evidence["servers"]  # type: ignore[operator]


def test_s_session_cache_one_finding_per_cause_listing_servers() -> None:
    text = OVERRIDDEN % ""
    [finding] = run("S-session-cache", text)
    assert finding.line == 2
    assert finding.evidence["servers"] == ["server a.example", "server b.example"]
    text = OVERRIDDEN % "        ssl_session_cache shared:B:1m;"
    [finding] = run("S-session-cache", text)
    assert finding.evidence["servers"] == ["server a.example"]


def test_s_session_cache_silent_when_every_tls_server_has_one() -> None:
    text = (OVERRIDDEN % "        ssl_session_cache shared:B:1m;").replace(
        "ssl_protocols TLSv1.2 TLSv1.3;", "ssl_session_cache shared:A:1m;"
    )
    assert run("S-session-cache", text) == []


def test_tls_rules_ignore_plain_http_servers() -> None:
    text = PLAIN % ("    ssl_stapling on;\n    ssl_protocols TLSv1;", "")
    for rule_id in ("S-session-cache", "S-session-timeout", "S-tickets", "S-stapling", "S-hsts"):
        assert run(rule_id, text, OLD) == [], rule_id
    [protocols] = run("S-protocols", text, OLD)
    assert protocols.severity == "info"


def test_s_stapling_one_finding_for_an_http_line_inherited_by_two_servers() -> None:
    text = OVERRIDDEN.replace("ssl_protocols TLSv1 TLSv1.1 TLSv1.2;", "ssl_stapling on;") % ""
    [finding] = run("S-stapling", text)
    assert (finding.line, len(finding.evidence["servers"])) == (3, 2)  # type: ignore[arg-type]


def test_s_hsts_empty_add_header_removes_the_header() -> None:
    removed = '        add_header Strict-Transport-Security "";'
    [finding] = run("S-hsts", TLS % ("", removed))
    assert finding.evidence["servers"] == ["server example.com"]


def test_s_hsts_groups_servers_without_a_list_at_http() -> None:
    text = OVERRIDDEN % ""
    [finding] = run("S-hsts", text)
    assert finding.fix is not None
    assert (finding.line, finding.fix.context) == (2, "http")
    hsts = '    add_header Strict-Transport-Security "max-age=31536000" always;'
    assert run("S-hsts", text.replace("    ssl_protocols TLSv1 TLSv1.1 TLSv1.2;", hsts)) == []


def test_s_http2_from_1_25_1_one_line_at_http_for_several_servers() -> None:
    [finding] = run("S-http2", OVERRIDDEN % "", NEW)
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.context) == (2, "add", "http")
    assert len(finding.evidence["servers"]) == 2  # type: ignore[arg-type]
    assert len(run("S-http2", OVERRIDDEN % "", OLD)) == 2
    assert run("S-http2", (OVERRIDDEN % "").replace("http {", "http {\n    http2 on;"), NEW) == []


def test_s_hsts_servers_with_their_own_header_lists_are_one_finding() -> None:
    sites = "".join(
        f"    server {{\n        listen 443 ssl;\n        server_name s{i}.example;\n"
        "        add_header X-Frame-Options DENY;\n    }\n"
        for i in range(5)
    )
    [finding] = run("S-hsts", "events {}\nhttp {\n" + sites + "}\n")
    assert finding.evidence["own_header_lists"] is True
    assert (finding.line, len(finding.evidence["servers"])) == (2, 5)  # type: ignore[arg-type]
    assert finding.fix is not None
    assert finding.fix.line == 3
    # The line goes into each server's own list: the first server, then the four others.
    assert [(e.action, e.line) for e in finding.fix.also] == [
        ("add", 3 + 5 * i) for i in (1, 2, 3, 4)
    ]
    hsts = (
        "add_header X-Frame-Options DENY;\n"
        '        add_header Strict-Transport-Security "max-age=1";'
    )
    text = "events {}\nhttp {\n" + sites.replace("add_header X-Frame-Options DENY;", hsts) + "}\n"
    assert run("S-hsts", text) == []


# A catch-all for unknown SNI names next to a real site: the catch-all ends every handshake.
REJECTING = """events {}
http {
    ssl_protocols TLSv1 TLSv1.2;
    server {
        listen 443 ssl default_server;
        server_name _;
        ssl_reject_handshake on;
    }
    server {
        listen 443 ssl;
        server_name shop.example.org;
        ssl_certificate certs/shop.crt;
        ssl_certificate_key certs/shop.key;
%s
    }
}
"""


def test_tls_rules_skip_a_server_that_rejects_every_handshake() -> None:
    # Only the site that completes handshakes is judged.
    [finding] = run("S-session-cache", REJECTING % "")
    assert finding.evidence["servers"] == ["server shop.example.org"]
    [finding] = run("S-protocols", REJECTING % "")
    assert "shop.example.org" in finding.message and "server _" not in finding.message
    own = "        ssl_protocols TLSv1.2 TLSv1.3;\n        ssl_session_cache shared:S:1m;"
    fixed = REJECTING % own
    assert run("S-session-cache", fixed) == []
    # The http-level list now reaches no handshake: info, not an error.
    [finding] = run("S-protocols", fixed)
    assert finding.severity == "info"
    # The look-alike: `ssl_reject_handshake off` completes handshakes like any server.
    off = REJECTING.replace("ssl_reject_handshake on;", "ssl_reject_handshake off;")
    [finding] = run("S-session-cache", off % "")
    assert finding.evidence["servers"] == ["server _", "server shop.example.org"]
