"""X-ssrf and X-http-splitting: client data traced into upstream addresses and header lines."""

from __future__ import annotations

import pytest

from tests.rule_checks import run

SITE = """events {}
http {
    map $arg_region $region_backend {
        default 10.0.1.10;
        eu 10.0.2.10;
    }
    server {
        listen 80;
        server_name shop.test;
%s
    }
}
"""


def server(body: str) -> str:
    """A one-server config with `body` inside the server block."""
    return SITE % body


def last_line(body: str) -> int:
    """Line of the body's last directive (the one before its closing brace)."""
    return 10 + body.count("\n") - 1


@pytest.mark.parametrize(
    ("body", "variable"),
    [
        ("location /fetch/ {\n proxy_pass $arg_target;\n}", "$arg_target"),
        ("location ~ ^/go/(.+)$ {\n proxy_pass http://$1;\n}", "$1"),
        ("location ~ ^/img/(?<origin>[^/]+)/ {\n proxy_pass https://$origin/;\n}", "$origin"),
        # A constant start does not help: $sub can be 'x.attacker.example'.
        ("location ~ ^/cdn/(?<sub>.*)$ {\n proxy_pass http://static$sub;\n}", "$sub"),
        ("location / {\n proxy_pass $http_x_scheme://backend.internal/;\n}", "$http_x_scheme"),
        (
            "location ~ ^/p/(.*)/(.*)$ {\n set $dest $1;\n set $rest $2;\n"
            " proxy_pass http://$dest/$rest;\n}",
            "$1",
        ),
        ("location /legacy/ {\n fastcgi_pass $cookie_node:9000;\n}", "$cookie_node"),
        ("location / {\n proxy_pass https://$ssl_server_name;\n}", "$ssl_server_name"),
    ],
)
def test_x_ssrf_fires_when_the_client_picks_the_host(body: str, variable: str) -> None:
    [finding] = run("X-ssrf", server(body))
    assert finding.severity == "error"
    assert finding.evidence["variable"] == variable
    assert finding.line == last_line(body)  # the *_pass line: where the fix belongs
    assert finding.fix is not None and finding.fix.action == "none"


@pytest.mark.parametrize(
    "body",
    [
        # The variable only fills the path.
        "location ~ ^/files/(.*)$ {\n proxy_pass http://storage.internal/$1;\n}",
        "location / {\n proxy_pass http://app.internal$request_uri;\n}",
        'location / {\n set $target "http://app.internal$request_uri";\n proxy_pass $target;\n}',
        # $host is validated by nginx and matched a server_name.
        "location / {\n proxy_pass $scheme://$host$request_uri;\n}",
        # A capture that cannot hold a dot picks among fixed names.
        "location ~ ^/(blue|green)/ {\n proxy_pass http://$1;\n}",
        # A map is an allow-list.
        "location /r/ {\n proxy_pass http://$region_backend;\n}",
        # Clients cannot reach an internal location.
        "location /fetch/ {\n internal;\n proxy_pass $arg_target;\n}",
        # A variable nginx does not know the origin of is not reported.
        "location / {\n proxy_pass http://$backend_from_lua;\n}",
    ],
)
def test_x_ssrf_silent_on_look_alikes(body: str) -> None:
    assert run("X-ssrf", server(body)) == []


@pytest.mark.parametrize(
    ("body", "variable", "severity"),
    [
        ("location / {\n return 301 https://$host$uri;\n}", "$uri", "error"),
        ("location /old/ {\n rewrite ^ https://shop.test$uri permanent;\n}", "$uri", "error"),
        ("location / {\n add_header X-Path $document_uri;\n}", "$document_uri", "error"),
        (
            "location / {\n proxy_pass http://app;\n proxy_set_header X-Original $uri;\n}",
            "$uri",
            "error",
        ),
        # A negated class can match a decoded %0A.
        ("location ~ ^/u/([^/]+)/ {\n proxy_pass http://app/user/$1;\n}", "$1", "error"),
        (
            "location ~ ^/u/([^/]+)/ {\n set $who $1;\n proxy_pass http://app/$who;\n}",
            "$1",
            "error",
        ),
        # '.' stops at LF but not at CR: a lone CR reaches the client's header.
        ("location ~ ^/old/(.*)$ {\n return 302 /new/$1;\n}", "$1", "warning"),
    ],
)
def test_x_http_splitting_fires_on_crlf_capable_variables(
    body: str, variable: str, severity: str
) -> None:
    [finding] = run("X-http-splitting", server(body))
    assert (finding.evidence["variable"], finding.severity) == (variable, severity)
    assert finding.line == last_line(body)


