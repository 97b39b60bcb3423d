"""Allow lists, if in location, resolvers and referer checks: each fires and has look-alikes."""

from __future__ import annotations

import pytest

from tests.rule_checks import run

SITE = """events {}
http {
    server {
        listen 80;
        server_name admin.test;
%s
    }
}
"""


def site(body: str) -> str:
    """A one-server config, `body` from line 6 on."""
    return SITE % body


def test_allow_without_deny_fires_and_adds_deny_all() -> None:
    body = (
        "        location /admin/ {\n            allow 10.0.0.0/8;\n"
        "            allow 192.168.1.5;\n        }"
    )
    [finding] = run("X-allow-without-deny", site(body))
    assert (finding.severity, finding.line) == ("warning", 7)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.line) == ("add", ["all"], 6)


def test_allow_without_deny_fires_even_under_a_parent_deny_all() -> None:
    # nginx does not merge a parent's rules into a block that has its own (checked against
    # nginx 1.22 in test_rules_security_nginx): 'deny all' of the server is gone here.
    body = "        deny all;\n        location /ops/ {\n            allow 10.0.0.0/8;\n        }"
    [finding] = run("X-allow-without-deny", site(body))
    assert finding.line == 8
    assert finding.evidence["parent_deny_all"] == 6


@pytest.mark.parametrize(
    "body",
    [
        "        location /admin/ {\n            allow 10.0.0.0/8;\n"
        "            deny all;\n        }",
        # Only 'allow all': opening a sub-path of a closed parent on purpose.
        "        deny all;\n        location /public/ {\n            allow all;\n        }",
        # satisfy any: the allow list is a bypass of the password for trusted addresses.
        "        location /admin/ {\n            satisfy any;\n            allow 10.0.0.0/8;\n"
        '            auth_basic "admin";\n            auth_basic_user_file /etc/nginx/htpasswd;\n'
        "        }",
        # The deny may come from an include this single file cannot show.
        "        location /admin/ {\n            allow 10.0.0.0/8;\n"
        "            include /etc/nginx/snippets/deny-rest.conf;\n        }",
        "        location /admin/ {\n            deny 10.0.0.1;\n"
        "            allow 10.0.0.0/8;\n        }",
    ],
)
def test_allow_without_deny_silent_on_look_alikes(body: str) -> None:
    assert run("X-allow-without-deny", site(body)) == []


@pytest.mark.parametrize(
    ("body", "severity"),
    [
        # add_header in the if replaces the headers the location has (inherited here).
        (
            "        add_header X-Frame-Options DENY;\n"
            "        location / {\n            if ($http_origin ~* ^https://ok\\.test$) {\n"
            "                add_header Access-Control-Allow-Origin $http_origin;\n"
            "            }\n        }",
            "warning",
        ),
        # with nothing to replace it only adds a header on a condition.
        (
            "        location / {\n            if ($http_origin ~* ^https://ok\\.test$) {\n"
            "                add_header Access-Control-Allow-Origin $http_origin;\n"
            "            }\n        }",
            "info",
        ),
        (
            "        location / {\n            try_files $uri /index.html;\n"
            "            if ($cookie_beta) {\n                set $variant beta;\n            }\n"
            "        }",
            "warning",
        ),
        (
            "        location /api/ {\n            proxy_pass http://app;\n"
            "            if ($arg_debug) {\n                rewrite ^ /debug$uri break;\n"
            "            }\n        }",
            "info",
        ),
        (
            "        location / {\n            if ($cookie_beta) {\n                set $v beta;\n"
            "            }\n        }",
            "info",
        ),
        (
            "        location /static/ {\n            if ($arg_v) {\n                expires 1y;\n"
            "            }\n        }",
            "info",
        ),
        (
            "        location / {\n            proxy_pass http://app;\n"
            "            if ($arg_old) {\n                proxy_pass http://legacy;\n"
            "            }\n        }",
            "warning",
        ),
    ],
)
def test_if_is_evil_fires(body: str, severity: str) -> None:
    [finding] = run("X-if-is-evil", site(body))
    assert finding.severity == severity
    assert finding.line == 6 + body[: body.index("if (")].count("\n")


def test_if_is_evil_add_header_in_two_ifs_last_one_wins() -> None:
    body = (
        "        location /media/ {\n"
        "            if ($request_method = GET) {\n"
        "                add_header X-A 1;\n            }\n"
        "            if ($arg_dl) {\n                add_header X-B 1;\n            }\n        }"
    )
    found = run("X-if-is-evil", site(body))
    assert [f.severity for f in found] == ["warning", "warning"]
    assert "the last wins" in found[0].message


def test_if_is_evil_a_returning_if_does_not_make_another_if_lose_headers() -> None:
    # A preflight if that returns has left before a second if's add_header could win; what
    # the GET if loses is the location's try_files, not headers.
    body = (
        "        location /files/ {\n"
        "            if ($request_method = OPTIONS) {\n"
        "                add_header Access-Control-Allow-Origin *;\n"
        "                return 204;\n            }\n"
        "            if ($request_method = GET) {\n"
        "                add_header Access-Control-Allow-Origin *;\n            }\n"
        "            try_files $uri @app;\n        }"
    )
    [finding] = run("X-if-is-evil", site(body))
    assert finding.severity == "warning"
    assert "try_files" in finding.message
    assert "add_header" not in finding.message


