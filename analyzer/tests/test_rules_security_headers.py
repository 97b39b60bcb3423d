"""add_header rules: inheritance loss (one finding per cause), folded values, Content-Type."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import HostFacts
from nginx_fleet_analyzer.loader import parse_dump
from nginx_fleet_analyzer.rules import RuleContext, get_rule

from tests.rule_checks import run

SITE = """events {}
http {
    server {
        listen 443 ssl;
        server_name app.test;
        add_header Strict-Transport-Security "max-age=31536000" always;
        add_header X-Frame-Options DENY always;
%s
    }
}
"""


def site(body: str) -> str:
    """A TLS server sending HSTS and X-Frame-Options (lines 6-7), `body` from line 8 on."""
    return SITE % body


def test_inherit_one_finding_per_parent_list_anchored_at_it() -> None:
    body = (
        "        location /api/ {\n"  # 8
        "            add_header Cache-Control no-store;\n"
        "        }\n"
        "        location /img/ {\n"  # 11
        "            add_header Cache-Control max-age=3600;\n"
        "        }\n"
        "        location /dl/ {\n"  # 14
        '            add_header Content-Disposition "attachment";\n'
        "        }"
    )
    [finding] = run("X-add-header-inherit", site(body))
    assert (finding.severity, finding.line) == ("warning", 6)
    assert finding.evidence["dropped"] == ["Strict-Transport-Security", "X-Frame-Options"]
    blocks = finding.evidence["blocks"]
    assert isinstance(blocks, list)
    assert [b["line"] for b in blocks] == [8, 11, 14]
    assert all(f"location {p}" in finding.message for p in ("/api/", "/img/", "/dl/"))
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.line, finding.fix.args) == (
        "add",
        8,
        ["Strict-Transport-Security", "max-age=31536000", "always"],
    )


def test_inherit_names_each_blocks_own_losses_and_its_server() -> None:
    text = """events {}
http {
    add_header X-Frame-Options DENY;
    add_header Strict-Transport-Security "max-age=31536000" always;
    server {
        listen 80;
        server_name a.example.net;
        location / {
            add_header Cache-Control no-store;
        }
    }
    server {
        listen 80;
        server_name b.example.net;
        location / {
            add_header X-Frame-Options SAMEORIGIN;
        }
        location /api/ {
            add_header Cache-Control private;
        }
    }
}
"""
    [finding] = run("X-add-header-inherit", text)
    assert finding.line == 3
    both = "X-Frame-Options, Strict-Transport-Security"
    assert finding.message == (
        "3 blocks have their own add_header, so they do not send headers set in http: "
        f"location / (line 8) in server a.example.net loses {both}; "
        "location / (line 15) in server b.example.net loses Strict-Transport-Security; "
        f"location /api/ (line 18) in server b.example.net loses {both}"
    )
    blocks = finding.evidence["blocks"]
    assert isinstance(blocks, list)
    assert [(b["server"], b["line"], b["dropped"]) for b in blocks] == [
        ("server a.example.net", 8, ["X-Frame-Options", "Strict-Transport-Security"]),
        ("server b.example.net", 15, ["Strict-Transport-Security"]),
        ("server b.example.net", 18, ["X-Frame-Options", "Strict-Transport-Security"]),
    ]
    assert finding.fix is not None and "in server b.example.net" in finding.fix.note


def test_inherit_blank_header_drops_the_others_but_is_not_itself_lost() -> None:
    body = '        location /embed/ {\n            add_header X-Frame-Options "";\n        }'
    [finding] = run("X-add-header-inherit", site(body))
    # nginx 1.22 sends neither header there (see test_rules_security_nginx): HSTS is the loss.
    assert finding.evidence["dropped"] == ["Strict-Transport-Security"]


def test_inherit_silent_when_child_repeats_or_blanks_everything() -> None:
    repeated = (
        "        location /api/ {\n"
        '            add_header Strict-Transport-Security "max-age=31536000" always;\n'
        '            add_header X-Frame-Options "";\n'
        "            add_header Cache-Control no-store;\n"
        "        }"
    )
    assert run("X-add-header-inherit", site(repeated)) == []
    no_own = "        location /static/ {\n            expires 7d;\n        }"
    assert run("X-add-header-inherit", site(no_own)) == []


def test_inherit_silent_with_add_header_inherit_merge() -> None:
    body = (
        "        add_header_inherit merge;\n"
        "        location /api/ {\n            add_header Cache-Control no-store;\n        }"
    )
    assert run("X-add-header-inherit", site(body)) == []


def test_inherit_info_when_only_cosmetic_headers_are_lost() -> None:
    text = """events {}