def test_x_http_splitting_names_every_location_that_sets_the_variable() -> None:
    # Two tenant locations set $tenant from their capture and rewrite on; the finding names
    # both places the value comes from, not only the first one found.
    body = (
        "location ~ ^/([^/]+)/feed {\n set $tenant $1;\n rewrite ^ /feed;\n}\n"
        "location ~ ^/([^/]+)/chat {\n set $tenant $1;\n rewrite ^ /chat;\n}\n"
        "location = /chat {\n proxy_pass http://127.0.0.1:9000/chat?t=$tenant;\n}"
    )
    [finding] = run("X-http-splitting", server(body))
    assert "feed, line 10; location ~ ^/([^/]+)/chat, line 14)" in finding.message


@pytest.mark.parametrize(
    "body",
    [
        "location / {\n return 301 https://$host$request_uri;\n}",
        "location / {\n return 403;\n}",
        'location / {\n return 200 "you asked for $uri";\n}',
        # Upstream request lines end at LF only; '.' never matches LF.
        "location ~ ^/api/(.*)$ {\n proxy_pass http://app/$1;\n}",
        # rewrite splits its captures at whitespace.
        "location / {\n rewrite ^/p/(?<rest>.*)$ https://shop.test/$rest redirect;\n}",
        # An internal rewrite is a new URI, escaped when proxied.
        "location / {\n rewrite ^ /index.php$uri last;\n}",
        # The capture that can hold LF is not the one used.
        "location ~ ^/(a|b)/([^/]+)$ {\n set $kind $1;\n proxy_pass http://app/$kind;\n}",
        "location / {\n add_header X-Req $request_id;\n proxy_set_header X-Host $host;\n}",
    ],
)
def test_x_http_splitting_silent_on_look_alikes(body: str) -> None:
    assert run("X-http-splitting", server(body)) == []


def test_x_ssrf_in_stream_by_sni_and_silent_through_a_map() -> None:
    text = """events {}
stream {
    map $ssl_preread_server_name $backend {
        app.test 10.0.0.5:443;
        default 10.0.0.6:443;
    }
    server {
        listen 443;
        ssl_preread on;
        proxy_pass %s;
    }
}
"""
    [finding] = run("X-ssrf", text % "$ssl_preread_server_name:443")
    assert (finding.line, finding.evidence["variable"]) == (10, "$ssl_preread_server_name")
    assert run("X-ssrf", text % "$backend") == []


def test_a_set_in_another_server_does_not_reach() -> None:
    text = """events {}
http {
    server {
        listen 80;
        server_name a.test;
        location ~ ^/go/([^/]+)$ {
            set $dest $1;
            return 200 "a";
        }
    }
    server {
        listen 80;
        server_name b.test;
        set $dest "app.internal";
        location / {
            proxy_pass http://$dest;
        }
    }
}
"""
    assert run("X-ssrf", text) == []
    # Even with no set of its own, server b never runs server a's set.
    assert run("X-ssrf", text.replace('set $dest "app.internal";', "")) == []
    # In the same server, a rewrite can carry the request from the set to the pass.
    same = text.replace("        set $dest $1;\n", "").replace(
        'set $dest "app.internal";', "location ~ ^/go/(.+)$ {\n set $dest $1;\n rewrite ^ /;\n }"
    )
    [finding] = run("X-ssrf", same)
    assert finding.evidence["variable"] == "$1"
