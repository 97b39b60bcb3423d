"""Transfer and file rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.findings import Category

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

STATIC = """events {}
http {
%s
    server {
        listen 80;
        root /srv/www;
        location / {
            try_files $uri $uri/ =404;
        }
    }
}
"""

PROXY_ONLY = """events {}
http {
%s
    server {
        listen 80;
        root /srv/www;
        location / {
            proxy_pass http://127.0.0.1:9000;
        }
    }
}
"""


def test_t_sendfile_fires_on_static_server_with_default() -> None:
    [finding] = run("T-sendfile", STATIC % "")
    assert (finding.severity, finding.line) == ("warning", 2)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.context) == ("add", ["on"], "http")
    assert "tcp_nopush on" in finding.fix.note


def test_t_sendfile_fires_on_explicit_off() -> None:
    [finding] = run("T-sendfile", STATIC % "    sendfile off;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (3, "set")


def test_t_sendfile_silent_when_on_or_only_proxying() -> None:
    assert run("T-sendfile", STATIC % "    sendfile on;") == []
    assert run("T-sendfile", PROXY_ONLY % "") == []


def test_t_nodelay_fires_on_off_and_removes_it() -> None:
    [finding] = run("T-nodelay", STATIC % "    tcp_nodelay off;")
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.fix is not None
    assert finding.fix.action == "remove"


def test_t_nodelay_silent_on_default_or_on() -> None:
    assert run("T-nodelay", STATIC % "") == []
    assert run("T-nodelay", STATIC % "    tcp_nodelay on;") == []


def test_t_open_file_cache_fires_on_static_serving() -> None:
    [finding] = run("T-open-file-cache", STATIC % "    sendfile on;")
    assert finding.line == 2
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("add", ["max=10000", "inactive=30s"])
    assert [(e.directive, e.args, e.context) for e in finding.fix.also] == [
        ("open_file_cache_valid", ["60s"], "http"),
        ("open_file_cache_min_uses", ["2"], "http"),
        ("open_file_cache_errors", ["on"], "http"),
    ]
    [finding] = run("T-open-file-cache", STATIC % "    open_file_cache off;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (3, "set")


def test_t_open_file_cache_silent_when_set_or_not_static() -> None:
    assert run("T-open-file-cache", STATIC % "    open_file_cache max=1000;") == []
    assert run("T-open-file-cache", PROXY_ONLY % "") == []


ASSETS = """events {}
http {
    server {
        listen 80;
        root /srv/www;
        location ~* \\.(css|js|woff2|png)$ {
%s
        }
        location /api/ {
            proxy_pass http://127.0.0.1:9000;
        }
    }
}
"""


def test_t_static_expiry_fires_on_asset_location_without_caching() -> None:
    [finding] = run("T-static-expiry", ASSETS % "            access_log off;")
    assert (finding.severity, finding.line) == ("warning", 6)
    assert finding.evidence["types"] == ["css", "js", "woff2", "png"]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args) == (
        "add",
        "expires",
        ["30d"],
    )


def test_t_static_expiry_fires_on_static_prefix() -> None:
    text = (
        "events {}\nhttp {\n    server {\n"
        "        location /static/ {\n            root /srv;\n        }\n    }\n}\n"
    )
    [finding] = run("T-static-expiry", text)
    assert finding.line == 4


def test_t_static_expiry_silent_with_expires_or_cache_control() -> None:
    assert run("T-static-expiry", ASSETS % "            expires 1y;") == []
    header = '            add_header Cache-Control "public, max-age=86400";'
    assert run("T-static-expiry", ASSETS % header) == []
    # Inherited from the server block.
    inherited = ASSETS.replace("root /srv/www;", "root /srv/www;\n        expires 7d;")
    assert run("T-static-expiry", inherited % "") == []


def test_t_static_expiry_silent_on_proxied_assets() -> None:
    text = ASSETS % "            proxy_pass http://127.0.0.1:9000;"
    assert run("T-static-expiry", text) == []


def test_transfer_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.TRANSFER, (STATIC % "    sendfile off;") + ASSETS % ""
    )


GUARDED = """events {}
http {
    server {
        listen 80;
        root /srv/www;
        location / {
            proxy_pass http://127.0.0.1:9000;
        }
        location /private/ {
%s
        }
    }
}
"""


def test_locations_that_only_deny_return_or_redirect_serve_no_files() -> None:
    for body in (
        "            deny all;",
        "            return 403;",
        "            return 301 https://example.com/;",
        "            rewrite ^/private/(.*)$ /public/$1 permanent;",
        "            rewrite ^ /index.php last;",
    ):
        for rule_id in ("T-sendfile", "T-open-file-cache", "T-static-expiry"):
            assert run(rule_id, GUARDED % body) == [], (rule_id, body)


def test_a_location_that_denies_only_some_clients_still_serves_files() -> None:
    body = "            allow 10.0.0.0/8;\n            deny all;"
    [finding] = run("T-sendfile", GUARDED % body)
    assert finding.evidence["serves"] == ["server location /private/"]
    [finding] = run("T-sendfile", GUARDED % "            rewrite ^/private/old$ /private/new;")
    assert finding.line == 2


def test_t_sendfile_one_finding_for_many_servers_on_the_default() -> None:
    servers = "".join(
        f"    server {{\n        server_name s{i}.example;\n        root /srv/s{i};\n    }}\n"
        for i in range(30)
    )
    [finding] = run("T-sendfile", "events {}\nhttp {\n" + servers + "}\n")
    assert finding.line == 2
    assert len(finding.evidence["serves"]) == 30  # type: ignore[arg-type]
    assert "and 27 more" in finding.message


NESTED_ASSETS = """events {}
http {
    server {
        listen 80;
        root /srv/www;
        location %s/static/ {
%s
        }
%s
    }
}
"""
REGEX_EXPIRES = "        location ~* \\.(css|js|png)$ {\n            expires 30d;\n        }"


def test_t_static_expiry_covered_by_a_nested_location_with_expires() -> None:
    nested = "            location ~* \\.(css|js)$ {\n                expires 1y;\n            }"
    assert run("T-static-expiry", NESTED_ASSETS % ("", nested, "")) == []
    header = (
        "            location ~* \\.(css|js)$ {\n"
        '                add_header Cache-Control "public, max-age=600";\n            }'
    )
    assert run("T-static-expiry", NESTED_ASSETS % ("", header, "")) == []


def test_t_static_expiry_nested_location_without_expiry_still_fires() -> None:
    nested = (
        "            location ~* \\.(css|js)$ {\n                access_log off;\n            }"
    )
    found = run("T-static-expiry", NESTED_ASSETS % ("", nested, ""))
    assert [f.evidence["location"] for f in found] == [
        "location /static/",
        "location ~* \\.(css|js)$",
    ]


def test_t_static_expiry_covered_by_a_server_regex_location() -> None:
    assert run("T-static-expiry", NESTED_ASSETS % ("", "", REGEX_EXPIRES)) == []


def test_t_static_expiry_regex_location_does_not_cover_a_caret_tilde_prefix() -> None:
    # `^~` stops nginx from trying regex locations: the server's regex never sees /static/.
    [finding] = run("T-static-expiry", NESTED_ASSETS % ("^~ ", "", REGEX_EXPIRES))
    assert finding.line == 6


def test_t_static_expiry_partial_regex_coverage_fires() -> None:
    text = (
        "events {}\nhttp {\n    server {\n        root /srv;\n"
        "        location ~* \\.(css|js|woff2)$ {\n            root /srv/assets;\n"
        "            location ~* \\.css$ {\n                expires 7d;\n            }\n"
        "        }\n    }\n}\n"
    )
    [finding] = run("T-static-expiry", text)
    assert finding.line == 5


def test_t_nodelay_silent_when_overridden_everywhere() -> None:
    text = STATIC.replace("try_files", "tcp_nodelay on;\n            try_files")
    assert run("T-nodelay", text % "    tcp_nodelay off;") == []


def test_t_static_expiry_regex_location_covered_by_nested_or_earlier_regex() -> None:
    nested = (
        "events {}\nhttp {\n    server {\n        root /srv;\n"
        "        location ~* \\.(css|js)$ {\n"
        "            location ~* \\.(css|js)$ {\n                expires 7d;\n            }\n"
        "        }\n    }\n}\n"
    )
    assert run("T-static-expiry", nested) == []
    earlier = (
        "events {}\nhttp {\n    server {\n        root /srv;\n"
        "        location ~* \\.(css|js)$ {\n            expires 7d;\n        }\n"
        "        location ~* \\.(css|js|png)$ {\n            access_log off;\n        }\n"
        "    }\n}\n"
    )
    [finding] = run("T-static-expiry", earlier)
    assert finding.evidence["types"] == ["css", "js", "png"]
    later = earlier.replace("expires 7d", "KEEP").replace("access_log off", "expires 7d")
    later = later.replace("KEEP", "access_log off")
    [finding] = run("T-static-expiry", later)
    assert finding.evidence["types"] == ["css", "js"]


def test_t_static_expiry_covered_by_headers_more() -> None:
    header = '            more_set_headers "Cache-Control: public, max-age=3600";'
    assert run("T-static-expiry", ASSETS % header) == []
    other = '            more_set_headers "X-Served-By: edge";'
    assert len(run("T-static-expiry", ASSETS % other)) == 1