@pytest.mark.parametrize(
    "body",
    [
        "        location / {\n            if ($request_method = OPTIONS) {\n"
        "                add_header Access-Control-Allow-Methods GET;\n"
        "                return 204;\n            }\n        }",
        "        location / {\n            if (!-e $request_filename) {\n"
        "                rewrite ^(.+)$ /index.php?q=$1 last;\n            }\n        }",
        "        location /old {\n            if ($arg_v) {\n"
        "                rewrite ^ https://new.test/ permanent;\n            }\n        }",
        # if at server level does not swap the location configuration.
        "        if ($host = www.admin.test) {\n            return 301 https://admin.test$request_uri;\n"
        "        }",
    ],
)
def test_if_is_evil_silent_when_the_if_leaves(body: str) -> None:
    assert run("X-if-is-evil", site(body)) == []


def test_resolver_external_fires_on_public_servers_only() -> None:
    routed = "        resolver 8.8.8.8 10.0.0.2 valid=30s;\n        proxy_pass http://$http_x_dest;"
    [finding] = run("X-resolver-external", site(routed))
    assert (finding.severity, finding.line, finding.evidence["public"]) == (
        "warning",
        6,
        ["8.8.8.8"],
    )
    [v6] = run("X-resolver-external", site("        resolver [2606:4700:4700::1111]:53;"))
    assert v6.evidence["public"] == ["[2606:4700:4700::1111]:53"]


@pytest.mark.parametrize(
    "line",
    [
        "resolver 127.0.0.53;",
        "resolver 127.0.0.1 [::1]:5353 ipv6=off;",
        "resolver 10.96.0.10 valid=10s;",
        "resolver 169.254.169.253;",
        "resolver kube-dns.kube-system.svc.cluster.local;",
        "resolver [fd00::53];",
    ],
)
def test_resolver_external_silent_on_local_resolvers(line: str) -> None:
    assert run("X-resolver-external", site(f"        {line}")) == []


def test_valid_referers_none_guarding_an_application_is_a_warning() -> None:
    body = (
        "        location /api/ {\n            valid_referers none server_names;\n"
        "            if ($invalid_referer) {\n                return 403;\n            }\n"
        "            proxy_pass http://app;\n        }"
    )
    [finding] = run("X-valid-referers", site(body))
    assert (finding.severity, finding.line) == ("warning", 7)
    assert finding.fix is not None
    assert finding.fix.args == ["server_names"]


def test_valid_referers_none_for_hotlinked_images_is_info_and_without_none_silent() -> None:
    body = (
        "        location ~* \\.(png|jpg)$ {\n            root /srv/img;\n"
        "            valid_referers none blocked server_names;\n"
        "            if ($invalid_referer) {\n                return 403;\n            }\n        }"
    )
    [finding] = run("X-valid-referers", site(body))
    assert finding.severity == "info"
    assert run("X-valid-referers", site(body.replace("none ", ""))) == []


def test_resolver_external_only_for_stapling_is_info() -> None:
    stapling = "        resolver 1.1.1.1;\n        ssl_stapling on;"
    [finding] = run("X-resolver-external", site(stapling))
    assert finding.severity == "info"
    routed = (
        "        resolver 1.1.1.1;\n        location / {\n"
        "            set $api api.partner.example;\n            proxy_pass https://$api;\n        }"
    )
    [finding] = run("X-resolver-external", site(routed))
    assert finding.severity == "warning"


RTMP = """events {}
rtmp {
    server {
        listen 1935;
        application live {
            live on;
%s
        }
    }
}
"""


def test_allow_without_deny_reads_nginx_rtmp_access_lines() -> None:
    # `allow play all` lets everyone play, as the default does: nothing is left open by it.
    assert run("X-allow-without-deny", RTMP % "            allow play all;") == []
    # Publishing limited to one network with no deny: every other address may publish too.
    [finding] = run("X-allow-without-deny", RTMP % "            allow publish 10.0.0.0/8;")
    assert "allows 10.0.0.0/8" in finding.message
    assert finding.fix is not None and finding.fix.args == ["publish", "all"]
    denied = "            allow publish 10.0.0.0/8;\n            deny publish all;"
    assert run("X-allow-without-deny", RTMP % denied) == []


def test_resolver_external_is_info_where_no_pass_it_serves_names_a_host_at_run_time() -> None:
    # The address is written out; only the path comes from a variable: no lookup happens.
    fixed = "        resolver 8.8.8.8;\n        proxy_pass http://127.0.0.1:3128$request_uri;"
    [finding] = run("X-resolver-external", site(fixed))
    assert finding.severity == "info" and "unused today" in finding.message
    # A pass that names its host through a variable, under another resolver, is not this
    # resolver's business.
    two = """events {}
http {
    server {
        listen 80;
        resolver 8.8.8.8;
        location / { proxy_pass http://127.0.0.1:3128$request_uri; }
    }
    server {
        listen 81;
        resolver 127.0.0.53;
        location / { proxy_pass http://$host$request_uri; }
    }
}
"""
    [finding] = run("X-resolver-external", two)
    assert (finding.severity, finding.line) == ("info", 5)
    # A server without a resolver of its own does not use the other server's one.
    assert run("X-resolver-external", two.replace("resolver 127.0.0.53;", ""))[0].severity == (
        "info"
    )
    # The look-alike: the host part itself is a variable under the public resolver.
    routed = two.replace("http://127.0.0.1:3128$request_uri", "http://$host$request_uri")
    [finding] = run("X-resolver-external", routed)
    assert finding.severity == "warning"