http {
    add_header X-Served-By edge-1;
    server {
        listen 80;
        location / {
            add_header X-Debug yes;
        }
    }
}
"""
    [finding] = run("X-add-header-inherit", text)
    # One child drops the list: the finding sits at the child's own add_header, where the fix goes.
    assert (finding.severity, finding.line) == ("info", 7)


def test_inherit_if_in_location_drops_but_a_returning_preflight_does_not_count() -> None:
    body = (
        "        location / {\n"
        "            if ($http_origin) {\n"
        "                add_header Access-Control-Allow-Origin $http_origin;\n"
        "            }\n"
        "            if ($request_method = OPTIONS) {\n"
        "                add_header Access-Control-Allow-Methods GET;\n"
        "                return 204;\n"
        "            }\n"
        "        }"
    )
    [finding] = run("X-add-header-inherit", site(body))
    blocks = finding.evidence["blocks"]
    assert isinstance(blocks, list)
    assert [b["block"] for b in blocks] == ["if ($http_origin)"]


def test_inherit_fix_is_one_merge_line_on_new_nginx() -> None:
    body = "        location /api/ {\n            add_header Cache-Control no-store;\n        }"
    facts = HostFacts(nginx_version=(1, 29, 3))
    [finding] = run("X-add-header-inherit", site(body), facts=facts)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.line) == (
        "add",
        "add_header_inherit",
        8,
    )
    assert finding.line == 9
    # Several children: one merge line at the parent fixes them all.
    two = body + "\n        location /img/ {\n            add_header X-Img 1;\n        }"
    [finding] = run("X-add-header-inherit", site(two), facts=facts)
    assert finding.fix is not None
    assert (finding.fix.line, finding.line) == (3, 6)


def test_multiline_fires_and_fix_joins_the_value() -> None:
    body = (
        "        add_header Content-Security-Policy \"default-src 'self';\n"
        "            img-src 'self' data:\";"
    )
    [finding] = run("X-add-header-multiline", site(body))
    assert (finding.severity, finding.line, finding.evidence["folded"]) == ("warning", 8, True)
    assert finding.fix is not None
    assert finding.fix.args == [
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:",
    ]


def test_multiline_more_set_headers_and_silent_look_alikes() -> None:
    text = site("        more_set_headers 'X-Note: one\n    two';")
    [finding] = run("X-add-header-multiline", text)
    assert finding.fix is not None and finding.fix.action == "none"
    one_line = site(
        "        add_header Content-Security-Policy \"default-src 'self'; img-src data:\";"
    )
    assert run("X-add-header-multiline", one_line) == []
    # A multi-line content-type list is not a header value.
    types = site("        more_set_headers -t 'text/html\n    text/plain' 'X-A: b';")
    assert run("X-add-header-multiline", types) == []


def test_content_type_fires_with_default_type_fix() -> None:
    body = (
        "        location /feed {\n"
        '            add_header Content-Type "application/rss+xml; charset=utf-8";\n'
        "        }"
    )
    [finding] = run("X-add-header-content-type", site(body))
    assert (finding.severity, finding.line) == ("warning", 9)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args) == (
        "replace",
        "default_type",
        ["application/rss+xml"],
    )


def test_content_type_silent_on_look_alikes() -> None:
    for line in (
        "        default_type application/json;",
        "        add_header X-Content-Type-Options nosniff;",
        '        add_header Content-Type "";',
        "        more_set_headers 'Content-Type: text/plain';",
        # A 204 carries no Content-Type of nginx's own (checked in test_rules_security_nginx).
        "        location /cors {\n            add_header Content-Type text/plain;\n"
        "            return 204;\n        }",
    ):
        assert run("X-add-header-content-type", site(line)) == [], line


def test_xss_header_fires_and_removes() -> None:
    [finding] = run("X-xss-header", site('        add_header X-XSS-Protection "1; mode=block";'))
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (8, "remove")


def test_xss_header_silent_when_disabled() -> None:
    assert run("X-xss-header", site('        add_header X-XSS-Protection "0";')) == []
    assert run("X-xss-header", site("        add_header X-Frame-Options DENY;")) == []


SHARED_SNIPPET = """# configuration file /etc/nginx/nginx.conf:
events {}
http {
    server { listen 80; server_name a.test; include /etc/nginx/snippets/site.conf; }
    server { listen 80; server_name b.test; include /etc/nginx/snippets/site.conf; }
}

# configuration file /etc/nginx/snippets/site.conf:
add_header X-Frame-Options DENY;
location /img/ {
    add_header Cache-Control public;
}
"""


def test_inherit_names_a_block_of_a_shared_snippet_once() -> None:
    config = parse_dump(SHARED_SNIPPET)
    [finding] = get_rule("X-add-header-inherit").check(RuleContext(config=config))
    assert finding.message.count("location /img/ (line 2)") == 1
    assert (
        "location /img/ (line 2) in server a.test and server b.test has its own add_header, "
        "so it does not send X-Frame-Options" in finding.message
    )
    # Both servers' blocks stay in the evidence.
    assert len(finding.evidence["blocks"]) == 2
