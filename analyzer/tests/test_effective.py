"""The effective-value layer: inheritance, list inheritance and what a location does."""

from __future__ import annotations

import pytest
from nginx_fleet_analyzer.effective import (
    Role,
    entries,
    group,
    headers,
    nearest_common,
    role,
    serving,
    tls_servers,
    value,
    weak_places,
)
from nginx_fleet_analyzer.loader import parse_text
from nginx_fleet_analyzer.model import Directive, ParsedConfig

SITE = """events {}
http {
    sendfile on;
    add_header X-Frame-Options DENY;
    proxy_set_header Host $host;
    server {
        listen 443 ssl;
        server_name shop.example;
        root /srv/shop;
        sendfile off;
        location / {
            try_files $uri /index.php?$args;
            location ~* \\.(css|js)$ {
                sendfile on;
                add_header Cache-Control "max-age=600";
            }
        }
        location /app/ {
            proxy_set_header X-Real-IP $remote_addr;
            proxy_pass http://127.0.0.1:8080;
            if ($request_method = POST) {
                add_header X-Frame-Options "";
            }
        }
    }
    server {
        listen 80;
        server_name plain.example;
        return 301 https://shop.example$request_uri;
    }
}
"""


def _config(text: str = SITE) -> ParsedConfig:
    return parse_text(text)


def _location(config: ParsedConfig, pattern: str) -> Directive:
    return next(d for d in config.find("location") if d.args[-1] == pattern)


def test_value_takes_the_innermost_setting_then_the_default() -> None:
    config = _config()
    nested = _location(config, "\\.(css|js)$")
    outer = _location(config, "/")
    assert value("sendfile", nested).first == "on"
    assert value("sendfile", nested).holder is nested
    # The server's `sendfile off` overrides http's `on` for the outer location.
    found = value("sendfile", outer)
    assert (found.first, found.holder is not None and found.holder.name) == ("off", "server")
    unset = value("gzip", outer)
    assert unset.default_used and unset.args == ("off",) and not unset.on


def test_value_inside_if_inherits_from_its_location_and_server() -> None:
    config = _config()
    block = next(iter(config.find("if")))
    assert value("root", block).first == "/srv/shop"
    assert value("proxy_set_header", block).node is not None


def test_lists_inherit_all_or_nothing() -> None:
    config = _config()
    app = _location(config, "/app/")
    holder, found = entries("proxy_set_header", app)
    # The location's own list replaces http's: Host is no longer sent.
    assert holder is app
    assert [d.args[0] for d in found] == ["X-Real-IP"]
    holder, found = entries("proxy_set_header", _location(config, "/"))
    assert holder is not None and holder.name == "http"
    assert [d.args[0] for d in found] == ["Host"]


def test_headers_drop_an_empty_value_and_follow_the_list_in_force() -> None:
    config = _config()
    assert sorted(headers(_location(config, "/"))) == ["x-frame-options"]
    assert sorted(headers(_location(config, "\\.(css|js)$"))) == ["cache-control"]
    # `add_header X-Frame-Options "";` sends nothing (and is no inheritance loss of another).
    assert headers(next(iter(config.find("if")))) == {}


def test_allow_and_deny_form_one_list() -> None:
    config = _config(
        "http { server { location /a { allow 10.0.0.0/8; location /a/b { deny all; } } } }"
    )
    nested = _location(config, "/a/b")
    holder, found = entries(("allow", "deny"), nested)
    assert holder is nested and [d.name for d in found] == ["deny"]


ROLE_CASES = [
    ("proxy_pass http://app;", Role.PASSES),
    ("fastcgi_pass unix:/run/php.sock;", Role.PASSES),
    ("grpc_pass grpc://127.0.0.1:50051;", Role.PASSES),
    ("stub_status;", Role.ANSWERS),
    ("return 200 'ok';", Role.ANSWERS),
    ("return 301 https://example.com/;", Role.ANSWERS),
    ("return 403;", Role.REFUSES),
    ("deny all;", Role.REFUSES),
    ("rewrite ^ /other/ last;", Role.REROUTES),
    ("rewrite ^(.*)$ /index.php?q=$1;", Role.REROUTES),
    ("rewrite ^(.*)$ /index.php?q=$1 break; root /srv;", Role.FILES),
    ("rewrite ^/old/(.*)$ /new/$1 permanent;", Role.REROUTES),
    ("root /srv;", Role.FILES),
    ("try_files $uri =404;", Role.FILES),
    ("allow 10.0.0.0/8; deny all;", Role.FILES),
    ("satisfy any; deny all; auth_basic on;", Role.FILES),
    ("rewrite ^/old$ /new break; root /srv;", Role.FILES),
    ("if ($bad) { return 403; }", Role.FILES),
]


