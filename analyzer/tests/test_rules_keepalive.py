"""Keepalive and timeout rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Category

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

IDLE = MetricsWindow(waiting_ratio=0.85)
BUSY = MetricsWindow(waiting_ratio=0.4)


def http(body: str) -> str:
    """A config whose http block holds `body` and one plain server."""
    return f"events {{}}\nhttp {{\n{body}\n    server {{\n        listen 80;\n    }}\n}}\n"


def test_k_timeout_fires_on_default_with_idle_connections() -> None:
    [finding] = run("K-timeout", http("    sendfile on;"), metrics=IDLE)
    assert (finding.severity, finding.line) == ("warning", 2)
    assert finding.evidence["keepalive_timeout_s"] == 75
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context, finding.fix.args) == ("add", "http", ["15s"])


def test_k_timeout_fires_on_explicit_long_timeout() -> None:
    [finding] = run("K-timeout", http("    keepalive_timeout 65 60;"), metrics=IDLE)
    assert finding.line == 3
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("set", ["15s", "15s"])


def test_k_timeout_silent_when_short_busy_or_unmeasured() -> None:
    assert run("K-timeout", http("    keepalive_timeout 20s;"), metrics=IDLE) == []
    assert run("K-timeout", http("    keepalive_timeout 65;"), metrics=BUSY) == []
    assert run("K-timeout", http("    keepalive_timeout 65;")) == []


def test_k_timeout_uses_waiting_over_active_when_no_ratio() -> None:
    metrics = MetricsWindow(avg_waiting=90, avg_active=100)
    [finding] = run("K-timeout", http("    keepalive_timeout 1m;"), metrics=metrics)
    assert finding.evidence["waiting_ratio"] == 0.9


def test_k_requests_fires_on_low_explicit_value() -> None:
    [finding] = run("K-requests", http("    keepalive_requests 100;"))
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("set", ["1000"])


def test_k_requests_default_depends_on_version() -> None:
    old = HostFacts(nginx_version=(1, 18, 0))
    [finding] = run("K-requests", http("    sendfile on;"), old)
    assert finding.evidence["keepalive_requests"] == 100
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context) == ("add", "http")
    assert run("K-requests", http("    sendfile on;"), HostFacts(nginx_version=(1, 19, 10))) == []
    assert run("K-requests", http("    sendfile on;")) == []


def test_k_requests_ignores_upstream_keepalive_requests() -> None:
    text = (
        "events {}\nhttp {\n    upstream app {\n        server 127.0.0.1:9000;\n"
        "        keepalive_requests 100;\n    }\n    server { listen 80; }\n}\n"
    )
    assert run("K-requests", text) == []


UPSTREAM = """events {}
http {
    upstream app {
        server 127.0.0.1:9000;
%s
    }
    server {
        listen 80;
        proxy_set_header X-Real-IP $remote_addr;
        location / {
            proxy_pass http://app;
%s
        }
    }
}
"""


def test_k_upstream_http11_fires_without_version_and_connection() -> None:
    [finding] = run("K-upstream-http11", UPSTREAM % ("        keepalive 16;", ""))
    assert (finding.severity, finding.line) == ("warning", 10)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args) == (
        "add",
        "proxy_http_version",
        ["1.1"],
    )
    assert len(finding.evidence["missing"]) == 2  # type: ignore[arg-type]


def test_k_upstream_http11_adds_connection_where_the_header_list_lives() -> None:
    text = UPSTREAM % ("        keepalive 16;", "            proxy_http_version 1.1;")
    [finding] = run("K-upstream-http11", text)
    assert finding.fix is not None
    # The location has no proxy_set_header of its own: adding one there would drop X-Real-IP.
    assert (finding.fix.action, finding.fix.line, finding.fix.args) == (
        "add",
        7,
        ["Connection", ""],
    )


def test_k_upstream_http11_silent_when_configured_or_no_pool() -> None:
    done = '            proxy_http_version 1.1;\n            proxy_set_header Connection "";'
    assert run("K-upstream-http11", UPSTREAM % ("        keepalive 16;", done)) == []
    assert run("K-upstream-http11", UPSTREAM % ("", "")) == []


def test_k_upstream_pool_fires_on_busy_upstream_without_keepalive() -> None:
    metrics = MetricsWindow(upstream_req_per_s={"app": 450.0})
    [finding] = run("K-upstream-pool", UPSTREAM % ("", ""), metrics=metrics)
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.context) == (
        "add",
        ["32"],
        "upstream app",
    )


def test_k_upstream_pool_silent_when_pooled_quiet_or_unmeasured() -> None:
    busy = MetricsWindow(upstream_req_per_s={"app": 450.0})
    assert run("K-upstream-pool", UPSTREAM % ("        keepalive 16;", ""), metrics=busy) == []
    quiet = MetricsWindow(upstream_req_per_s={"app": 50.0})
    assert run("K-upstream-pool", UPSTREAM % ("", ""), metrics=quiet) == []
    assert run("K-upstream-pool", UPSTREAM % ("", "")) == []


def test_k_reset_fires_on_default_and_explicit_off() -> None:
    [finding] = run("K-reset", http("    sendfile on;"))
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (2, "add")
    [finding] = run("K-reset", http("    reset_timedout_connection off;"))
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.args) == (3, "set", ["on"])


def test_k_reset_silent_when_on() -> None:
    assert run("K-reset", http("    reset_timedout_connection on;")) == []


def test_k_client_timeouts_groups_defaults_at_http() -> None:
    [finding] = run("K-client-timeouts", http("    client_header_timeout 10s;"))
    assert finding.line == 2
    assert set(finding.evidence) == {"client_body_timeout", "send_timeout"}
    assert finding.fix is not None
    assert (finding.fix.directive, finding.fix.args) == ("client_body_timeout", ["15s"])
    assert [(e.directive, e.args) for e in finding.fix.also] == [("send_timeout", ["15s"])]


def test_k_client_timeouts_fires_on_explicit_60s() -> None:
    body = "    client_header_timeout 10s;\n    client_body_timeout 10s;\n    send_timeout 1m;"
    [finding] = run("K-client-timeouts", http(body))
    assert finding.line == 5
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive) == ("set", "send_timeout")


def test_k_client_timeouts_silent_when_all_shortened() -> None:
    body = "    client_header_timeout 10s;\n    client_body_timeout 12s;\n    send_timeout 15s;"
    assert run("K-client-timeouts", http(body)) == []


def test_k_too_aggressive_fires_below_5s() -> None:
    [finding] = run("K-too-aggressive", http("    send_timeout 2s;"))
    assert (finding.severity, finding.line) == ("warning", 3)
    assert finding.fix is not None
    assert finding.fix.args == ["10s"]


def test_k_too_aggressive_silent_at_5s_and_more() -> None:
    assert run("K-too-aggressive", http("    send_timeout 5s;")) == []
    assert run("K-too-aggressive", http("    send_timeout 1m;")) == []


def test_keepalive_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.KEEPALIVE, UPSTREAM % ("        keepalive 16;", "")
    )


POOLED = """events {}
http {
    upstream app {
        server 127.0.0.1:9000;
        keepalive 16;
    }
    server {
        listen 80;
%s
        location / {
            proxy_pass http://app;
        }
        location /api/ {
%s
            proxy_pass http://app;
        }
        location /ws/ {
            proxy_pass http://app;
            if ($arg_debug) {
                proxy_pass http://app;
            }
        }
    }
}
"""
SERVER_HTTP11 = '        proxy_http_version 1.1;\n        proxy_set_header Connection "";'


def test_k_upstream_http11_inherited_from_the_server_counts() -> None:
    assert run("K-upstream-http11", POOLED % (SERVER_HTTP11, "")) == []


def test_k_upstream_http11_location_with_its_own_headers_loses_connection() -> None:
    own = "            proxy_set_header X-Real-IP $remote_addr;"
    [finding] = run("K-upstream-http11", POOLED % (SERVER_HTTP11, own))
    assert (finding.line, finding.evidence["missing"]) == (14, ['proxy_set_header Connection ""'])
    assert finding.fix is not None
    # The location's own list is the one in force: the header goes there.
    assert (finding.fix.action, finding.fix.line) == ("add", 14)


def test_k_upstream_http11_one_finding_for_places_sharing_the_cause() -> None:
    [finding] = run("K-upstream-http11", POOLED % ("", ""))
    assert finding.line == 7
    assert finding.evidence["places"] == [
        "server location /",
        "server location /api/",
        "server location /ws/",
        "server if ($arg_debug)",
    ]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context) == ("add", "server")


def test_k_upstream_http11_silent_for_upstreams_without_pool() -> None:
    text = (POOLED % ("", "")).replace("        keepalive 16;\n", "")
    assert run("K-upstream-http11", text) == []


def test_k_timeout_one_finding_for_servers_on_the_default_and_one_per_own_value() -> None:
    servers = "".join(
        f"    server {{\n        listen 80;\n        server_name s{i}.example;\n    }}\n"
        for i in range(3)
    )
    own = "    server {\n        listen 81;\n        keepalive_timeout 120s;\n    }\n"
    found = run("K-timeout", "events {}\nhttp {\n" + servers + own + "}\n", metrics=IDLE)
    assert [(f.line, len(f.evidence["places"])) for f in found] == [(2, 3), (17, 1)]  # type: ignore[arg-type]
    short = own.replace("120s", "10s")
    found = run("K-timeout", "events {}\nhttp {\n" + servers + short + "}\n", metrics=IDLE)
    assert [f.line for f in found] == [2]


def _many_sites(version: str) -> str:
    sites = "".join(
        f"    server {{\n        server_name s{i}.example;\n        location @app {{\n"
        "            proxy_set_header Host $host;\n            proxy_pass http://app;\n"
        "        }\n    }\n"
        for i in range(30)
    )
    pool = "    upstream app {\n        server 127.0.0.1:9000;\n        keepalive 16;\n    }\n"
    return "events {}\nhttp {\n" + version + pool + sites + "}\n"


def test_k_upstream_http11_thirty_sites_on_the_default_are_one_finding() -> None:
    [finding] = run("K-upstream-http11", _many_sites(""))
    assert finding.line == 2
    assert len(finding.evidence["places"]) == 30  # type: ignore[arg-type]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context) == ("add", "http")
    # The header goes into each site's own list (lists inherit all or nothing), one edit each.
    companions = finding.fix.also
    assert [(e.action, e.directive, e.args) for e in companions] == [
        ("add", "proxy_set_header", ["Connection", ""])
    ] * 30
    assert len({e.line for e in companions}) == 30


def test_k_upstream_http11_own_header_lists_are_one_finding_once_the_version_is_set() -> None:
    [finding] = run("K-upstream-http11", _many_sites("    proxy_http_version 1.1;\n"))
    assert finding.evidence["missing"] == ['proxy_set_header Connection ""']
    assert len(finding.evidence["header_lists"]) == 30  # type: ignore[arg-type]
    assert finding.fix is not None
    assert finding.fix.action == "add"
    assert len(finding.fix.edits()) == 30
    fixed = _many_sites("    proxy_http_version 1.1;\n").replace(
        "proxy_set_header Host $host;",
        'proxy_set_header Host $host;\n    proxy_set_header Connection "";',
    )
    assert run("K-upstream-http11", fixed) == []


WEBSOCKET = """events {}
http {
    map $http_upgrade $connection_upgrade {
        default upgrade;
        ''      %s;
    }
    upstream app {
        server 127.0.0.1:3000;
        keepalive 16;
    }
    server {
        listen 80;
        location / {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection %s;
        }
    }
}
"""


def test_k_upstream_http11_fires_when_the_websocket_map_closes_plain_requests() -> None:
    [finding] = run("K-upstream-http11", WEBSOCKET % ("close", "$connection_upgrade"))
    assert 'sends "close"' in finding.message
    # The fix goes to the map entry, not the header: upgrades must still send "upgrade".
    assert finding.fix is not None
    assert (finding.fix.line, finding.fix.args) == (5, [""])


def test_k_upstream_http11_silent_with_an_empty_plain_value_or_an_upgrade_only_location() -> None:
    assert run("K-upstream-http11", WEBSOCKET % ('""', "$connection_upgrade")) == []
    # An always-upgraded websocket location: upgraded connections never go back to the pool.
    assert run("K-upstream-http11", WEBSOCKET % ("close", '"upgrade"')) == []
    assert run("K-upstream-http11", WEBSOCKET % ("close", "Upgrade")) == []
