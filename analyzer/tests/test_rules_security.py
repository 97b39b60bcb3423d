"""Security hygiene rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

import pytest
from nginx_fleet_analyzer.findings import Category
from nginx_fleet_analyzer.loader import parse_dump
from nginx_fleet_analyzer.rules import RuleContext, get_rule

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

SITE = """events {}
http {
%s
    server {
        listen %s;
%s
    }
}
"""


def site(http: str = "", listen: str = "80", server: str = "") -> str:
    """A one-server config with extra text in http and server."""
    return SITE % (http, listen, server)


def test_x_tokens_fires_on_default_and_explicit_on() -> None:
    [finding] = run("X-tokens", site())
    assert finding.fix is not None
    assert (finding.severity, finding.line, finding.fix.action) == ("info", 2, "add")
    [finding] = run("X-tokens", site(server="        server_tokens on;"))
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.args) == (6, "set", ["off"])


def test_x_tokens_silent_when_off() -> None:
    assert run("X-tokens", site(http="    server_tokens off;")) == []


STATUS = "        location /nginx_status {\n            stub_status;\n%s\n        }"


def test_x_status_open_fires_without_access_rules() -> None:
    [finding] = run("X-status-open", site(server=STATUS % ""))
    assert (finding.severity, finding.line) == ("warning", 6)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args) == (
        "add",
        "allow",
        ["127.0.0.1"],
    )


def test_x_status_open_asks_for_deny_after_allow() -> None:
    [finding] = run("X-status-open", site(server=STATUS % "            allow 10.0.0.0/8;"))
    assert finding.fix is not None
    assert (finding.fix.directive, finding.fix.args) == ("deny", ["all"])


def test_x_status_open_silent_when_denied_or_loopback_only() -> None:
    rules = "            allow 127.0.0.1;\n            deny all;"
    assert run("X-status-open", site(server=STATUS % rules)) == []
    assert run("X-status-open", site(listen="127.0.0.1:8080", server=STATUS % "")) == []
    # Rules in the server apply to the location too.
    inherited = "        allow 127.0.0.1;\n        deny all;\n" + STATUS % ""
    assert run("X-status-open", site(server=inherited)) == []


def test_x_alias_traversal_fires_on_missing_trailing_slash() -> None:
    server = "        location /static {\n            alias /srv/static/;\n        }"
    [finding] = run("X-alias-traversal", site(server=server))
    assert (finding.severity, finding.line) == ("error", 6)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args) == (
        "set",
        "location",
        ["/static/"],
    )


def test_x_alias_traversal_silent_on_safe_forms() -> None:
    safe = "        location /static/ {\n            alias /srv/static/;\n        }"
    assert run("X-alias-traversal", site(server=safe)) == []
    exact = "        location = /static {\n            alias /srv/static/index.html;\n        }"
    assert run("X-alias-traversal", site(server=exact)) == []
    regex = "        location ~ ^/img/(.*)$ {\n            alias /srv/img/$1;\n        }"
    assert run("X-alias-traversal", site(server=regex)) == []


PROXIED = "        location / {\n            proxy_pass http://app;\n%s\n        }"


def test_x_host_spoof_fires_on_http_host() -> None:
    server = PROXIED % "            proxy_set_header Host $http_host;"
    [finding] = run("X-host-spoof", site(server=server))
    assert finding.fix is not None
    assert (finding.line, finding.fix.args) == (8, ["Host", "$host"])


def test_x_host_spoof_silent_on_host() -> None:
    server = PROXIED % (
        "            proxy_set_header Host $host;\n            proxy_set_header X-Host $http_host;"
    )
    assert run("X-host-spoof", site(server=server)) == []


def test_x_autoindex_fires_on_and_silent_off() -> None:
    on = "        location /files/ {\n            root /srv;\n            autoindex on;\n        }"
    [finding] = run("X-autoindex", site(server=on))
    assert (finding.severity, finding.line) == ("info", 8)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.line) == ("none", 8)
    assert run("X-autoindex", site(server=on.replace("autoindex on", "autoindex off"))) == []


def test_security_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.SECURITY, site(server=STATUS % "            allow 10.0.0.0/8;")
    )


def test_x_status_open_silent_behind_a_password_or_internal() -> None:
    password = (
        '            auth_basic "ops";\n            auth_basic_user_file /etc/nginx/ops.htpasswd;'
    )
    assert run("X-status-open", site(server=STATUS % password)) == []
    assert run("X-status-open", site(server=STATUS % "            internal;")) == []
    # auth_basic off in the location lifts the server's password.
    lifted = '        auth_basic "ops";\n' + STATUS % "            auth_basic off;"
    assert len(run("X-status-open", site(server=lifted))) == 1


def test_x_alias_traversal_both_without_slash_is_a_warning() -> None:
    server = "        location /static {\n            alias /srv/static;\n        }"
    [finding] = run("X-alias-traversal", site(server=server))
    assert (finding.severity, finding.line) == ("warning", 6)


def test_x_alias_traversal_regex_capture_after_no_slash() -> None:
    server = "        location ~ ^/media(.*)$ {\n            alias /srv/media/$1;\n        }"
    [finding] = run("X-alias-traversal", site(server=server))
    assert (finding.severity, finding.line) == ("error", 6)
    assert finding.fix is not None and finding.fix.action == "none"
    named = (
        "        location ~ ^/media(?<rest>.*)$ {\n            alias /srv/media$rest;\n        }"
    )
    [sibling] = run("X-alias-traversal", site(server=named))
    assert sibling.severity == "warning"


@pytest.mark.parametrize(
    "server",
    [
        # The capture starts after a '/', and nginx normalises '/../' away before matching.
        "        location ~ ^/media/(.*)$ {\n            alias /srv/media/$1;\n        }",
        # The capture itself must start with '/'.
        "        location ~ ^/media(/.*)$ {\n            alias /srv/media$1;\n        }",
        # A nested location inheriting the alias keeps the outer prefix (nginx 1.22 checked).
        "        location /files/ {\n            alias /srv/files/;\n"
        "            location /files/pdf {\n            }\n        }",
        "        location ^~ /files/ {\n            alias /srv/files/;\n        }",
    ],
)
def test_x_alias_traversal_silent_on_more_safe_forms(server: str) -> None:
    assert run("X-alias-traversal", site(server=server)) == []


@pytest.mark.parametrize(
    "value", ["$http_host", "$HTTP_X_FORWARDED_HOST", "$arg_host", "$cookie_site.internal"]
)
def test_x_host_spoof_fires_on_client_values(value: str) -> None:
    server = PROXIED % f"            proxy_set_header HOST {value};"
    [finding] = run("X-host-spoof", site(server=server))
    assert finding.severity == "warning"


def test_x_host_spoof_silent_on_server_values() -> None:
    for value in ("$host", "$proxy_host", "app.internal", "$server_name:$server_port"):
        server = PROXIED % f"            proxy_set_header Host {value};"
        assert run("X-host-spoof", site(server=server)) == [], value


DUMP = """# configuration file /etc/nginx/nginx.conf:
events {}
http {
    server { listen 80; server_name a.test; location / { include snippets/proxy.conf; } }
    server { listen 80; server_name b.test; location / { include snippets/proxy.conf; } }
    server { listen 80; server_name c.test; location / { include snippets/proxy.conf; } }
}

# configuration file /etc/nginx/snippets/proxy.conf:
proxy_pass http://app;
proxy_set_header Host $http_host;
add_header X-Frame-Options DENY;
"""


def test_a_snippet_included_three_times_is_one_finding() -> None:
    config = parse_dump(DUMP)
    [finding] = get_rule("X-host-spoof").check(RuleContext(config=config))
    assert (finding.file, finding.line) == ("/etc/nginx/snippets/proxy.conf", 2)
    assert len(config.find("proxy_set_header")) == 3


def test_x_alias_traversal_silent_on_a_prefix_no_request_path_can_match() -> None:
    # A regex written without its '~' is a prefix starting with '(': request paths always
    # start with '/', so the location (and its alias) is never used.
    dead = (
        "        location (^/theme/([a-z]+)/(.*\\.css)$) {\n"
        "            alias /usr/share/themes/$1/$2;\n        }"
    )
    assert run("X-alias-traversal", site(server=dead)) == []
    # The look-alike with its '/' still reads siblings of the alias path.
    live = "        location /theme {\n            alias /usr/share/themes/$1;\n        }"
    [finding] = run("X-alias-traversal", site(server=live))
    assert finding.severity == "warning"