@pytest.mark.parametrize(("body", "expected"), ROLE_CASES)
def test_role_of_a_location(body: str, expected: Role) -> None:
    config = _config(f"http {{ server {{ location /x/ {{ {body} }} }} }}")
    assert role(_location(config, "/x/")) is expected


def test_content_handlers_are_not_inherited_by_nested_locations() -> None:
    config = _config(
        "http { server { location / { proxy_pass http://app; location /static/ { root /s; } } } }"
    )
    assert role(_location(config, "/")) is Role.PASSES
    assert role(_location(config, "/static/")) is Role.FILES


def test_an_if_keeps_its_locations_handler() -> None:
    config = _config(
        "http { server { location / { proxy_pass http://app; if ($x) { set $y 1; } } } }"
    )
    assert role(next(iter(config.find("if")))) is Role.PASSES


def test_serving_skips_redirect_servers_and_keeps_locationless_servers() -> None:
    labels = [p.label for p in serving(_config(), Role.FILES)]
    assert labels == ["location /", "location ~* \\.(css|js)$"]
    bare = _config("http { server { listen 81; root /srv/bare; } }")
    assert [p.label for p in serving(bare, Role.FILES)] == ["server"]
    redirect = _config(
        "http { server { listen 80; rewrite ^ https://$host$request_uri? permanent; } }"
    )
    assert serving(redirect, Role.FILES, Role.PASSES, Role.ANSWERS) == []


def test_a_server_without_a_catch_all_location_serves_the_rest_itself() -> None:
    # Only guard locations: every other request is a file from the server's root.
    guards = _config(
        "http { server { listen 80; server_name static.test; root /srv/site;\n"
        "location ~ /\\.git { deny all; }\n location = /robots.txt { allow all; } } }"
    )
    assert [p.label for p in serving(guards, Role.FILES)] == [
        "location = /robots.txt",
        "server static.test",
    ]
    # The look-alike: `location /` (or `^~ /`) takes every request the others leave.
    for catch_all in ("location /", "location ^~ /"):
        caught = _config(
            "http { server { listen 80; server_name static.test; root /srv/site;\n"
            f"location ~ /\\.git {{ deny all; }}\n {catch_all} {{ return 404; }} }} }}"
        )
        assert serving(caught, Role.FILES) == []
    # Nor is the server a file server when no root is written (a health-check server).
    health = _config(
        "http { server { listen 127.0.0.1:8081; location = /healthz { return 200; } } }"
    )
    assert serving(health, Role.FILES) == []


def test_a_tls_only_server_that_refuses_every_handshake_serves_nothing() -> None:
    catch_all = _config(
        "http { server { listen 443 ssl default_server; server_name _; ssl_reject_handshake on; } }"
    )
    assert serving(catch_all, Role.FILES, Role.PASSES, Role.ANSWERS) == []
    # The look-alike: the same server also on plain port 80 still answers there.
    both = _config(
        "http { server { listen 80; listen 443 ssl; server_name _; ssl_reject_handshake on; } }"
    )
    assert [p.label for p in serving(both, Role.FILES)] == ["server _"]


def test_tls_servers_by_listen_quic_or_ssl_on() -> None:
    config = _config(
        "http {\n"
        "    server { listen 443 ssl; server_name a; }\n"
        "    server { listen 443 quic reuseport; server_name b; }\n"
        "    server { listen 8443; ssl on; server_name c; }\n"
        "    server { listen 80; ssl_protocols TLSv1.2; server_name d; }\n"
        "}"
    )
    assert [s.label for s in tls_servers(config)] == ["server a", "server b", "server c"]


def test_group_and_nearest_common_and_weak_places() -> None:
    config = _config()
    one, two = _location(config, "/"), _location(config, "/app/")
    nested = _location(config, "\\.(css|js)$")
    assert [(a.label, len(p)) for a, p in group([(one, nested), (one, two), (one, nested)])] == [
        ("location /", 2)
    ]
    common = nearest_common([nested, two])
    assert common is not None and common.name == "server"
    assert nearest_common([nested]) is nested
    spots = weak_places(config, "sendfile", [one, two, nested], lambda f: not f.on)
    # One cause (the server's `sendfile off`) for the two places that run with it.
    [(anchor, found, places)] = spots
    assert (anchor.name, anchor.line, len(places)) == ("sendfile", 10, 2)
    assert not found.on
    defaulted = weak_places(config, "gzip", [one, two, nested], lambda f: not f.on)
    [(anchor, found, places)] = defaulted
    assert (anchor.name, found.default_used, len(places)) == ("http", True, 3)


def test_a_server_level_deny_leaves_locations_that_allow_their_own_clients() -> None:
    config = _config(
        "http { server { root /srv; deny all;\n"
        "    location / { }\n"
        "    location /public/ { allow all; } } }"
    )
    assert [p.label for p in serving(config, Role.FILES)] == ["location /public/"]
    assert [p.label for p in serving(config, Role.REFUSES)] == ["location /"]
